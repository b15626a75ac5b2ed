//! Task states (DLG-STATE-*): outcomes agree with the expectation and the agent's truth; terminal is final; refinements.

use super::evidence::*;
use super::registry::{Check, fail};
use a2a_driver_contract::{Done, Outcome};
use a2a_mock_agents::Event;
use a2a_protocol::Method;
use serde_json::Value;
use std::collections::BTreeMap;

/// The reported outcome is one the scenario expects and agrees with the agent's truth (the
/// consequence check other rules build on; the DLG-STATE rules have their own checkers).
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
                        "{} reaches an outcome in: {}",
                        d.id,
                        super::words::list(names(&d.expect.state))
                    ),
                    "no outcome reported before the bound".to_string(),
                    vec![],
                );
            }
            Some(s) if !d.expect.state.contains(&s) => {
                return fail(
                    format!(
                        "{} ends in one of: {}",
                        d.id,
                        super::words::list(names(&d.expect.state))
                    ),
                    format!("it ended in {s}"),
                    vec![],
                );
            }
            Some(_) => {}
        }
    }
    // What the delegator reports is checked against the agent's truth: COMPLETED and REJECTED
    // are the agent's verdicts, so a task must exist and have ended that way. (FAILED and
    // CANCELED may be the delegator's own decision: a rejected artifact, a local deadline, a
    // cap.) A fan-out parent has no task of its own; each child is judged on its own task.
    let truth = task_truth(ev.journal);
    for w in works(ev).filter(|w| !w.delegation.expect.state.is_empty()) {
        let id = w.id;
        if let Some(s) = done_state(ev, id)
            && matches!(s, Outcome::Completed | Outcome::Rejected)
        {
            let tasks = tasks_of(ev, id);
            let Some((tid, _)) = tasks.last() else {
                return fail(
                    format!(
                        "{} reported {s} only after a task for it existed at an agent",
                        id
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
                        id
                    ),
                    format!("it reported {s}"),
                    if seq > 0 { vec![seq] } else { vec![] },
                );
            }
        }
    }
    Check::held_if_seen(any)
}

/// The `done` of delegation `id`, or a failure naming that none came before the bound.
pub(super) fn reported_done<'a>(ev: &'a Evidence, id: &str) -> Result<&'a Done, Check> {
    done_of(ev, id).ok_or_else(|| {
        fail(
            format!("{id} reaches an outcome"),
            "no outcome reported before the bound",
            vec![],
        )
    })
}

/// The delegation followed its task to the agent's final state: the final state reached the
/// delegator (a stream event, a poll or a push after it) before its `done`, and the `done`
/// reports it. Unless `agent_verdict` is required, a FAILED, CANCELED, DEAD_LETTERED or LOST
/// `done` may also be the delegator's own decision (a rejected artifact, a protocol error, a
/// local deadline) taken after it observed the task at least once or canceled it.
pub(super) fn observed_to_final(
    ev: &Evidence,
    id: &str,
    task: &str,
    agent_verdict: bool,
) -> Result<u64, Check> {
    let done = reported_done(ev, id)?;
    let until = seen_until(ev, id);
    let cancel_sent = requests(ev.journal).iter().any(|r| {
        r.seq <= until
            && r.calls(&[Method::CancelTask])
            && r.params.get("id").and_then(Value::as_str) == Some(task)
    });
    let observed = delivered_between(ev.journal, task, 0, until);
    let own_decision = !agent_verdict
        && matches!(
            done.state,
            Outcome::Failed | Outcome::Canceled | Outcome::DeadLettered | Outcome::Lost
        )
        && (cancel_sent || observed.is_some());
    let Some((truth, at)) = terminal_truth(ev.journal, task).filter(|(_, at)| *at <= until) else {
        return if own_decision {
            Ok(observed.unwrap_or(until))
        } else {
            Err(fail(
                format!("{id} observes task {task} until its final state"),
                format!(
                    "it reported {} while the task was still open at the agent{}",
                    done.state,
                    if cancel_sent || observed.is_some() {
                        ""
                    } else {
                        " (never observed, never canceled)"
                    }
                ),
                vec![],
            ))
        };
    };
    let Some(seen) = delivered_between(ev.journal, task, at, until) else {
        return if own_decision && done.state.as_str() != "COMPLETED" {
            Ok(observed.unwrap_or(until))
        } else {
            Err(fail(
                format!(
                    "the final state {truth} of task {task} reaches the delegator before {id}'s done"
                ),
                format!(
                    "it reported {} without any stream event, poll or push after the final state",
                    done.state
                ),
                vec![at],
            ))
        };
    };
    let agrees = done.state.as_str() == truth
        // A delegator may reject a completed task's results (validation) or time out on its own:
        // judged by the artifact and limit rules, not here.
        || !agent_verdict
            && matches!(done.state, Outcome::Failed | Outcome::DeadLettered | Outcome::Canceled);
    if !agrees {
        return Err(fail(
            format!("{id} reports the agent's final state ({truth} for task {task})"),
            format!("it reported {}", done.state),
            vec![at, seen],
        ));
    }
    Ok(seen)
}

