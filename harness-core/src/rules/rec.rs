//! Recovery after a crash (DLG-REC-*, DLG-SEND-01).

use super::evidence::*;
use super::registry::{Check, and_then, fail};
use super::state::outcome_expected;
use a2a_driver_contract::Outcome;
use a2a_mock_agents::Event;
use a2a_protocol::Method;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

pub(super) fn nothing_lost_across_restart(ev: &Evidence) -> Check {
    if ev.crash_seq.is_none() {
        return Check::NotApplicable;
    }
    for d in &ev.scenario.delegations {
        if !ev.outcomes.contains_key(&d.id) {
            return fail(
                format!("{} driven to an outcome after the restart", d.id),
                "lost: no outcome",
                vec![],
            );
        }
    }
    outcome_expected(ev)
}

/// Every `contextId` that `agent` gave the delegator by journal entry `until`: in its answers
/// (responses and stream events) to the delegator's requests and in the push notifications its
/// webhook accepted. Only these are contexts the delegator can know from the agent; a context
/// it minted itself is not one (spec §3.4.1).
fn contexts_given(j: &[a2a_mock_agents::Entry], agent: &str, until: u64) -> BTreeSet<String> {
    let to_delegator: BTreeSet<u64> = requests(j)
        .iter()
        .filter(|r| r.agent == agent && !r.from_mock_peer())
        .map(|r| r.req)
        .collect();
    let mut out = BTreeSet::new();
    for e in j.iter().filter(|e| e.seq <= until && e.agent == agent) {
        match &e.event {
            Event::Response { req, body, .. } if to_delegator.contains(req) => {
                collect_context_ids(body, &mut out)
            }
            Event::SseEvent { req, data, .. } if to_delegator.contains(req) => {
                collect_context_ids(data, &mut out)
            }
            // A push carries its task's context (the journal keeps no push body).
            Event::Push {
                task_id,
                status: Some(s),
                ..
            } if (200..300).contains(s) => {
                if let Some((_, _, context_id)) = creation_of(j, task_id) {
                    out.insert(context_id);
                }
            }
            _ => {}
        }
    }
    out
}

/// Every string under a `contextId` key in `v`, recursively.
fn collect_context_ids(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                match (k.as_str(), x) {
                    ("contextId", Value::String(c)) => {
                        out.insert(c.clone());
                    }
                    _ => collect_context_ids(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_context_ids(x, out)),
        _ => {}
    }
}

/// DLG-REC-02: a send in flight at the kill (its record may hold no task id) is resolved after
/// the restart by resending it with the same `messageId`, by `ListTasks` in a context the agent
/// gave before the kill, or (when the task id may have been learnt) by reading the task it
/// created. A `ListTasks` in a context the agent never gave presumes a client-minted context
/// (DLG-CTX-01's SHOULD NOT) and resolves nothing.
pub(super) fn unknown_task_resolved_after_restart(ev: &Evidence) -> Check {
    let Some(crash) = ev.crash_seq else {
        return Check::NotApplicable;
    };
    let reqs = requests(ev.journal);
    // A delegation whose outcome had reached the harness by the kill was no open record: the
    // killed process had finished it, and there is nothing to resolve.
    let ended_before_kill = |r: &Req| {
        delegation_of(ev, r).is_some_and(|d| ev.done_at.get(&d.id).is_some_and(|s| *s <= crash))
    };
    // Nor was a send whose every task the delegator had read in a terminal state before the
    // kill: its record could hold the outcome, and reporting it needs no further request.
    let outcome_read_before_kill = |r: &Req| {
        let created = created_by_send(ev, r);
        !created.is_empty()
            && created
                .iter()
                .all(|t| terminal_answer_before(ev.journal, t, crash))
    };
    let before: Vec<&Req> = reqs
        .iter()
        .filter(|r| {
            r.seq <= crash
                && r.is_new_send()
                && !ended_before_kill(r)
                && !outcome_read_before_kill(r)
        })
        .collect();
    if before.is_empty() {
        return Check::NotApplicable;
    }
    let mut given: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for b in before {
        let agent_contexts = given
            .entry(b.agent)
            .or_insert_with(|| contexts_given(ev.journal, b.agent, crash));
        // The tasks this send created (if the delegator may have learnt their id before the
        // crash, reading them again is the reconciliation of DLG-REC-03).
        let created = created_by_send(ev, b);
        let resolved = reqs.iter().any(|o| {
            let names_created = o
                .params
                .get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| created.iter().any(|c| c == id));
            o.seq > crash
                && o.agent == b.agent
                && ((o.is_new_send() && o.message_id() == b.message_id())
                    || (o.calls(&[Method::ListTasks])
                        && o.params
                            .get("contextId")
                            .and_then(Value::as_str)
                            .is_some_and(|c| agent_contexts.contains(c)))
                    || (o.calls(&[Method::GetTask, Method::SubscribeToTask]) && names_created))
        });
        if !resolved {
            return fail(
                "after the restart: a resend with the same messageId, or ListTasks in a context the agent gave before the crash",
                if reqs
                    .iter()
                    .any(|o| o.seq > crash && o.agent == b.agent && o.calls(&[Method::ListTasks]))
                {
                    "neither: ListTasks only in a context the agent never gave (client-minted)"
                } else {
                    "neither"
                },
                vec![b.seq],
            );
        }
    }
    and_then(one_task_per_intent(ev))
}

