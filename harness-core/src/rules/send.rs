//! Sending (DLG-SEND-*): message ids, returnImmediately, the version header, direct answers, recorded task ids, `x-deleg`, output modes, definite errors.

use super::evidence::*;
use super::registry::{Check, fail};
use a2a_driver_contract::Outcome;
use a2a_mock_agents::Event;
use a2a_protocol::Method;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

pub(super) fn message_id_stable_across_resends(ev: &Evidence) -> Check {
    let mut by_intent: BTreeMap<(String, String), Vec<(String, u64)>> = BTreeMap::new();
    for r in requests(ev.journal) {
        if r.is_new_send() {
            let key = (r.agent.to_string(), r.text());
            by_intent
                .entry(key)
                .or_default()
                .push((r.message_id().unwrap_or_default().to_string(), r.seq));
        }
    }
    if by_intent.is_empty() {
        return Check::NotApplicable;
    }
    for ((agent, _), sends) in by_intent {
        let ids: BTreeSet<&str> = sends.iter().map(|(m, _)| m.as_str()).collect();
        if ids.len() > 1 {
            return fail(
                format!("every resend of one intent to {agent} carries the same messageId"),
                format!(
                    "{} different messageIds for the same message: {}",
                    ids.len(),
                    super::words::list(&ids)
                ),
                sends.iter().map(|(_, s)| *s).collect(),
            );
        }
    }
    Check::Pass
}

pub(super) fn non_streaming_sends_return_immediately(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        if r.is_new_send() && r.calls(&[Method::SendMessage]) {
            any = true;
            let ri = r
                .params
                .pointer("/configuration/returnImmediately")
                .and_then(Value::as_bool)
                == Some(true)
                || r.params
                    .pointer("/configuration/blocking")
                    .and_then(Value::as_bool)
                    == Some(false);
            if !ri {
                return fail(
                    "returnImmediately: true on a non-streaming send",
                    "a blocking SendMessage",
                    vec![r.seq],
                );
            }
        }
    }
    Check::held_if_seen(any)
}

/// The delegator's requests to 1.0 agents (not one mock agent's request to another).
fn requests_to_v1_agents<'a>(ev: &Evidence<'a>) -> Vec<Req<'a>> {
    requests(ev.journal)
        .into_iter()
        .filter(|r| !r.from_mock_peer())
        .filter(|r| {
            agent_spec(ev, r.agent)
                .is_some_and(|a| a.protocol == a2a_mock_agents::script::ProtocolVersion::V1_0)
        })
        .collect()
}

