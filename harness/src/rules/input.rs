//! Input rounds (DLG-INPUT-*): answers continue the task, come from held data or the caller, and are capped.

use super::evidence::*;
use super::registry::{Check, fail};
use crate::scenario::Delegation;
use a2a_driver_contract::{EscalationKind, FromDelegator};
use a2a_mock_agents::Event;
use serde_json::Value;
use std::collections::BTreeMap;

/// Continuation sends (answers) with their task's creation context.
pub(super) fn continuations<'a>(ev: &'a Evidence) -> Vec<Req<'a>> {
    requests(ev.journal)
        .into_iter()
        .filter(|r| r.is_send() && r.task_id().is_some())
        .collect()
}

pub(super) fn values_of(d: &Delegation) -> Vec<String> {
    d.inputs
        .values()
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string())
        })
        .collect()
}

/// DLG-INPUT-01: a continuation carries the taskId of a task that agent created, a new
/// messageId, and a contextId only if it is the task's own: spec §3.4.3 lets a client continue
/// a task with `taskId` alone (the agent infers the context).
pub(super) fn answers_continue_task_with_new_message_id(ev: &Evidence) -> Check {
    let conts = continuations(ev);
    if conts.is_empty() {
        return Check::NotApplicable;
    }
    // messageId -> (task, text) of the first message that used it: a resend of the same answer
    // (same task, same text) legitimately keeps its id (DLG-SEND-02).
    let mut seen: BTreeMap<String, (Option<String>, String)> = BTreeMap::new();
    for r in requests(ev.journal) {
        if !r.is_send() || r.from_mock_peer() {
            continue;
        }
        let mid = r.message_id().unwrap_or_default().to_string();
        let this = (r.task_id().map(str::to_string), r.text());
        if let Some(t) = r.task_id() {
            // The task's own context, as the agent that created it before this message said.
            let ctx = ev.journal.iter().find_map(|e| match &e.event {
                Event::TaskCreated {
                    task_id,
                    context_id,
                    ..
                } if task_id == t && e.agent == r.agent && e.seq < r.seq => {
                    Some(context_id.as_str())
                }
                _ => None,
            });
            let Some(ctx) = ctx else {
                return fail(
                    format!(
                        "the taskId of a task {} created (the task that asked)",
                        r.agent
                    ),
                    format!("taskId {t}, which {} never created", r.agent),
                    vec![r.seq],
                );
            };
            let sent_ctx = r
                .params
                .pointer("/message/contextId")
                .and_then(Value::as_str);
            if let Some(sent) = sent_ctx
                && sent != ctx
            {
                return fail(
                    format!("with taskId {t}: contextId {ctx} (the task's own) or none"),
                    format!("contextId {sent}"),
                    vec![r.seq],
                );
            }
            if seen.get(&mid).is_some_and(|first| *first != this) {
                return fail(
                    "a new messageId for each answer",
                    format!("messageId {mid} reused for a different message"),
                    vec![r.seq],
                );
            }
        }
        seen.entry(mid).or_insert(this);
    }
    Check::Pass
}

pub(super) fn questions_answered_from_held_data(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        if d.inputs.is_empty() || d.expect.escalates.is_some() {
            continue;
        }
        let tasks = tasks_of(ev, &d.id);
        // An input answer is a message to a task that the agent had put in INPUT_REQUIRED
        // before it (any other continuation is not an answer to a question).
        let asked_before = |t: &str, seq: u64| {
            ev.journal.iter().any(|e| {
                e.seq < seq
                    && matches!(&e.event, a2a_mock_agents::Event::TaskState { task_id, state }
                        if task_id == t && state.trim_start_matches("TASK_STATE_") == "INPUT_REQUIRED")
            })
        };
        let conts: Vec<Req> = continuations(ev)
            .into_iter()
            .filter(|r| tasks.iter().any(|(t, _)| Some(t.as_str()) == r.task_id()))
            .filter(|r| r.task_id().is_some_and(|t| asked_before(t, r.seq)))
            .collect();
        if conts.is_empty() {
            continue;
        }
        any = true;
        let vals = values_of(d);
        for r in &conts {
            if !vals.iter().any(|v| r.text().contains(v.as_str())) {
                return fail(
                    format!(
                        "an answer from the delegation's inputs ({})",
                        super::words::list(&vals)
                    ),
                    format!("answered {:?}", r.text().trim()),
                    vec![r.seq],
                );
            }
        }
        if escalated(ev, &d.id) {
            return fail(
                "the question answered from held data, not escalated",
                "escalated",
                vec![],
            );
        }
    }
    Check::held_if_seen(any)
}

