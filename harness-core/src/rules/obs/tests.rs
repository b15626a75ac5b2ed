//! Tests of DLG-OBS-*: broken delegators fail, correct different paths pass.

use super::super::registry::Check;
use crate::rules::test_support::*;
use a2a_mock_agents::Event;
use serde_json::json;

#[test]
fn obs_02_stream_end_taken_as_outcome() {
    let mut c = Case::new(&delegation(""));
    let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
    c.j.created("a", "t1", "c1", "m1", false);
    c.j.state("a", "t1", "TASK_STATE_WORKING");
    c.j.push(
        "a",
        Event::StreamClosed {
            req: r,
            events: 2,
            reason: "fault".into(),
        },
    );
    assert!(fails(c.check(checker("DLG-OBS-02"))));
    c.j.rpc("a", "SubscribeToTask", json!({"id": "t1"}), &[]);
    assert_eq!(c.check(checker("DLG-OBS-02")), Check::Pass);
}

#[test]
fn obs_02_a_stream_of_the_killed_process_is_followed_up_by_recovery() {
    let stream_case = || {
        let mut c = Case::new(&delegation(""));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        let created = c.j.created("a", "t1", "c1", "m1", false);
        c.crash = Some(created);
        c.j.state("a", "t1", "TASK_STATE_WORKING");
        c.j.push(
            "a",
            Event::StreamClosed {
                req: r,
                events: 2,
                reason: "fault".into(),
            },
        );
        c
    };
    // The restarted process resends the same messageId: the agent's task again.
    let mut c = stream_case();
    assert!(fails(c.check(checker("DLG-OBS-02"))), "no follow-up at all");
    c.j.send("a", "m1", "do the thing", json!({}));
    assert_eq!(c.check(checker("DLG-OBS-02")), Check::Pass);
    // Or lists the tasks of its context.
    let mut c = stream_case();
    c.j.rpc("a", "ListTasks", json!({"contextId": "c1"}), &[]);
    assert_eq!(c.check(checker("DLG-OBS-02")), Check::Pass);
    // A send with another messageId is new work, not a follow-up.
    let mut c = stream_case();
    c.j.send("a", "m9", "do the thing", json!({}));
    assert!(fails(c.check(checker("DLG-OBS-02"))));
    // Without a crash a resend does not replace reading the task.
    let mut c = stream_case();
    c.crash = None;
    c.j.send("a", "m1", "do the thing", json!({}));
    assert!(fails(c.check(checker("DLG-OBS-02"))));
}

#[test]
fn obs_03_an_empty_journal_shows_nothing() {
    let mut c = Case::new(&delegation(""));
    c.done("d1", "FAILED", json!([]));
    assert_eq!(c.check(checker("DLG-OBS-03")), Check::NotApplicable);
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 3, "sha256": "x"}]),
    );
    assert!(
        fails(c.check(checker("DLG-OBS-03"))),
        "fabricated artifacts"
    );
}

#[test]
fn obs_01_a_declined_delegation_has_an_outcome() {
    let mut c = Case::new(&delegation(""));
    assert!(fails(c.check(checker("DLG-OBS-01"))));
    c.outcomes.insert(
        "d1".into(),
        a2a_driver_contract::FromDelegator::Error(a2a_driver_contract::ErrorReply {
            id: Some("d1".into()),
            code: a2a_driver_contract::DriverErrorCode::Unsupported,
            message: "0.3 agents are not supported".into(),
        }),
    );
    assert_eq!(c.check(checker("DLG-OBS-01")), Check::Pass);
}

#[test]
fn obs_03_artifacts_committed_from_a_failed_task() {
    let mut c = good("");
    c.done("d1", "FAILED", json!([{"artifact_id": "artifact-1"}]));
    assert!(fails(c.check(checker("DLG-OBS-03"))));
}

#[test]
fn obs_05_polling_hammers() {
    let mut c = good("");
    for i in 0..40 {
        let (seq, _) = c.j.rpc("a", "GetTask", json!({"id": "t9"}), &[]);
        c.j.at(seq, 1_000_000 + i * 1000);
    }
    assert!(fails(c.check(checker("DLG-OBS-05"))));
}

