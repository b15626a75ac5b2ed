//! Every checker can fail: for each rule, a small journal in which a broken delegator broke it
//! (and, where useful, the same journal with correct behaviour passing).

use super::*;
use crate::scenario::Scenario;
use a2a_mock_agents::{Entry, Event};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const SELF: &str = "http://127.0.0.1:9/delegator-under-test";
const CRED: &str = "Bearer own-secret";

fn scenario(extra: &str) -> Scenario {
    let text = format!(
        "id = \"t\"\ntitle = \"t\"\nrules = [\"DLG-SEND-02\"]\n{extra}\n[network]\nseed = 1\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n[[network.agent]]\nname = \"old\"\nprotocol = \"0.3\"\n[[network.agent.skill]]\nid = \"s\"\n[[network.agent]]\nname = \"attacker\"\n[[network.agent.skill]]\nid = \"x\"\n"
    );
    Scenario::from_toml(std::path::Path::new("t.toml"), &text).expect("test scenario")
}

fn delegation(extra: &str) -> String {
    format!("[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"do the thing\"\n{extra}\n")
}

struct J {
    entries: Vec<Entry>,
    req: u64,
}

impl J {
    fn new() -> Self {
        J {
            entries: Vec::new(),
            req: 0,
        }
    }
    fn push(&mut self, agent: &str, event: Event) -> u64 {
        let seq = self.entries.len() as u64 + 1;
        self.entries.push(Entry {
            seq,
            at_us: seq * 1000,
            agent: agent.into(),
            event,
        });
        seq
    }
    fn at(&mut self, seq: u64, at_us: u64) {
        self.entries[seq as usize - 1].at_us = at_us;
    }
    fn rpc(
        &mut self,
        agent: &str,
        method: &str,
        params: Value,
        headers: &[(&str, &str)],
    ) -> (u64, u64) {
        self.req += 1;
        let mut h: BTreeMap<String, String> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        h.entry("a2a-version".into()).or_insert("1.0".into());
        let seq = self.push(
            agent,
            Event::Request {
                req: self.req,
                http_method: "POST".into(),
                path: "/a2a".into(),
                method: Some(method.into()),
                rpc_id: Some(json!(1)),
                params,
                headers: h,
            },
        );
        (seq, self.req)
    }
    fn send(&mut self, agent: &str, mid: &str, text: &str, extra: Value) -> (u64, u64) {
        let mut p = json!({"message": {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": text}]},
            "configuration": {"returnImmediately": true, "acceptedOutputModes": ["text/plain", "application/json", "application/octet-stream"]},
            "metadata": {"x-deleg": {"deadline": "2099-01-01T00:00:00.000Z", "budget_usd": 1.0, "depth": 1, "chain": [SELF]}}});
        merge(&mut p, extra);
        self.rpc(agent, "SendMessage", p, &[])
    }
    fn answer(
        &mut self,
        agent: &str,
        mid: &str,
        task: &str,
        ctx: &str,
        text: &str,
        headers: &[(&str, &str)],
    ) -> (u64, u64) {
        let p = json!({"message": {"messageId": mid, "role": "ROLE_USER", "taskId": task, "contextId": ctx, "parts": [{"text": text}]}});
        self.rpc(agent, "SendMessage", p, headers)
    }
    fn resp(
        &mut self,
        agent: &str,
        req: u64,
        status: u16,
        rpc_error: Option<i64>,
        body: Value,
    ) -> u64 {
        self.push(
            agent,
            Event::Response {
                req,
                status,
                rpc_error,
                body,
            },
        )
    }
    fn created(&mut self, agent: &str, task: &str, ctx: &str, mid: &str, dedup: bool) -> u64 {
        self.push(
            agent,
            Event::TaskCreated {
                task_id: task.into(),
                context_id: ctx.into(),
                message_id: mid.into(),
                dedup,
            },
        )
    }
    fn state(&mut self, agent: &str, task: &str, state: &str) -> u64 {
        self.push(
            agent,
            Event::TaskState {
                task_id: task.into(),
                state: state.into(),
            },
        )
    }
    fn sent(&mut self, agent: &str, task: &str, aid: &str, bytes: u64, sha: &str) -> u64 {
        self.push(
            agent,
            Event::ArtifactSent {
                task_id: task.into(),
                artifact_id: aid.into(),
                bytes,
                sha256: sha.into(),
            },
        )
    }
}

fn merge(a: &mut Value, b: Value) {
    if let (Value::Object(a), Value::Object(b)) = (a, b) {
        for (k, v) in b {
            match a.get_mut(&k) {
                Some(x) if x.is_object() && v.is_object() => merge(x, v),
                _ => {
                    a.insert(k, v);
                }
            }
        }
    }
}

struct Case {
    s: Scenario,
    j: J,
    messages: Vec<Value>,
    outcomes: BTreeMap<String, Value>,
    snapshot: Option<Value>,
    given: Vec<(String, String, String)>,
    crash: Option<u64>,
    forged: Vec<u16>,
    rss: Option<u64>,
}

impl Case {
    fn new(extra: &str) -> Self {
        Case {
            s: scenario(extra),
            j: J::new(),
            messages: Vec::new(),
            outcomes: BTreeMap::new(),
            snapshot: None,
            given: Vec::new(),
            crash: None,
            forged: Vec::new(),
            rss: None,
        }
    }
    fn done(&mut self, id: &str, state: &str, artifacts: Value) {
        self.outcomes.insert(
            id.into(),
            json!({"type": "done", "id": id, "state": state, "artifacts": artifacts}),
        );
    }
    fn check(&self, f: fn(&Evidence) -> Check) -> Check {
        let ev = Evidence {
            scenario: &self.s,
            journal: &self.j.entries,
            messages: &self.messages,
            outcomes: &self.outcomes,
            snapshot: self.snapshot.as_ref(),
            self_url: SELF,
            credential: CRED,
            given: &self.given,
            crash_seq: self.crash,
            start: time::OffsetDateTime::now_utc(),
            forged_pushes: &self.forged,
            peak_rss_kib: self.rss,
        };
        f(&ev)
    }
}

fn fails(c: Check) -> bool {
    matches!(c, Check::Fail { .. })
}

fn checker(id: &str) -> fn(&Evidence) -> Check {
    registry()
        .into_iter()
        .find(|r| r.id == id)
        .and_then(|r| r.check)
        .expect("rule with a checker")
}

/// A completed, well-behaved delegation d1 on agent `a` with one artifact.
fn good(extra: &str) -> Case {
    let mut c = Case::new(&delegation(extra));
    let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
    c.j.created("a", "t1", "c1", "m1", false);
    c.j.resp("a", r, 200, None, json!({"result": {"task": {"id": "t1"}}}));
    c.j.state("a", "t1", "TASK_STATE_WORKING");
    c.j.sent("a", "t1", "artifact-1", 10, "abc");
    c.j.state("a", "t1", "TASK_STATE_COMPLETED");
    c.done(
        "d1",
        "COMPLETED",
        json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "abc"}]),
    );
    c.snapshot = Some(
        json!({"records": [{"id": "d1", "task_id": "t1", "artifacts": [{"agent_url": "a", "skill": "s", "task_id": "t1"}], "dlq": false}]}),
    );
    c
}

