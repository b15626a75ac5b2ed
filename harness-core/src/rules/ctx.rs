//! Context and task ids, and Task history (DLG-CTX-*): a new send carries only a contextId the
//! agent gave (spec §3.4.1), a message's taskId names a task that agent created (§3.4.2), and
//! nothing depends on the agent keeping history (§3.7).

use super::evidence::*;
use super::registry::{Check, fail};
use super::state::observed_to_final;
use a2a_driver_contract::{EscalationKind, FromDelegator};
use a2a_mock_agents::{Entry, Event, ScriptStep};
use serde_json::Value;

/// True when `v` holds the string `s` anywhere (recursively).
fn holds_string(v: &Value, s: &str) -> bool {
    match v {
        Value::String(x) => x == s,
        Value::Array(a) => a.iter().any(|x| holds_string(x, s)),
        Value::Object(o) => o.values().any(|x| holds_string(x, s)),
        _ => false,
    }
}

/// True when `text` holds `needle`, whitespace runs compared as one space (a delegator may
/// join or wrap a status message's text).
pub(super) fn holds_text(text: &str, needle: &str) -> bool {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let needle = squash(needle);
    !needle.is_empty() && squash(text).contains(&needle)
}

/// True when `agent` gave context `ctx` before journal entry `before`: a task it created in
/// that context, or an answer or stream event of it that names the context (a direct Message
/// reply carries its contextId too).
fn agent_gave_context(j: &[Entry], agent: &str, ctx: &str, before: u64) -> bool {
    j.iter()
        .filter(|e| e.seq < before && e.agent == agent)
        .any(|e| match &e.event {
            Event::TaskCreated { context_id, .. } => context_id == ctx,
            Event::Response { body, .. } => holds_string(body, ctx),
            Event::SseEvent { data, .. } => holds_string(data, ctx),
            _ => false,
        })
}

/// A non-empty string at `pointer` in the request's params.
fn param<'a>(r: &Req<'a>, pointer: &str) -> Option<&'a str> {
    r.params
        .pointer(pointer)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// DLG-CTX-01 (SHOULD NOT, spec §3.4.1): every new send of the delegator (no taskId) carries