#[test]
fn obs_04_forged_push_believed() {
    let mut c = good("expect = { state = [\"COMPLETED\"] }");
    c.s.forge_push = true;
    assert!(
        matches!(c.check(checker("DLG-OBS-04")), Check::NotExercised { .. }),
        "no push config: nothing to forge"
    );
    c.j.send(
        "a",
        "m2",
        "do the thing",
        json!({"configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:1/h"}}}),
    );
    assert!(fails(c.check(checker("DLG-OBS-04"))), "never delivered");
    c.forged.push(401);
    assert_eq!(c.check(checker("DLG-OBS-04")), Check::Pass);
    c.done("d1", "FAILED", json!([]));
    assert!(
        fails(c.check(checker("DLG-OBS-04"))),
        "the forged FAILED was believed"
    );
}

#[test]
fn obs_04_only_the_killed_process_configured_push() {
    let mut c = good("expect = { state = [\"COMPLETED\"] }");
    c.s.forge_push = true;
    let (seq, _) = c.j.send(
        "a",
        "m2",
        "do the thing",
        json!({"configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:1/h"}}}),
    );
    // Killed after it configured its webhook: nothing could reach the dead webhook.
    c.crash = Some(seq);
    assert!(
        matches!(c.check(checker("DLG-OBS-04")), Check::NotExercised { .. }),
        "{:?}",
        c.check(checker("DLG-OBS-04"))
    );
    // The restarted process configured its own webhook: the forge must reach it.
    c.j.send(
        "a",
        "m2",
        "do the thing",
        json!({"configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:2/h"}}}),
    );
    assert!(fails(c.check(checker("DLG-OBS-04"))), "never delivered");
    c.forged.push(401);
    assert_eq!(c.check(checker("DLG-OBS-04")), Check::Pass);
}

#[test]
fn obs_04_forged_push_accepted_with_2xx() {
    let mut c = good("expect = { state = [\"COMPLETED\"] }");
    c.s.forge_push = true;
    c.forged.push(204);
    assert!(fails(c.check(checker("DLG-OBS-04"))));
}

#[test]
fn obs_05_push_instead_of_polling_is_not_exercised() {
    let mut c = Case::new(&delegation(""));
    c.j.push(
        "a",
        Event::Push {
            task_id: "t1".into(),
            url: "http://127.0.0.1:1/a2a-webhook/d1".into(),
            status: Some(200),
            error: None,
        },
    );
    assert!(matches!(
        c.check(checker("DLG-OBS-05")),
        Check::NotExercised { .. }
    ));
}

/// `n` pushes accepted for t1, each followed 1 ms later by a GetTask of t1, 10 ms apart;
/// then `polls` GetTasks 1 ms apart.
fn push_prompted_reads(n: u64, polls: u64) -> Case {
    let mut c = Case::new(&delegation(""));
    let get = |c: &mut Case, at: u64| {
        let (s, _) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.at(s, at);
    };
    for i in 0..n {
        let s = c.j.push(
            "a",
            Event::Push {
                task_id: "t1".into(),
                url: "http://127.0.0.1:1/a2a-webhook/d1".into(),
                status: Some(200),
                error: None,
            },
        );
        c.j.at(s, i * 10_000);
        get(&mut c, i * 10_000 + 1_000);
    }
    for i in 0..polls {
        get(&mut c, n * 10_000 + i * 1_000);
    }
    c
}

#[test]
fn obs_05_reads_prompted_by_pushes_are_not_polling() {
    // 17 pushes at 100/s, each read at once: the agent's pace, not hammering.
    let c = push_prompted_reads(17, 0);
    assert!(!fails(c.check(checker("DLG-OBS-05"))));
    // The same pushes plus 10 polls at 1000/s: hammering all the same.
    let c = push_prompted_reads(17, 10);
    assert!(fails(c.check(checker("DLG-OBS-05"))));
}

/// Task t1 WORKING from time 0 (ms) until `end_ms`, then COMPLETED; a GetTask of t1 at each
/// time of `polls` (ms), and the state changes of `changes` (ms, WORKING again) between.
pub(super) fn polled(polls: &[u64], changes: &[u64], end_ms: u64) -> Case {
    let mut c = Case::new(&delegation(""));
    let (s, r) = c.j.send("a", "m1", "do the thing", json!({}));
    c.j.at(s, 0);
    let s = c.j.created("a", "t1", "c1", "m1", false);
    c.j.at(s, 0);
    let s =
        c.j.resp("a", r, 200, None, json!({"result": {"task": {"id": "t1"}}}));
    c.j.at(s, 0);
    let s = c.j.state("a", "t1", "TASK_STATE_WORKING");
    c.j.at(s, 0);
    let mut events: Vec<(u64, bool)> = polls.iter().map(|p| (*p, true)).collect();
    events.extend(changes.iter().map(|c| (*c, false)));
    events.push((end_ms, false));
    events.sort();
    let n = events.len();
    for (i, (ms, poll)) in events.into_iter().enumerate() {
        let s = if poll {
            c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]).0
        } else if i + 1 == n {
            c.j.state("a", "t1", "TASK_STATE_COMPLETED")
        } else {
            c.j.state("a", "t1", "TASK_STATE_WORKING")
        };
        c.j.at(s, ms * 1000);
    }
    c
}

