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

/// The messages that answer a question of delegation `d`: continuations of its tasks sent after
/// the agent had put that task in INPUT_REQUIRED (any other continuation is not an answer to a
/// question).
fn input_answers<'a>(ev: &'a Evidence, d: &Delegation) -> Vec<Req<'a>> {
    let tasks = tasks_of(ev, &d.id);
    let asked_before = |t: &str, seq: u64| {
        ev.journal.iter().any(|e| {
            e.seq < seq
                && matches!(&e.event, Event::TaskState { task_id, state }
                    if task_id == t && state.trim_start_matches("TASK_STATE_") == "INPUT_REQUIRED")
        })
    };
    continuations(ev)
        .into_iter()
        .filter(|r| tasks.iter().any(|(t, _)| Some(t.as_str()) == r.task_id()))
        .filter(|r| r.task_id().is_some_and(|t| asked_before(t, r.seq)))
        .collect()
}

/// True when `r` carries, as its `Authorization`, a credential the harness gave `d` for an auth
/// escalation: an auth continuation, not an input answer.
fn carries_auth_answer(ev: &Evidence, d: &Delegation, r: &Req) -> bool {
    ev.given.iter().any(|(id, k, v)| {
        *id == d.id
            && *k == EscalationKind::Auth
            && r.headers.get("authorization").is_some_and(|h| h == v)
    })
}

pub(super) fn questions_answered_from_held_data(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        if d.inputs.is_empty() || d.expect.escalates.is_some() {
            continue;
        }
        let conts = input_answers(ev, d);
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
    match answer_sources_recorded(ev) {
        Ok(judged) => Check::held_if_seen(any || judged),
        Err(f) => f,
    }
}

/// The recorded source of each input answer (DLG-INPUT-02, "recorded with its source"), judged
/// when the delegator's snapshot holds a record of the delegation. Each answer the journal shows
/// (an input continuation, resends of one `messageId` counted once) must be in one of the
/// record's `input_rounds` of kind `input` (the round whose `answer_message_id` is the answer's,
/// else one whose `answer` the message text holds or that holds it, else the next unmatched
/// one: `answer_message_id` is optional in the contract, `answer` and `source` are required),
/// and that round's `source` must say where the answer came from: `inputs.<key>` for a held
/// value the answer carries, `caller` for the caller's answer to an escalation. A source may
/// list several, comma-separated (`inputs.a,inputs.b`); each must name a held key or the
/// caller, and one must be where the answer came from. A guessed answer (from neither) is
/// DLG-INPUT-03's, not judged here. Returns whether any answer was judged.
fn answer_sources_recorded(ev: &Evidence) -> Result<bool, Check> {
    let mut judged = false;
    let records = snapshot_records(ev);
    for d in &ev.scenario.delegations {
        let Some(rec) = records.iter().find(|r| r.id() == Some(d.id.as_str())) else {
            continue;
        };
        let callers: Vec<&str> = ev
            .given
            .iter()
            .filter(|(id, k, _)| *id == d.id && *k == EscalationKind::Input)
            .map(|(_, _, v)| v.as_str())
            .collect();
        let mut rounds: Vec<&Value> = rec
            .0
            .get("input_rounds")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|r| r.get("kind").and_then(Value::as_str) != Some("auth"))
            .filter(|r| r.get("source").and_then(Value::as_str) != Some("cap_exceeded"))
            .collect();
        let mut seen_mids: Vec<String> = Vec::new();
        for r in input_answers(ev, d) {
            if carries_auth_answer(ev, d, &r) {
                continue;
            }
            if let Some(m) = r.message_id() {
                if seen_mids.iter().any(|x| x == m) {
                    continue;
                }
                seen_mids.push(m.to_string());
            }
            let text = r.text();
            let held: Vec<String> = d
                .inputs
                .iter()
                .filter(|(_, v)| {
                    let v = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                    !v.is_empty() && text.contains(&v)
                })
                .map(|(k, _)| format!("inputs.{k}"))
                .collect();
            let from_caller = callers.iter().any(|c| !c.is_empty() && text.contains(c));
            let mut origins = held;
            if from_caller {
                origins.push("caller".into());
            }
            if origins.is_empty() {
                continue;
            }
            judged = true;
            let field = |round: &Value, k: &str| {
                round
                    .get(k)
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
            };
            let trimmed = text.trim();
            let at = rounds
                .iter()
                .position(|x| {
                    r.message_id()
                        .is_some_and(|m| field(x, "answer_message_id").as_deref() == Some(m))
                })
                .or_else(|| {
                    rounds.iter().position(|x| {
                        field(x, "answer")
                            .is_some_and(|a| trimmed.contains(a.as_str()) || a.contains(trimmed))
                    })
                })
                .or_else(|| (!rounds.is_empty()).then_some(0));
            let Some(at) = at else {
                return Err(fail(
                    format!(
                        "{}: the answer recorded, with its source, in an input round of its snapshot record",
                        d.id
                    ),
                    format!("no input round recorded for the answer {:?}", trimmed),
                    vec![r.seq],
                ));
            };
            let round = rounds.remove(at);
            let want = super::words::list(&origins);
            let Some(source) = field(round, "source") else {
                return Err(fail(
                    format!("{}: the answer's source recorded ({want})", d.id),
                    format!(
                        "input round {} has no source",
                        super::words::or_none(round.get("round"), "without a number")
                    ),
                    vec![r.seq],
                ));
            };
            let known = |item: &str| {
                item == "caller" && !callers.is_empty()
                    || item
                        .strip_prefix("inputs.")
                        .is_some_and(|k| d.inputs.contains_key(k))
            };
            let items: Vec<&str> = source.split(',').map(str::trim).collect();
            let right = items.iter().all(|i| known(i))
                && items.iter().any(|i| origins.iter().any(|o| o == i));
            if !right {
                return Err(fail(
                    format!(
                        "{}: the answer {:?} recorded with its source ({want})",
                        d.id, trimmed
                    ),
                    format!("source {source:?}"),
                    vec![r.seq],
                ));
            }
        }
    }
    Ok(judged)
}

