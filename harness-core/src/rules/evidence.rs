//! The evidence of a case and the helpers checkers read it with: the requests of the journal, the
//! delegation a request belongs to, the tasks an agent created, the agent's truth about task states.

use super::registry::Check;
use crate::scenario::{Child, Delegation, Scenario};
use a2a_driver_contract::{DelegationState, Done, EscalationKind, FromDelegator, Outcome};
use a2a_mock_agents::{Entry, Event};
use a2a_protocol::{Method, compat03};
use serde_json::Value;
use std::collections::BTreeMap;

/// Everything a checker may look at.
pub struct Evidence<'a> {
    /// The case.
    pub scenario: &'a Scenario,
    /// What the network saw.
    pub journal: &'a [Entry],
    /// Every protocol message from the delegator that the typed contract accepts, in order
    /// (across restarts), except `snapshot_ok`.
    pub messages: &'a [FromDelegator],
    /// How each delegation ended: its `done`, or the `error` (code `unsupported`) that declined
    /// it.
    pub outcomes: &'a BTreeMap<String, FromDelegator>,
    /// The records of the last `snapshot_ok`, as written (read them through [`Record`]).
    pub snapshot: Option<&'a [Value]>,
    /// The delegator's own URL given in `init`.
    pub self_url: &'a str,
    /// The delegator's own credential given in `init`.
    pub credential: &'a str,
    /// Answers and credentials the harness gave: (delegation, kind, value).
    pub given: &'a [(String, EscalationKind, String)],
    /// Sequence number of the journal when the delegator was killed, if it was.
    pub crash_seq: Option<u64>,
    /// When the delegator answered `init` (scenario deadlines are relative to it).
    pub start: time::OffsetDateTime,
    /// HTTP statuses the delegator's webhook gave to forged push notifications.
    pub forged_pushes: &'a [u16],
    /// The memory of the delegator's whole process group (memory cases only), read before it
    /// was stopped.
    pub memory: Option<crate::delegator_process::MemoryReading>,
    /// Per delegation, the last journal sequence recorded when the harness received its outcome
    /// (`done`, or the `error` that declined it): only entries up to it can have caused it. A
    /// delegation absent here is judged on the whole journal.
    pub done_at: &'a BTreeMap<String, u64>,
    /// What the harness read on disk, before the store was cleaned up, of each file a `done`
    /// reported: (delegation, artifact id) -> the file's facts.
    pub artifact_files: &'a BTreeMap<(String, String), FileFact>,
    /// What the secret scan found in everything the delegator wrote (stdout, stderr, snapshot,
    /// store files), scanned before the store was cleaned up (DLG-SECRET-01).
    pub secrets: &'a super::secret::SecretScan,
    /// The store directory given to the delegator in `init` (DLG-UNTRUSTED-02: every file it
    /// writes belongs under it).
    pub store_dir: &'a std::path::Path,
    /// Entries whose name carries the trap marker that the harness found outside the store,
    /// created during the case (DLG-UNTRUSTED-02; see [`super::names::trap_hits`]).
    pub trap_hits: &'a [std::path::PathBuf],
}

/// What a reported artifact file held when the harness hashed it.
#[derive(Debug, Clone, PartialEq)]
pub enum FileFact {
    /// The file was read: its length and lowercase hex sha256.
    Read {
        /// Bytes in the file.
        bytes: u64,
        /// Hex sha256 of them.
        sha256: String,
    },
    /// It could not be read (missing, not a regular file, I/O error): why.
    Unreadable(String),
}

/// Hash every artifact file the `done`s report (path from `done.artifacts`), streaming.
pub fn hash_reported_files(
    outcomes: &BTreeMap<String, FromDelegator>,
) -> BTreeMap<(String, String), FileFact> {
    use sha2::Digest;
    use std::io::Read;
    let mut m = BTreeMap::new();
    for o in outcomes.values() {
        let FromDelegator::Done(d) = o else { continue };
        for a in &d.artifacts {
            let fact = (|| {
                let meta = std::fs::metadata(&a.path).map_err(|e| e.to_string())?;
                if !meta.is_file() {
                    return Err("not a regular file".to_string());
                }
                let mut f = std::fs::File::open(&a.path).map_err(|e| e.to_string())?;
                let mut h = sha2::Sha256::new();
                let mut buf = vec![0u8; 64 * 1024];
                let mut bytes = 0u64;
                loop {
                    let n = f.read(&mut buf).map_err(|e| e.to_string())?;
                    if n == 0 {
                        break;
                    }
                    bytes += n as u64;
                    h.update(&buf[..n]);
                }
                Ok(FileFact::Read {
                    bytes,
                    sha256: format!("{:x}", h.finalize()),
                })
            })()
            .unwrap_or_else(FileFact::Unreadable);
            m.insert((d.id.clone(), a.artifact_id.clone()), fact);
        }
    }
    m
}

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
    /// The HTTP request target as journaled: the path, with the raw query string when the
    /// request had one (`/a2a?A2A-Version=1.0`).
    pub path: &'a str,
}