#[test]
fn good_delegation_passes_every_always_on_rule() {
    let c = good("expect = { state = [\"COMPLETED\"] }");
    for r in registry().into_iter().filter(|r| r.always) {
        let f = r.check.expect("always-on rules have checkers");
        assert!(
            !fails(c.check(f)),
            "{} failed on a good delegation: {:?}",
            r.id,
            c.check(f)
        );
    }
}

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
fn route_01_wrong_agent() {
    let mut c = Case::new(&delegation(""));
    c.j.send("attacker", "m1", "do the thing", json!({}));
    assert!(fails(c.check(checker("DLG-ROUTE-01"))));
}

#[test]
fn route_02_streaming_ignored() {
    let mut c = Case::new(&delegation("streaming_preferred = true"));
    c.j.send("a", "m1", "do the thing", json!({}));
    assert!(fails(c.check(checker("DLG-ROUTE-02"))));
}

#[test]
fn route_03_v1_names_to_a_v03_agent() {
    let mut c = Case::new(&delegation(""));
    c.j.send("old", "m1", "do the thing", json!({}));
    assert!(fails(c.check(checker("DLG-ROUTE-03"))));
}

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
    c.messages
        .push(json!({"type": "escalate", "id": "d1", "kind": "input"}));
    c.given
        .push(("d1".into(), "input".into(), "business".into()));
    c.j.answer("a", "m2", "t1", "c1", "business", &[]);
    assert_eq!(c.check(checker("DLG-INPUT-03")), Check::Pass);
    let mut c = input_case("{}", true);
    c.j.answer("a", "m2", "t1", "c1", "economy, I guess", &[]);
    assert!(fails(c.check(checker("DLG-INPUT-03"))), "guessed");
    let c = input_case("{}", true);
    assert!(fails(c.check(checker("DLG-INPUT-03"))), "never escalated");
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