/// DLG-STATE-01: while the agent's task was SUBMITTED or WORKING the delegation stayed open and
/// was observed to the final state.
pub(super) fn open_states_kept_observed(ev: &Evidence) -> Check {
    let mut any = false;
    for w in works(ev) {
        let (d, id) = (w.delegation, w.id);
        if d.expect.state.is_empty() || d.expect.nothing_sent {
            continue;
        }
        // No task (a Message reply, a refusal, a definite error): not this rule's situation.
        let Ok((task, _, _)) = work_task(ev, id) else {
            continue;
        };
        let open = ev.journal.iter().any(|e| {
            matches!(&e.event, Event::TaskState { task_id, state } if *task_id == task
                && matches!(state.trim_start_matches("TASK_STATE_"), "SUBMITTED" | "WORKING"))
        });
        if !open {
            continue;
        }
        any = true;
        if let Err(f) = observed_to_final(ev, id, &task, false) {
            return f;
        }
    }
    Check::held_if_seen(any)
}

/// DLG-STATE-02: the agent's task COMPLETED, the delegator learnt it, and reported COMPLETED with
/// every artifact the agent delivered committed. Each child of a fan-out is judged on its own
/// task and `done`, against its parent's expectation.
pub(super) fn completed_committed(ev: &Evidence) -> Check {
    let mut any = false;
    for w in works(ev) {
        let (d, id) = (w.delegation, w.id);
        if !d.expect.state.contains(&Outcome::Completed) {
            continue;
        }
        // The situation: a task of the delegation's work (a Message reply has none).
        let Ok((task, _, _)) = work_task(ev, id) else {
            continue;
        };
        let done = match reported_done(ev, id) {
            Ok(x) => x,
            Err(f) => return f,
        };
        // Where the case also expects another outcome (validation may turn a completed task's
        // results down, a deadline may cut it), only a COMPLETED report is this rule's to judge.
        if d.expect.state.len() > 1 && done.state != Outcome::Completed {
            continue;
        }
        any = true;
        match terminal_truth(ev.journal, &task) {
            Some((t, at)) if t == "COMPLETED" => {
                if let Err(f) = observed_to_final(ev, id, &task, true) {
                    return f;
                }
                if done.state != Outcome::Completed {
                    return fail(
                        format!("{} reports COMPLETED (task {task} completed)", id),
                        format!("it reported {}", done.state),
                        vec![at],
                    );
                }
                for (aid, (_, _, seq)) in artifact_truth(ev.journal, &task) {
                    if !done.artifacts.iter().any(|a| a.artifact_id == aid) {
                        return fail(
                            format!("artifact {aid} of the completed task committed"),
                            "missing from the outcome",
                            vec![seq],
                        );
                    }
                }
            }
            truth => {
                if done.state == Outcome::Completed {
                    return fail(
                        format!(
                            "{} reports COMPLETED only for a task the agent completed",
                            id
                        ),
                        format!(
                            "task {task} ended {}",
                            truth.map_or("nowhere (still open)".to_string(), |t| t.0)
                        ),
                        vec![],
                    );
                }
            }
        }
    }
    Check::held_if_seen(any)
}