impl Req<'_> {
    /// The A2A method this request calls, whether named in 1.0 or in 0.3.
    pub fn method_v1(&self) -> Option<Method> {
        v1_method(self.method)
    }
    /// True when the request calls one of `methods` (under its 1.0 or its 0.3 name).
    pub fn calls(&self, methods: &[Method]) -> bool {
        self.method_v1().is_some_and(|m| methods.contains(&m))
    }
    /// True for SendMessage / SendStreamingMessage (and their 0.3 names).
    pub fn is_send(&self) -> bool {
        self.calls(&[Method::SendMessage, Method::SendStreamingMessage])
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
        message_text(self.params)
    }
    /// The `x-deleg` metadata.
    pub fn x_deleg(&self) -> Option<&Value> {
        self.params.pointer("/metadata/x-deleg")
    }
    /// True when one mock agent sent this request to another (simulation traffic, never the
    /// delegator's).
    pub fn from_mock_peer(&self) -> bool {
        self.headers.contains_key(a2a_mock_agents::MOCK_PEER_HEADER)
    }
    /// The protocol version the request asked for, as the agents negotiate it: the
    /// `A2A-Version` header (gRPC: the `a2a-version` metadata) when present, else the
    /// `A2A-Version` query parameter of the request URL (spec §3.6.1 allows it); `None` when
    /// the request carries neither.
    pub fn version(&self) -> Option<std::borrow::Cow<'_, str>> {
        if let Some(v) = self.headers.get("a2a-version") {
            return Some(std::borrow::Cow::Borrowed(v.as_str()));
        }
        query_param(self.path, a2a_protocol::VERSION_HEADER)
    }
}

/// The value of query parameter `name` in a request target `path` (`/a2a?x=1&A2A-Version=1.0`),
/// percent-decoded (`+` is a space, as in forms); `None` without a query or without that name.
pub fn query_param<'p>(path: &'p str, name: &str) -> Option<std::borrow::Cow<'p, str>> {
    let (_, query) = path.split_once('?')?;
    let decode = |s: &'p str| -> std::borrow::Cow<'p, str> {
        if s.contains(['%', '+']) {
            let spaced = s.replace('+', " ");
            std::borrow::Cow::Owned(
                percent_encoding::percent_decode_str(&spaced)
                    .decode_utf8_lossy()
                    .into_owned(),
            )
        } else {
            std::borrow::Cow::Borrowed(s)
        }
    };
    query.split('&').find_map(|kv| {
        let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
        (decode(k) == name).then(|| decode(v))
    })
}

/// The A2A method a JSON-RPC method name stands for: a 1.0 name, or a 0.3 name mapped by
/// [`compat03::method_to_v1`]; `None` for anything else.
pub fn v1_method(name: &str) -> Option<Method> {
    Method::parse(name).or_else(|| compat03::method_to_v1(name).and_then(Method::parse))
}

/// Every A2A request in the journal (any binding) whose body arrived whole.
pub fn requests(j: &[Entry]) -> Vec<Req<'_>> {
    j.iter()
        .filter_map(|e| match &e.event {
            // A body the client cut off (a delegator killed while sending) never arrived: the
            // agent did nothing with it, and there is nothing of it to judge.
            Event::Request { params, .. } if params.as_str() == Some(a2a_mock_agents::CUT_BODY) => {
                None
            }
            Event::Request {
                req,
                method: Some(m),
                params,
                headers,
                path,
                ..
            } => Some(Req {
                seq: e.seq,
                req: *req,
                agent: &e.agent,
                method: m,
                params,
                headers,
                path,
            }),
            _ => None,
        })
        .collect()
}

/// True when the agent answered request `req` with a Message instead of a task: a unary
/// response whose result is a Message, or a stream whose first event is one (R36: a Message
/// after task events is an agent protocol error, not an answer).
pub fn direct_reply(j: &[Entry], req: u64) -> bool {
    j.iter().any(|e| match &e.event {
        Event::Response { req: r, body, .. } if *r == req => {
            body.pointer("/result/message").is_some()
                || body.pointer("/result/kind").and_then(Value::as_str) == Some("message")
        }
        Event::SseEvent {
            req: r,
            index: 0,
            data,
            ..
        } if *r == req => data.pointer("/result/message").is_some(),
        _ => false,
    })
}

