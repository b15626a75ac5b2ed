//! Retries (DLG-RETRY-*): bounded, Retry-After honoured, indefinite sends resent with the same id, dead letters.

use super::evidence::*;
use super::registry::{Check, fail};
use super::send::message_id_stable_across_resends;
use a2a_driver_contract::Outcome;
use a2a_mock_agents::{Entry, Event};
use std::collections::BTreeMap;

pub(super) fn retries_bounded(ev: &Evidence) -> Check {
    let mut by_mid: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
    for r in requests(ev.journal) {
        if r.is_new_send()
            && let (Some(m), Some(_)) = (r.message_id(), delegation_of(ev, &r))
        {
            by_mid
                .entry((r.agent.to_string(), m.to_string()))
                .or_default()
                .push(r.seq);
        }
    }
    if by_mid.is_empty() {
        return Check::NotApplicable;
    }
    for r in requests(ev.journal) {
        let Some(d) = (r.is_new_send()).then(|| delegation_of(ev, &r)).flatten() else {
            continue;
        };
        let key = (
            r.agent.to_string(),
            r.message_id().unwrap_or_default().to_string(),
        );
        let n = by_mid.get(&key).map_or(0, Vec::len);
        // A restart may add one recovery resend.
        let allowed = d.max_retries as usize + 1 + usize::from(ev.crash_seq.is_some());
        if n > allowed {
            return fail(
                format!("at most {} sends of one intent", allowed),
                format!("{n} sends"),
                by_mid.get(&key).cloned().unwrap_or_default(),
            );
        }
    }
    Check::Pass
}

pub(super) fn retry_after_honoured(ev: &Evidence) -> Check {
    let reqs = requests(ev.journal);
    let mut any = false;
    for r in &reqs {
        let Some(Entry {
            event: Event::Response { status: 429, .. },
            ..
        }) = response_of(ev.journal, r.req)
        else {
            continue;
        };
        let retry_after_ms = ev
            .scenario
            .network
            .agents
            .iter()
            .flat_map(|a| &a.rules)
            .find_map(|ru| match &ru.fault {
                Some(a2a_mock_agents::Fault::HttpStatus {
                    status: 429,
                    retry_after_s,
                }) => *retry_after_s,
                _ => None,
            });
        let Some(ra) = retry_after_ms else { continue };
        let at = ev
            .journal
            .iter()
            .find(|e| e.seq == r.seq)
            .map_or(0, |e| e.at_us);
        if let Some(next) = reqs
            .iter()
            .find(|o| o.seq > r.seq && o.is_new_send() && o.message_id() == r.message_id())
        {
            any = true;
            let next_at = ev
                .journal
                .iter()
                .find(|e| e.seq == next.seq)
                .map_or(0, |e| e.at_us);
            if next_at.saturating_sub(at) < ra * 1_000_000 * 9 / 10 {
                return fail(
                    format!("the resend waits Retry-After {ra} s"),
                    format!("it came after {} ms", next_at.saturating_sub(at) / 1000),
                    vec![r.seq, next.seq],
                );
            }
        }
    }
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

pub(super) fn indefinite_send_resent_with_same_id(ev: &Evidence) -> Check {
    let dropped = ev.journal.iter().any(|e| matches!(&e.event, Event::ConnectionDropped { phase, .. } if phase == "after_processing"));
    if !dropped {
        return Check::NotApplicable;
    }
    message_id_stable_across_resends(ev)
}

pub(super) fn exhausted_retries_dead_lettered(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        if !d.expect.state.contains(&Outcome::DeadLettered) {
            continue;
        }
        any = true;
        if done_state(ev, &d.id) != Some(Outcome::DeadLettered) {
            return fail(
                format!("{} dead-lettered", d.id),
                format!("outcome {:?}", shown_state(ev, &d.id)),
                vec![],
            );
        }
        let in_dlq = snapshot_records(ev)
            .into_iter()
            .find(|r| r.id() == Some(d.id.as_str()))
            .is_some_and(|r| r.in_dlq());
        if !in_dlq {
            return fail(
                format!(
                    "{} in the dead-letter table with request, errors and chain",
                    d.id
                ),
                "no dlq entry in the snapshot",
                vec![],
            );
        }
    }
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

#[cfg(test)]
mod tests {
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
    fn retry_04_not_dead_lettered() {
        let mut c = Case::new(&delegation("expect = { state = [\"DEAD_LETTERED\"] }"));
        c.done("d1", "DEAD_LETTERED", json!([]));
        c.snapshot = Some(json!({"records": [{"id": "d1", "dlq": {"chain": []}}]}));
        assert_eq!(c.check(checker("DLG-RETRY-04")), Check::Pass);
        c.snapshot = Some(json!({"records": [{"id": "d1", "dlq": false}]}));
        assert!(fails(c.check(checker("DLG-RETRY-04"))));
        c.done("d1", "FAILED", json!([]));
        assert!(fails(c.check(checker("DLG-RETRY-04"))));
    }
}
