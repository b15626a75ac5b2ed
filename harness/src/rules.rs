//! The rule registry: every rule has an ID, a level, one sentence of requirement, its source and a
//! checker over the evidence of a case (the journal, the delegator's messages, outcomes and
//! snapshot). Checkers read what the network observed; what the delegator reports is compared
//! with that truth, never trusted.

use crate::scenario::Scenario;
use a2a_mock_agents::{Entry, Event};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// How binding a rule is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Level {
    /// A violation fails the case.
    #[serde(rename = "MUST")]
    Must,
    /// A violation makes the case NON-STRICT.
    #[serde(rename = "SHOULD")]
    Should,
    /// Optional.
    #[serde(rename = "MAY")]
    May,
}

/// Everything a checker may look at.
pub struct Evidence<'a> {
    /// The case.
    pub scenario: &'a Scenario,
    /// What the network saw.
    pub journal: &'a [Entry],
    /// Every protocol message from the delegator, in order (across restarts).
    pub messages: &'a [Value],
    /// The `done` message of each delegation.
    pub outcomes: &'a BTreeMap<String, Value>,
    /// The last `snapshot_ok` records.
    pub snapshot: Option<&'a Value>,
    /// The delegator's own URL given in `init`.
    pub self_url: &'a str,
    /// The delegator's own credential given in `init`.
    pub credential: &'a str,
    /// Answers and credentials the harness gave: (delegation, kind, value).
    pub given: &'a [(String, String, String)],
    /// Sequence number of the journal when the delegator was killed, if it was.
    pub crash_seq: Option<u64>,
    /// When the case started (scenario deadlines are relative to it).
    pub start: time::OffsetDateTime,
    /// HTTP statuses the delegator's webhook gave to forged push notifications.
    pub forged_pushes: &'a [u16],
    /// Peak resident memory of the delegator (KiB), sampled before it was stopped.
    pub peak_rss_kib: Option<u64>,
}

/// The result of one check.
#[derive(Debug, Clone, PartialEq)]
pub enum Check {
    /// The rule held.
    Pass,
    /// The rule was broken.
    Fail {
        /// What should have happened.
        expected: String,
        /// What happened.
        observed: String,
        /// Journal sequence numbers of the witness events.
        witnesses: Vec<u64>,
    },
    /// Nothing in this case bears on the rule.
    NotApplicable,
}

fn fail(expected: impl Into<String>, observed: impl Into<String>, witnesses: Vec<u64>) -> Check {
    Check::Fail {
        expected: expected.into(),
        observed: observed.into(),
        witnesses,
    }
}

/// A rule of the registry.
pub struct Rule {
    /// Stable ID such as `DLG-SEND-02`.
    pub id: &'static str,
    /// MUST, SHOULD or MAY.
    pub level: Level,
    /// The requirement in one sentence.
    pub requirement: &'static str,
    /// Where it comes from.
    pub source: &'static str,
    /// The checker; `None` means no checker exists yet (always NOT TESTED).
    pub check: Option<fn(&Evidence) -> Check>,
    /// Checked in every case, not only where a scenario lists it.
    pub always: bool,
}

macro_rules! rules {
    ($( $id:literal, $lvl:ident, $always:literal, $check:expr, $src:literal, $req:literal; )*) => {
        vec![$( Rule { id: $id, level: Level::$lvl, requirement: $req, source: $src, check: $check, always: $always } ),*]
    };
}