pub(super) fn open_tasks_reconciled_after_restart(ev: &Evidence) -> Check {
    let Some(crash) = ev.crash_seq else {
        return Check::NotApplicable;
    };
    let truth = task_truth(ev.journal);
    let reqs = requests(ev.journal);
    let mut any = false;
    for (t, _) in truth.iter() {
        // Open in the delegator's record: the task's last state by the kill was not terminal,
        // or it was but no answer had shown it to the delegator (the agent reached the final
        // state as the delegator died: its record still holds the task open).
        // (Nor had a push told it, nor had its delegation ended before the kill.)
        let told_by_push = |from: u64| {
            ev.journal.iter().any(|e| {
                e.seq > from
                    && e.seq <= crash
                    && matches!(&e.event, Event::Push { task_id, status: Some(s), .. }
                        if task_id == t && (200..300).contains(s))
            })
        };
        let ended_before_kill = ev.scenario.delegations.iter().any(|d| {
            ev.done_at.get(&d.id).is_some_and(|s| *s <= crash)
                && tasks_of(ev, &d.id).iter().any(|(x, _)| x == t)
        });
        let open_at_crash = ev
            .journal
            .iter()
            .filter(|e| e.seq <= crash)
            .filter_map(|e| match &e.event {
                Event::TaskState { task_id, state } if task_id == t => {
                    Some((e.seq, state.as_str()))
                }
                _ => None,
            })
            .next_back()
            .is_some_and(|(seq, s)| {
                !a2a_protocol::TaskState::parse_lenient(s).is_some_and(|s| s.is_terminal())
                    || !(terminal_answer_before(ev.journal, t, crash)
                        || told_by_push(seq)
                        || ended_before_kill)
            });
        if !open_at_crash {
            continue;
        }
        any = true;
        // The harness cannot see whether the record held the task id when the process died (the
        // id may have reached the delegator and not been saved). A record without it is resolved
        // the DLG-REC-02 way: a resend with the creating `messageId` (the agent answers with this
        // very task) or `ListTasks` on its context. Both are reconciliation of this task.
        // A `CancelTask` of the task (a caller's cancel the restarted process carries out) reads
        // it too when its answer is the task: the agent's word on its state, as GetTask's.
        let origin = creation_of(ev.journal, t);
        let reconciled = reqs.iter().any(|o| {
            o.seq > crash
                && (o.calls(&[Method::GetTask, Method::SubscribeToTask])
                    && o.params.get("id").and_then(Value::as_str) == Some(t.as_str())
                    || o.calls(&[Method::CancelTask])
                        && o.params.get("id").and_then(Value::as_str) == Some(t.as_str())
                        && answered_with_task(ev.journal, o.req, t)
                    || o.task_id() == Some(t.as_str())
                    || origin
                        .as_ref()
                        .is_some_and(|(agent, message_id, context_id)| {
                            o.agent == agent.as_str()
                                && (o.is_new_send() && o.message_id() == Some(message_id.as_str())
                                    || o.calls(&[Method::ListTasks])
                                        && o.params.get("contextId").and_then(Value::as_str)
                                            == Some(context_id.as_str()))
                        }))
        });
        if !reconciled {
            return fail(
                format!("GetTask/SubscribeToTask {t} after the restart"),
                "the open task was not reconciled",
                vec![crash],
            );
        }
    }
    if any {
        and_then(nothing_lost_across_restart(ev))
    } else {
        Check::NotApplicable
    }
}