#[test]
fn auth_01_own_credential_forwarded() {
    let mut c = good("");
    assert_eq!(c.check(checker("DLG-AUTH-01")), Check::Pass);
    c.j.rpc(
        "a",
        "GetTask",
        json!({"id": "t1"}),
        &[("authorization", CRED)],
    );
    assert!(fails(c.check(checker("DLG-AUTH-01"))));
}

#[test]
fn auth_02_scoped_credential_misused_or_unused() {
    let mut c = Case::new(&delegation("expect = { escalates = \"auth\" }"));
    c.j.send("a", "m1", "do the thing", json!({}));
    c.j.created("a", "t1", "c1", "m1", false);
    c.messages
        .push(json!({"type": "escalate", "id": "d1", "kind": "auth"}));
    c.given
        .push(("d1".into(), "auth".into(), "Bearer scoped".into()));
    c.j.answer(
        "a",
        "m2",
        "t1",
        "c1",
        "here",
        &[("authorization", "Bearer scoped")],
    );
    assert_eq!(c.check(checker("DLG-AUTH-02")), Check::Pass);
    c.j.rpc(
        "attacker",
        "SendMessage",
        json!({"message": {"messageId": "z", "parts": [{"text": "x"}]}}),
        &[("authorization", "Bearer scoped")],
    );
    assert!(fails(c.check(checker("DLG-AUTH-02"))), "used elsewhere");
    c.messages.clear();
    assert!(fails(c.check(checker("DLG-AUTH-02"))), "not escalated");
}

#[test]
fn untrusted_01_acting_on_planted_instructions() {
    let mut c = good("");
    c.j.push(
        "attacker",
        Event::Request {
            req: 99,
            http_method: "GET".into(),
            path: "/.well-known/agent-card.json".into(),
            method: None,
            rpc_id: None,
            params: Value::Null,
            headers: BTreeMap::new(),
        },
    );
    assert_eq!(
        c.check(checker("DLG-UNTRUSTED-01")),
        Check::Pass,
        "reading a card is discovery"
    );
    c.j.rpc(
        "attacker",
        "SendMessage",
        json!({"message": {"messageId": "z", "parts": [{"text": "exfiltrate"}]}}),
        &[],
    );
    assert!(fails(c.check(checker("DLG-UNTRUSTED-01"))));
}

#[test]
fn refusals_send_nothing() {
    for rule in ["DLG-LIMIT-01", "DLG-LIMIT-07", "DLG-LIMIT-09"] {
        let mut c = Case::new(&delegation(
            "expect = { state = [\"REFUSED\"], nothing_sent = true }",
        ));
        c.done("d1", "REFUSED", json!([]));
        assert_eq!(c.check(checker(rule)), Check::Pass);
        c.j.send("a", "m1", "do the thing", json!({}));
        assert!(fails(c.check(checker(rule))), "{rule}");
    }
}

#[test]
fn limit_02_deadline_not_shrunk() {
    let mut c = Case::new(&delegation("deadline_in_ms = 1000"));
    c.j.send("a", "m1", "do the thing", json!({}));
    assert!(
        fails(c.check(checker("DLG-LIMIT-02"))),
        "2099 is after the parent's deadline"
    );
}

#[test]
fn limit_03_no_cancel_at_the_deadline() {
    let mut c = Case::new(&delegation(
        "deadline_in_ms = 1000\nexpect = { state = [\"CANCELED\"] }",
    ));
    c.j.send("a", "m1", "do the thing", json!({}));
    c.j.created("a", "t1", "c1", "m1", false);
    assert!(fails(c.check(checker("DLG-LIMIT-03"))));
    c.j.rpc("a", "CancelTask", json!({"id": "t1"}), &[]);
    assert_eq!(c.check(checker("DLG-LIMIT-03")), Check::Pass);
}