/// Every rule, in ID order.
pub fn registry() -> Vec<Rule> {
    rules! {
        "DLG-SEND-01", Must, false, Some(rec_no_loss), "000 Sending; Failure modes: lost task ids", "The delegation's record is durable before its first request leaves: a crash at the first request loses nothing.";
        "DLG-SEND-02", Must, true, Some(send_02), "000 Sending; 001 Retry: idempotency key", "messageId is derived from the delegation and the purpose of the message; every resend of the same intent carries the same messageId.";
        "DLG-SEND-03", Should, true, Some(send_03), "000 Sending; Failure modes: blocking sends", "Non-streaming sends set returnImmediately: true.";
        "DLG-SEND-04", Must, true, Some(send_04), "R02", "Every request carries A2A-Version: 1.0 (to a 1.0 agent).";
        "DLG-SEND-05", Must, true, Some(send_05), "000 Sending: the response is a one-of; Failure modes: assuming a task", "A Message reply ends the delegation as answered directly; the delegator never assumes a task.";
        "DLG-SEND-06", Must, false, Some(send_06), "000 Sending", "The task id and context id of a Task reply are recorded at once.";
        "DLG-SEND-07", Must, true, Some(send_07), "000 Budgets, deadlines and depth", "Requests to delegates carry x-deleg with deadline, budget_usd, depth and chain.";
        "DLG-SEND-08", Should, false, Some(send_08), "001 ArtifactSpec; R12", "acceptedOutputModes lists the media types of the request's artifact spec.";
        "DLG-SEND-09", Must, false, Some(send_09), "000 Sending (SEND_FAILED)", "A definite error reply (JSON-RPC error) is recorded with its code; it is not resent unchanged.";
        "DLG-WIRE-01", Must, true, Some(wire_01), "R01, R05, R06, R07", "Every request to a 1.0 agent uses a 1.0 method name and params with no deviation from the 1.0 proto (no unknown or legacy fields, exact enum names, required fields present).";
        "DLG-ROUTE-01", Must, true, Some(route_01), "001 Introduction: route to a capable agent", "Work goes only to an agent whose card advertises the required skill and an output mode the request accepts.";
        "DLG-ROUTE-02", Should, false, Some(route_02), "001 ArtifactSpec.streaming_preferred; R09, R12", "Streaming is used when the card declares it and the request prefers it; never when the card does not declare it.";
        "DLG-ROUTE-03", Should, false, Some(route_03), "000 A note on protocol versions", "A 0.3 agent (by its card) is spoken to in 0.3, through one adapter.";
        "DLG-STATE-01", Must, false, Some(outcome_expected), "000 Mapping every state", "SUBMITTED and WORKING keep the delegation open and observed.";
        "DLG-STATE-02", Must, false, Some(outcome_expected), "000 Accepting results", "COMPLETED: artifacts are validated, then committed; the outcome is COMPLETED.";
        "DLG-STATE-03", Must, false, Some(state_03), "000 Terminal is final; R23", "FAILED, CANCELED and REJECTED are recorded as final with the agent's status message; nothing more is sent to that task.";
        "DLG-STATE-04", Must, false, Some(outcome_expected), "000 Mapping every state", "An unknown or UNSPECIFIED state does not crash the delegator; it is recorded and the task is still observed until its deadline.";
        "DLG-STATE-05", Must, true, Some(state_05), "000 Terminal is final; Failure modes: messaging a terminal task; R23", "No message is ever sent to a task in a terminal state.";
        "DLG-STATE-06", Should, false, Some(state_06), "000 Terminal is final; R20", "A refinement or retry after a final state is a new task in the same contextId, with the old task in referenceTaskIds.";
        "DLG-INPUT-01", Must, true, Some(input_01), "000 Interrupted states; R18", "An answer to INPUT_REQUIRED carries the same taskId and contextId and a new messageId.";
        "DLG-INPUT-02", Must, false, Some(input_02), "000 Interrupted states", "A question about data the delegation holds is answered from it, and the answer is recorded with its source.";
        "DLG-INPUT-03", Must, true, Some(input_03), "000 Failure modes: guessed inputs", "A question the delegator cannot answer from its own data is escalated to its caller, never guessed.";
        "DLG-INPUT-04", Should, false, Some(input_04), "000 Interrupted states", "Input rounds per delegation are capped; past the cap the delegation fails instead of answering again.";
        "DLG-AUTH-01", Must, true, Some(auth_01), "000 Failure modes: credential forwarding", "The delegator's own credential never reaches another agent.";
        "DLG-AUTH-02", Must, false, Some(auth_02), "000 Interrupted states; R28, R29", "AUTH_REQUIRED is escalated for a credential scoped to that agent and task, which is then used only there.";
        "DLG-UNTRUSTED-01", Must, false, Some(untrusted_01), "000 Accepting results", "Text from another agent (questions, status messages, artifacts) is data: instruction-like text changes nothing the delegator sends.";
        "DLG-LIMIT-01", Must, false, Some(refused_nothing_sent), "000 Budgets: deadlines shrink", "Work whose deadline is already past is refused before anything is sent.";
        "DLG-LIMIT-02", Must, true, Some(limit_02), "000 Budgets: deadlines shrink", "Each child gets a deadline earlier than the parent's by a safety margin.";
        "DLG-LIMIT-03", Must, false, Some(limit_03), "000 Budgets: enforce locally", "At its own deadline the delegator calls CancelTask, whatever the agent does with the metadata.";
        "DLG-LIMIT-04", Must, false, Some(limit_04), "000 Budgets: cancellation; R25, R27", "A -32002 from CancelTask is resolved by reading the final state, not treated as fatal.";
        "DLG-LIMIT-05", Must, true, Some(limit_05), "000 Budgets: budgets split", "The budgets given to children never sum to more than the parent's remainder.";
        "DLG-LIMIT-06", Should, false, Some(limit_06), "000 Budgets: budgets split", "A reserve is kept for retries when splitting a budget.";
        "DLG-LIMIT-07", Must, false, Some(refused_nothing_sent), "000 Depth and chain are checked", "Incoming work deeper than the limit is refused with a clear reason.";
        "DLG-LIMIT-08", Must, true, Some(limit_08), "000 Depth and chain; 001 Don't 1", "Before re-delegating, the delegator adds its own identity to chain and increments depth.";
        "DLG-LIMIT-09", Must, false, Some(refused_nothing_sent), "000 Depth and chain", "Incoming work whose chain already holds the delegator's identity is refused (a loop becomes a fast rejection).";
        "DLG-OBS-01", Must, true, Some(outcome_expected), "000 Observing and recovering", "Every open task is observed until final by streaming, push or polling; none is left unwatched.";
        "DLG-OBS-02", Must, true, Some(obs_02), "000 Observing; R37, R38, R39", "A stream that ends before a final state is followed by SubscribeToTask or GetTask, not taken as an outcome.";
        "DLG-OBS-03", Must, true, Some(obs_03), "000 Accepting results (streaming)", "Only what a completed task delivers is committed; streamed chunks before that are progress.";
        "DLG-OBS-04", Must, false, Some(obs_04), "000 Sending (push config); R52", "Push notifications are accepted only with the configured token; duplicates are harmless.";
        "DLG-OBS-05", Should, true, Some(obs_05), "000 Operations and trade-offs", "Polling backs off; it does not hammer GetTask.";
        "DLG-ART-01", Must, false, Some(artifacts_exact), "001 Do 2", "Chunks with append: true are joined in order by artifactId; a chunk without it starts or replaces that artifact.";
        "DLG-ART-02", Must, false, Some(artifacts_exact), "001 Don't 2", "Every chunk counts: the result is not the last event alone.";
        "DLG-ART-03", Must, false, Some(art_03), "001 Do 3; Handling large artifacts", "A url part is fetched on its own path and its size bound is enforced while reading.";
        "DLG-ART-04", Must, true, Some(artifacts_exact), "001 Code walkthrough (byte-length check)", "The byte length and sha256 the delegator reports equal the bytes the agent sent.";
        "DLG-ART-05", Must, false, Some(outcome_expected), "000 Accepting results", "An artifact of a media type the request did not accept is rejected.";
        "DLG-ART-06", Must, false, Some(outcome_expected), "001 ArtifactSpec.max_size_bytes; 000 bound sizes", "An artifact over max_size_bytes is rejected once the bound is crossed, without buffering the rest.";
        "DLG-ART-07", Must, false, Some(outcome_expected), "000 Accepting results", "Structured data parts are validated against the expected schema before use.";
        "DLG-ART-08", Should, false, Some(art_08), "000 Accepting results", "Each artifact's provenance (agent, skill, task) is recorded.";
        "DLG-ART-09", Must, false, Some(outcome_expected), "R34; 001 Don'ts", "An agent protocol error in the artifact stream fails the delegation visibly rather than producing silent garbage.";
        "DLG-ART-10", Should, false, Some(art_10), "001 Handling large artifacts", "Memory stays bounded while a large artifact streams in.";
        "DLG-RETRY-01", Must, true, Some(retry_01), "001 Retry and dead letter", "A transient failure (connection dropped, 5xx, 429) is retried at most max_retries times.";
        "DLG-RETRY-02", Should, false, Some(retry_02), "001 Backoff strategy", "Retries back off exponentially with jitter, and honour Retry-After.";
        "DLG-RETRY-03", Must, false, Some(retry_03), "000 Sending; Recovery", "A send whose response was lost (indefinite) is resent only with the same messageId.";
        "DLG-RETRY-04", Must, false, Some(retry_04), "001 Retry and dead letter; Chain-aware DLQ", "When retries are exhausted the delegation is dead-lettered with its request, errors, partial artifacts and chain.";
        "DLG-REC-01", Must, false, Some(rec_no_loss), "000 Observing and recovering", "After a restart every delegation that was open is still known and is driven to an outcome.";
        "DLG-REC-02", Must, false, Some(rec_02), "000 Recovery", "A record without a task id is resolved by finding the task (ListTasks by context) or resending with the same messageId.";
        "DLG-REC-03", Must, false, Some(rec_03), "000 Recovery", "A record with an open task id is reconciled with GetTask, then observed again.";
        "DLG-REC-04", Must, false, Some(rec_04), "000 Recovery", "-32001 for a task it created marks the delegation LOST; it is not silently recreated.";
        "DLG-REC-05", Must, true, Some(rec_05), "000 Sending; Recovery", "No intent ever creates two remote tasks when the agent deduplicates messageId.";
        "DLG-REC-06", Must, false, Some(artifacts_exact), "000; 001", "Artifacts completed after a recovery are byte-exact.";
    }
}