/// DLG-STATE-04: an UNSPECIFIED or unknown state reached the delegator, which recorded it and
/// went on observing the task to its final state (or its deadline).
pub(super) fn unknown_state_observed(ev: &Evidence) -> Check {
    let mut any = false;
    for w in works(ev) {
        let (d, id) = (w.delegation, w.id);
        if d.expect.state.is_empty() {
            continue;
        }
        let Ok((task, agent, created)) = work_task(ev, id) else {
            continue;
        };
        // The odd state: UNSPECIFIED or a name the protocol does not know, as recorded; a
        // scenario may also mangle state names on the wire (then any delivery carries it).
        let odd = ev.journal.iter().find_map(|e| match &e.event {
            Event::TaskState { task_id, state }
                if *task_id == task
                    && a2a_protocol::TaskState::parse_lenient(state)
                        .is_none_or(|s| s == a2a_protocol::TaskState::Unspecified) =>
            {
                Some(e.seq)
            }
            _ => None,
        });
        // Only a task with an odd state is this rule's situation.
        let Some(cause) = odd.or_else(|| mangles_states(ev, &agent).then_some(created)) else {
            continue;
        };
        any = true;
        let until = seen_until(ev, id);
        if delivered_between(ev.journal, &task, cause, until).is_none() {
            return fail(
                format!(
                    "the odd state of task {task} reaches the delegator before {}'s done",
                    id
                ),
                "no stream event, poll or push delivered it: the situation never arose",
                odd.into_iter().collect(),
            );
        }
        let done = match observed_to_final(ev, id, &task, false) {
            Ok(_) => done_of(ev, id),
            Err(f) => return f,
        };
        if let Some(done) = done
            && !d.expect.state.contains(&done.state)
        {
            return fail(
                format!(
                    "{} ends in one of: {}",
                    id,
                    super::words::list(names(&d.expect.state))
                ),
                format!("it ended in {}", done.state),
                vec![],
            );
        }
    }
    Check::held_if_seen(any)
}

/// Whether `agent`'s script sends states the protocol does not name without the journal
/// recording them as task states: a `lowercase_enums` mutation (every delivery of its tasks
/// carries one) or an `unknown_state` step (sent on the wire only).
fn mangles_states(ev: &Evidence, agent: &str) -> bool {
    ev.scenario
        .network
        .agents
        .iter()
        .filter(|a| a.name == agent)
        .flat_map(|a| &a.rules)
        .any(|r| {
            r.mutate
                .iter()
                .any(|m| matches!(m, a2a_mock_agents::script::Mutation::LowercaseEnums))
                || r.steps
                    .iter()
                    .any(|s| matches!(s, a2a_mock_agents::ScriptStep::UnknownState { .. }))
        })
}

/// DLG-STATE-03: the agent's FAILED, CANCELED or REJECTED reached the delegator and was reported
/// as final; nothing more was sent to the task.
pub(super) fn terminal_outcome_recorded_and_final(ev: &Evidence) -> Check {
    if let f @ Check::Fail { .. } = no_message_to_terminal_task(ev) {
        return f;
    }
    let mut any = false;
    for w in works(ev) {
        let (d, id) = (w.delegation, w.id);
        let terminal = [Outcome::Failed, Outcome::Canceled, Outcome::Rejected];
        if d.expect.state.is_empty() || !d.expect.state.iter().all(|s| terminal.contains(s)) {
            continue;
        }
        // The situation: the agent ended the task FAILED, CANCELED or REJECTED before the
        // delegation's done (a refused or errored delegation with no task is not in it). After
        // the delegator's own CancelTask (a caller's cancel, its deadline) the final state is
        // not the agent's verdict: the delegator may report its own decision.
        let Ok((task, agent, _)) = work_task(ev, id) else {
            continue;
        };
        let until = seen_until(ev, id);
        let agent_final = terminal_truth(ev.journal, &task).is_some_and(|(t, at)| {
            at <= until && matches!(t.as_str(), "FAILED" | "CANCELED" | "REJECTED")
        });
        let canceled_by_delegator = requests(ev.journal).iter().any(|r| {
            r.calls(&[Method::CancelTask])
                && r.params.get("id").and_then(Value::as_str) == Some(task.as_str())
        });
        if !agent_final {
            continue;
        }
        any = true;
        if let Err(f) = observed_to_final(ev, id, &task, !canceled_by_delegator) {
            return f;
        }
        if let Some(done) = done_of(ev, id)
            && !d.expect.state.contains(&done.state)
        {
            return fail(
                format!(
                    "{} ends in one of: {}",
                    id,
                    super::words::list(names(&d.expect.state))
                ),
                format!("it ended in {}", done.state),
                vec![],
            );
        }
        // After its own CancelTask the final state is not the agent's verdict (see above).
        if !canceled_by_delegator && let Err(f) = final_message_recorded(ev, id, &task, &agent) {
            return f;
        }
    }
    Check::held_if_seen(any)
}