/// either no contextId or one the same agent gave before it (a refinement or a follow-up in the
/// agent's context, DLG-STATE-06). A contextId the agent never gave was minted by the client.
/// The situation: any new send.
pub(super) fn no_client_minted_context(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal)
        .iter()
        .filter(|r| r.is_new_send() && !r.from_mock_peer())
    {
        any = true;
        let Some(ctx) = param(r, "/message/contextId") else {
            continue;
        };
        if !agent_gave_context(ev.journal, r.agent, ctx, r.seq) {
            return fail(
                "a message that starts new work carries no contextId, or only one the agent gave (refinement, follow-up)",
                format!(
                    "{} to {} carries contextId \"{ctx}\", which {} never gave",
                    r.method, r.agent, r.agent
                ),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

/// DLG-CTX-02 (MUST, spec §3.4.2): every message of the delegator with a taskId names a task the
/// same agent created before it (journal `task_created`; tasks of a 0.3 agent and tasks created
/// before a restart count alike). The situation: any message with a taskId.
pub(super) fn task_ids_name_agent_tasks(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal)
        .iter()
        .filter(|r| r.is_send() && !r.from_mock_peer())
    {
        let Some(task) = param(r, "/message/taskId") else {
            continue;
        };
        any = true;
        let created = ev.journal.iter().any(|e| {
            e.seq < r.seq
                && e.agent == r.agent
                && matches!(&e.event, Event::TaskCreated { task_id, .. } if task_id == task)
        });
        if !created {
            return fail(
                "a message's taskId names a task that agent created (a client never invents task ids)",
                format!(
                    "{} to {} names task \"{task}\", which {} never created",
                    r.method, r.agent, r.agent
                ),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

/// The status messages `agent`'s script sets when it asks: `input_required` questions (kind
/// input) and `auth_required` messages (kind auth), trimmed, non-empty.
pub(super) fn scripted_questions(ev: &Evidence, agent: &str, kind: EscalationKind) -> Vec<String> {
    let Some(a) = agent_spec(ev, agent) else {
        return Vec::new();
    };
    a.rules
        .iter()
        .flat_map(|r| &r.steps)
        .filter_map(|s| match (s, kind) {
            (ScriptStep::InputRequired { question, .. }, EscalationKind::Input) => {
                Some(question.as_str())
            }
            (ScriptStep::AuthRequired { message, .. }, EscalationKind::Auth) => message.as_deref(),
            _ => None,
        })
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .map(str::to_string)
        .collect()
}

/// DLG-CTX-03 (MUST NOT rely on history, spec §3.7): for each delegation whose task is at an
/// agent that keeps no history (`keep_history = false`), every question it escalated carries
/// the agent's status message (the scripted question, or auth message), and its outcome is what
/// the agent's states justify: the task's final state, reported after it reached the delegator.
/// Results are judged byte-exact by DLG-ART-04.
pub(super) fn nothing_depends_on_history(ev: &Evidence) -> Check {
    let mut any = false;
    for w in works(ev) {
        let id = w.id;
        let Ok((task, agent, _)) = work_task(ev, id) else {
            continue;
        };
        if agent_spec(ev, &agent).is_none_or(|a| a.keep_history) {
            continue;
        }
        any = true;
        for m in ev.messages {
            let FromDelegator::Escalate(e) = m else {
                continue;
            };
            if e.id != id {
                continue;
            }
            let asked = scripted_questions(ev, &agent, e.kind);
            if asked.is_empty() {
                continue;
            }
            if !asked.iter().any(|q| holds_text(&e.question, q)) {
                return fail(
                    format!(
                        "{}: the escalated question is the agent's status message ({})",
                        id,
                        super::words::list(asked.iter().map(|q| format!("\"{q}\"")))
                    ),
                    format!(
                        "it escalated \"{}\"; {agent} keeps no task history",
                        e.question
                    ),
                    vec![],
                );
            }
        }
        // The outcome is the agent's final state, read after it reached the delegator: a
        // delegator that gives up because the history it looks for is empty fails here.
        if let Err(f) = observed_to_final(ev, id, &task, true) {
            return f;
        }
    }
    Check::held_if_seen(any)
}

#[cfg(test)]
mod tests {
    use super::super::registry::Check;
    use crate::rules::test_support::*;
    use a2a_driver_contract::{Escalate, EscalationKind, FromDelegator};
    use serde_json::json;

    #[test]
    fn ctx_01_a_client_minted_context_on_new_work() {
        let c = good("");
        assert_eq!(c.check(checker("DLG-CTX-01")), Check::Pass);
        let mut c = Case::new(&delegation(""));
        c.j.send(
            "a",
            "m1",
            "do the thing",
            json!({"message": {"contextId": "my-own-ctx"}}),
        );
        assert!(fails(c.check(checker("DLG-CTX-01"))));
    }

    #[test]
    fn ctx_01_a_refinement_in_the_agents_context_passes() {
        // d1 completed in c1 (the agent created it); the refinement is a new task in c1.
        let mut c = good("");
        c.j.send(
            "a",
            "m2",
            "do the thing better",
            json!({"message": {"contextId": "c1", "referenceTaskIds": ["t1"]}}),
        );
        assert_eq!(c.check(checker("DLG-CTX-01")), Check::Pass);
        // The same context sent to another agent was never given by that one.
        c.j.send(
            "old",
            "m3",
            "do the thing elsewhere",
            json!({"message": {"contextId": "c1"}}),
        );
        assert!(fails(c.check(checker("DLG-CTX-01"))));
    }

    #[test]
    fn ctx_01_a_context_from_a_direct_reply_counts_as_given() {
        let mut c = Case::new(&delegation(""));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.resp(
            "a",
            r,
            200,
            None,
            json!({"result": {"message": {"messageId": "x", "contextId": "c-reply", "parts": []}}}),
        );
        c.j.send(
            "a",
            "m2",
            "and then",
            json!({"message": {"contextId": "c-reply"}}),
        );
        assert_eq!(c.check(checker("DLG-CTX-01")), Check::Pass);
    }

    #[test]
    fn ctx_01_no_send_nothing_judged() {
        let c = Case::new(&delegation(""));
        assert_eq!(c.check(checker("DLG-CTX-01")), Check::NotApplicable);
    }

    #[test]
    fn ctx_02_invented_task_ids_fail() {
        let mut c = good("");
        assert_eq!(
            c.check(checker("DLG-CTX-02")),
            Check::NotApplicable,
            "no message names a task"
        );
        c.j.answer("a", "m2", "t1", "c1", "here", &[]);
        assert_eq!(c.check(checker("DLG-CTX-02")), Check::Pass);
        // A first send that names a task of its own making.
        c.j.answer("a", "m3", "client-made-task", "c1", "here", &[]);
        assert!(fails(c.check(checker("DLG-CTX-02"))));
    }

    #[test]
    fn ctx_02_a_task_of_another_agent_is_not_this_agents() {
        let mut c = good("");
        c.j.answer("old", "m2", "t1", "c1", "here", &[]);
        assert!(fails(c.check(checker("DLG-CTX-02"))));
    }

    #[test]
    fn ctx_02_taskid_alone_after_a_restart_passes() {
        // Created before the kill; the restarted process continues it with taskId alone.
        let mut c = good("");
        c.crash = Some(3);
        c.j.rpc(
            "a",
            "SendMessage",
            json!({"message": {"messageId": "m9", "taskId": "t1", "role": "ROLE_USER", "parts": [{"text": "x"}]}}),
            &[],
        );
        assert_eq!(c.check(checker("DLG-CTX-02")), Check::Pass);
    }

    /// A delegation at agent `a`, which keeps no history and asks "Which cabin class?", answered
    /// after an escalation that asks `question`; the task then completes and is read.
    fn no_history(question: &str) -> Case {
        let mut c = Case::new(&delegation(
            "expect = { state = [\"COMPLETED\"], escalates = \"input\" }",
        ));
        c.s.network.agents[0].keep_history = false;
        c.script(
            "a",
            json!({"steps": [
                {"do": "input_required", "question": "Which cabin class?"},
                {"do": "state", "state": "TASK_STATE_COMPLETED"},
            ]}),
        );
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.resp("a", r, 200, None, json!({"result": {"task": {"id": "t1"}}}));
        c.j.state("a", "t1", "TASK_STATE_INPUT_REQUIRED");
        c.messages.push(FromDelegator::Escalate(Escalate {
            id: "d1".into(),
            kind: EscalationKind::Input,
            question: question.into(),
            agent: "http://127.0.0.1:1/a".into(),
            task_id: Some("t1".into()),
        }));
        c.j.answer("a", "m2", "t1", "c1", "business", &[]);
        c.j.state("a", "t1", "TASK_STATE_COMPLETED");
        let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", g, 200, None, json!({"result": {"id": "t1"}}));
        c.done("d1", "COMPLETED", json!([]));
        c
    }

    #[test]
    fn ctx_03_question_from_the_status_message() {
        let c = no_history("Which cabin class?");
        assert_eq!(c.check(checker("DLG-CTX-03")), Check::Pass);
        // Another correct form: the status message within more words.
        let c = no_history("The agent asks: Which cabin class? (task t1)");
        assert_eq!(c.check(checker("DLG-CTX-03")), Check::Pass);
        // A question read from the (empty) history.
        let c = no_history("");
        assert!(fails(c.check(checker("DLG-CTX-03"))));
    }

    #[test]
    fn ctx_03_outcome_the_states_justify() {
        let mut c = no_history("Which cabin class?");
        c.done("d1", "FAILED", json!([]));
        assert!(
            fails(c.check(checker("DLG-CTX-03"))),
            "gave up although the task completed"
        );
        // The task failed at the agent (a wrong answer, say): FAILED is what its states justify.
        let mut c = no_history("Which cabin class?");
        let at = c
            .j
            .entries
            .iter()
            .position(|e| matches!(&e.event, a2a_mock_agents::Event::TaskState { state, .. } if state == "TASK_STATE_COMPLETED"))
            .unwrap_or(0);
        if let a2a_mock_agents::Event::TaskState { state, .. } = &mut c.j.entries[at].event {
            *state = "TASK_STATE_FAILED".into();
        }
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-CTX-03")), Check::Pass);
        // An agent that keeps history: not this rule's situation.
        let mut c = no_history("");
        c.s.network.agents[0].keep_history = true;
        assert_eq!(c.check(checker("DLG-CTX-03")), Check::NotApplicable);
    }
}