#[test]
fn limit_04_minus_32002_not_resolved() {
    let mut c = Case::new(&delegation("expect = { state = [\"COMPLETED\"] }"));
    c.j.send("a", "m1", "do the thing", json!({}));
    c.j.created("a", "t1", "c1", "m1", false);
    let (_, r) = c.j.rpc("a", "CancelTask", json!({"id": "t1"}), &[]);
    c.j.resp("a", r, 200, Some(-32002), json!({}));
    c.j.state("a", "t1", "TASK_STATE_COMPLETED");
    c.done("d1", "COMPLETED", json!([]));
    assert!(
        fails(c.check(checker("DLG-LIMIT-04"))),
        "no GetTask after -32002"
    );
    c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
    assert_eq!(c.check(checker("DLG-LIMIT-04")), Check::Pass);
}

fn fan_out(budgets: [f64; 3]) -> Case {
    let mut c = Case::new(&delegation(
        "budget_usd = 2.0\nchildren = [{ id = \"a\", capability = \"s\", text = \"child A\" }, { id = \"b\", capability = \"s\", text = \"child B\" }, { id = \"c\", capability = \"s\", text = \"child C\" }]",
    ));
    for (i, b) in budgets.iter().enumerate() {
        let t = ["child A", "child B", "child C"][i];
        c.j.send(
            "a",
            &format!("m{i}"),
            t,
            json!({"metadata": {"x-deleg": {"budget_usd": b}}}),
        );
    }
    c
}

#[test]
fn limit_05_and_06_budget_split() {
    let c = fan_out([0.6, 0.6, 0.6]);
    assert_eq!(c.check(checker("DLG-LIMIT-05")), Check::Pass);
    assert_eq!(c.check(checker("DLG-LIMIT-06")), Check::Pass);
    let c = fan_out([2.0, 2.0, 2.0]);
    assert!(fails(c.check(checker("DLG-LIMIT-05"))));
    let c = fan_out([0.7, 0.7, 0.6]);
    assert_eq!(c.check(checker("DLG-LIMIT-05")), Check::Pass);
    assert!(fails(c.check(checker("DLG-LIMIT-06"))), "no reserve");
}

#[test]
fn limit_08_chain_and_depth_not_extended() {
    let mut c = Case::new(&delegation("depth = 1"));
    c.j.send(
        "a",
        "m1",
        "do the thing",
        json!({"metadata": {"x-deleg": {"depth": 2, "chain": [SELF]}}}),
    );
    assert_eq!(c.check(checker("DLG-LIMIT-08")), Check::Pass);
    let mut c = Case::new(&delegation("depth = 1"));
    c.j.send(
        "a",
        "m1",
        "do the thing",
        json!({"metadata": {"x-deleg": {"depth": 1, "chain": []}}}),
    );
    assert!(fails(c.check(checker("DLG-LIMIT-08"))));
}

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
fn obs_03_artifacts_committed_from_a_failed_task() {
    let mut c = good("");
    c.done("d1", "FAILED", json!([{"artifact_id": "artifact-1"}]));
    assert!(fails(c.check(checker("DLG-OBS-03"))));
}

#[test]
fn obs_05_polling_hammers() {
    let mut c = good("");
    for i in 0..40 {
        let (seq, _) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.at(seq, 1_000_000 + i * 1000);
    }
    assert!(fails(c.check(checker("DLG-OBS-05"))));
}

#[test]
fn artifact_checks_catch_wrong_bytes_or_hash() {
    for rule in ["DLG-ART-01", "DLG-ART-02", "DLG-ART-04", "DLG-REC-06"] {
        let mut c = good("");
        assert_eq!(c.check(checker(rule)), Check::Pass, "{rule}");
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 5, "sha256": "abc"}]),
        );
        assert!(fails(c.check(checker(rule))), "{rule} bytes");
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "zzz"}]),
        );
        assert!(fails(c.check(checker(rule))), "{rule} sha");
        c.done("d1", "COMPLETED", json!([]));
        assert!(fails(c.check(checker(rule))), "{rule} missing");
    }
}

#[test]
fn art_03_url_never_fetched() {
    let text = "id = \"t\"\ntitle = \"t\"\nrules = [\"DLG-ART-03\"]\n[network]\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n[[network.agent.rule]]\nsteps = [{ do = \"artifact_url\", bytes = 10 }]\n[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"do the thing\"\n";
    let mut c = good("");
    c.s = Scenario::from_toml(std::path::Path::new("t.toml"), text).unwrap();
    c.j.push(
        "a",
        Event::ArtifactChunk {
            task_id: "t1".into(),
            artifact_id: "artifact-1".into(),
            append: false,
            last_chunk: true,
            bytes: 0,
        },
    );
    assert!(fails(c.check(checker("DLG-ART-03"))));
    c.j.push(
        "a",
        Event::BlobServed {
            key: "k".into(),
            bytes: 10,
            sha256: "abc".into(),
        },
    );
    assert_eq!(c.check(checker("DLG-ART-03")), Check::Pass);
}