/// The concatenated text of the text parts of the message in request `params`, one per line.
pub(super) fn message_text(params: &Value) -> String {
    let mut s = String::new();
    for p in params
        .pointer("/message/parts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(t) = p.get("text").and_then(Value::as_str) {
            s.push_str(t);
            s.push('\n');
        }
    }
    s
}

pub(super) fn delegation_of<'a>(ev: &'a Evidence, r: &Req) -> Option<&'a Delegation> {
    delegation_with_text(ev, &r.text())
}

/// The delegation whose text a message `text` carries.
pub(super) fn delegation_with_text<'a>(ev: &'a Evidence, text: &str) -> Option<&'a Delegation> {
    // Longest matching text wins so that a child whose text extends its parent's is found.
    ev.scenario
        .delegations
        .iter()
        .filter(|d| text.contains(&d.text))
        .max_by_key(|d| d.text.len())
}

/// The delegation whose work a new send carries, and the fan-out child it is, if any: a send whose
/// text holds a child's text is that child's, of the child's parent delegation (the longest
/// matching child text wins); any other send is the delegation [`delegation_of`] finds. Sends one
/// mock agent made to another (sub-delegation) are no delegation's.
pub(super) fn work_of<'a>(
    ev: &'a Evidence,
    r: &Req,
) -> Option<(&'a Delegation, Option<&'a Child>)> {
    if r.from_mock_peer() {
        return None;
    }
    let text = r.text();
    let child = ev
        .scenario
        .delegations
        .iter()
        .flat_map(|d| d.children.iter().map(move |c| (d, c)))
        .filter(|(_, c)| text.contains(&c.text))
        .max_by_key(|(_, c)| c.text.len());
    match child {
        Some((d, c)) => Some((d, Some(c))),
        None => delegation_of(ev, r).map(|d| (d, None)),
    }
}

/// One unit of work the delegator sends to an agent: a delegation without children, or one child
/// of a fan-out. A child reports its own `done` under its own id and shares its parent's
/// expectation, limits and chain; the parent sends nothing itself.
#[derive(Debug, Clone, Copy)]
pub(super) struct Work<'a> {
    /// The id its `done` carries.
    pub id: &'a str,
    /// The delegation it is (a fan-out child's parent).
    pub delegation: &'a Delegation,
}

/// Every unit of work of the case, in scenario order (a fan-out's children in place of their
/// parent).
pub(super) fn works<'a>(ev: &Evidence<'a>) -> impl Iterator<Item = Work<'a>> + use<'a> {
    let delegations: &'a [Delegation] = &ev.scenario.delegations;
    delegations.iter().flat_map(|d| {
        let own = d.children.is_empty().then_some(Work {
            id: d.id.as_str(),
            delegation: d,
        });
        own.into_iter().chain(d.children.iter().map(move |c| Work {
            id: c.id.as_str(),
            delegation: d,
        }))
    })
}

/// The id of the work a send carries: the fan-out child's, else the delegation's (see
/// [`work_of`]).
pub(super) fn work_id<'a>(ev: &'a Evidence, r: &Req) -> Option<&'a str> {
    work_of(ev, r).map(|(d, c)| c.map_or(d.id.as_str(), |c| c.id.as_str()))
}

/// The chain a delegation arrived with, as the harness gave it (the token `$self` is the
/// delegator's own URL).
pub(super) fn incoming_chain(ev: &Evidence, d: &Delegation) -> Vec<String> {
    d.chain
        .iter()
        .map(|c| {
            if c == "$self" {
                ev.self_url.to_string()
            } else {
                c.clone()
            }
        })
        .collect()
}

pub(super) fn agent_spec<'a>(
    ev: &'a Evidence,
    name: &str,
) -> Option<&'a a2a_mock_agents::AgentSpec> {
    ev.scenario.network.agents.iter().find(|a| a.name == name)
}

/// The `done` of delegation `id`, if it reported one.
pub(super) fn done_of<'a>(ev: &'a Evidence, id: &str) -> Option<&'a Done> {
    match ev.outcomes.get(id) {
        Some(FromDelegator::Done(d)) => Some(d),
        _ => None,
    }
}

/// The outcome delegation `id` reported in its `done`.
pub(super) fn done_state(ev: &Evidence, id: &str) -> Option<Outcome> {
    done_of(ev, id).map(|d| d.state)
}

/// The wire names of `states`, for messages.
pub(super) fn names(states: &[Outcome]) -> Vec<&'static str> {
    states.iter().map(|s| s.as_str()).collect()
}