pub(super) fn unknown_questions_escalated_not_guessed(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        let tasks = tasks_of(ev, &d.id);
        // An input answer is a message to a task that the agent had put in INPUT_REQUIRED
        // before it (any other continuation is not an answer to a question).
        let asked_before = |t: &str, seq: u64| {
            ev.journal.iter().any(|e| {
                e.seq < seq
                    && matches!(&e.event, a2a_mock_agents::Event::TaskState { task_id, state }
                        if task_id == t && state.trim_start_matches("TASK_STATE_") == "INPUT_REQUIRED")
            })
        };
        let conts: Vec<Req> = continuations(ev)
            .into_iter()
            .filter(|r| tasks.iter().any(|(t, _)| Some(t.as_str()) == r.task_id()))
            .filter(|r| r.task_id().is_some_and(|t| asked_before(t, r.seq)))
            .collect();
        // Only input answers: auth continuations carry the scoped credential instead.
        let given: Vec<&str> = ev
            .given
            .iter()
            .filter(|(id, k, _)| *id == d.id && *k == EscalationKind::Input)
            .map(|(_, _, v)| v.as_str())
            .collect();
        let vals = values_of(d);
        for r in conts {
            if ev.given.iter().any(|(id, k, v)| {
                *id == d.id
                    && *k == EscalationKind::Auth
                    && r.headers.get("authorization").is_some_and(|h| h == v)
            }) {
                continue;
            }
            any = true;
            let text = r.text();
            let legit = given.iter().any(|g| text.contains(g))
                || vals.iter().any(|v| text.contains(v.as_str()));
            if !legit {
                return fail(
                    format!(
                        "answers only from held data ({}) or the caller ({})",
                        super::words::list(&vals),
                        super::words::list(&given)
                    ),
                    format!("guessed {:?}", text.trim()),
                    vec![r.seq],
                );
            }
        }
        if d.expect.escalates == Some(EscalationKind::Input) {
            any = true;
            let escalated = ev.messages.iter().any(|m| {
                matches!(m, FromDelegator::Escalate(e)
                    if e.id == d.id && e.kind == EscalationKind::Input)
            });
            if !escalated {
                return fail(
                    format!("{} escalates the input request", d.id),
                    "no escalate message",
                    vec![],
                );
            }
        }
    }
    Check::held_if_seen(any)
}

pub(super) fn input_rounds_capped(ev: &Evidence) -> Check {
    let cap = ev
        .scenario
        .options
        .get("input_round_cap")
        .and_then(Value::as_u64)
        .unwrap_or(3) as usize;
    let mut any = false;
    for d in &ev.scenario.delegations {
        for (t, _) in tasks_of(ev, &d.id) {
            let n: Vec<u64> = continuations(ev)
                .iter()
                .filter(|r| r.task_id() == Some(t.as_str()))
                .map(|r| r.seq)
                .collect();
            let asked = ev.journal.iter().filter(|e| matches!(&e.event, Event::TaskState { task_id, state } if *task_id == t && state == "TASK_STATE_INPUT_REQUIRED")).count();
            if asked > cap {
                any = true;
                if n.len() > cap {
                    return fail(
                        format!("at most {cap} answers, then fail"),
                        format!("{} answers", n.len()),
                        n,
                    );
                }
            }
        }
    }
    Check::held_if_seen(any)
}

#[cfg(test)]
mod tests {
    use super::super::registry::Check;
    use crate::rules::test_support::*;
    use a2a_driver_contract::EscalationKind;
    use serde_json::json;

    fn input_case(inputs: &str, escalates: bool) -> Case {
        let esc = if escalates {
            "expect = { escalates = \"input\" }"
        } else {
            ""
        };
        let mut c = Case::new(&delegation(&format!("inputs = {inputs}\n{esc}")));
        c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.state("a", "t1", "TASK_STATE_INPUT_REQUIRED");
        c
    }

    #[test]
    fn input_01_answer_with_wrong_context_or_reused_id() {
        let mut c = input_case("{ city = \"Lisbon\" }", false);
        c.j.answer("a", "m2", "t1", "c1", "Lisbon", &[]);
        assert_eq!(c.check(checker("DLG-INPUT-01")), Check::Pass);
        c.j.answer("a", "m2", "t1", "c1", "Lisbon", &[]);
        assert_eq!(
            c.check(checker("DLG-INPUT-01")),
            Check::Pass,
            "a resend of the same answer keeps its id"
        );
        c.j.answer("a", "m2", "t1", "c1", "Porto", &[]);
        assert!(
            fails(c.check(checker("DLG-INPUT-01"))),
            "reused messageId for another answer"
        );
        let mut c = input_case("{ city = \"Lisbon\" }", false);
        c.j.answer("a", "m2", "t1", "other-context", "Lisbon", &[]);
        assert!(fails(c.check(checker("DLG-INPUT-01"))), "wrong context");
    }

