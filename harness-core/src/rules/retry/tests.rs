//! Tests of DLG-RETRY-*: broken delegators fail, every usual backoff strategy passes.

use super::super::registry::Check;
use crate::rules::test_support::*;
use crate::scenario::Scenario;
use a2a_mock_agents::Event;
use serde_json::Value;
use serde_json::json;

#[test]
fn retry_03_indefinite_send_resent_with_new_id() {
    let mut c = good("");
    c.j.push(
        "a",
        Event::ConnectionDropped {
            req: 1,
            phase: "after_processing".into(),
        },
    );
    assert_eq!(c.check(checker("DLG-RETRY-03")), Check::Pass);
    c.j.send("a", "m2", "do the thing", json!({}));
    assert!(fails(c.check(checker("DLG-RETRY-03"))));
}

#[test]
fn retry_01_too_many_resends() {
    let mut c = Case::new(&delegation("max_retries = 1"));
    for _ in 0..3 {
        c.j.send("a", "m1", "do the thing", json!({}));
    }
    assert!(fails(c.check(checker("DLG-RETRY-01"))));
}

#[test]
fn retry_02_retry_after_ignored() {
    let text = "id = \"t\"\ntitle = \"t\"\nrules = [\"DLG-RETRY-02\"]\n[network]\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n[[network.agent.rule]]\nfault = { kind = \"http_status\", status = 429, retry_after_s = 2 }\n[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"do the thing\"\n";
    let mut c = Case::new("");
    c.s = Scenario::from_toml(std::path::Path::new("t.toml"), text).unwrap();
    let (s1, r) = c.j.send("a", "m1", "do the thing", json!({}));
    c.j.resp("a", r, 429, None, Value::Null);
    let (s2, _) = c.j.send("a", "m1", "do the thing", json!({}));
    c.j.at(s1, 0);
    c.j.at(s2, 100_000);
    assert!(fails(c.check(checker("DLG-RETRY-02"))));
    c.j.at(s2, 2_100_000);
    assert_eq!(c.check(checker("DLG-RETRY-02")), Check::Pass);
}

#[test]
fn retry_02_the_journal_s_retry_after_counts_for_a_queued_fault() {
    // No rule fault in the scenario (a queued one, as from-journal writes): the journal's
    // 429 response says Retry-After 2.
    let text = "id = \"t\"\ntitle = \"t\"\nrules = [\"DLG-RETRY-02\"]\n[network]\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n[[network.agent.queued_fault]]\nmethod = \"SendMessage\"\nfault = { kind = \"http_status\", status = 429, retry_after_s = 2 }\n[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"do the thing\"\n";
    let mut c = Case::new("");
    c.s = Scenario::from_toml(std::path::Path::new("t.toml"), text).unwrap();
    let (s1, r) = c.j.send("a", "m1", "do the thing", json!({}));
    c.j.resp("a", r, 429, None, Value::Null);
    for e in &mut c.j.entries {
        if let Event::Response { retry_after_s, .. } = &mut e.event {
            *retry_after_s = Some(2);
        }
    }
    let (s2, _) = c.j.send("a", "m1", "do the thing", json!({}));
    c.j.at(s1, 0);
    c.j.at(s2, 100_000);
    assert!(fails(c.check(checker("DLG-RETRY-02"))));
    c.j.at(s2, 2_100_000);
    assert_eq!(c.check(checker("DLG-RETRY-02")), Check::Pass);
}