pub(super) fn unknown_questions_escalated_not_guessed(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        let conts = input_answers(ev, d);
        // Only input answers: auth continuations carry the scoped credential instead.
        let given: Vec<&str> = ev
            .given
            .iter()
            .filter(|(id, k, _)| *id == d.id && *k == EscalationKind::Input)
            .map(|(_, _, v)| v.as_str())
            .collect();
        let vals = values_of(d);
        for r in conts {
            if carries_auth_answer(ev, d, &r) {
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

    /// A snapshot whose record of d1 holds `rounds`.
    fn rounds(c: &mut Case, rounds: serde_json::Value) {
        c.snapshot = Some(
            json!({"records": [{"id": "d1", "message_ids": {}, "task_id": "t1",
            "context_id": "c1", "state": "COMPLETED", "attempts": 1, "dlq": false,
            "input_rounds": rounds, "artifacts": []}]}),
        );
    }

    fn held_answer() -> Case {
        let mut c = input_case("{ jurisdiction = \"England\", city = \"Lisbon\" }", false);
        c.j.answer("a", "m2", "t1", "c1", "England", &[]);
        c
    }

    #[test]
    fn input_02_the_recorded_source_is_where_the_answer_came_from() {
        let round = |source: serde_json::Value| {
            json!([{"round": 1, "kind": "input", "question": "Which jurisdiction?",
                "answer": "England", "source": source, "answer_message_id": "m2"}])
        };
        // No snapshot: the wire alone is judged.
        assert_eq!(held_answer().check(checker("DLG-INPUT-02")), Check::Pass);
        let mut c = held_answer();
        rounds(&mut c, round(json!("inputs.jurisdiction")));
        assert_eq!(c.check(checker("DLG-INPUT-02")), Check::Pass);
        // The defects: held data recorded as the caller's, another key, no source, no round.
        for wrong in [
            json!("caller"),
            json!("inputs.city"),
            json!(null),
            json!(""),
        ] {
            let mut c = held_answer();
            rounds(&mut c, round(wrong.clone()));
            assert!(fails(c.check(checker("DLG-INPUT-02"))), "source {wrong}");
        }
        let mut c = held_answer();
        rounds(&mut c, json!([]));
        assert!(
            fails(c.check(checker("DLG-INPUT-02"))),
            "the round not recorded"
        );
        // A key named alongside one that does not exist is no source of this delegation.
        let mut c = held_answer();
        rounds(&mut c, round(json!("inputs.jurisdiction,inputs.nowhere")));
        assert!(fails(c.check(checker("DLG-INPUT-02"))));
    }

    #[test]
    fn input_02_a_round_recorded_another_correct_way_passes() {
        // No answer_message_id (optional), the answer worded otherwise, several keys listed, an
        // auth round before it and the round numbered 2.
        let mut c = held_answer();
        rounds(
            &mut c,
            json!([
                {"round": 1, "kind": "auth", "question": "Grant access", "answer": null, "source": "caller"},
                {"round": 2, "kind": "input", "question": "Which jurisdiction?",
                    "answer": "jurisdiction: England", "source": "inputs.jurisdiction, inputs.city"}
            ]),
        );
        assert_eq!(c.check(checker("DLG-INPUT-02")), Check::Pass);
        // An answer resent under its messageId is one answer, in one round.
        c.j.answer("a", "m2", "t1", "c1", "England", &[]);
        assert_eq!(c.check(checker("DLG-INPUT-02")), Check::Pass);
        // A second answer (a new messageId) needs a round of its own.
        c.j.state("a", "t1", "TASK_STATE_INPUT_REQUIRED");
        c.j.answer("a", "m3", "t1", "c1", "Lisbon", &[]);
        assert!(fails(c.check(checker("DLG-INPUT-02"))));
    }

    #[test]
    fn input_02_the_caller_answer_is_recorded_as_the_callers() {
        let escalated = |source: &str| {
            let mut c = input_case("{ origin = \"SFO\" }", true);
            c.escalated("d1", EscalationKind::Input);
            c.given
                .push(("d1".into(), EscalationKind::Input, "business".into()));
            c.j.answer("a", "m2", "t1", "c1", "business", &[]);
            rounds(
                &mut c,
                json!([{"round": 1, "kind": "input", "question": "Which class?",
                    "answer": "business", "source": source, "answer_message_id": "m2"}]),
            );
            c
        };
        assert_eq!(
            escalated("caller").check(checker("DLG-INPUT-02")),
            Check::Pass
        );
        assert!(fails(
            escalated("inputs.origin").check(checker("DLG-INPUT-02"))
        ));
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