    /// An answer to t1 at `agent` with `task` and, when given, `ctx` as its contextId.
    fn answer_with(c: &mut Case, agent: &str, task: &str, ctx: Option<&str>) {
        let mut m = json!({"messageId": "m2", "role": "ROLE_USER", "taskId": task, "parts": [{"text": "Lisbon"}]});
        if let Some(ctx) = ctx {
            m["contextId"] = json!(ctx);
        }
        c.j.rpc(agent, "SendMessage", json!({ "message": m }), &[]);
    }

    #[test]
    fn input_01_task_id_alone_continues_the_task() {
        // Spec §3.4.3: a continuation may carry taskId alone; the agent infers the context.
        let mut c = input_case("{ city = \"Lisbon\" }", false);
        answer_with(&mut c, "a", "t1", None);
        assert_eq!(c.check(checker("DLG-INPUT-01")), Check::Pass);
        // With a contextId, it is the task's own.
        let mut c = input_case("{ city = \"Lisbon\" }", false);
        answer_with(&mut c, "a", "t1", Some("c1"));
        assert_eq!(c.check(checker("DLG-INPUT-01")), Check::Pass);
        let mut c = input_case("{ city = \"Lisbon\" }", false);
        answer_with(&mut c, "a", "t1", Some("c-other"));
        assert!(fails(c.check(checker("DLG-INPUT-01"))), "another context");
        // The taskId is the asking task's: an invented one, or a task of another agent, fails.
        let mut c = input_case("{ city = \"Lisbon\" }", false);
        answer_with(&mut c, "a", "t-invented", None);
        assert!(fails(c.check(checker("DLG-INPUT-01"))), "invented taskId");
        let mut c = input_case("{ city = \"Lisbon\" }", false);
        c.j.created("attacker", "t9", "c9", "m9", false);
        answer_with(&mut c, "a", "t9", None);
        assert!(
            fails(c.check(checker("DLG-INPUT-01"))),
            "another agent's task"
        );
    }

    #[test]
    fn input_02_held_data_not_used() {
        let mut c = input_case("{ city = \"Lisbon\" }", false);
        c.j.answer("a", "m2", "t1", "c1", "Lisbon", &[]);
        assert_eq!(c.check(checker("DLG-INPUT-02")), Check::Pass);
        let mut c = input_case("{ city = \"Lisbon\" }", false);
        c.j.answer("a", "m2", "t1", "c1", "Paris", &[]);
        assert!(fails(c.check(checker("DLG-INPUT-02"))));
    }

    #[test]
    fn input_03_guessed_answer_and_missing_escalation() {
        let mut c = input_case("{}", true);
        c.escalated("d1", EscalationKind::Input);
        c.given
            .push(("d1".into(), EscalationKind::Input, "business".into()));
        c.j.answer("a", "m2", "t1", "c1", "business", &[]);
        assert_eq!(c.check(checker("DLG-INPUT-03")), Check::Pass);
        let mut c = input_case("{}", true);
        c.j.answer("a", "m2", "t1", "c1", "economy, I guess", &[]);
        assert!(fails(c.check(checker("DLG-INPUT-03"))), "guessed");
        let c = input_case("{}", true);
        assert!(fails(c.check(checker("DLG-INPUT-03"))), "never escalated");
    }

    #[test]
    fn input_03_a_message_with_a_task_id_is_an_answer_only_after_input_required() {
        // A refinement-like continuation of a task that never asked anything is not a guess.
        let mut c = good("");
        c.j.answer("a", "m2", "t1", "c1", "some follow-up", &[]);
        assert!(!fails(c.check(checker("DLG-INPUT-03"))));
        // After INPUT_REQUIRED the same message is an answer, and a guessed one.
        let mut c = good("");
        c.j.state("a", "t1", "TASK_STATE_INPUT_REQUIRED");
        c.j.answer("a", "m2", "t1", "c1", "some follow-up", &[]);
        assert!(fails(c.check(checker("DLG-INPUT-03"))));
    }

    #[test]
    fn input_04_answers_past_the_cap() {
        let mut c = input_case("{ city = \"Lisbon\" }", false);
        for i in 0..4 {
            c.j.state("a", "t1", "TASK_STATE_INPUT_REQUIRED");
            c.j.answer("a", &format!("m{}", i + 2), "t1", "c1", "Lisbon", &[]);
        }
        assert!(fails(c.check(checker("DLG-INPUT-04"))));
    }
}