/// The ids of the tasks the agent created for send `r` (by its `messageId`).
fn created_by_send(ev: &Evidence, r: &Req) -> Vec<String> {
    r.message_id()
        .map(|m| {
            tasks_created_by(ev.journal, r.agent, m)
                .into_iter()
                .map(|t| t.0)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether an answer the agent gave before journal entry `until` (a response or a stream event
/// to any of the delegator's requests) showed task `t` in a terminal state.
fn terminal_answer_before(j: &[a2a_mock_agents::Entry], t: &str, until: u64) -> bool {
    j.iter().filter(|e| e.seq <= until).any(|e| match &e.event {
        Event::Response { body, .. } => shows_terminal(body, t),
        Event::SseEvent { data, .. } => shows_terminal(data, t),
        _ => false,
    })
}

/// Whether request `req` was answered with task `t` and its state (no error).
fn answered_with_task(j: &[a2a_mock_agents::Entry], req: u64, t: &str) -> bool {
    j.iter().any(|e| match &e.event {
        Event::Response {
            req: r,
            rpc_error: None,
            body,
            ..
        } if *r == req => shows_state(body, t, |_| true),
        _ => false,
    })
}

/// Whether `v` holds a task `t` (`id`) or a status update of it (`taskId`) whose
/// `status.state` is terminal.
fn shows_terminal(v: &Value, t: &str) -> bool {
    shows_state(v, t, |s| {
        a2a_protocol::TaskState::parse_lenient(s).is_some_and(|s| s.is_terminal())
    })
}

/// Whether `v` holds a task `t` (`id`) or a status update of it (`taskId`) whose
/// `status.state` is one `accept` takes.
fn shows_state(v: &Value, t: &str, accept: fn(&str) -> bool) -> bool {
    match v {
        Value::Object(m) => {
            let names_t = [m.get("id"), m.get("taskId")]
                .into_iter()
                .any(|id| id.and_then(Value::as_str) == Some(t));
            let state = m
                .get("status")
                .and_then(|s| s.get("state"))
                .and_then(Value::as_str);
            (names_t && state.is_some_and(accept)) || m.values().any(|x| shows_state(x, t, accept))
        }
        Value::Array(a) => a.iter().any(|x| shows_state(x, t, accept)),
        _ => false,
    }
}

/// The agent, creating `messageId` and context of task `t` (its first, non-dedup creation).
fn creation_of(j: &[a2a_mock_agents::Entry], t: &str) -> Option<(String, String, String)> {
    j.iter().find_map(|e| match &e.event {
        Event::TaskCreated {
            task_id,
            context_id,
            message_id,
            dedup: false,
        } if task_id == t => Some((e.agent.to_string(), message_id.clone(), context_id.clone())),
        _ => None,
    })
}

pub(super) fn purged_task_marked_lost(ev: &Evidence) -> Check {
    let reqs = requests(ev.journal);
    let mut any = false;
    for r in &reqs {
        // A read of the task by id (a poll or a re-subscription) the agent answered -32001.
        if !r.calls(&[Method::GetTask, Method::SubscribeToTask]) {
            continue;
        }
        let Some((-32001, seq)) = error_reply(ev.journal, r.req) else {
            continue;
        };
        any = true;
        let t = r
            .params
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let Some(d) = ev
            .scenario
            .delegations
            .iter()
            .find(|d| tasks_of(ev, &d.id).iter().any(|(x, _)| x == t))
        else {
            continue;
        };
        if done_state(ev, &d.id) != Some(Outcome::Lost) {
            return fail(
                format!("{} marked LOST after -32001", d.id),
                format!(
                    "outcome {}",
                    super::words::or_none(shown_state(ev, &d.id), "none reported")
                ),
                vec![seq],
            );
        }
        if let Some(again) = reqs.iter().find(|o| {
            o.seq > seq && o.is_new_send() && delegation_of(ev, o).is_some_and(|x| x.id == d.id)
        }) {
            return fail(
                "not silently recreated",
                "a new send for the lost delegation",
                vec![again.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

pub(super) fn one_task_per_intent(ev: &Evidence) -> Check {
    // Per intent (agent, text): the tasks its sends created, (creation seq, task id).
    let mut per_intent: BTreeMap<(String, String), Vec<(u64, String)>> = BTreeMap::new();
    for r in requests(ev.journal) {
        if !r.is_new_send() {
            continue;
        }
        let dedups = agent_spec(ev, r.agent).is_some_and(|a| a.dedup_message_id);
        if !dedups {
            continue;
        }
        let Some(m) = r.message_id() else { continue };
        for (task, dedup, seq) in tasks_created_by(ev.journal, r.agent, m) {
            if !dedup {
                let v = per_intent
                    .entry((r.agent.to_string(), r.text()))
                    .or_default();
                if !v.iter().any(|(s, _)| *s == seq) {
                    v.push((seq, task));
                }
            }
        }
    }
    if per_intent.is_empty() {
        return Check::NotApplicable;
    }
    // A task the agent purged is forgotten with its `messageId`: a resend after the purge
    // cannot be deduplicated to it, so the task it creates is not a second one.
    let purged_before = |task: &str, seq: u64| {
        ev.journal.iter().any(|e| {
            e.seq < seq && matches!(&e.event, Event::TaskPurged { task_id } if task_id == task)
        })
    };
    for ((agent, _), mut created) in per_intent {
        created.sort();
        for (i, (seq, _)) in created.iter().enumerate() {
            if let Some((first, _)) = created[..i].iter().find(|(_, t)| !purged_before(t, *seq)) {
                return fail(
                    format!("one remote task per intent at {agent}"),
                    format!("{} tasks", created.len()),
                    vec![*first, *seq],
                );
            }
        }
    }
    Check::Pass
}

#[cfg(test)]
mod tests {
    use super::super::registry::Check;
    use crate::rules::test_support::*;
    use serde_json::json;

    #[test]
    fn recovery_checks_fail_when_work_is_lost() {
        let mut c = good("expect = { state = [\"COMPLETED\"] }");
        c.crash = Some(3);
        assert_eq!(c.check(checker("DLG-REC-01")), Check::Pass);
        c.outcomes.clear();
        assert!(fails(c.check(checker("DLG-REC-01"))));
        assert!(fails(c.check(checker("DLG-SEND-01"))));
    }

    #[test]
    fn rec_02_no_resolution_after_restart() {
        let mut c = Case::new(&delegation(""));
        c.j.send("a", "m1", "do the thing", json!({}));
        c.crash = Some(1);
        assert!(fails(c.check(checker("DLG-REC-02"))));
        c.j.send("a", "m1", "do the thing", json!({}));
        assert_eq!(c.check(checker("DLG-REC-02")), Check::Pass);
    }

    #[test]
    fn rec_02_a_task_read_terminal_before_the_kill_needs_no_request_after_it() {
        // The send's answer was lost, the delegator found the task and read it COMPLETED, then
        // was killed before reporting done: its record can hold the outcome.
        let base = |final_read: &str| {
            let mut c = Case::new(&delegation(""));
            c.j.send("a", "m1", "do the thing", json!({}));
            c.j.created("a", "t1", "c1", "m1", false);
            let (_, r) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
            c.j.resp(
                "a",
                r,
                200,
                None,
                json!({"result": {"id": "t1", "contextId": "c1", "status": {"state": final_read}}}),
            );
            c.crash = Some(c.j.entries.len() as u64);
            c
        };
        assert_eq!(
            base("TASK_STATE_COMPLETED").check(checker("DLG-REC-02")),
            Check::NotApplicable
        );
        // Read WORKING only: the record is open and must be resolved after the restart.
        assert!(fails(
            base("TASK_STATE_WORKING").check(checker("DLG-REC-02"))
        ));
    }

    #[test]
    fn rec_02_resending_with_the_same_message_id_alone_resolves() {
        let mut c = Case::new(&delegation(""));
        c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.crash = Some(2);
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", true);
        c.j.resp(
            "a",
            r,
            200,
            None,
            json!({"result": {"task": {"id": "t1", "contextId": "c1"}}}),
        );
        assert_eq!(c.check(checker("DLG-REC-02")), Check::Pass);
    }

    #[test]
    fn rec_02_list_tasks_counts_only_in_a_context_the_agent_gave() {
        // The delegator minted contextId c1 itself and was killed before any answer: ListTasks
        // in c1 presumes a client-minted context (spec §3.4.1 SHOULD NOT) and resolves nothing.
        let minted = || {
            let mut c = Case::new(&delegation(""));
            c.j.send(
                "a",
                "m1",
                "do the thing",
                json!({"message": {"contextId": "c1"}}),
            );
            c.j.created("a", "t1", "c1", "m1", false);
            c
        };
        let mut c = minted();
        c.crash = Some(2);
        c.j.rpc("a", "ListTasks", json!({"contextId": "c1"}), &[]);
        assert!(fails(c.check(checker("DLG-REC-02"))));
        // The same ListTasks in a context the agent gave before the crash (an earlier answer
        // of that agent carried it) resolves the record.
        let mut c = Case::new(&delegation(""));
        let (_, r0) = c.j.rpc("a", "GetTask", json!({"id": "t0"}), &[]);
        c.j.resp(
            "a",
            r0,
            200,
            None,
            json!({"result": {"id": "t0", "contextId": "c1"}}),
        );
        c.j.send(
            "a",
            "m1",
            "do the thing",
            json!({"message": {"contextId": "c1"}}),
        );
        let created = c.j.created("a", "t1", "c1", "m1", false);
        c.crash = Some(created);
        c.j.rpc("a", "ListTasks", json!({"contextId": "c1"}), &[]);
        assert_eq!(c.check(checker("DLG-REC-02")), Check::Pass);
        // A context the agent gave only after the crash was not known to the record.
        let mut c = minted();
        c.crash = Some(2);
        let (_, r) = c.j.rpc("a", "GetTask", json!({"id": "t0"}), &[]);
        c.j.resp(
            "a",
            r,
            200,
            None,
            json!({"result": {"id": "t0", "contextId": "c1"}}),
        );
        c.j.rpc("a", "ListTasks", json!({"contextId": "c1"}), &[]);
        assert!(fails(c.check(checker("DLG-REC-02"))));
    }

    #[test]
    fn rec_02_a_delegation_ended_before_the_kill_needs_no_resolution() {
        let mut c = good("");
        // Killed after the outcome reached the harness: nothing open, nothing to resolve.
        c.crash = Some(9);
        c.done_at.insert("d1".into(), 9);
        assert_eq!(c.check(checker("DLG-REC-02")), Check::NotApplicable);
        // Its outcome came after the kill: the send must be resolved.
        c.done_at.insert("d1".into(), 10);
        assert!(fails(c.check(checker("DLG-REC-02"))));
    }

    /// Task t1 of agent a, created by `m1` and taken through `states`, the delegator killed
    /// after the last of them, and d1 reported `done` with `outcome` after the restart.
    fn task_open_at_kill(states: &[&str], outcome: &str) -> Case {
        let mut c = Case::new(&delegation(""));
        c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        for s in states {
            c.j.state("a", "t1", s);
        }
        c.crash = Some(2 + states.len() as u64);
        c.done("d1", outcome, json!([]));
        c
    }

    #[test]
    fn rec_03_open_task_not_reconciled() {
        let mut c = task_open_at_kill(&["TASK_STATE_WORKING"], "COMPLETED");
        assert!(fails(c.check(checker("DLG-REC-03"))));
        c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        assert_eq!(c.check(checker("DLG-REC-03")), Check::Pass);
    }

    #[test]
    fn rec_03_a_cancel_answered_with_the_task_reconciles_it() {
        // After the restart, d1's task t1 is canceled with `CancelTask` of `task`, answered
        // with `answer` (an error code and body), or not at all.
        let cancel = |task: &str, answer: Option<(Option<i64>, serde_json::Value)>| {
            let mut c = task_open_at_kill(&["TASK_STATE_WORKING"], "CANCELED");
            let (_, req) = c.j.rpc("a", "CancelTask", json!({"id": task}), &[]);
            if let Some((error, body)) = answer {
                c.j.resp("a", req, 200, error, body);
            }
            c.check(checker("DLG-REC-03"))
        };
        let task = |id: &str| json!({"result": {"id": id, "contextId": "c1", "status": {"state": "TASK_STATE_CANCELED"}}});
        // Answered with the task: the agent's word on its state.
        assert_eq!(cancel("t1", Some((None, task("t1")))), Check::Pass);
        // Refused or unanswered: the delegator still knows nothing of the task.
        let refused = Some((Some(-32002), json!({"error": {"code": -32002}})));
        assert!(fails(cancel("t1", refused)));
        assert!(fails(cancel("t1", None)));
        // Another task's cancel reads nothing of this one.
        assert!(fails(cancel("t2", Some((None, task("t2"))))));
    }

    #[test]
    fn rec_03_a_final_state_the_delegator_never_saw_leaves_the_task_open() {
        // The agent recorded COMPLETED as the delegator died (the `final_state` crash point):
        // its record still holds the task open, so the restart must reconcile it.
        let base =
            || task_open_at_kill(&["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"], "COMPLETED");
        let mut c = base();
        assert!(fails(c.check(checker("DLG-REC-03"))), "never read again");
        c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        assert_eq!(c.check(checker("DLG-REC-03")), Check::Pass);
        // Once its delegation had ended before the kill, nothing was open.
        let mut c = base();
        c.done_at.insert("d1".into(), 4);
        assert_eq!(c.check(checker("DLG-REC-03")), Check::NotApplicable);
    }

    #[test]
    fn rec_03_open_task_resolved_by_resending_its_message() {
        // A record without the task id (the crash came before it was saved) resends with the
        // same messageId: the agent answers with the same task. That reconciles it.
        let mut c = Case::new(&delegation(""));
        c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.state("a", "t1", "TASK_STATE_WORKING");
        c.crash = Some(3);
        c.done("d1", "COMPLETED", json!([]));
        c.j.send("a", "m2", "do the thing", json!({}));
        assert!(
            fails(c.check(checker("DLG-REC-03"))),
            "a resend with another messageId is no reconciliation"
        );
        c.j.send("a", "m1", "do the thing", json!({}));
        assert_eq!(c.check(checker("DLG-REC-03")), Check::Pass);
    }

    #[test]
    fn rec_04_purged_task_recreated() {
        let mut c = Case::new(&delegation(""));
        c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        let (_, r) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", r, 200, Some(-32001), json!({}));
        c.done("d1", "LOST", json!([]));
        assert_eq!(c.check(checker("DLG-REC-04")), Check::Pass);
        c.j.send("a", "m2", "do the thing", json!({}));
        assert!(fails(c.check(checker("DLG-REC-04"))));
    }

    #[test]
    fn rec_05_two_tasks_for_one_intent() {
        let mut c = good("");
        c.j.send("a", "m2", "do the thing", json!({}));
        c.j.created("a", "t2", "c2", "m2", false);
        assert!(fails(c.check(checker("DLG-REC-05"))));
    }

    #[test]
    fn rec_05_a_task_created_after_the_agent_purged_the_first_is_not_a_second() {
        // Killed before the task id reached the delegator; the agent purged the task, and
        // with it the messageId it would have deduplicated the resend to.
        let mut c = Case::new(&delegation(""));
        c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.push(
            "a",
            a2a_mock_agents::Event::TaskPurged {
                task_id: "t1".into(),
            },
        );
        c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t2", "c2", "m1", false);
        assert_eq!(c.check(checker("DLG-REC-05")), Check::Pass);
        // Without the purge it is a second task.
        let mut c = Case::new(&delegation(""));
        c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t2", "c2", "m1", false);
        assert!(fails(c.check(checker("DLG-REC-05"))));
    }
}