// ------------------------------------------------------------------------------------------
// Journal helpers
// ------------------------------------------------------------------------------------------

/// A JSON-RPC request as recorded.
pub struct Req<'a> {
    /// Journal sequence.
    pub seq: u64,
    /// Request number.
    pub req: u64,
    /// Agent.
    pub agent: &'a str,
    /// JSON-RPC method.
    pub method: &'a str,
    /// Params.
    pub params: &'a Value,
    /// Headers.
    pub headers: &'a BTreeMap<String, String>,
}

impl Req<'_> {
    /// True for SendMessage / SendStreamingMessage (and their 0.3 names).
    pub fn is_send(&self) -> bool {
        matches!(
            self.method,
            "SendMessage" | "SendStreamingMessage" | "message/send" | "message/stream"
        )
    }
    /// The message's taskId, if it continues a task.
    pub fn task_id(&self) -> Option<&str> {
        self.params
            .pointer("/message/taskId")
            .and_then(Value::as_str)
    }
    /// True for a send that starts new work.
    pub fn is_new_send(&self) -> bool {
        self.is_send() && self.task_id().is_none()
    }
    /// The message id.
    pub fn message_id(&self) -> Option<&str> {
        self.params
            .pointer("/message/messageId")
            .and_then(Value::as_str)
    }
    /// The concatenated text of the message's text parts.
    pub fn text(&self) -> String {
        let mut s = String::new();
        if let Some(parts) = self
            .params
            .pointer("/message/parts")
            .and_then(Value::as_array)
        {
            for p in parts {
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    s.push_str(t);
                    s.push('\n');
                }
            }
        }
        s
    }
    /// The `x-deleg` metadata.
    pub fn x_deleg(&self) -> Option<&Value> {
        self.params.pointer("/metadata/x-deleg")
    }
}

/// Every JSON-RPC request in the journal.
pub fn requests(j: &[Entry]) -> Vec<Req<'_>> {
    j.iter()
        .filter_map(|e| match &e.event {
            Event::Request {
                req,
                method: Some(m),
                params,
                headers,
                ..
            } => Some(Req {
                seq: e.seq,
                req: *req,
                agent: &e.agent,
                method: m,
                params,
                headers,
            }),
            _ => None,
        })
        .collect()
}

fn delegation_of<'a>(ev: &'a Evidence, r: &Req) -> Option<&'a crate::scenario::Delegation> {
    let text = r.text();
    // Longest matching text wins so that a child whose text extends its parent's is found.
    ev.scenario
        .delegations
        .iter()
        .filter(|d| text.contains(&d.text))
        .max_by_key(|d| d.text.len())
}

fn agent_spec<'a>(ev: &'a Evidence, name: &str) -> Option<&'a a2a_mock_agents::AgentSpec> {
    ev.scenario.network.agents.iter().find(|a| a.name == name)
}

fn done_state<'a>(ev: &'a Evidence, id: &str) -> Option<&'a str> {
    ev.outcomes
        .get(id)
        .and_then(|d| d.get("state"))
        .and_then(Value::as_str)
}

/// Final state per task id, from the journal.
fn task_truth(j: &[Entry]) -> BTreeMap<String, (String, u64)> {
    let mut m = BTreeMap::new();
    for e in j {
        if let Event::TaskState { task_id, state } = &e.event {
            m.insert(task_id.clone(), (state.clone(), e.seq));
        }
    }
    m
}

fn response_of(j: &[Entry], req: u64) -> Option<&Entry> {
    j.iter()
        .find(|e| matches!(&e.event, Event::Response { req: r, .. } if *r == req))
}

/// The JSON-RPC error code and journal sequence of the response to request `req`, if it was an
/// error.
fn error_reply(j: &[Entry], req: u64) -> Option<(i64, u64)> {
    match response_of(j, req) {
        Some(Entry {
            event:
                Event::Response {
                    rpc_error: Some(code),
                    ..
                },
            seq,
            ..
        }) => Some((*code, *seq)),
        _ => None,
    }
}

fn tasks_created_by(j: &[Entry], agent: &str, message_id: &str) -> Vec<(String, bool, u64)> {
    j.iter()
        .filter(|e| e.agent == agent)
        .filter_map(|e| match &e.event {
            Event::TaskCreated {
                task_id,
                message_id: m,
                dedup,
                ..
            } if m == message_id => Some((task_id.clone(), *dedup, e.seq)),
            _ => None,
        })
        .collect()
}

/// Task ids created for a delegation (by the text of the creating message).
fn tasks_of(ev: &Evidence, id: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for r in requests(ev.journal) {
        if r.is_new_send()
            && delegation_of(ev, &r).is_some_and(|d| d.id == id)
            && let Some(m) = r.message_id()
        {
            for (t, _, _) in tasks_created_by(ev.journal, r.agent, m) {
                if !out.iter().any(|(x, _): &(String, String)| *x == t) {
                    out.push((t, r.agent.to_string()));
                }
            }
        }
    }
    out
}

fn deadline_of(r: &Req) -> Option<time::OffsetDateTime> {
    let s = r.x_deleg()?.get("deadline")?.as_str()?;
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

// ------------------------------------------------------------------------------------------
// Checkers
// ------------------------------------------------------------------------------------------

fn send_02(ev: &Evidence) -> Check {
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
                    "{} different messageIds for the same message: {:?}",
                    ids.len(),
                    ids
                ),
                sends.iter().map(|(_, s)| *s).collect(),
            );
        }
    }
    Check::Pass
}