/// DLG-SEND-04: every request to a 1.0 agent asks for version 1.0, as the `A2A-Version` header,
/// the `a2a-version` gRPC metadata or the `A2A-Version` query parameter (spec §3.6.1 MAY),
/// read as the agents negotiate it: `1.0.2` is 1.0 here (its patch number is DLG-SEND-10's).
pub(super) fn version_header_on_every_request(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests_to_v1_agents(ev) {
        any = true;
        let v = r.version();
        if !v.as_deref().is_some_and(a2a_protocol::version::is_v1) {
            return fail(
                "version 1.0 on every request (A2A-Version header, gRPC metadata or query parameter)",
                format!(
                    "{} request with {}",
                    r.method,
                    v.map_or("no A2A-Version".to_string(), |v| format!(
                        "A2A-Version {v:?}"
                    ))
                ),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

/// True when `v` is `Major.Minor` exactly: two numbers, no patch number, nothing else.
fn is_major_minor(v: &str) -> bool {
    let num = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    v.split_once('.')
        .is_some_and(|(major, minor)| num(major) && num(minor))
}

/// DLG-SEND-10 (spec §3.6 SHOULD NOT): the version a request to a 1.0 agent carries is
/// `Major.Minor` only (`1.0`), never with a patch number (`1.0.2`). A request without a version
/// is DLG-SEND-04's.
pub(super) fn version_is_major_minor(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests_to_v1_agents(ev) {
        let Some(v) = r.version() else { continue };
        any = true;
        if !is_major_minor(v.trim()) {
            return fail(
                "the version sent as Major.Minor only (A2A-Version 1.0), no patch number",
                format!("{} request with A2A-Version {v:?}", r.method),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

pub(super) fn message_reply_answers_directly(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        if !r.is_new_send() {
            continue;
        }
        if !direct_reply(ev.journal, r.req) {
            continue;
        }
        let Some(d) = delegation_of(ev, &r) else {
            continue;
        };
        any = true;
        match done_state(ev, &d.id) {
            Some(Outcome::AnsweredDirect) => {}
            other => {
                return fail(
                    "outcome ANSWERED_DIRECT after a Message reply",
                    format!(
                        "outcome {}",
                        super::words::or_none(other.map(Outcome::as_str), "none reported")
                    ),
                    vec![r.seq],
                );
            }
        }
        // A task operation at that agent on an id that names no task there: the delegator
        // invented a task out of the Message.
        let real: BTreeSet<String> = ev
            .journal
            .iter()
            .filter(|e| e.agent == r.agent)
            .filter_map(|e| match &e.event {
                Event::TaskCreated { task_id, .. } => Some(task_id.clone()),
                _ => None,
            })
            .collect();
        let phantom = requests(ev.journal).into_iter().find(|o| {
            o.seq > r.seq
                && o.agent == r.agent
                && o.calls(&[Method::GetTask, Method::SubscribeToTask, Method::CancelTask])
                && o.params
                    .get("id")
                    .and_then(Value::as_str)
                    .is_some_and(|id| !real.contains(id))
        });
        if let Some(o) = phantom {
            return fail(
                "no task operation after a Message reply",
                format!("{} on a task that was never created", o.method),
                vec![r.seq, o.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

pub(super) fn task_ids_recorded(ev: &Evidence) -> Check {
    let recs = snapshot_records(ev);
    let mut any = false;
    for d in &ev.scenario.delegations {
        let tasks = tasks_of(ev, &d.id);
        let Some((tid, _)) = tasks.first() else {
            continue;
        };
        any = true;
        let rec_tid = recs
            .iter()
            .find(|r| r.id() == Some(d.id.as_str()))
            .and_then(|r| r.task_id());
        if rec_tid != Some(tid.as_str()) {
            return fail(
                format!("snapshot record {} holds task id {tid}", d.id),
                format!(
                    "snapshot task id {}",
                    super::words::or_none(rec_tid, "absent")
                ),
                vec![],
            );
        }
    }
    Check::held_if_seen(any)
}

pub(super) fn x_deleg_metadata_present(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        if !r.is_new_send() || delegation_of(ev, &r).is_none() {
            continue;
        }
        any = true;
        let x = r.x_deleg();
        let okf = x.is_some_and(|x| {
            x.get("deadline").is_some_and(Value::is_string)
                && x.get("budget_usd").is_some_and(Value::is_number)
                && x.get("depth")
                    .and_then(a2a_protocol::xdeleg::depth_of)
                    .is_some()
                && x.get("chain").is_some_and(Value::is_array)
        });
        if !okf {
            return fail(
                "metadata.x-deleg with deadline, budget_usd, depth and chain",
                format!(
                    "x-deleg = {}",
                    x.map(Value::to_string).unwrap_or("absent".into())
                ),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

pub(super) fn accepted_output_modes_match_spec(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let Some(d) = (r.is_new_send()).then(|| delegation_of(ev, &r)).flatten() else {
            continue;
        };
        any = true;
        let modes: BTreeSet<&str> = r
            .params
            .pointer("/configuration/acceptedOutputModes")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let want: BTreeSet<&str> = d.mime_types.iter().map(String::as_str).collect();
        if modes != want {
            return fail(
                format!("acceptedOutputModes = {}", super::words::list(&want)),
                format!("acceptedOutputModes = {}", super::words::list(&modes)),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

pub(super) fn definite_errors_not_resent(ev: &Evidence) -> Check {
    let reqs = requests(ev.journal);
    let mut any = false;
    for r in &reqs {
        if !r.is_new_send() {
            continue;
        }
        let Some((code, seq)) = error_reply(ev.journal, r.req) else {
            continue;
        };
        any = true;
        let delegation = delegation_of(ev, r);
        // The request sent by the process killed at entry `k`, and resent by the restarted one
        // before any outcome was reported: the killed process may never have read the error
        // reply (it may even have come after the kill) or made it durable, so the resend is
        // recovery, not an unchanged resend. Once the outcome was reported before the kill, a
        // resend after the restart still fails.
        let recovery_resend = |o_seq: u64| match ev.crash_seq {
            Some(k) if r.seq <= k && o_seq > k => delegation
                .and_then(|d| ev.done_at.get(&d.id))
                .is_none_or(|at| *at > k),
            _ => false,
        };
        if let Some(again) = reqs.iter().find(|o| {
            o.seq > seq
                && o.is_new_send()
                && o.agent == r.agent
                && o.method == r.method
                && o.params == r.params
                && !recovery_resend(o.seq)
        }) {
            return fail(
                format!("no unchanged resend after a definite error {code}"),
                "the same request sent again",
                vec![r.seq, again.seq],
            );
        }
        if let Some(d) = delegation {
            match done_state(ev, &d.id) {
                Some(
                    Outcome::SendFailed
                    | Outcome::Failed
                    | Outcome::Rejected
                    | Outcome::DeadLettered,
                ) => {}
                other => {
                    return fail(
                        "outcome SEND_FAILED (recorded with its code)",
                        format!(
                            "outcome {}",
                            super::words::or_none(other.map(Outcome::as_str), "none reported")
                        ),
                        vec![r.seq],
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
    use serde_json::{Value, json};

    #[test]
    fn send_02_random_message_id_on_resend() {
        let mut c = good("");
        assert_eq!(c.check(checker("DLG-SEND-02")), Check::Pass);
        c.j.send("a", "m1-different", "do the thing", json!({}));
        assert!(fails(c.check(checker("DLG-SEND-02"))));
        assert!(
            fails(c.check(checker("DLG-RETRY-03")))
                || c.check(checker("DLG-RETRY-03")) == Check::NotApplicable
        );
    }

    #[test]
    fn send_03_blocking_send() {
        let mut c = Case::new(&delegation(""));
        c.j.send(
            "a",
            "m1",
            "do the thing",
            json!({"configuration": {"returnImmediately": false}}),
        );
        assert!(fails(c.check(checker("DLG-SEND-03"))));
    }

    #[test]
    fn send_04_missing_version_header() {
        let mut c = good("");
        c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[("a2a-version", "")]);
        assert!(fails(c.check(checker("DLG-SEND-04"))));
    }

    #[test]
    fn send_04_reads_the_header_as_the_agents_negotiate_it() {
        for (v, ok) in [("1.0.2", true), ("1", true), ("0.3", false), ("1.1", false)] {
            let mut c = good("");
            c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[("a2a-version", v)]);
            assert_eq!(!fails(c.check(checker("DLG-SEND-04"))), ok, "{v}");
        }
    }

    #[test]
    fn send_04_accepts_the_version_as_a_query_parameter() {
        // Spec §3.6.1: the version may travel as the A2A-Version query parameter instead of
        // the header; the agents negotiate it from there too.
        for (target, ok) in [
            ("/a2a?A2A-Version=1.0", true),
            ("/rest/tasks/t1?historyLength=0&A2A-Version=1.0", true),
            ("/a2a?A2A-Version=1%2E0", true),
            ("/a2a?A2A-Version=1.0.2", true),
            ("/a2a", false),
            ("/a2a?", false),
            ("/a2a?historyLength=0", false),
            ("/a2a?A2A-Version=", false),
            ("/a2a?A2A-Version=0.3", false),
        ] {
            let mut c = good("");
            let (seq, _) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
            c.j.version_in_query(seq, target);
            assert_eq!(!fails(c.check(checker("DLG-SEND-04"))), ok, "{target}");
        }
    }

    #[test]
    fn send_04_a_grpc_request_carries_the_version_as_metadata() {
        // gRPC metadata is journaled as headers (lowercase): the same check reads it.
        let mut c = good("");
        let seq = c.j.over("a", a2a_protocol::Binding::Grpc, Some("GetTask"));
        assert!(fails(c.check(checker("DLG-SEND-04"))), "no metadata");
        if let a2a_mock_agents::Event::Request { headers, .. } =
            &mut c.j.entries[seq as usize - 1].event
        {
            headers.insert("a2a-version".into(), "1.0".into());
        }
        assert_eq!(c.check(checker("DLG-SEND-04")), Check::Pass);
    }

    #[test]
    fn send_10_a_patch_number_is_non_strict_and_major_minor_passes() {
        use crate::rules::registry::{Level, registry};
        let rule = registry()
            .into_iter()
            .find(|r| r.id == "DLG-SEND-10")
            .expect("DLG-SEND-10 registered");
        assert_eq!(rule.level, Level::Should);
        assert!(rule.always);
        for (v, ok) in [
            ("1.0", true),
            (" 1.0 ", true),
            ("1.0.2", false),
            ("1", false),
        ] {
            let mut c = good("");
            c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[("a2a-version", v)]);
            assert_eq!(!fails(c.check(checker("DLG-SEND-10"))), ok, "header {v:?}");
            // A patch number is still version 1.0 for the MUST rule.
            assert!(!fails(c.check(checker("DLG-SEND-04"))), "header {v:?}");
        }
        // The query parameter is judged alike.
        let mut c = good("");
        let (seq, _) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.version_in_query(seq, "/a2a?A2A-Version=1.0.2");
        assert!(fails(c.check(checker("DLG-SEND-10"))));
        c.j.version_in_query(seq, "/a2a?A2A-Version=1.0");
        assert_eq!(c.check(checker("DLG-SEND-10")), Check::Pass);
        // Requests to a 0.3 agent and requests without a version are not this rule's.
        let mut c = Case::new(&delegation(""));
        c.j.rpc(
            "old",
            "message/send",
            json!({}),
            &[("a2a-version", "0.3.1")],
        );
        assert_eq!(c.check(checker("DLG-SEND-10")), Check::NotApplicable);
    }

    #[test]
    fn send_05_task_assumed_after_message() {
        let mut c = Case::new(&delegation(""));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.resp(
            "a",
            r,
            200,
            None,
            json!({"result": {"message": {"messageId": "x"}}}),
        );
        c.done("d1", "ANSWERED_DIRECT", json!([]));
        assert_eq!(c.check(checker("DLG-SEND-05")), Check::Pass);
        c.done("d1", "COMPLETED", json!([]));
        assert!(fails(c.check(checker("DLG-SEND-05"))));
        c.done("d1", "ANSWERED_DIRECT", json!([]));
        c.j.rpc("a", "GetTask", json!({"id": "x"}), &[]);
        assert!(fails(c.check(checker("DLG-SEND-05"))));
    }

    #[test]
    fn send_06_task_id_not_recorded() {
        let mut c = good("");
        assert_eq!(c.check(checker("DLG-SEND-06")), Check::Pass);
        c.snapshot = Some(json!({"records": [{"id": "d1", "task_id": null}]}));
        assert!(fails(c.check(checker("DLG-SEND-06"))));
    }

    #[test]
    fn send_07_no_x_deleg() {
        let mut c = Case::new(&delegation(""));
        c.j.send(
            "a",
            "m1",
            "do the thing",
            json!({"metadata": {"x-deleg": null}}),
        );
        assert!(fails(c.check(checker("DLG-SEND-07"))));
    }

    #[test]
    fn send_07_depth_as_an_integral_double_is_an_integer() {
        // Metadata is a protobuf Struct: an SDK may send depth 1 as 1.0.
        let x = |depth: Value| {
            json!({"metadata": {"x-deleg": {
                "deadline": "2026-12-01T00:00:00Z", "budget_usd": 1.0, "depth": depth, "chain": []
            }}})
        };
        let mut c = Case::new(&delegation(""));
        c.j.send("a", "m1", "do the thing", x(json!(1.0)));
        assert_eq!(c.check(checker("DLG-SEND-07")), Check::Pass);
        let mut c = Case::new(&delegation(""));
        c.j.send("a", "m1", "do the thing", x(json!(1.5)));
        assert!(fails(c.check(checker("DLG-SEND-07"))));
    }

    #[test]
    fn send_08_accepted_modes_not_the_spec() {
        let mut c = Case::new(&delegation("mime_types = [\"application/json\"]"));
        c.j.send("a", "m1", "do the thing", json!({}));
        assert!(fails(c.check(checker("DLG-SEND-08"))));
    }

    #[test]
    fn send_09_definite_error_resent() {
        let mut c = Case::new(&delegation(""));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.resp("a", r, 200, Some(-32005), json!({}));
        c.done("d1", "SEND_FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-SEND-09")), Check::Pass);
        c.j.send("a", "m1", "do the thing", json!({}));
        assert!(fails(c.check(checker("DLG-SEND-09"))));
    }

    #[test]
    fn send_09_a_resend_by_the_restarted_delegator_is_recovery() {
        let mut c = Case::new(&delegation(""));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        let err = c.j.resp("a", r, 200, Some(-32005), json!({}));
        // Killed right after the error reply was journaled, before any outcome: the restarted
        // process resends the same request and gets the error again.
        c.crash = Some(err);
        let (_, r2) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.resp("a", r2, 200, Some(-32005), json!({}));
        c.done("d1", "SEND_FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-SEND-09")), Check::Pass);
        // The outcome was reported before the kill: a resend after the restart still fails.
        c.done_at.insert("d1".into(), err);
        assert!(fails(c.check(checker("DLG-SEND-09"))));
        // Killed as the request went out: the error reply came after the kill.
        let mut c = Case::new(&delegation(""));
        let (sent, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.crash = Some(sent);
        c.j.resp("a", r, 200, Some(-32005), json!({}));
        let (_, r2) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.resp("a", r2, 200, Some(-32005), json!({}));
        c.done("d1", "SEND_FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-SEND-09")), Check::Pass);
        // Two resends after the restart: the second one is unchanged after a definite error.
        let mut c = Case::new(&delegation(""));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        let err = c.j.resp("a", r, 200, Some(-32005), json!({}));
        c.crash = Some(err);
        let (_, r2) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.resp("a", r2, 200, Some(-32005), json!({}));
        c.j.send("a", "m1", "do the thing", json!({}));
        c.done("d1", "SEND_FAILED", json!([]));
        assert!(fails(c.check(checker("DLG-SEND-09"))));
    }

    #[test]
    fn send_05_phantom_task_only() {
        let text = format!(
            "{}[[delegate]]\nid = \"d2\"\ncapability = \"s\"\ntext = \"second job\"\n",
            delegation("")
        );
        let mut c = Case::new(&text);
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.resp(
            "a",
            r,
            200,
            None,
            json!({"result": {"message": {"messageId": "x"}}}),
        );
        c.done("d1", "ANSWERED_DIRECT", json!([]));
        c.j.send("a", "m2", "second job", json!({}));
        c.j.created("a", "t2", "c2", "m2", false);
        c.j.rpc("a", "GetTask", json!({"id": "t2"}), &[]);
        assert_eq!(
            c.check(checker("DLG-SEND-05")),
            Check::Pass,
            "another delegation's real task"
        );
    }
}
