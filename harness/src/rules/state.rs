//! Task states (DLG-STATE-*): outcomes agree with the expectation and the agent's truth; terminal is final; refinements.

use super::evidence::*;
use super::registry::{Check, fail};
use a2a_driver_contract::Outcome;
use a2a_mock_agents::Event;
use serde_json::Value;
use std::collections::BTreeMap;

pub(super) fn outcome_expected(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        if d.expect.state.is_empty() {
            continue;
        }
        any = true;
        match done_state(ev, &d.id) {
            None => {
                return fail(
                    format!(
                        "{} reaches an outcome in {:?}",
                        d.id,
                        names(&d.expect.state)
                    ),
                    "no outcome reported before the bound".to_string(),
                    vec![],
                );
            }
            Some(s) if !d.expect.state.contains(&s) => {
                return fail(
                    format!("{} ends in one of {:?}", d.id, names(&d.expect.state)),
                    format!("it ended in {s}"),
                    vec![],
                );
            }
            Some(_) => {}
        }
        // What the delegator reports is checked against the agent's truth: COMPLETED and
        // REJECTED are the agent's verdicts, so a task must exist and have ended that way.
        // (FAILED and CANCELED may be the delegator's own decision: a rejected artifact, a
        // local deadline, a cap.) A fan-out parent has no task of its own.
        if let Some(s) = done_state(ev, &d.id)
            && matches!(s, Outcome::Completed | Outcome::Rejected)
            && d.children.is_empty()
        {
            let truth = task_truth(ev.journal);
            let tasks = tasks_of(ev, &d.id);
            let Some((tid, _)) = tasks.last() else {
                return fail(
                    format!(
                        "{} reported {s} only after a task for it existed at an agent",
                        d.id
                    ),
                    "no task was ever created for it".to_string(),
                    vec![],
                );
            };
            let (agent_state, seq) = truth
                .get(tid)
                .map(|(st, seq)| (st.trim_start_matches("TASK_STATE_"), *seq))
                .unwrap_or(("UNKNOWN", 0));
            if agent_state != s.as_str() {
                return fail(
                    format!(
                        "{} reports the agent's final state ({agent_state} for task {tid})",
                        d.id
                    ),
                    format!("it reported {s}"),
                    if seq > 0 { vec![seq] } else { vec![] },
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

pub(super) fn terminal_outcome_recorded_and_final(ev: &Evidence) -> Check {
    match no_message_to_terminal_task(ev) {
        Check::Pass | Check::NotApplicable => outcome_expected(ev),
        f => f,
    }
}

pub(super) fn no_message_to_terminal_task(ev: &Evidence) -> Check {
    let truth = task_truth(ev.journal);
    let mut terminal_at: BTreeMap<&str, u64> = BTreeMap::new();
    for e in ev.journal {
        if let Event::TaskState { task_id, state } = &e.event {
            let s = a2a_protocol::TaskState::parse_lenient(state).unwrap_or_default();
            if s.is_terminal() {
                terminal_at.entry(task_id.as_str()).or_insert(e.seq);
            }
        }
    }
    if truth.is_empty() {
        return Check::NotApplicable;
    }
    for r in requests(ev.journal) {
        if let Some(t) = r.task_id()
            && r.is_send()
            && let Some(at) = terminal_at.get(t)
            && r.seq > *at
        {
            return fail(
                format!("no message to task {t} after it was terminal"),
                format!("{} to it", r.method),
                vec![*at, r.seq],
            );
        }
    }
    Check::Pass
}

pub(super) fn refinement_is_new_task_in_context(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        let Some(prev) = &d.refine_of else { continue };
        any = true;
        let prev_tasks = tasks_of(ev, prev);
        let Some((ptid, _)) = prev_tasks.last() else {
            return fail("the refined delegation had a task", "none", vec![]);
        };
        let pctx = ev.journal.iter().find_map(|e| match &e.event {
            Event::TaskCreated {
                task_id,
                context_id,
                ..
            } if task_id == ptid => Some(context_id.clone()),
            _ => None,
        });
        let sends: Vec<Req> = requests(ev.journal)
            .into_iter()
            .filter(|r| r.is_send() && delegation_of(ev, r).is_some_and(|x| x.id == d.id))
            .collect();
        let Some(r) = sends.first() else {
            return fail("a new task for the refinement", "no send", vec![]);
        };
        if r.task_id().is_some() {
            return fail(
                "a new task (no taskId)",
                "the refinement continued the old task",
                vec![r.seq],
            );
        }
        let refs: Vec<&str> = r
            .params
            .pointer("/message/referenceTaskIds")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let ctx = r
            .params
            .pointer("/message/contextId")
            .and_then(Value::as_str);
        if !refs.contains(&ptid.as_str()) || ctx != pctx.as_deref() {
            return fail(
                format!("contextId {pctx:?} and referenceTaskIds [{ptid}]"),
                format!("contextId {ctx:?}, referenceTaskIds {refs:?}"),
                vec![r.seq],
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
    use serde_json::json;

    #[test]
    fn outcome_disagrees_with_expectation_or_truth() {
        let mut c = good("expect = { state = [\"COMPLETED\"] }");
        assert_eq!(c.check(checker("DLG-STATE-02")), Check::Pass);
        c.done("d1", "FAILED", json!([]));
        assert!(fails(c.check(checker("DLG-STATE-02"))));
        c.outcomes.clear();
        assert!(fails(c.check(checker("DLG-OBS-01"))), "no outcome at all");
    }

    #[test]
    fn state_05_message_to_terminal_task() {
        let mut c = good("");
        assert_eq!(c.check(checker("DLG-STATE-05")), Check::Pass);
        c.j.answer("a", "m9", "t1", "c1", "more please", &[]);
        assert!(fails(c.check(checker("DLG-STATE-05"))));
        assert!(fails(c.check(checker("DLG-STATE-03"))));
    }

    #[test]
    fn state_06_refinement_without_reference() {
        let text = format!(
            "{}[[delegate]]\nid = \"d2\"\ncapability = \"s\"\ntext = \"refine it\"\nrefine_of = \"d1\"\n",
            delegation("")
        );
        let mut c = Case::new(&text);
        c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.state("a", "t1", "TASK_STATE_COMPLETED");
        c.j.send(
            "a",
            "m2",
            "refine it",
            json!({"message": {"contextId": "c1", "referenceTaskIds": ["t1"]}}),
        );
        assert_eq!(c.check(checker("DLG-STATE-06")), Check::Pass);
        let mut c2 = Case::new(&text);
        c2.j = J::new();
        c2.j.send("a", "m1", "do the thing", json!({}));
        c2.j.created("a", "t1", "c1", "m1", false);
        c2.j.send("a", "m2", "refine it", json!({}));
        assert!(fails(c2.check(checker("DLG-STATE-06"))));
    }

    #[test]
    fn claimed_completion_without_a_task_or_against_the_truth_fails() {
        let mut c = Case::new(&delegation("expect = { state = [\"COMPLETED\"] }"));
        c.done("d1", "COMPLETED", json!([]));
        assert!(
            fails(c.check(checker("DLG-OBS-01"))),
            "nothing was ever sent"
        );
        let mut c = good("expect = { state = [\"COMPLETED\", \"FAILED\"] }");
        c.j.state("a", "t1", "TASK_STATE_FAILED");
        assert!(
            fails(c.check(checker("DLG-STATE-02"))),
            "the agent's task FAILED"
        );
    }
}