/// Sends of intent m1 after 503s, `gaps` ms apart.
pub(super) fn resends(gaps: &[u64]) -> Case {
    let mut c = good("");
    c.j.entries.clear();
    let mut t = 1_000_000;
    let (s, r) = c.j.send("a", "m1", "do the thing", json!({}));
    c.j.at(s, t);
    c.j.resp("a", r, 503, None, Value::Null);
    for g in gaps {
        t += g * 1000;
        let (s, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.at(s, t);
        c.j.resp("a", r, 503, None, Value::Null);
    }
    c
}

#[test]
fn retry_02_gaps_grow_with_jitter_within_base_and_cap() {
    // Equal jitter over base 50 ms, cap 500 ms: 40, 80, 170, 330, then capped.
    let c = resends(&[40, 80, 170, 330, 300]);
    assert_eq!(c.check(checker("DLG-RETRY-02")), Check::Pass);
    let c = resends(&[2, 1, 3, 2, 1]);
    assert!(fails(c.check(checker("DLG-RETRY-02"))), "no backoff at all");
    let c = resends(&[40, 30_000]);
    assert!(fails(c.check(checker("DLG-RETRY-02"))), "far past the cap");
    // Cap 500 ms; the machine delayed two wake-ups by 1.3-1.8 s: not attributable.
    let c = resends(&[40, 1_800, 170, 1_500]);
    assert_eq!(c.check(checker("DLG-RETRY-02")), Check::Pass);
    // A few short or shrinking gaps prove nothing: full jitter draws them too.
    for gaps in [
        &[2u64][..],
        &[2, 1, 3],
        &[100, 100, 100, 100],
        &[40, 200, 60],
    ] {
        let c = resends(gaps);
        assert_eq!(c.check(checker("DLG-RETRY-02")), Check::Pass, "{gaps:?}");
    }
}

#[test]
fn retry_02_a_constant_pause_fails_once_the_envelope_has_doubled_enough() {
    // A constant pause equal to the base (50 ms; measured 50-58 ms), nine backoffs.
    let constant: Vec<u64> = (0..9).map(|i| 50 + (i * 3) % 9).collect();
    let c = resends(&constant);
    let v = c.check(checker("DLG-RETRY-02"));
    assert!(fails(v.clone()), "{v:?}");
    // Load stretched one of them: still constant.
    let mut spiked = constant.clone();
    spiked[4] = 1_800;
    assert!(fails(resends(&spiked).check(checker("DLG-RETRY-02"))));
    // No backoff over nine retries fails too.
    assert!(fails(resends(&[1; 9]).check(checker("DLG-RETRY-02"))));
    // Twice the base, constant, over nine backoffs: full jitter still makes that about twice
    // in a thousand, not proof.
    assert_eq!(
        resends(&[100; 9]).check(checker("DLG-RETRY-02")),
        Check::Pass
    );
}

#[test]
fn retry_02_every_jitter_strategy_passes() {
    use rand::{RngExt, SeedableRng};
    let (base, cap) = (50f64, 500f64);
    let env = |i: usize| (base * 2f64.powi(i as i32)).min(cap);
    type Strategy = fn(&mut rand_chacha::ChaCha8Rng, usize, f64, &dyn Fn(usize) -> f64) -> f64;
    let strategies: [(&str, Strategy); 6] = [
        ("full jitter", |r, i, _, e| r.random_range(0.0..=e(i))),
        ("equal jitter", |r, i, _, e| {
            e(i) / 2.0 + r.random_range(0.0..=e(i) / 2.0)
        }),
        ("decorrelated jitter", |r, _, prev, _| {
            r.random_range(50.0..=(3.0 * prev).max(50.0)).min(500.0)
        }),
        ("plain exponential", |_, i, _, e| e(i)),
        ("×1.5 with ±20 %", |r, i, _, _| {
            (50.0 * 1.5f64.powi(i as i32)).min(500.0) * r.random_range(0.8..=1.2)
        }),
        (
            "first retry at once",
            |_, i, _, e| if i == 0 { 0.0 } else { e(i - 1) },
        ),
    ];
    for (name, draw) in strategies {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut failed = 0;
        let runs = 500;
        for _ in 0..runs {
            let mut prev = base;
            let gaps: Vec<u64> = (0..10)
                .map(|i| {
                    let s = draw(&mut rng, i, prev, &env);
                    prev = s;
                    // What the journal shows: the sleep plus 0-3 ms of the machine.
                    s as u64 + rng.random_range(0..=3)
                })
                .collect();
            if fails(resends(&gaps).check(checker("DLG-RETRY-02"))) {
                failed += 1;
            }
        }
        // The test's level is 1 in 1000 for the most lenient strategy (none of these
        // seeded runs fails); one is room for chance.
        assert!(failed <= 1, "{name}: {failed} of {runs} failed");
    }
}

#[test]
fn retry_02_the_two_nulls_bound_a_simulation_from_above() {
    use super::{decorrelated_at_most, full_jitter_at_most};
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let runs = 100_000;
    for (t, k, m) in [
        (100u64, 7usize, 1usize),
        (120, 9, 1),
        (150, 9, 0),
        (200, 10, 1),
    ] {
        let (mut full, mut dec) = (0u32, 0u32);
        for _ in 0..runs {
            let (mut above_full, mut above_dec, mut prev) = (0, 0, 50.0f64);
            for i in 0..k {
                let e = (50.0 * 2f64.powi(i as i32)).min(500.0);
                if rng.random_range(0.0..=e) > t as f64 {
                    above_full += 1;
                }
                prev = rng.random_range(50.0..=(3.0 * prev)).min(500.0);
                if prev > t as f64 {
                    above_dec += 1;
                }
            }
            full += u32::from(above_full <= m);
            dec += u32::from(above_dec <= m);
        }
        let (sim_full, sim_dec) = (full as f64 / runs as f64, dec as f64 / runs as f64);
        let (f, d) = (
            full_jitter_at_most(50, 500, k, t, m),
            decorrelated_at_most(50, 500, k, t, m),
        );
        // Exact for full jitter, rounded up for decorrelated jitter; within the simulation's
        // error.
        assert!(
            (f - sim_full).abs() <= 0.1 * sim_full + 2e-4,
            "full {t} {k} {m}: {f} vs {sim_full}"
        );
        assert!(
            d >= 0.9 * sim_dec - 2e-4 && d <= 2.0 * sim_dec + 2e-4,
            "decorrelated {t} {k} {m}: {d} vs {sim_dec}"
        );
    }
}

#[test]
fn retry_02_retry_after_honoured_at_every_retry_passes() {
    // An agent that answers 429 with Retry-After 1 s, five times: constant gaps of about
    // 1 s, the agent's pace, are no missing growth.
    let text = "id = \"t\"\ntitle = \"t\"\nrules = [\"DLG-RETRY-02\"]\n[network]\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n[[network.agent.rule]]\ntimes = 5\nfault = { kind = \"http_status\", status = 429, retry_after_s = 1 }\n[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"do the thing\"\n";
    let mut c = resends(&[1_005, 1_010, 1_002, 1_004, 1_001]);
    c.s = Scenario::from_toml(std::path::Path::new("t.toml"), text).unwrap();
    for e in &mut c.j.entries {
        if let Event::Response { status, .. } = &mut e.event {
            *status = 429;
        }
    }
    assert_eq!(c.check(checker("DLG-RETRY-02")), Check::Pass);
    // One of them came early.
    let mut c2 = resends(&[1_005, 1_010, 400, 1_004, 1_001]);
    c2.s = c.s.clone();
    for e in &mut c2.j.entries {
        if let Event::Response { status, .. } = &mut e.event {
            *status = 429;
        }
    }
    assert!(fails(c2.check(checker("DLG-RETRY-02"))));
}

/// Two intents (m1 to agent a, m2 to agent b) that failed at the same moments and resent after
/// `a` and `b` ms.
fn two_intents(a: &[u64], b: &[u64]) -> Case {
    let mut c = good("");
    c.j.entries.clear();
    let mut t = (1_000_000, 1_000_500);
    // Both intents send at `t` and get a 503.
    let attempt = |c: &mut Case, t: (u64, u64)| {
        for (agent, mid, text, at) in [
            ("a", "m1", "do the thing", t.0),
            ("b", "m2", "do another thing", t.1),
        ] {
            let (s, r) = c.j.send(agent, mid, text, json!({}));
            c.j.at(s, at);
            c.j.resp(agent, r, 503, None, Value::Null);
        }
    };
    attempt(&mut c, t);
    for (ga, gb) in a.iter().zip(b) {
        t = (t.0 + ga * 1000, t.1 + gb * 1000);
        attempt(&mut c, t);
    }
    c
}

#[test]
fn retry_02_two_intents_on_the_same_schedule_have_no_jitter() {
    // Plain exponential, no jitter: both delegations retry together every time.
    let plain = [50, 100, 200, 400, 500];
    let c = two_intents(&plain, &[51, 101, 199, 400, 502]);
    let v = c.check(checker("DLG-RETRY-02"));
    assert!(fails(v.clone()), "{v:?}");
    // From six backoffs on, one index apart (load) does not hide it.
    let c = two_intents(
        &[50, 100, 200, 400, 500, 500],
        &[51, 100, 260, 401, 500, 499],
    );
    assert!(fails(c.check(checker("DLG-RETRY-02"))));
    // Equal jitter, drawn apart.
    let c = two_intents(&[40, 80, 170, 330, 300], &[30, 95, 130, 260, 420]);
    assert_eq!(c.check(checker("DLG-RETRY-02")), Check::Pass);
    // Three backoffs each: too few to compare.
    let c = two_intents(&[50, 100, 200], &[50, 100, 200]);
    assert_eq!(c.check(checker("DLG-RETRY-02")), Check::Pass);
}

#[test]
fn retry_02_retry_after_on_a_queued_503() {
    let text = "id = \"t\"\ntitle = \"t\"\nrules = [\"DLG-RETRY-02\"]\n[network]\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n[[network.agent.queued_fault]]\nmethod = \"SendMessage\"\ntimes = 1\nfault = { kind = \"http_status\", status = 503, retry_after_s = 2 }\n[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"do the thing\"\n";
    let mut c = Case::new("");
    c.s = Scenario::from_toml(std::path::Path::new("t.toml"), text).unwrap();
    let (s1, r) = c.j.send("a", "m1", "do the thing", json!({}));
    c.j.resp("a", r, 503, None, Value::Null);
    let (s2, _) = c.j.send("a", "m1", "do the thing", json!({}));
    c.j.at(s1, 0);
    // Within the backoff envelope, but before the 2 s the agent asked for.
    c.j.at(s2, 400_000);
    assert!(fails(c.check(checker("DLG-RETRY-02"))));
    // Honouring it is not "past the cap".
    c.j.at(s2, 2_100_000);
    assert_eq!(c.check(checker("DLG-RETRY-02")), Check::Pass);
}

#[test]
fn retry_04_the_dead_letter_entry_must_match_the_journal() {
    let mut c = resends(&[60, 120]);
    c.s = crate::rules::test_support::scenario(&delegation(
        "expect = { state = [\"DEAD_LETTERED\"] }\nchain = [\"http://up\"]",
    ));
    c.done("d1", "DEAD_LETTERED", json!([]));
    let err = json!({"op": "SendMessage", "http_status": 503, "transient": true});
    let request = json!({"id": "d1", "text": "do the thing", "chain": ["http://up"]});
    c.snapshot = Some(
        json!({"records": [{"id": "d1", "dlq": true, "request": request,
        "errors": [err, err, err], "chain": ["http://up"], "artifacts": []}]}),
    );
    assert_eq!(c.check(checker("DLG-RETRY-04")), Check::Pass);
    // A bare `dlq: true` proves nothing.
    c.snapshot = Some(json!({"records": [{"id": "d1", "dlq": true}]}));
    assert!(fails(c.check(checker("DLG-RETRY-04"))), "no request");
    c.snapshot = Some(
        json!({"records": [{"id": "d1", "dlq": true, "request": request,
        "errors": [err], "chain": ["http://up"]}]}),
    );
    assert!(
        fails(c.check(checker("DLG-RETRY-04"))),
        "one error for three failures"
    );
    c.snapshot = Some(
        json!({"records": [{"id": "d1", "dlq": true, "request": request,
        "errors": [err, err, err], "chain": []}]}),
    );
    assert!(fails(c.check(checker("DLG-RETRY-04"))), "chain lost");
}

#[test]
fn retry_04_a_failure_that_came_after_the_kill_is_not_asked_of_the_entry() {
    // Killed when the first send reached the agent (entry 1): its 503 went to a dead
    // process. The restarted one failed twice more and lists those two.
    let mut c = resends(&[60, 120]);
    c.s = crate::rules::test_support::scenario(&delegation(
        "expect = { state = [\"DEAD_LETTERED\"] }",
    ));
    c.done("d1", "DEAD_LETTERED", json!([]));
    let err = json!({"op": "SendMessage", "http_status": 503, "transient": true});
    let request = json!({"id": "d1", "text": "do the thing"});
    c.snapshot = Some(
        json!({"records": [{"id": "d1", "dlq": true, "request": request,
        "errors": [err, err], "chain": [], "artifacts": []}]}),
    );
    assert!(fails(c.check(checker("DLG-RETRY-04"))), "without a kill");
    c.crash = Some(1);
    assert_eq!(c.check(checker("DLG-RETRY-04")), Check::Pass);
    // The failures after the restart are still asked for.
    c.snapshot = Some(
        json!({"records": [{"id": "d1", "dlq": true, "request": request,
        "errors": [err], "chain": [], "artifacts": []}]}),
    );
    assert!(fails(c.check(checker("DLG-RETRY-04"))), "one of the two");
}

#[test]
fn retry_04_not_dead_lettered() {
    let mut c = Case::new(&delegation("expect = { state = [\"DEAD_LETTERED\"] }"));
    c.done("d1", "DEAD_LETTERED", json!([]));
    c.snapshot = Some(json!({"records": [{"id": "d1", "dlq": {"chain": [],
        "request": {"id": "d1", "text": "do the thing"}, "errors": []}}]}));
    assert_eq!(
        c.check(checker("DLG-RETRY-04")),
        Check::Pass,
        "the entry under dlq"
    );
    c.snapshot = Some(json!({"records": [{"id": "d1", "dlq": false}]}));
    assert!(fails(c.check(checker("DLG-RETRY-04"))));
    c.done("d1", "FAILED", json!([]));
    assert!(fails(c.check(checker("DLG-RETRY-04"))));
}

#[test]
fn retry_04_a_delegation_that_may_also_succeed_is_judged_only_when_dead_lettered() {
    // Retries may or may not run out: COMPLETED is not this rule's to judge.
    let mut c = Case::new(&delegation(
        "expect = { state = [\"DEAD_LETTERED\", \"COMPLETED\"] }",
    ));
    c.done("d1", "COMPLETED", json!([]));
    assert_eq!(c.check(checker("DLG-RETRY-04")), Check::NotApplicable);
    // Dead-lettered, its entry must still hold what the journal shows.
    c.done("d1", "DEAD_LETTERED", json!([]));
    c.snapshot = Some(json!({"records": [{"id": "d1", "dlq": true}]}));
    assert!(fails(c.check(checker("DLG-RETRY-04"))));
}