/// Poll times (ms) from `first`, each interval from `interval(i)` (the i-th, from 0), until
/// `until`.
fn schedule(first: u64, until: u64, interval: impl Fn(usize) -> u64) -> Vec<u64> {
    let mut t = first;
    let mut v = Vec::new();
    let mut i = 0;
    while t < until {
        v.push(t);
        t += interval(i).max(1);
        i += 1;
    }
    v
}

/// A deterministic stand-in for jitter: the i-th value of a fixed uniform sequence in [0, 1).
fn u(i: usize) -> f64 {
    ((i as u64).wrapping_mul(2654435761) % 1000) as f64 / 1000.0
}

fn obs05(c: &Case) -> Check {
    c.check(checker("DLG-OBS-05"))
}

#[test]
fn obs_05_a_constant_poller_over_a_long_quiet_stretch_fails() {
    // P = 50 ms: a poller that never slows down (about 20 polls/s, under the 50/s burst cap).
    let c = polled(&schedule(50, 1500, |_| 50), &[], 1500);
    assert!(fails(obs05(&c)), "{:?}", obs05(&c));
    // Constant at 2·P: never three first intervals apart.
    let c = polled(&schedule(50, 2000, |_| 100), &[], 2000);
    assert!(fails(obs05(&c)), "{:?}", obs05(&c));
    // Constant, under load: intervals of 50-90 ms, a few delayed to 300 ms.
    let c = polled(
        &schedule(50, 2000, |i| {
            if i % 7 == 3 {
                300
            } else {
                50 + (u(i) * 40.0) as u64
            }
        }),
        &[],
        2000,
    );
    assert!(fails(obs05(&c)), "{:?}", obs05(&c));
}

#[test]
fn obs_05_backing_off_passes_whatever_the_schedule() {
    let cases: Vec<(&str, Vec<u64>)> = vec![
        // ×1.5 up to 10·P, as the reference delegator.
        (
            "exponential ×1.5, capped",
            schedule(50, 3000, |i| {
                (50.0 * 1.5f64.powi(i as i32)).min(500.0) as u64
            }),
        ),
        // ×2 with equal jitter.
        (
            "exponential ×2, equal jitter",
            schedule(50, 3000, |i| {
                let e = (50u64 << i.min(10)).min(1000) as f64;
                (e / 2.0 + u(i) * e / 2.0) as u64
            }),
        ),
        // ×2 with full jitter: each interval anywhere in [0, E].
        (
            "exponential ×2, full jitter",
            schedule(50, 3000, |i| {
                let e = (50u64 << i.min(10)).min(1000) as f64;
                (u(i + 7) * e) as u64
            }),
        ),
        // Ten polls at P, then every 5·P.
        (
            "stepped",
            schedule(50, 3000, |i| if i < 10 { 50 } else { 250 }),
        ),
        // A capped backoff that reached its cap (500 ms) before this stretch.
        ("at its cap", schedule(300, 3000, |_| 500)),
        // A constant poll three first intervals apart or slower.
        ("constant at 3·P", schedule(50, 3000, |_| 150)),
        // A slow reconciliation poll (push does the rest).
        ("slow reconciliation", vec![900, 2400]),
        // Under load the first intervals came late: it still slows down.
        (
            "exponential, early polls delayed",
            schedule(50, 3000, |i| {
                if i < 3 {
                    300
                } else {
                    (50.0 * 1.5f64.powi(i as i32)).min(500.0) as u64
                }
            }),
        ),
    ];
    for (name, polls) in cases {
        let c = polled(&polls, &[], 3000);
        assert_eq!(obs05(&c), Check::Pass, "{name}: {polls:?}");
    }
}