/// The agent's status messages for final state `state` (without the `TASK_STATE_` prefix), as
/// `agent`'s script sets them (`state` steps with a `message`), trimmed.
fn scripted_final_messages(ev: &Evidence, agent: &str, state: &str) -> Vec<String> {
    agent_spec(ev, agent)
        .into_iter()
        .flat_map(|a| &a.rules)
        .flat_map(|r| &r.steps)
        .filter_map(|s| match s {
            a2a_mock_agents::ScriptStep::State {
                state: st,
                message: Some(m),
                ..
            } if st.trim_start_matches("TASK_STATE_") == state && !m.trim().is_empty() => {
                Some(m.trim().to_string())
            }
            _ => None,
        })
        .collect()
}

/// DLG-STATE-03's "with the agent's status message": when the delegation reports the agent's
/// own final state and the agent's script gives that state a status message, the `done`
/// carries it (in `message`, as the contract asks, or within `reason`). A message sent only
/// with the final status is critical information that a delegator must read from the task
/// when its stream dropped before it (spec §3.7).
fn final_message_recorded(ev: &Evidence, id: &str, task: &str, agent: &str) -> Result<(), Check> {
    let (Some(done), Some((truth, at))) = (done_of(ev, id), terminal_truth(ev.journal, task))
    else {
        return Ok(());
    };
    if done.state.as_str() != truth {
        return Ok(());
    }
    let said = scripted_final_messages(ev, agent, &truth);
    if said.is_empty() {
        return Ok(());
    }
    let carried = [done.message.as_deref(), done.reason.as_deref()]
        .into_iter()
        .flatten()
        .any(|t| said.iter().any(|m| super::ctx::holds_text(t, m)));
    if carried {
        Ok(())
    } else {
        Err(fail(
            format!(
                "{id}: {truth} recorded with the agent's status message ({})",
                super::words::list(said.iter().map(|m| format!("\"{m}\"")))
            ),
            format!(
                "done.message {}, done.reason {}",
                super::words::quoted_or(done.message.as_deref(), "absent"),
                super::words::quoted_or(done.reason.as_deref(), "absent")
            ),
            vec![at],
        ))
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
                format!(
                    "contextId {} and referenceTaskIds ({ptid})",
                    super::words::or_none(pctx.as_deref(), "absent")
                ),
                format!(
                    "contextId {}, referenceTaskIds ({})",
                    super::words::or_none(ctx, "absent"),
                    super::words::list(&refs)
                ),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
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
    fn state_02_judges_each_child_of_a_fan_out() {
        let r = checker("DLG-STATE-02");
        let good = || fan_out_completed("2026-03-20T10:00:01.123Z");
        assert_eq!(good().check(r), Check::Pass);
        // A child whose task completed reported FAILED.
        let mut bad = good();
        bad.done("d1-b", "FAILED", json!([]));
        assert!(fails(bad.check(r)));
        // A child that left its task's artifact out of its outcome.
        let mut bad = good();
        bad.done("d1-a", "COMPLETED", json!([]));
        assert!(fails(bad.check(r)));
        // A child that reported COMPLETED for a task the agent failed.
        let mut bad = good();
        bad.j.state("a", "t2", "TASK_STATE_FAILED");
        assert!(fails(bad.check(r)));
        assert!(fails(bad.check(checker("DLG-OBS-01"))));
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

    #[test]
    fn outcomes_without_a_journal_prove_no_state_rule() {
        for (rule, state) in [
            ("DLG-STATE-01", "COMPLETED"),
            ("DLG-STATE-02", "COMPLETED"),
            ("DLG-STATE-04", "COMPLETED"),
            ("DLG-STATE-03", "FAILED"),
            ("DLG-OBS-01", "COMPLETED"),
        ] {
            let mut c = Case::new(&delegation(&format!(
                "expect = {{ state = [\"{state}\"] }}"
            )));
            c.done("d1", state, json!([]));
            // No task, no situation: never a pass (the runner fails a listed rule whose work was
            // never sent).
            assert_ne!(
                c.check(checker(rule)),
                Check::Pass,
                "{rule}: {state} with an empty journal"
            );
        }
    }

    #[test]
    fn an_outcome_before_the_final_state_reached_the_delegator_has_no_cause() {
        let mut c = good("expect = { state = [\"COMPLETED\"] }");
        for rule in ["DLG-STATE-01", "DLG-STATE-02", "DLG-OBS-01"] {
            assert_eq!(c.check(checker(rule)), Check::Pass, "{rule}");
        }
        // The `done` came while the journal stood at the task's WORKING (seq 4).
        c.done_at.insert("d1".into(), 4);
        for rule in ["DLG-STATE-01", "DLG-STATE-02", "DLG-OBS-01"] {
            assert!(fails(c.check(checker(rule))), "{rule}");
        }
    }

    #[test]
    fn state_03_the_agents_failure_must_have_reached_the_delegator() {
        let mut c = Case::new(&delegation("expect = { state = [\"FAILED\"] }"));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.resp("a", r, 200, None, json!({}));
        c.j.state("a", "t1", "TASK_STATE_FAILED");
        c.done("d1", "FAILED", json!([]));
        assert!(
            fails(c.check(checker("DLG-STATE-03"))),
            "never read after FAILED"
        );
        let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", g, 200, None, json!({}));
        assert_eq!(c.check(checker("DLG-STATE-03")), Check::Pass);
    }

    #[test]
    fn state_03_the_agents_final_status_message_is_recorded() {
        let read_after_failed = |message: Option<&str>, reason: Option<&str>| {
            let mut c = Case::new(&delegation("expect = { state = [\"FAILED\"] }"));
            c.script(
                "a",
                json!({"steps": [{"do": "state", "state": "TASK_STATE_FAILED", "message": "Payment declined: the card expired"}]}),
            );
            let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
            c.j.created("a", "t1", "c1", "m1", false);
            c.j.resp("a", r, 200, None, json!({}));
            c.j.state("a", "t1", "TASK_STATE_FAILED");
            let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
            c.j.resp("a", g, 200, None, json!({}));
            c.done("d1", "FAILED", json!([]));
            if let Some(a2a_driver_contract::FromDelegator::Done(d)) = c.outcomes.get_mut("d1") {
                d.message = message.map(str::to_string);
                d.reason = reason.map(str::to_string);
            }
            c
        };
        let c = read_after_failed(Some("Payment declined: the card expired"), None);
        assert_eq!(c.check(checker("DLG-STATE-03")), Check::Pass);
        // Within the reason, in other words around it: recorded all the same.
        let c = read_after_failed(
            None,
            Some("the agent failed the task: Payment declined:  the card expired"),
        );
        assert_eq!(c.check(checker("DLG-STATE-03")), Check::Pass);
        // Lost (a message only the final status carried, missed after a dropped stream).
        let c = read_after_failed(None, Some("the task failed"));
        assert!(fails(c.check(checker("DLG-STATE-03"))));
        // A CANCELED the delegator asked for is its own decision, not the scripted one's.
        let mut c = Case::new(&delegation("expect = { state = [\"CANCELED\"] }"));
        c.script(
            "a",
            json!({"steps": [{"do": "wait", "ms": 9000},
                             {"do": "state", "state": "TASK_STATE_CANCELED", "message": "the agent gave up"}]}),
        );
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.resp("a", r, 200, None, json!({}));
        let (_, k) = c.j.rpc("a", "CancelTask", json!({"id": "t1"}), &[]);
        c.j.state("a", "t1", "TASK_STATE_CANCELED");
        c.j.resp("a", k, 200, None, json!({}));
        c.done("d1", "CANCELED", json!([]));
        assert_eq!(c.check(checker("DLG-STATE-03")), Check::Pass);
    }

    #[test]
    fn state_04_the_odd_state_must_have_been_delivered() {
        let mut c = Case::new(&delegation("expect = { state = [\"COMPLETED\"] }"));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.resp("a", r, 200, None, json!({}));
        let odd = c.j.state("a", "t1", "TASK_STATE_UNSPECIFIED");
        c.j.state("a", "t1", "TASK_STATE_COMPLETED");
        c.done("d1", "COMPLETED", json!([]));
        c.done_at.insert("d1".into(), odd);
        assert!(fails(c.check(checker("DLG-STATE-04"))));
        c.done_at.clear();
        let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", g, 200, None, json!({}));
        assert_eq!(c.check(checker("DLG-STATE-04")), Check::Pass);
    }

    /// [`good`] d1 next to d2, answered by a `Message` (no task), expecting `d2_states`.
    fn next_to_a_message_reply(d1_states: &str, d2_states: &str) -> Case {
        let mut c = good(&format!(
            "expect = {{ state = [{d1_states}] }}\n[[delegate]]\nid = \"d2\"\ncapability = \"s\"\ntext = \"say hello\"\nexpect = {{ state = [{d2_states}] }}"
        ));
        let (_, r) = c.j.send("a", "m2", "say hello", json!({}));
        c.j.resp(
            "a",
            r,
            200,
            None,
            json!({"result": {"message": {"messageId": "r2"}}}),
        );
        c.done("d2", "COMPLETED", json!([]));
        c
    }

    #[test]
    fn a_delegation_outside_the_situation_is_not_judged() {
        let mut c = next_to_a_message_reply("\"COMPLETED\"", "\"COMPLETED\"");
        // d2 has no task: STATE-01, -02 judge d1 alone; nothing odd: STATE-04 has no situation.
        for rule in ["DLG-STATE-01", "DLG-STATE-02"] {
            assert_eq!(c.check(checker(rule)), Check::Pass, "{rule}");
        }
        assert_eq!(c.check(checker("DLG-STATE-04")), Check::NotApplicable);
        // An unknown state the agent sends on the wire only (the journal keeps no state).
        let mut odd = next_to_a_message_reply("\"COMPLETED\"", "\"COMPLETED\"");
        odd.script(
            "a",
            json!({"steps": [{"do": "unknown_state", "state": "TASK_STATE_SLEEPING"}]}),
        );
        assert_eq!(odd.check(checker("DLG-STATE-04")), Check::Pass);
        // d1's genuine violation still fails: done before the final state reached the delegator.
        c.done_at.insert("d1".into(), 4);
        for rule in ["DLG-STATE-01", "DLG-STATE-02"] {
            assert!(fails(c.check(checker(rule))), "{rule}");
        }
    }

    #[test]
    fn state_02_a_turned_down_completion_the_case_allows_is_not_judged() {
        // The agent completed; the case allows FAILED too (its results may be rejected).
        let mut c = good("expect = { state = [\"COMPLETED\", \"FAILED\"] }");
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-STATE-02")), Check::NotApplicable);
        // Only COMPLETED expected: FAILED is wrong.
        let mut c = good("expect = { state = [\"COMPLETED\"] }");
        c.done("d1", "FAILED", json!([]));
        assert!(fails(c.check(checker("DLG-STATE-02"))));
    }

    #[test]
    fn state_03_judges_the_agents_own_terminal_state_only() {
        // The delegator canceled the task (its own deadline): the agent's CANCELED is not the
        // agent's verdict, FAILED (the delegator's own decision) is correct.
        let mut c = Case::new(&delegation(
            "expect = { state = [\"FAILED\", \"CANCELED\"] }",
        ));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.resp("a", r, 200, None, json!({}));
        let (_, k) = c.j.rpc("a", "CancelTask", json!({"id": "t1"}), &[]);
        c.j.state("a", "t1", "TASK_STATE_CANCELED");
        c.j.resp("a", k, 200, None, json!({}));
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-STATE-03")), Check::Pass);
        // The agent failed the task itself and the delegator reported something else.
        let mut c = Case::new(&delegation(
            "expect = { state = [\"FAILED\", \"CANCELED\"] }",
        ));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.resp("a", r, 200, None, json!({}));
        c.j.state("a", "t1", "TASK_STATE_FAILED");
        let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", g, 200, None, json!({}));
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-STATE-03")), Check::Pass);
        c.done("d1", "CANCELED", json!([]));
        assert!(fails(c.check(checker("DLG-STATE-03"))));
    }
}