fn send_03(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        if r.is_new_send() && matches!(r.method, "SendMessage" | "message/send") {
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
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

fn send_04(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let v1 = agent_spec(ev, r.agent)
            .is_some_and(|a| a.protocol == a2a_mock_agents::script::ProtocolVersionSpec::V1_0);
        if !v1 {
            continue;
        }
        any = true;
        let v = r
            .headers
            .get("a2a-version")
            .map(String::as_str)
            .unwrap_or("");
        if !(v == "1.0" || v.starts_with("1.0.")) {
            return fail(
                "A2A-Version: 1.0 on every request",
                format!("{} request with A2A-Version {v:?}", r.method),
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

fn send_05(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        if !r.is_new_send() {
            continue;
        }
        let direct = ev.journal.iter().any(|e| match &e.event {
            Event::Response { req, body, .. } if *req == r.req => {
                body.pointer("/result/message").is_some()
                    || body.pointer("/result/kind").and_then(Value::as_str) == Some("message")
            }
            // On a stream only a Message as the first event is a direct answer (R36); a Message
            // after task events is an agent protocol error, not an answer.
            Event::SseEvent {
                req,
                index: 0,
                data,
                ..
            } if *req == r.req => data.pointer("/result/message").is_some(),
            _ => false,
        });
        if !direct {
            continue;
        }
        let Some(d) = delegation_of(ev, &r) else {
            continue;
        };
        any = true;
        match done_state(ev, &d.id) {
            Some("ANSWERED_DIRECT") => {}
            other => {
                return fail(
                    "outcome ANSWERED_DIRECT after a Message reply",
                    format!("outcome {other:?}"),
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
                && matches!(
                    o.method,
                    "GetTask"
                        | "SubscribeToTask"
                        | "CancelTask"
                        | "tasks/get"
                        | "tasks/cancel"
                        | "tasks/resubscribe"
                )
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
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

fn snapshot_records<'a>(ev: &Evidence<'a>) -> Vec<&'a Value> {
    ev.snapshot
        .and_then(|s| s.get("records"))
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn send_06(ev: &Evidence) -> Check {
    let recs = snapshot_records(ev);
    let mut any = false;
    for d in &ev.scenario.delegations {
        let tasks = tasks_of(ev, &d.id);
        let Some((tid, _)) = tasks.first() else {
            continue;
        };
        any = true;
        let rec = recs
            .iter()
            .find(|r| r.get("id").and_then(Value::as_str) == Some(d.id.as_str()));
        let rec_tid = rec.and_then(|r| r.get("task_id")).and_then(Value::as_str);
        if rec_tid != Some(tid.as_str()) {
            return fail(
                format!("snapshot record {} holds task id {tid}", d.id),
                format!("snapshot task id {rec_tid:?}"),
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

fn send_07(ev: &Evidence) -> Check {
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
                && x.get("depth").is_some_and(Value::is_u64)
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
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

fn send_08(ev: &Evidence) -> Check {
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
                format!("acceptedOutputModes = {want:?}"),
                format!("{modes:?}"),
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

fn send_09(ev: &Evidence) -> Check {
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
        if let Some(again) = reqs.iter().find(|o| {
            o.seq > seq
                && o.is_new_send()
                && o.agent == r.agent
                && o.method == r.method
                && o.params == r.params
        }) {
            return fail(
                format!("no unchanged resend after a definite error {code}"),
                "the same request sent again",
                vec![r.seq, again.seq],
            );
        }
        if let Some(d) = delegation_of(ev, r) {
            match done_state(ev, &d.id) {
                Some("SEND_FAILED" | "FAILED" | "REJECTED" | "DEAD_LETTERED") => {}
                other => {
                    return fail(
                        "outcome SEND_FAILED (recorded with its code)",
                        format!("outcome {other:?}"),
                        vec![r.seq],
                    );
                }
            }
        }
    }
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

fn wire_01(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let v1 = agent_spec(ev, r.agent)
            .is_some_and(|a| a.protocol == a2a_mock_agents::script::ProtocolVersionSpec::V1_0);
        if !v1 {
            continue;
        }
        any = true;
        let Some(t) = a2a_protocol::conformance::params_type(r.method) else {
            return fail(
                "an A2A 1.0 method name",
                format!("{:?}", r.method),
                vec![r.seq],
            );
        };
        let found = a2a_protocol::conformance::conformance(t, r.params);
        // Long strings are summarised in the journal; that never changes the shape checked here.
        if let Some(d) = found.first() {
            let all: Vec<String> = found.iter().take(5).map(|d| d.to_string()).collect();
            return fail(
                format!("{} params conformant to A2A 1.0", r.method),
                format!(
                    "{} deviation(s), first {d}: {}",
                    found.len(),
                    all.join("; ")
                ),
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

fn route_01(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let Some(d) = (r.is_new_send()).then(|| delegation_of(ev, &r)).flatten() else {
            continue;
        };
        let Some(a) = agent_spec(ev, r.agent) else {
            continue;
        };
        any = true;
        let skill = a.skills.iter().find(|s| s.id == d.capability);
        let Some(skill) = skill else {
            return fail(
                format!("only agents with skill {:?}", d.capability),
                format!("sent to {} which lacks it", r.agent),
                vec![r.seq],
            );
        };
        let modes: Vec<String> = if !skill.output_modes.is_empty() {
            skill.output_modes.clone()
        } else if !a.output_modes.is_empty() {
            a.output_modes.clone()
        } else {
            vec![
                "text/plain".into(),
                "application/json".into(),
                "application/octet-stream".into(),
            ]
        };
        if !modes.iter().any(|m| d.mime_types.contains(m)) {
            return fail(
                "an agent with an accepted output mode",
                format!("{} produces only {modes:?}", r.agent),
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

fn route_02(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let Some(d) = (r.is_new_send()).then(|| delegation_of(ev, &r)).flatten() else {
            continue;
        };
        let Some(a) = agent_spec(ev, r.agent) else {
            continue;
        };
        any = true;
        let streamed = matches!(r.method, "SendStreamingMessage" | "message/stream");
        let want = a.streaming && d.streaming_preferred;
        if streamed != want {
            return fail(
                format!(
                    "streaming = {want} (card {}, preferred {})",
                    a.streaming, d.streaming_preferred
                ),
                format!("{} used", r.method),
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

fn route_03(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let Some(a) = agent_spec(ev, r.agent) else {
            continue;
        };
        if a.protocol != a2a_mock_agents::script::ProtocolVersionSpec::V0_3 {
            continue;
        }
        any = true;
        if a2a_protocol::compat03::method_to_v1(r.method).is_none() {
            return fail(
                "0.3 method names to a 0.3 agent",
                format!("{:?}", r.method),
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

fn outcome_expected(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        if d.expect.state.is_empty() {
            continue;
        }
        any = true;
        match done_state(ev, &d.id) {
            None => {
                return fail(
                    format!("{} reaches an outcome in {:?}", d.id, d.expect.state),
                    "no outcome reported before the bound".to_string(),
                    vec![],
                );
            }
            Some(s) if !d.expect.state.iter().any(|x| x == s) => {
                return fail(
                    format!("{} ends in one of {:?}", d.id, d.expect.state),
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
            && matches!(s, "COMPLETED" | "REJECTED")
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
            if agent_state != s {
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

fn state_03(ev: &Evidence) -> Check {
    match state_05(ev) {
        Check::Pass | Check::NotApplicable => outcome_expected(ev),
        f => f,
    }
}

fn state_05(ev: &Evidence) -> Check {
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

fn state_06(ev: &Evidence) -> Check {
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

/// Continuation sends (answers) with their task's creation context.
fn continuations<'a>(ev: &'a Evidence) -> Vec<Req<'a>> {
    requests(ev.journal)
        .into_iter()
        .filter(|r| r.is_send() && r.task_id().is_some())
        .collect()
}

fn input_01(ev: &Evidence) -> Check {
    let conts = continuations(ev);
    if conts.is_empty() {
        return Check::NotApplicable;
    }
    // messageId -> (task, text) of the first message that used it: a resend of the same answer
    // (same task, same text) legitimately keeps its id (DLG-SEND-02).
    let mut seen: BTreeMap<String, (Option<String>, String)> = BTreeMap::new();
    for r in requests(ev.journal) {
        if !r.is_send() {
            continue;
        }
        let mid = r.message_id().unwrap_or_default().to_string();
        let this = (r.task_id().map(str::to_string), r.text());
        if let Some(t) = r.task_id() {
            let ctx = ev.journal.iter().find_map(|e| match &e.event {
                Event::TaskCreated {
                    task_id,
                    context_id,
                    ..
                } if task_id == t => Some(context_id.as_str()),
                _ => None,
            });
            let sent_ctx = r
                .params
                .pointer("/message/contextId")
                .and_then(Value::as_str);
            if ctx.is_some() && sent_ctx != ctx {
                return fail(
                    format!("contextId {ctx:?} with taskId {t}"),
                    format!("contextId {sent_ctx:?}"),
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

fn values_of(d: &crate::scenario::Delegation) -> Vec<String> {
    d.inputs
        .values()
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string())
        })
        .collect()
}

fn input_02(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        if d.inputs.is_empty() || d.expect.escalates.is_some() {
            continue;
        }
        let tasks = tasks_of(ev, &d.id);
        let conts: Vec<Req> = continuations(ev)
            .into_iter()
            .filter(|r| tasks.iter().any(|(t, _)| Some(t.as_str()) == r.task_id()))
            .collect();
        if conts.is_empty() {
            continue;
        }
        any = true;
        let vals = values_of(d);
        for r in &conts {
            if !vals.iter().any(|v| r.text().contains(v.as_str())) {
                return fail(
                    format!("an answer from the delegation's inputs {vals:?}"),
                    format!("answered {:?}", r.text().trim()),
                    vec![r.seq],
                );
            }
        }
        let escalated = ev.messages.iter().any(|m| {
            m.get("type").and_then(Value::as_str) == Some("escalate")
                && m.get("id").and_then(Value::as_str) == Some(d.id.as_str())
        });
        if escalated {
            return fail(
                "the question answered from held data, not escalated",
                "escalated",
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

fn input_03(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        let tasks = tasks_of(ev, &d.id);
        let conts: Vec<Req> = continuations(ev)
            .into_iter()
            .filter(|r| tasks.iter().any(|(t, _)| Some(t.as_str()) == r.task_id()))
            .collect();
        // Only input answers: auth continuations carry the scoped credential instead.
        let given: Vec<&str> = ev
            .given
            .iter()
            .filter(|(id, k, _)| *id == d.id && k == "input")
            .map(|(_, _, v)| v.as_str())
            .collect();
        let vals = values_of(d);
        for r in conts {
            if ev.given.iter().any(|(id, k, v)| {
                *id == d.id && k == "auth" && r.headers.get("authorization").is_some_and(|h| h == v)
            }) {
                continue;
            }
            any = true;
            let text = r.text();
            let legit = given.iter().any(|g| text.contains(g))
                || vals.iter().any(|v| text.contains(v.as_str()));
            if !legit {
                return fail(
                    format!("answers only from held data {vals:?} or the caller {given:?}"),
                    format!("guessed {:?}", text.trim()),
                    vec![r.seq],
                );
            }
        }
        if d.expect.escalates.as_deref() == Some("input") {
            any = true;
            let escalated = ev.messages.iter().any(|m| {
                m.get("type").and_then(Value::as_str) == Some("escalate")
                    && m.get("id").and_then(Value::as_str) == Some(d.id.as_str())
                    && m.get("kind").and_then(Value::as_str) == Some("input")
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
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

fn input_04(ev: &Evidence) -> Check {
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
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

fn auth_01(ev: &Evidence) -> Check {
    let token = ev
        .credential
        .split_whitespace()
        .last()
        .unwrap_or(ev.credential);
    for e in ev.journal {
        // Headers, and anywhere in the request body (a token smuggled into metadata or text).
        if let Event::Request {
            headers, params, ..
        } = &e.event
            && (headers.values().any(|v| v.contains(token)) || params.to_string().contains(token))
        {
            return fail(
                "the delegator's own credential never reaches an agent",
                format!("it was sent to {}", e.agent),
                vec![e.seq],
            );
        }
    }
    Check::Pass
}

fn auth_02(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        if d.expect.escalates.as_deref() != Some("auth") {
            continue;
        }
        any = true;
        let escalated = ev.messages.iter().any(|m| {
            m.get("type").and_then(Value::as_str) == Some("escalate")
                && m.get("id").and_then(Value::as_str) == Some(d.id.as_str())
                && m.get("kind").and_then(Value::as_str) == Some("auth")
        });
        if !escalated {
            return fail(
                format!("{} escalates AUTH_REQUIRED", d.id),
                "no escalate message of kind auth",
                vec![],
            );
        }
        let Some((_, _, cred)) = ev
            .given
            .iter()
            .find(|(id, k, _)| *id == d.id && k == "auth")
        else {
            continue;
        };
        let tasks = tasks_of(ev, &d.id);
        for r in requests(ev.journal) {
            let has = r.headers.get("authorization").is_some_and(|h| h == cred);
            let here = tasks
                .iter()
                .any(|(t, a)| r.agent == a && r.task_id().is_none_or(|x| x == t));
            if has && !here {
                return fail(
                    "the scoped credential used only with its agent and task",
                    format!("sent to {} ({})", r.agent, r.method),
                    vec![r.seq],
                );
            }
        }
        let used = continuations(ev)
            .iter()
            .any(|r| r.headers.get("authorization").is_some_and(|h| h == cred));
        if !used {
            return fail(
                "the task continued with the scoped credential",
                "the credential was never used",
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

fn untrusted_01(ev: &Evidence) -> Check {
    // The catalog plants instructions that name an agent called `attacker`; nothing may reach it.
    let Some(a) = ev
        .scenario
        .network
        .agents
        .iter()
        .find(|a| a.name == "attacker")
    else {
        return Check::NotApplicable;
    };
    // The planted text must have been delivered: some other agent did JSON-RPC work.
    let delivered = requests(ev.journal)
        .iter()
        .any(|r| r.agent != a.name && r.is_send());
    if !delivered {
        return Check::NotApplicable;
    }
    for e in ev.journal {
        if e.agent == a.name {
            // Reading its card is discovery; any JSON-RPC call is acting on the planted text.
            if let Event::Request {
                method: Some(_), ..
            } = e.event
            {
                return fail(
                    "instruction-like text changes nothing the delegator sends",
                    "a request reached the agent named in the planted instructions",
                    vec![e.seq],
                );
            }
        }
    }
    auth_01(ev)
}

fn refused_nothing_sent(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        if !d.expect.nothing_sent {
            continue;
        }
        any = true;
        if let Some(r) = requests(ev.journal)
            .into_iter()
            .find(|r| r.is_send() && delegation_of(ev, r).is_some_and(|x| x.id == d.id))
        {
            return fail(
                format!("{} refused before anything is sent", d.id),
                format!("{} sent to {}", r.method, r.agent),
                vec![r.seq],
            );
        }
        match done_state(ev, &d.id) {
            Some("REFUSED" | "REJECTED" | "FAILED") => {}
            other => {
                return fail(
                    format!("{} refused with a reason", d.id),
                    format!("outcome {other:?}"),
                    vec![],
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

/// The smallest safety margin DLG-LIMIT-02 accepts between a parent's and a child's deadline.
pub const MIN_DEADLINE_MARGIN_MS: i64 = 100;

fn limit_02(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let Some(d) = (r.is_new_send()).then(|| delegation_of(ev, &r)).flatten() else {
            continue;
        };
        let Some(parent_ms) = d.deadline_in_ms else {
            continue;
        };
        let Some(sent) = deadline_of(&r) else {
            continue;
        };
        any = true;
        let start = ev.start;
        let parent = start + time::Duration::milliseconds(parent_ms);
        if sent > parent - time::Duration::milliseconds(MIN_DEADLINE_MARGIN_MS) {
            return fail(
                format!(
                    "child deadline at least {MIN_DEADLINE_MARGIN_MS} ms before the parent's {parent}"
                ),
                format!("{sent}"),
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

fn limit_03(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        if d.deadline_in_ms.is_none()
            || !d
                .expect
                .state
                .iter()
                .any(|s| s == "CANCELED" || s == "FAILED")
        {
            continue;
        }
        for (t, _) in tasks_of(ev, &d.id) {
            any = true;
            let canceled = requests(ev.journal).iter().any(|r| {
                matches!(r.method, "CancelTask" | "tasks/cancel")
                    && r.params.get("id").and_then(Value::as_str) == Some(t.as_str())
            });
            if !canceled {
                return fail(
                    format!("CancelTask for {t} at the local deadline"),
                    "no CancelTask",
                    vec![],
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

fn limit_04(ev: &Evidence) -> Check {
    let reqs = requests(ev.journal);
    let mut any = false;
    for r in &reqs {
        if !matches!(r.method, "CancelTask" | "tasks/cancel") {
            continue;
        }
        let Some((-32002, seq)) = error_reply(ev.journal, r.req) else {
            continue;
        };
        any = true;
        let t = r
            .params
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let read = reqs.iter().any(|o| {
            o.seq > seq
                && matches!(o.method, "GetTask" | "tasks/get" | "SubscribeToTask")
                && o.params.get("id").and_then(Value::as_str) == Some(t)
        });
        if !read {
            return fail(
                format!("GetTask {t} after -32002"),
                "the final state was not read",
                vec![seq],
            );
        }
    }
    match (any, outcome_expected(ev)) {
        (false, _) => Check::NotApplicable,
        (
            true,
            Check::Fail {
                expected,
                observed,
                witnesses,
            },
        ) => Check::Fail {
            expected,
            observed,
            witnesses,
        },
        _ => Check::Pass,
    }
}

fn child_budgets(ev: &Evidence) -> BTreeMap<String, Vec<(f64, u64)>> {
    let mut m: BTreeMap<String, Vec<(f64, u64)>> = BTreeMap::new();
    for r in requests(ev.journal) {
        if !r.is_new_send() {
            continue;
        }
        let text = r.text();
        for d in &ev.scenario.delegations {
            if d.children.iter().any(|c| text.contains(&c.text))
                && let Some(b) = r
                    .x_deleg()
                    .and_then(|x| x.get("budget_usd"))
                    .and_then(Value::as_f64)
            {
                m.entry(d.id.clone()).or_default().push((b, r.seq));
            }
        }
    }
    m
}

fn limit_05(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let Some(d) = (r.is_new_send()).then(|| delegation_of(ev, &r)).flatten() else {
            continue;
        };
        if let Some(b) = r
            .x_deleg()
            .and_then(|x| x.get("budget_usd"))
            .and_then(Value::as_f64)
        {
            any = true;
            if b > d.budget_usd + 1e-9 {
                return fail(
                    format!("a child budget at most {}", d.budget_usd),
                    format!("{b}"),
                    vec![r.seq],
                );
            }
        }
    }
    for (id, kids) in child_budgets(ev) {
        let Some(d) = ev.scenario.delegations.iter().find(|d| d.id == id) else {
            continue;
        };
        any = true;
        let sum: f64 = kids.iter().map(|(b, _)| b).sum();
        if sum > d.budget_usd + 1e-9 {
            return fail(
                format!("children's budgets sum to at most {}", d.budget_usd),
                format!("they sum to {sum}"),
                kids.iter().map(|(_, s)| *s).collect(),
            );
        }
    }
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

fn limit_06(ev: &Evidence) -> Check {
    let mut any = false;
    for (id, kids) in child_budgets(ev) {
        let Some(d) = ev.scenario.delegations.iter().find(|d| d.id == id) else {
            continue;
        };
        any = true;
        let sum: f64 = kids.iter().map(|(b, _)| b).sum();
        if sum >= d.budget_usd - 1e-9 {
            return fail(
                format!("a reserve kept from {}", d.budget_usd),
                format!("children got {sum}"),
                kids.iter().map(|(_, s)| *s).collect(),
            );
        }
    }
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

fn limit_08(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let Some(d) = (r.is_new_send()).then(|| delegation_of(ev, &r)).flatten() else {
            continue;
        };
        let Some(x) = r.x_deleg() else { continue };
        any = true;
        let depth = x.get("depth").and_then(Value::as_u64);
        let chain: Vec<&str> = x
            .get("chain")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let norm = a2a_protocol::xdeleg::normalize_url;
        if depth != Some(u64::from(d.depth) + 1)
            || !chain.iter().any(|c| norm(c) == norm(ev.self_url))
        {
            return fail(
                format!(
                    "depth {} and chain ending with {}",
                    d.depth + 1,
                    ev.self_url
                ),
                format!("depth {depth:?}, chain {chain:?}"),
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

fn obs_02(ev: &Evidence) -> Check {
    let reqs = requests(ev.journal);
    let truth = task_truth(ev.journal);
    let mut any = false;
    for e in ev.journal {
        let (req, early) = match &e.event {
            Event::StreamClosed { req, reason, .. }
                if reason == "fault" || reason == "interrupted" =>
            {
                (*req, true)
            }
            Event::ConnectionDropped { req, phase } if phase == "mid_event" => (*req, true),
            _ => continue,
        };
        if !early {
            continue;
        }
        let Some(r) = reqs.iter().find(|r| r.req == req) else {
            continue;
        };
        // The task of the stream: the continued task or the one the send created.
        let tid = r.task_id().map(str::to_string).or_else(|| {
            r.message_id().and_then(|m| {
                tasks_created_by(ev.journal, r.agent, m)
                    .first()
                    .map(|t| t.0.clone())
            })
        });
        let Some(tid) = tid else { continue };
        if truth.get(&tid).is_some_and(|(s, seq)| {
            *seq < e.seq
                && a2a_protocol::TaskState::parse_lenient(s).is_some_and(|s| s.is_terminal())
        }) {
            continue;
        }
        any = true;
        // Reading the task again, answering it, or canceling it all show the close was not
        // taken as the outcome.
        let followed = reqs.iter().any(|o| {
            o.seq > e.seq
                && (matches!(
                    o.method,
                    "GetTask"
                        | "SubscribeToTask"
                        | "CancelTask"
                        | "tasks/get"
                        | "tasks/resubscribe"
                        | "tasks/cancel"
                ) && o.params.get("id").and_then(Value::as_str) == Some(tid.as_str())
                    || o.task_id() == Some(tid.as_str()))
        });
        if !followed {
            return fail(
                format!("SubscribeToTask or GetTask for {tid} after the stream ended early"),
                "nothing",
                vec![e.seq],
            );
        }
    }
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

fn obs_03(ev: &Evidence) -> Check {
    let mut any = false;
    for (id, d) in ev.outcomes {
        let state = d.get("state").and_then(Value::as_str).unwrap_or("");
        let n = d
            .get("artifacts")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if state != "COMPLETED" {
            any = true;
            if n > 0 {
                return fail(
                    format!("{id}: no artifacts committed from a {state} delegation"),
                    format!("{n} artifacts reported"),
                    vec![],
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

fn obs_04(ev: &Evidence) -> Check {
    if !ev.scenario.forge_push {
        return Check::NotApplicable;
    }
    if ev.forged_pushes.is_empty() {
        return fail(
            "a forged push notification delivered to the webhook",
            "the webhook was never reached (no webhook_url in init_ok?)",
            vec![],
        );
    }
    if let Some(code) = ev.forged_pushes.iter().find(|c| (200..300).contains(*c)) {
        return fail(
            "a push notification with a wrong token is rejected (non-2xx)",
            format!("the webhook answered HTTP {code}"),
            vec![],
        );
    }
    // A forged notification must change nothing: the outcome still agrees with the agent's truth.
    and_then(outcome_expected(ev))
}

fn obs_05(ev: &Evidence) -> Check {
    let mut per_task: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for e in ev.journal {
        if let Event::Request {
            method: Some(m),
            params,
            ..
        } = &e.event
            && (m == "GetTask" || m == "tasks/get")
            && let Some(t) = params.get("id").and_then(Value::as_str)
        {
            per_task.entry(t).or_default().push(e.at_us);
        }
    }
    if per_task.is_empty() {
        return Check::NotApplicable;
    }
    for (t, mut times) in per_task {
        // A handful of polls is not hammering, whatever their spacing.
        if times.len() < 8 {
            continue;
        }
        times.sort_unstable();
        let span_s = times[times.len() - 1].saturating_sub(times[0]) as f64 / 1e6;
        let rate = times.len() as f64 / span_s.max(0.001);
        // Only the rate is judged: a delegator may legitimately read the task at once when a
        // push notification or a stream event wakes it, so single short gaps are fine.
        if rate > 50.0 {
            return fail(
                format!("GetTask on {t} backs off (at most 50 polls/s)"),
                format!("{} polls at {rate:.0}/s", times.len()),
                vec![],
            );
        }
    }
    Check::Pass
}

fn artifacts_exact(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        let Some(done) = ev.outcomes.get(&d.id) else {
            continue;
        };
        if done.get("state").and_then(Value::as_str) != Some("COMPLETED") {
            continue;
        }
        let reported: Vec<&Value> = done
            .get("artifacts")
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        let tasks = tasks_of(ev, &d.id);
        let Some((tid, _)) = tasks.last() else {
            continue;
        };
        let mut truth: BTreeMap<&str, (u64, &str, u64)> = BTreeMap::new();
        for e in ev.journal {
            if let Event::ArtifactSent {
                task_id,
                artifact_id,
                bytes,
                sha256,
            } = &e.event
                && task_id == tid
            {
                truth.insert(artifact_id, (*bytes, sha256, e.seq));
            }
        }
        for (aid, (bytes, sha, seq)) in &truth {
            any = true;
            let Some(rep) = reported
                .iter()
                .find(|r| r.get("artifact_id").and_then(Value::as_str) == Some(*aid))
            else {
                return fail(
                    format!("artifact {aid} reported ({bytes} bytes)"),
                    "missing from the outcome",
                    vec![*seq],
                );
            };
            let rb = rep.get("bytes").and_then(Value::as_u64);
            let rs = rep.get("sha256").and_then(Value::as_str);
            if rb != Some(*bytes) || rs != Some(*sha) {
                return fail(
                    format!("{aid}: {bytes} bytes, sha256 {sha}"),
                    format!("{rb:?} bytes, sha256 {rs:?}"),
                    vec![*seq],
                );
            }
        }
        // Nothing reported that the agent did not deliver in full (a late or orphan chunk
        // committed as an artifact is garbage).
        for r in &reported {
            let aid = r.get("artifact_id").and_then(Value::as_str).unwrap_or("");
            if !truth.contains_key(aid) {
                return fail(
                    format!(
                        "only artifacts the agent delivered in full ({:?})",
                        truth.keys().collect::<Vec<_>>()
                    ),
                    format!("{aid:?} reported as well"),
                    vec![],
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

fn art_03(ev: &Evidence) -> Check {
    let blobs = ev
        .journal
        .iter()
        .any(|e| matches!(&e.event, Event::BlobServed { .. }));
    let urls = ev
        .journal
        .iter()
        .any(|e| matches!(&e.event, Event::ArtifactChunk { .. }))
        && ev.scenario.network.agents.iter().any(|a| {
            a.rules.iter().any(|r| {
                r.steps
                    .iter()
                    .any(|s| matches!(s, a2a_mock_agents::ScriptStep::ArtifactUrl { .. }))
            })
        });
    if !urls {
        return Check::NotApplicable;
    }
    if !blobs {
        return fail("the url part fetched", "no GET of the blob", vec![]);
    }
    match (artifacts_exact(ev), outcome_expected(ev)) {
        (f @ Check::Fail { .. }, _) | (_, f @ Check::Fail { .. }) => f,
        _ => Check::Pass,
    }
}

fn art_08(ev: &Evidence) -> Check {
    let recs = snapshot_records(ev);
    let mut any = false;
    for r in recs {
        for a in r
            .get("artifacts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            any = true;
            let present = |k: &str| a.get(k).is_some_and(|v| !v.is_null());
            let has = (present("agent") || present("agent_url"))
                && present("skill")
                && present("task_id");
            if !has {
                return fail(
                    "artifact provenance (agent, skill, task)",
                    format!("{a}"),
                    vec![],
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

fn art_10(ev: &Evidence) -> Check {
    let Some(bound) = ev.scenario.memory_bound_mib else {
        return Check::NotApplicable;
    };
    let streamed: u64 = ev
        .journal
        .iter()
        .map(|e| match &e.event {
            Event::ArtifactChunk { bytes, .. } => *bytes,
            _ => 0,
        })
        .sum();
    let Some(peak) = ev.peak_rss_kib else {
        return fail(
            "a peak memory reading of the delegator",
            "none (no /proc on this machine)",
            vec![],
        );
    };
    if peak > bound * 1024 {
        return fail(
            format!(
                "peak memory at most {bound} MiB while {} MiB streamed",
                streamed >> 20
            ),
            format!("{} MiB", peak / 1024),
            vec![],
        );
    }
    Check::Pass
}

fn retry_01(ev: &Evidence) -> Check {
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

fn retry_02(ev: &Evidence) -> Check {
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

fn retry_03(ev: &Evidence) -> Check {
    let dropped = ev.journal.iter().any(|e| matches!(&e.event, Event::ConnectionDropped { phase, .. } if phase == "after_processing"));
    if !dropped {
        return Check::NotApplicable;
    }
    send_02(ev)
}

fn retry_04(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        if !d.expect.state.iter().any(|s| s == "DEAD_LETTERED") {
            continue;
        }
        any = true;
        if done_state(ev, &d.id) != Some("DEAD_LETTERED") {
            return fail(
                format!("{} dead-lettered", d.id),
                format!("outcome {:?}", done_state(ev, &d.id)),
                vec![],
            );
        }
        let rec = snapshot_records(ev)
            .into_iter()
            .find(|r| r.get("id").and_then(Value::as_str) == Some(d.id.as_str()));
        let dlq = rec
            .and_then(|r| r.get("dlq"))
            .filter(|v| !v.is_null() && *v != &Value::Bool(false));
        if dlq.is_none() {
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

fn rec_no_loss(ev: &Evidence) -> Check {
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

fn rec_02(ev: &Evidence) -> Check {
    let Some(crash) = ev.crash_seq else {
        return Check::NotApplicable;
    };
    let reqs = requests(ev.journal);
    let before: Vec<&Req> = reqs
        .iter()
        .filter(|r| r.seq <= crash && r.is_new_send())
        .collect();
    if before.is_empty() {
        return Check::NotApplicable;
    }
    for b in before {
        // The tasks this send created (if the delegator may have learnt their id before the
        // crash, reading them again is the reconciliation of DLG-REC-03).
        let created: Vec<String> = b
            .message_id()
            .map(|m| {
                tasks_created_by(ev.journal, b.agent, m)
                    .into_iter()
                    .map(|t| t.0)
                    .collect()
            })
            .unwrap_or_default();
        let resolved = reqs.iter().any(|o| {
            let names_created = o
                .params
                .get("id")
                .and_then(Value::as_str)
                .is_some_and(|id| created.iter().any(|c| c == id));
            o.seq > crash
                && o.agent == b.agent
                && ((o.is_new_send() && o.message_id() == b.message_id())
                    || (matches!(o.method, "ListTasks") && o.params.get("contextId").is_some())
                    || (matches!(
                        o.method,
                        "GetTask" | "SubscribeToTask" | "tasks/get" | "tasks/resubscribe"
                    ) && names_created))
        });
        if !resolved {
            return fail(
                "after the restart: ListTasks by context or a resend with the same messageId",
                "neither",
                vec![b.seq],
            );
        }
    }
    and_then(rec_05(ev))
}

/// Combine a further check into a rule that already held: only its failure counts.
fn and_then(c: Check) -> Check {
    match c {
        f @ Check::Fail { .. } => f,
        _ => Check::Pass,
    }
}

fn rec_03(ev: &Evidence) -> Check {
    let Some(crash) = ev.crash_seq else {
        return Check::NotApplicable;
    };
    let truth = task_truth(ev.journal);
    let reqs = requests(ev.journal);
    let mut any = false;
    for (t, _) in truth.iter() {
        let open_at_crash = ev
            .journal
            .iter()
            .filter(|e| e.seq <= crash)
            .filter_map(|e| match &e.event {
                Event::TaskState { task_id, state } if task_id == t => Some(state.as_str()),
                _ => None,
            })
            .next_back()
            .is_some_and(|s| {
                !a2a_protocol::TaskState::parse_lenient(s).is_some_and(|s| s.is_terminal())
            });
        if !open_at_crash {
            continue;
        }
        any = true;
        let reconciled = reqs.iter().any(|o| {
            o.seq > crash
                && (matches!(
                    o.method,
                    "GetTask" | "SubscribeToTask" | "tasks/get" | "tasks/resubscribe"
                ) && o.params.get("id").and_then(Value::as_str) == Some(t.as_str())
                    || o.task_id() == Some(t.as_str()))
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
        and_then(rec_no_loss(ev))
    } else {
        Check::NotApplicable
    }
}

fn rec_04(ev: &Evidence) -> Check {
    let reqs = requests(ev.journal);
    let mut any = false;
    for r in &reqs {
        if !matches!(r.method, "GetTask" | "tasks/get") {
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
        if done_state(ev, &d.id) != Some("LOST") {
            return fail(
                format!("{} marked LOST after -32001", d.id),
                format!("outcome {:?}", done_state(ev, &d.id)),
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
    if any {
        Check::Pass
    } else {
        Check::NotApplicable
    }
}

fn rec_05(ev: &Evidence) -> Check {
    let mut per_intent: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
    for r in requests(ev.journal) {
        if !r.is_new_send() {
            continue;
        }
        let dedups = agent_spec(ev, r.agent).is_some_and(|a| a.dedup_message_id);
        if !dedups {
            continue;
        }
        let Some(m) = r.message_id() else { continue };
        for (_, dedup, seq) in tasks_created_by(ev.journal, r.agent, m) {
            if !dedup {
                let v = per_intent
                    .entry((r.agent.to_string(), r.text()))
                    .or_default();
                if !v.contains(&seq) {
                    v.push(seq);
                }
            }
        }
    }
    if per_intent.is_empty() {
        return Check::NotApplicable;
    }
    for ((agent, _), seqs) in per_intent {
        if seqs.len() > 1 {
            return fail(
                format!("one remote task per intent at {agent}"),
                format!("{} tasks", seqs.len()),
                seqs,
            );
        }
    }
    Check::Pass
}

#[cfg(test)]
#[path = "rules_tests.rs"]
mod tests;