#[test]
fn obs_05_jittered_backoffs_pass_run_after_run() {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    for run in 0..300 {
        // Doubling from P up to 10·P, full jitter (anywhere in [0, E]) or equal jitter, plus
        // 0-40 ms of the machine; 3 s without a change.
        let full = run % 2 == 0;
        let mut polls = Vec::new();
        let (mut t, mut e) = (50.0f64, 50.0f64);
        while t < 3000.0 {
            polls.push(t as u64);
            let sleep = if full {
                rng.random_range(0.0..=e)
            } else {
                e / 2.0 + rng.random_range(0.0..=e / 2.0)
            };
            t += sleep + rng.random_range(1.0..=40.0);
            e = (e * 2.0).min(500.0);
        }
        let c = polled(&polls, &[], 3000);
        assert_eq!(obs05(&c), Check::Pass, "run {run}: {polls:?}");
    }
}

#[test]
fn obs_05_a_backoff_that_restarts_at_each_change_passes() {
    // The task changes at 1000 and 2500 ms; the poller starts over from P at each change it
    // sees and backs off ×1.5 in between.
    let backoff = |from: u64, until: u64| {
        schedule(from, until, |i| {
            (50.0 * 1.5f64.powi(i as i32)).min(500.0) as u64
        })
    };
    let mut polls = backoff(50, 1000);
    polls.extend(backoff(1010, 2500));
    polls.extend(backoff(2510, 4500));
    let c = polled(&polls, &[1000, 2500], 4500);
    assert_eq!(obs05(&c), Check::Pass);
    // The same constant poller with changes every 300 ms: no stretch long enough to judge.
    let changes: Vec<u64> = (1..10).map(|k| k * 300).collect();
    let c = polled(&schedule(50, 3000, |_| 50), &changes, 3000);
    assert_eq!(obs05(&c), Check::NotApplicable);
}

#[test]
fn obs_05_a_short_wait_is_not_judged() {
    // 600 ms of constant polling: under 20 first intervals, nothing shows yet.
    let c = polled(&schedule(50, 600, |_| 50), &[], 600);
    assert_eq!(obs05(&c), Check::NotApplicable);
    // The polls of a final task are not a running task's polling.
    let mut c = polled(&[20], &[], 40);
    for t in schedule(100, 2000, |_| 50) {
        let (s, _) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.at(s, t * 1000);
    }
    assert_eq!(obs05(&c), Check::NotApplicable);
}

#[test]
fn obs_05_a_restart_starts_a_new_stretch() {
    // Constant polling from 50 to 700 ms, killed, then a backing-off process: the killed
    // process's stretch was too short, the new one backs off.
    let mut polls = schedule(50, 700, |_| 50);
    polls.extend(schedule(800, 2500, |i| {
        (50.0 * 1.5f64.powi(i as i32)).min(500.0) as u64
    }));
    let mut c = polled(&polls, &[], 2500);
    let kill =
        c.j.entries
            .iter()
            .find(|e| e.at_us == 650_000)
            .map(|e| e.seq);
    c.crash = kill;
    assert_eq!(obs05(&c), Check::Pass);
    // Without the kill it is one stretch whose late part (from 550 ms) begins with 50 ms
    // polls, but it slowed down after: still a PASS.
    c.crash = None;
    assert_eq!(obs05(&c), Check::Pass);
}

#[test]
fn obs_05_push_driven_observation_passes_or_is_not_exercised() {
    // Pushes prompt the reads; a reconciliation poll twice in 2.5 s.
    let mut c = polled(&[1000, 2400], &[], 2500);
    for at in [300u64, 600, 900] {
        let s = c.j.push(
            "a",
            Event::Push {
                task_id: "t1".into(),
                url: "http://127.0.0.1:1/a2a-webhook/d1".into(),
                status: Some(200),
                error: None,
            },
        );
        c.j.at(s, at * 1000);
        let (s, _) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.at(s, at * 1000 + 1000);
    }
    assert_eq!(obs05(&c), Check::Pass);
    // Pushes alone, one reconciliation poll: polling did not happen to judge.
    let mut c = polled(&[1000], &[], 2500);
    let s = c.j.push(
        "a",
        Event::Push {
            task_id: "t1".into(),
            url: "http://127.0.0.1:1/a2a-webhook/d1".into(),
            status: Some(200),
            error: None,
        },
    );
    c.j.at(s, 300_000);
    assert!(
        matches!(obs05(&c), Check::NotExercised { .. }),
        "{:?}",
        obs05(&c)
    );
}