#[test]
fn rejections_must_not_complete() {
    for rule in [
        "DLG-ART-05",
        "DLG-ART-06",
        "DLG-ART-07",
        "DLG-ART-09",
        "DLG-STATE-04",
    ] {
        let mut c = good("expect = { state = [\"FAILED\"] }");
        assert!(
            fails(c.check(checker(rule))),
            "{rule}: COMPLETED where FAILED was required"
        );
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(checker(rule)), Check::Pass, "{rule}");
    }
}

#[test]
fn art_08_no_provenance() {
    let mut c = good("");
    assert_eq!(c.check(checker("DLG-ART-08")), Check::Pass);
    c.snapshot =
        Some(json!({"records": [{"id": "d1", "artifacts": [{"artifact_id": "artifact-1"}]}]}));
    assert!(fails(c.check(checker("DLG-ART-08"))));
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
fn rec_03_open_task_not_reconciled() {
    let mut c = Case::new(&delegation(""));
    c.j.send("a", "m1", "do the thing", json!({}));
    c.j.created("a", "t1", "c1", "m1", false);
    c.j.state("a", "t1", "TASK_STATE_WORKING");
    c.crash = Some(3);
    c.done("d1", "COMPLETED", json!([]));
    assert!(fails(c.check(checker("DLG-REC-03"))));
    c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
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
fn obs_04_forged_push_believed() {
    let mut c = good("expect = { state = [\"COMPLETED\"] }");
    c.s.forge_push = true;
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
fn art_10_memory_grows_with_the_artifact() {
    let mut c = good("");
    c.s.memory_bound_mib = Some(64);
    assert!(fails(c.check(checker("DLG-ART-10"))), "no reading");
    c.rss = Some(30 * 1024);
    assert_eq!(c.check(checker("DLG-ART-10")), Check::Pass);
    c.rss = Some(300 * 1024);
    assert!(fails(c.check(checker("DLG-ART-10"))));
}

#[test]
fn wire_01_legacy_fields_and_names() {
    let c = good("");
    assert_eq!(c.check(checker("DLG-WIRE-01")), Check::Pass);
    let mut c = good("");
    c.j.send("a", "m2", "other", json!({"message": {"kind": "message"}}));
    assert!(fails(c.check(checker("DLG-WIRE-01"))), "kind");
    let mut c = good("");
    c.j.rpc("a", "tasks/get", json!({"id": "t1"}), &[]);
    assert!(
        fails(c.check(checker("DLG-WIRE-01"))),
        "0.3 name to a 1.0 agent"
    );
    let mut c = good("");
    c.j.send("a", "m3", "other", json!({"message": {"role": "user"}}));
    assert!(fails(c.check(checker("DLG-WIRE-01"))), "lowercase enum");
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
fn extra_reported_artifact_fails() {
    let mut c = good("");
    c.done("d1", "COMPLETED", json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "abc"}, {"artifact_id": "artifact-9", "bytes": 1, "sha256": "x"}]));
    assert!(fails(c.check(checker("DLG-ART-04"))));
}

#[test]
fn obs_04_forged_push_accepted_with_2xx() {
    let mut c = good("expect = { state = [\"COMPLETED\"] }");
    c.s.forge_push = true;
    c.forged.push(204);
    assert!(fails(c.check(checker("DLG-OBS-04"))));
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

#[test]
fn auth_01_token_smuggled_in_the_body() {
    let mut c = good("");
    c.j.send("a", "m5", "use own-secret please", json!({}));
    assert!(fails(c.check(checker("DLG-AUTH-01"))));
}

#[test]
fn limit_02_needs_a_margin() {
    let mut c = Case::new(&delegation("deadline_in_ms = 600000"));
    let start = time::OffsetDateTime::now_utc();
    let almost =
        a2a_protocol::Timestamp::from_datetime(start + time::Duration::milliseconds(600_000 - 10))
            .to_rfc3339();
    c.j.send(
        "a",
        "m1",
        "do the thing",
        json!({"metadata": {"x-deleg": {"deadline": almost}}}),
    );
    assert!(
        fails(c.check(checker("DLG-LIMIT-02"))),
        "10 ms is no margin"
    );
}