/// The outcome of delegation `id` as a wire name, for messages.
pub(super) fn shown_state(ev: &Evidence, id: &str) -> Option<&'static str> {
    done_state(ev, id).map(Outcome::as_str)
}

/// True when the delegator escalated delegation `id` (of any kind).
pub(super) fn escalated(ev: &Evidence, id: &str) -> bool {
    ev.messages
        .iter()
        .any(|m| matches!(m, FromDelegator::Escalate(e) if e.id == id))
}

/// Final state per task id, from the journal.
pub(super) fn task_truth(j: &[Entry]) -> BTreeMap<String, (String, u64)> {
    let mut m = BTreeMap::new();
    for e in j {
        if let Event::TaskState { task_id, state } = &e.event {
            m.insert(task_id.clone(), (state.clone(), e.seq));
        }
    }
    m
}

pub(super) fn response_of(j: &[Entry], req: u64) -> Option<&Entry> {
    j.iter()
        .find(|e| matches!(&e.event, Event::Response { req: r, .. } if *r == req))
}

/// The JSON-RPC error code and journal sequence of the response to request `req`, if it was an
/// error.
pub(super) fn error_reply(j: &[Entry], req: u64) -> Option<(i64, u64)> {
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

pub(super) fn tasks_created_by(
    j: &[Entry],
    agent: &str,
    message_id: &str,
) -> Vec<(String, bool, u64)> {
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

/// Task ids created for a unit of work, a delegation or a fan-out child (by the text of the
/// creating message, see [`work_id`]), with the agent that created each.
pub(super) fn tasks_of(ev: &Evidence, id: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for r in requests(ev.journal) {
        if r.is_new_send()
            && work_id(ev, &r) == Some(id)
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

pub(super) fn deadline_of(r: &Req) -> Option<time::OffsetDateTime> {
    let s = r.x_deleg()?.get("deadline")?.as_str()?;
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

/// The records of the last snapshot.
pub(super) fn snapshot_records<'a>(ev: &Evidence<'a>) -> Vec<Record<'a>> {
    ev.snapshot.into_iter().flatten().map(Record).collect()
}

/// One snapshot record as a foreign delegator wrote it, read through lenient typed accessors:
/// the published schema constrains only a few record fields, so a field of the wrong shape
/// reads as absent here instead of failing the whole record (as parsing it into the strict
/// [`SnapshotRecord`](a2a_driver_contract::SnapshotRecord) would).
#[derive(Debug, Clone, Copy)]
pub struct Record<'a>(pub &'a Value);

impl<'a> Record<'a> {
    /// The delegation id.
    pub fn id(&self) -> Option<&'a str> {
        self.0.get("id").and_then(Value::as_str)
    }
    /// The remote task id, when recorded.
    pub fn task_id(&self) -> Option<&'a str> {
        self.0.get("task_id").and_then(Value::as_str)
    }
    /// The recorded state, when it is one of the contract's.
    pub fn state(&self) -> Option<DelegationState> {
        self.0
            .get("state")
            .and_then(Value::as_str)
            .and_then(DelegationState::parse)
    }
    /// True when the record is in the dead-letter queue: `dlq` present and neither `null` nor
    /// `false` (a delegator may put the dead-letter entry itself there).
    pub fn in_dlq(&self) -> bool {
        self.0
            .get("dlq")
            .is_some_and(|v| !v.is_null() && *v != Value::Bool(false))
    }
    /// The recorded artifacts, as written (provenance fields are checked by name).
    pub fn artifacts(&self) -> impl Iterator<Item = &'a Value> + use<'a> {
        self.0
            .get("artifacts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    }
}

/// The last journal sequence that can have caused delegation `id`'s outcome.
pub(super) fn seen_until(ev: &Evidence, id: &str) -> u64 {
    ev.done_at.get(id).copied().unwrap_or(u64::MAX)
}

/// The task each JSON-RPC request is about: `params.id` (GetTask, SubscribeToTask, CancelTask),
/// the task a message continues, or the task a send created.
pub(super) fn request_tasks(j: &[Entry]) -> BTreeMap<u64, String> {
    let mut m = BTreeMap::new();
    for r in requests(j) {
        let t = r
            .task_id()
            .map(str::to_string)
            .or_else(|| {
                (!r.is_send())
                    .then(|| r.params.get("id").and_then(Value::as_str))
                    .flatten()
                    .map(str::to_string)
            })
            .or_else(|| {
                r.message_id().and_then(|mid| {
                    tasks_created_by(j, r.agent, mid)
                        .first()
                        .map(|t| t.0.clone())
                })
            });
        if let Some(t) = t {
            m.insert(r.req, t);
        }
    }
    m
}

/// Journal sequences at which news of `task` reached the delegator: a response or stream event
/// on a request about it, or a push notification its webhook accepted (2xx).
pub(super) fn deliveries(j: &[Entry], task: &str) -> Vec<u64> {
    let by_req = request_tasks(j);
    j.iter()
        .filter(|e| match &e.event {
            Event::Response { req, .. } | Event::SseEvent { req, .. } => {
                by_req.get(req).is_some_and(|t| t == task)
            }
            Event::Push {
                task_id,
                status: Some(s),
                ..
            } => task_id == task && (200..300).contains(s),
            Event::BlobServed { .. } => false,
            _ => false,
        })
        .map(|e| e.seq)
        .collect()
}

/// The first delivery of `task` news after journal sequence `after` and no later than `until`.
pub(super) fn delivered_between(j: &[Entry], task: &str, after: u64, until: u64) -> Option<u64> {
    deliveries(j, task)
        .into_iter()
        .find(|s| *s > after && *s <= until)
}

/// The task the delegation's work went to (the last one created for it) with its agent and the
/// sequence of its creation; or a failure naming that the delegator never sent the work.
///
/// A delegation the delegator declined (`error` code `unsupported`) did no work by the
/// contract's choice: `Err(Check::NotApplicable)`, never a failure.
pub(super) fn work_task(ev: &Evidence, id: &str) -> Result<(String, String, u64), Check> {
    if matches!(ev.outcomes.get(id), Some(FromDelegator::Error(_))) {
        return Err(Check::NotApplicable);
    }
    let Some((t, agent)) = tasks_of(ev, id).pop() else {
        let sent = requests(ev.journal)
            .iter()
            .any(|r| r.is_new_send() && work_id(ev, r) == Some(id));
        return Err(super::registry::fail(
            format!("{id} sent to an agent, which created a task (the situation of this rule)"),
            if sent {
                "no agent created a task for it".to_string()
            } else {
                "the delegator never sent the work to any agent".to_string()
            },
            vec![],
        ));
    };
    let seq = ev
        .journal
        .iter()
        .find_map(|e| match &e.event {
            Event::TaskCreated { task_id, .. } if *task_id == t => Some(e.seq),
            _ => None,
        })
        .unwrap_or(0);
    Ok((t, agent, seq))
}

/// The agent's final state of `task` (without the `TASK_STATE_` prefix) and its sequence, when
/// the task reached a terminal state.
pub(super) fn terminal_truth(j: &[Entry], task: &str) -> Option<(String, u64)> {
    // The agent's last word counts.
    j.iter().rev().find_map(|e| match &e.event {
        Event::TaskState { task_id, state }
            if task_id == task
                && a2a_protocol::TaskState::parse_lenient(state)
                    .is_some_and(|s| s.is_terminal()) =>
        {
            Some((state.trim_start_matches("TASK_STATE_").to_string(), e.seq))
        }
        _ => None,
    })
}

/// The agent's truth about the artifacts of `task`: id -> (bytes, sha256, seq).
pub(super) fn artifact_truth<'a>(
    j: &'a [Entry],
    task: &str,
) -> BTreeMap<&'a str, (u64, &'a str, u64)> {
    let mut truth = BTreeMap::new();
    for e in j {
        if let Event::ArtifactSent {
            task_id,
            artifact_id,
            bytes,
            sha256,
            ..
        } = &e.event
            && task_id == task
        {
            truth.insert(artifact_id.as_str(), (*bytes, sha256.as_str(), e.seq));
        }
    }
    truth
}

/// The units of work (delegations, fan-out children; see `works`) the case needs at an agent
/// (not refused by design, not declined with `unsupported`) for which the delegator never sent a
/// request to any agent: the case's purpose was not exercised.
pub fn unsent_work(ev: &Evidence) -> Vec<String> {
    let reqs = requests(ev.journal);
    works(ev)
        .filter(|w| {
            let e = &w.delegation.expect;
            !e.nothing_sent && !e.state.contains(&a2a_driver_contract::Outcome::Refused)
        })
        .filter(|w| {
            [w.id, w.delegation.id.as_str()]
                .iter()
                .all(|id| !matches!(ev.outcomes.get(*id), Some(FromDelegator::Error(_))))
        })
        .filter(|w| {
            !reqs
                .iter()
                .any(|r| r.is_send() && work_id(ev, r) == Some(w.id))
        })
        .map(|w| w.id.to_string())
        .collect()
}
