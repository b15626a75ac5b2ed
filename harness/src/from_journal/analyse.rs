//! From journal records to a [`Model`]: per agent its card, rules (matched to the requests that
//! triggered them) and queued faults; the delegations; the rules of the registry the constructs
//! exercise; and what could not be expressed.

use super::{Record, Unsupported};
use a2a_mock_agents::script::{CancelBehaviour, ContentKind, OnWrongAnswer};
use a2a_mock_agents::{Entry, Event, Fault, Matcher, PartSpec, ScriptStep};
use a2a_protocol::{Binding, TaskState};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Artifacts up to this many bytes (and whose bytes the journal kept) are written literally;
/// larger ones become generated content of the same length.
pub const LITERAL_MAX_BYTES: u64 = 512;

/// Gaps shorter than this between an agent's events are processing noise, not delays.
const DELAY_MIN_MS: u64 = 10;

/// One line inside a rule's `steps`: a step, or a TODO where a construct could not be written.
// A scenario has a handful of these, built once: their size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub(crate) enum StepLine {
    /// A step and the comment that says where it came from.
    Step(ScriptStep, String),
    /// A construct that could not be expressed.
    Todo(u64, String),
    /// A comment.
    Comment(String),
}

/// One `[[network.agent.rule]]`.
#[derive(Debug, Clone)]
pub(crate) struct RuleModel {
    /// Comment lines above the rule.
    pub comments: Vec<String>,
    /// The matcher.
    pub when: Matcher,
    /// `times` (all but the last rule of a matcher apply once).
    pub times: Option<u32>,
    /// The fault and where it came from.
    pub fault: Option<(Fault, String)>,
    /// `on_cancel`, when not the default.
    pub on_cancel: Option<CancelBehaviour>,
    /// The steps.
    pub steps: Vec<StepLine>,
    /// The key that groups rules of one matcher (skill and text).
    key: (Option<String>, Option<String>),
    /// Its fault answers every further matching send (it is not applied once).
    sticky: bool,
}

/// One `[[network.agent.queued_fault]]`.
#[derive(Debug, Clone)]
pub(crate) struct QueuedModel {
    /// The 1.0 method name.
    pub method: String,
    /// How many calls.
    pub times: u32,
    /// The fault.
    pub fault: Fault,
    /// Where it came from.
    pub comment: String,
}

/// One mock agent.
#[derive(Debug, Clone, Default)]
pub(crate) struct AgentModel {
    /// Its name in the journal.
    pub name: String,
    /// Where the card came from, in words.
    pub card_source: String,
    /// `protocol = "0.3"` when it spoke 0.3.
    pub v03: bool,
    /// Bindings served (empty: the default).
    pub bindings: Vec<Binding>,
    /// `streaming`, when known to be false.
    pub streaming: Option<bool>,
    /// `push_notifications`, when known.
    pub push: Option<bool>,
    /// Skills: id, output modes, tags.
    pub skills: Vec<(String, Vec<String>, Vec<String>)>,
    /// Card output modes (empty: the default).
    pub output_modes: Vec<String>,
    /// Card input modes (empty: the default).
    pub input_modes: Vec<String>,
    /// Comments and TODOs at agent level (before its rules).
    pub notes: Vec<StepLine>,
    /// The rules, in file order.
    pub rules: Vec<RuleModel>,
    /// The queued faults, in order.
    pub queued: Vec<QueuedModel>,
}

/// One `[[delegate]]`.
#[derive(Debug, Clone, Default)]
pub(crate) struct DelegationModel {
    pub id: String,
    pub capability: String,
    pub text: String,
    pub inputs: Option<Map<String, Value>>,
    pub mime_types: Option<Vec<String>>,
    pub streaming_preferred: Option<bool>,
    /// Milliseconds from the first request to the forwarded deadline.
    pub deadline_in_ms: Option<i64>,
    pub budget_usd: Option<f64>,
    pub max_size_bytes: Option<u64>,
    pub depth: Option<u32>,
    pub chain: Option<Vec<String>>,
    pub refine_of: Option<String>,
    /// Set `expect.state` to these (driver-contract outcome names).
    pub expect_state: Vec<&'static str>,
    /// Comment lines above the entry.
    pub comments: Vec<String>,
    /// (state the delegator reports, comment): cancels the caller asked for.
    pub cancels: Vec<(String, String)>,
    /// (kind, value, comment) answers to give on escalation.
    pub answers: Vec<(&'static str, String, String)>,
}

/// Everything the scenario is written from.
#[derive(Debug, Clone, Default)]
pub(crate) struct Model {
    pub agents: Vec<AgentModel>,
    pub delegations: Vec<DelegationModel>,
    /// Registry rules the constructs exercise, with why.
    pub rules: BTreeMap<&'static str, String>,
    pub unsupported: Vec<Unsupported>,
    /// Microseconds from the first to the last entry.
    pub span_us: u64,
    /// Entries read.
    pub entries: usize,
    /// The first entry's seq.
    pub first_seq: u64,
    /// Tasks with something a correct delegator may rightly reject, and what.
    pub doubtful: BTreeMap<String, String>,
}

/// What happened to one request.
#[derive(Debug, Clone)]
struct ReqInfo {
    seq: u64,
    at_us: u64,
    agent: String,
    binding: Binding,
    http_method: String,
    path: String,
    method: Option<String>,
    params: Value,
    headers: BTreeMap<String, String>,
    response: Option<(u64, u64, u16, Option<i64>, Value)>,
    events: Vec<(u64, Value)>,
    closed: Option<(u64, u32, String)>,
    dropped: Option<(u64, String)>,
    faults: Vec<String>,
    /// The task it created or was deduplicated to: (task id, dedup).
    task: Option<(String, bool)>,
}

impl ReqInfo {
    /// The 1.0 method name.
    fn method10(&self) -> Option<String> {
        let m = self.method.as_deref()?;
        Some(a2a_protocol::compat03::method_to_v1(m).map_or_else(|| m.to_string(), str::to_string))
    }

    fn is_send(&self) -> bool {
        matches!(
            self.method10().as_deref(),
            Some("SendMessage" | "SendStreamingMessage")
        )
    }

    fn message(&self) -> Option<&Value> {
        self.params.get("message")
    }

    fn continues(&self) -> Option<&str> {
        self.message()?.get("taskId")?.as_str()
    }

    fn message_id(&self) -> Option<&str> {
        self.message()?.get("messageId")?.as_str()
    }

    /// The text of the message: its first text part.
    fn text(&self) -> Option<String> {
        self.message().and_then(first_text)
    }

    fn skill(&self) -> Option<String> {
        let m = self.message()?;
        m.pointer("/metadata/skill")
            .or_else(|| self.params.pointer("/metadata/skill"))
            .and_then(Value::as_str)
            .map(str::to_string)
    }
}

/// The first text part of a message.
fn first_text(m: &Value) -> Option<String> {
    m.get("parts")?
        .as_array()?
        .iter()
        .find_map(|p| p.get("text").and_then(Value::as_str))
        .map(str::to_string)
}

/// All text parts of a message, joined.
fn all_text(m: &Value) -> Option<String> {
    let t: Vec<&str> = m
        .get("parts")?
        .as_array()?
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    (!t.is_empty()).then(|| t.join(" "))
}

/// A journal summary of a long string (`<N bytes, sha256 H...>`): its length.
fn summarised_len(s: &str) -> Option<u64> {
    let rest = s.strip_prefix('<')?;
    let (n, tail) = rest.split_once(" bytes, sha256 ")?;
    if !s.ends_with('>') || tail.len() < 64 {
        return None;
    }
    n.parse().ok()
}

fn has_summary(v: &Value) -> bool {
    match v {
        Value::String(s) => summarised_len(s).is_some(),
        Value::Array(a) => a.iter().any(has_summary),
        Value::Object(o) => o.values().any(has_summary),
        _ => false,
    }
}

/// Content bytes of a part as the mock counts them (text bytes, raw decoded bytes, data as
/// JSON), the summarised length where the journal summarised it; `None` for a url part.
fn part_bytes(p: &Value) -> Option<u64> {
    if let Some(t) = p.get("text").and_then(Value::as_str) {
        return Some(summarised_len(t).unwrap_or(t.len() as u64));
    }
    if let Some(r) = p.get("raw").and_then(Value::as_str) {
        // Base64: three bytes per four characters, less the padding.
        let n = summarised_len(r).unwrap_or(r.len() as u64);
        let pad = r.bytes().rev().take_while(|b| *b == b'=').count() as u64;
        return Some((n / 4 * 3 + (n % 4).saturating_sub(1)).saturating_sub(pad));
    }
    if let Some(d) = p.get("data") {
        return serde_json::to_vec(d).ok().map(|b| b.len() as u64);
    }
    None
}

/// A protocol part (1.0 JSON) as a literal script part.
fn part_spec(p: &Value) -> Option<PartSpec> {
    let mut s = if let Some(t) = p.get("text").and_then(Value::as_str) {
        PartSpec::text(t)
    } else if let Some(r) = p.get("raw").and_then(Value::as_str) {
        serde_json::from_value(serde_json::json!({ "raw_base64": r })).ok()?
    } else if let Some(u) = p.get("url").and_then(Value::as_str) {
        PartSpec::url(u)
    } else if let Some(d) = p.get("data") {
        PartSpec::data(d.clone())
    } else {
        return None;
    };
    s.filename = p
        .get("filename")
        .and_then(Value::as_str)
        .map(str::to_string);
    s.media_type = p
        .get("mediaType")
        .and_then(Value::as_str)
        .map(str::to_string);
    s.metadata = p.get("metadata").and_then(Value::as_object).cloned();
    Some(s)
}

/// The stream item or unary result inside a recorded body: JSON-RPC `result`, else the body.
fn result_of(v: &Value) -> &Value {
    v.get("result").unwrap_or(v)
}

/// A status update, task, message or artifact update in a result (1.0 or 0.3 shapes).
enum Item<'a> {
    Task(&'a Value),
    Message(&'a Value),
    Status(&'a Value),
    Artifact(&'a Value),
}

fn item_of(r: &Value) -> Option<Item<'_>> {
    if let Some(t) = r.get("task") {
        return Some(Item::Task(t));
    }
    if let Some(m) = r.get("message") {
        return Some(Item::Message(m));
    }
    if let Some(s) = r.get("statusUpdate") {
        return Some(Item::Status(s));
    }
    if let Some(a) = r.get("artifactUpdate") {
        return Some(Item::Artifact(a));
    }
    match r.get("kind").and_then(Value::as_str) {
        Some("task") => Some(Item::Task(r)),
        Some("message") => Some(Item::Message(r)),
        Some("status-update") => Some(Item::Status(r)),
        Some("artifact-update") => Some(Item::Artifact(r)),
        // A GetTask result is the bare task.
        _ if r.get("id").is_some() && r.get("status").is_some() => Some(Item::Task(r)),
        _ => None,
    }
}

/// A state name as the journal spells it, normalised to the proto name when known.
fn state_of(s: &str) -> Option<TaskState> {
    TaskState::parse_lenient(s).filter(|_| !s.is_empty())
}

/// What the journal shows about one task.
#[derive(Debug, Default)]
struct TaskView {
    agent: String,
    created_seq: u64,
    created_at: u64,
    /// Its own events, in order.
    events: Vec<(u64, u64, Event)>,
    /// Status objects seen in any body: (state name, timestamp, message text).
    statuses: Vec<(String, String, Option<String>)>,
    /// Artifact updates seen per stream: req -> [(artifact update)].
    updates: BTreeMap<u64, Vec<Value>>,
    /// The last snapshot of the task seen in any body.
    snapshot: Option<Value>,
    /// CancelTask requests about it: (seq, answered without error).
    cancels: Vec<(u64, bool)>,
    /// When each cancel came (µs), in order.
    cancel_at: Vec<u64>,
    /// Stream events about it that are no event of its own (a foreign task's, a Message after
    /// the task, not JSON): (seq, at_us, the event's data).
    raw: Vec<(u64, u64, Value)>,
}

fn push_status(view: &mut TaskView, status: &Value) {
    let state = status
        .get("state")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let ts = status
        .get("timestamp")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let msg = status.get("message").and_then(all_text);
    if !view
        .statuses
        .iter()
        .any(|(s, t, m)| *s == state && *t == ts && *m == msg)
    {
        view.statuses.push((state, ts, msg));
    }
}

/// Build the model.
pub(crate) fn analyse(records: &[Record]) -> Model {
    let entries: Vec<&Entry> = records
        .iter()
        .filter_map(|r| match r {
            Record::Entry(e) => Some(e),
            Record::Other { .. } => None,
        })
        .collect();
    let first_at = entries.iter().map(|e| e.at_us).min().unwrap_or(0);
    let last_at = entries.iter().map(|e| e.at_us).max().unwrap_or(0);
    let mut m = Model {
        span_us: last_at.saturating_sub(first_at),
        entries: records.len(),
        ..Default::default()
    };
    // Agents in order of appearance.
    let mut agent_names: Vec<String> = Vec::new();
    for r in records {
        let a = match r {
            Record::Entry(e) => e.agent.to_string(),
            Record::Other { agent, .. } => agent.clone(),
        };
        if !agent_names.contains(&a) {
            agent_names.push(a);
        }
    }
    // Requests by (agent, req).
    let mut reqs: BTreeMap<(String, u64), ReqInfo> = BTreeMap::new();
    let mut tasks: BTreeMap<String, TaskView> = BTreeMap::new();
    let mut blobs: Vec<(String, u64, String)> = Vec::new();
    let mut children: BTreeSet<String> = BTreeSet::new();
    for e in &entries {
        let agent = e.agent.to_string();
        let key = |req: u64| (agent.clone(), req);
        match &e.event {
            Event::Request {
                req,
                binding,
                http_method,
                path,
                method,
                params,
                headers,
                ..
            } => {
                reqs.insert(
                    key(*req),
                    ReqInfo {
                        seq: e.seq,
                        at_us: e.at_us,
                        agent: agent.clone(),
                        binding: *binding,
                        http_method: http_method.clone(),
                        path: path.clone(),
                        method: method.clone(),
                        params: Value::clone(params),
                        headers: BTreeMap::clone(headers),
                        response: None,
                        events: Vec::new(),
                        closed: None,
                        dropped: None,
                        faults: Vec::new(),
                        task: None,
                    },
                );
            }
            Event::Response {
                req,
                status,
                rpc_error,
                body,
                ..
            } => {
                if let Some(r) = reqs.get_mut(&key(*req)) {
                    r.response = Some((e.seq, e.at_us, *status, *rpc_error, body.clone()));
                }
            }
            Event::SseEvent { req, data, .. } => {
                if let Some(r) = reqs.get_mut(&key(*req)) {
                    r.events.push((e.seq, data.clone()));
                }
            }
            Event::StreamClosed {
                req,
                events,
                reason,
            } => {
                if let Some(r) = reqs.get_mut(&key(*req)) {
                    r.closed = Some((e.seq, *events, reason.clone()));
                }
            }
            Event::ConnectionDropped { req, phase } => {
                if let Some(r) = reqs.get_mut(&key(*req)) {
                    r.dropped = Some((e.seq, phase.clone()));
                }
            }
            Event::Fault { req, kind } => {
                if let Some(r) = reqs.get_mut(&key(*req)) {
                    r.faults.push(kind.clone());
                }
            }
            Event::TaskCreated {
                task_id,
                message_id,
                dedup,
                ..
            } => {
                // The latest send of this agent with that messageId not yet tied to a task.
                if let Some(r) = reqs.values_mut().rev().find(|r| {
                    r.agent == agent
                        && r.task.is_none()
                        && r.is_send()
                        && r.continues().is_none()
                        && r.message_id() == Some(message_id.as_str())
                }) {
                    r.task = Some((task_id.clone(), *dedup));
                }
                if !*dedup {
                    let v = tasks.entry(task_id.clone()).or_default();
                    v.agent = agent.clone();
                    v.created_seq = e.seq;
                    v.created_at = e.at_us;
                }
            }
            Event::TaskState { task_id, .. }
            | Event::Continued { task_id, .. }
            | Event::ArtifactChunk { task_id, .. }
            | Event::ArtifactSent { task_id, .. }
            | Event::TaskPurged { task_id }
            | Event::LimitRejected { task_id, .. }
            | Event::Delegated { task_id, .. }
            | Event::Push { task_id, .. } => {
                if let Event::Delegated {
                    child_task_id: Some(c),
                    ..
                } = &e.event
                {
                    children.insert(c.clone());
                }
                let v = tasks.entry(task_id.clone()).or_default();
                if v.agent.is_empty() {
                    v.agent = agent.clone();
                    v.created_at = e.at_us;
                }
                v.events.push((e.seq, e.at_us, e.event.clone()));
            }
            Event::BlobServed { key, bytes, sha256 } => {
                blobs.push((key.clone(), *bytes, sha256.clone()));
            }
        }
    }
    // What the bodies say about tasks: statuses, artifact updates, snapshots, cancels.
    for r in reqs.values() {
        let mut bodies: Vec<(u64, bool, &Value)> =
            r.events.iter().map(|(_, d)| (r.seq, true, d)).collect();
        if let Some((_, _, _, _, b)) = &r.response {
            bodies.push((r.seq, false, b));
        }
        for (req_seq, streamed, body) in bodies {
            let res = result_of(body);
            match item_of(res) {
                Some(Item::Task(t)) => {
                    if let Some(id) = t.get("id").and_then(Value::as_str)
                        && let Some(v) = tasks.get_mut(id)
                    {
                        if let Some(s) = t.get("status") {
                            push_status(v, s);
                        }
                        v.snapshot = Some(t.clone());
                    }
                }
                Some(Item::Status(s)) => {
                    if let Some(id) = s.get("taskId").and_then(Value::as_str)
                        && let Some(v) = tasks.get_mut(id)
                        && let Some(st) = s.get("status")
                    {
                        push_status(v, st);
                    }
                }
                Some(Item::Artifact(a)) if streamed => {
                    if let Some(id) = a.get("taskId").and_then(Value::as_str)
                        && let Some(v) = tasks.get_mut(id)
                    {
                        v.updates.entry(req_seq).or_default().push(a.clone());
                    }
                }
                _ => {}
            }
        }
        if r.method10().as_deref() == Some("CancelTask")
            && let Some(id) = r.params.get("id").and_then(Value::as_str)
            && let Some(v) = tasks.get_mut(id)
        {
            let ok = r
                .response
                .as_ref()
                .is_some_and(|x| x.2 < 400 && x.3.is_none());
            v.cancels.push((r.seq, ok));
            v.cancel_at.push(r.at_us);
        }
    }
    // Stream events that are not the streamed task's own: a raw event in the replay.
    for r in reqs.values() {
        let own = match (&r.task, r.method10().as_deref()) {
            (Some((t, _)), _) => Some(t.clone()),
            (None, Some("SubscribeToTask")) => r
                .params
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string),
            _ => None,
        };
        let Some(own) = own else {
            continue;
        };
        for (seq, data) in &r.events {
            // The mock's summary of a generated chunk too large for the journal.
            if data.as_str().is_some_and(|d| {
                d.starts_with("<artifact-update event of ") && d.ends_with(" generated bytes>")
            }) {
                continue;
            }
            let res = result_of(data);
            let mine = match item_of(res) {
                Some(Item::Task(t)) => t.get("id").and_then(Value::as_str) == Some(own.as_str()),
                Some(Item::Status(x)) => {
                    x.get("taskId").and_then(Value::as_str) == Some(own.as_str())
                        && x.pointer("/status/state")
                            .and_then(Value::as_str)
                            .and_then(state_of)
                            .is_some()
                }
                Some(Item::Artifact(x)) => {
                    x.get("taskId").and_then(Value::as_str) == Some(own.as_str())
                }
                Some(Item::Message(_)) | None => false,
            };
            if mine {
                continue;
            }
            let at = entries
                .iter()
                .find(|e| e.seq == *seq)
                .map_or(0, |e| e.at_us);
            if let Some(v) = tasks.get_mut(&own)
                && !v.raw.iter().any(|(_, _, d)| result_of(d) == res)
            {
                v.raw.push((*seq, at, data.clone()));
            }
        }
    }
    let journal_end = last_at;
    for name in &agent_names {
        let agent = build_agent(name, &reqs, &tasks, &blobs, &children, journal_end, &mut m);
        m.agents.push(agent);
    }
    // Recorder notes and unknown events go to their agent's notes.
    for r in records {
        if let Record::Other {
            seq,
            agent,
            event,
            text,
        } = r
            && let Some(a) = m.agents.iter_mut().find(|a| a.name == *agent)
        {
            if event == "note" {
                a.notes.push(StepLine::Comment(format!(
                    "note (seq {seq}): {}",
                    text.as_deref().unwrap_or("(no text)")
                )));
            } else {
                let what = format!("journal event {event:?} is not known to this version");
                m.unsupported.push(Unsupported {
                    seq: *seq,
                    agent: agent.clone(),
                    what: what.clone(),
                });
                a.notes.push(StepLine::Todo(*seq, what));
            }
        }
    }
    build_delegations(&reqs, &tasks, &children, journal_end, &mut m);
    m.first_seq = records.first().map_or(0, Record::seq);
    if m.delegations.is_empty() {
        m.unsupported.push(Unsupported {
            seq: m.first_seq,
            agent: agent_names.first().cloned().unwrap_or_default(),
            what: "the journal holds no message send: no [[delegate]] could be written".into(),
        });
    }
    m.unsupported.sort_by_key(|u| u.seq);
    m
}

/// Where an agent's card comes from and what it says.
fn card(agent: &mut AgentModel, reqs: &[&ReqInfo]) {
    let card_body = reqs.iter().find_map(|r| {
        (r.http_method == "GET" && r.path.contains("agent-card") || r.path.contains("agent.json"))
            .then(|| r.response.as_ref().map(|x| &x.4))
            .flatten()
            .filter(|b| b.is_object())
    });
    if let Some(c) = card_body {
        agent.card_source = "the card response it served".into();
        for s in c
            .get("skills")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(id) = s.get("id").and_then(Value::as_str) {
                agent.skills.push((
                    id.to_string(),
                    strings(s.get("outputModes")),
                    strings(s.get("tags")),
                ));
            }
        }
        agent.output_modes = strings(c.get("defaultOutputModes"));
        agent.input_modes = strings(c.get("defaultInputModes"));
        let caps = c.get("capabilities");
        agent.streaming = caps
            .and_then(|c| c.get("streaming"))
            .and_then(Value::as_bool);
        agent.push = caps
            .and_then(|c| c.get("pushNotifications"))
            .and_then(Value::as_bool);
        let interfaces = c
            .get("supportedInterfaces")
            .or_else(|| c.get("additionalInterfaces"))
            .and_then(Value::as_array);
        for i in interfaces.into_iter().flatten() {
            if let Some(b) = i
                .get("protocolBinding")
                .or_else(|| i.get("transport"))
                .and_then(Value::as_str)
                .and_then(Binding::from_protocol_binding)
                && !agent.bindings.contains(&b)
            {
                agent.bindings.push(b);
            }
        }
        // 0.3 cards name their version at the top; 1.0 cards per interface.
        let versions: Vec<&str> = c
            .get("protocolVersion")
            .into_iter()
            .chain(
                interfaces
                    .into_iter()
                    .flatten()
                    .filter_map(|i| i.get("protocolVersion")),
            )
            .filter_map(Value::as_str)
            .collect();
        agent.v03 = !versions.is_empty() && versions.iter().all(|v| v.starts_with("0."));
        if agent.bindings == [Binding::JsonRpc] || agent.v03 {
            agent.bindings.clear();
        }
        return;
    }
    agent.card_source = "inferred from the traffic (no card body in the journal)".into();
    for r in reqs {
        if let Some(s) = r.skill()
            && !agent.skills.iter().any(|k| k.0 == s)
        {
            agent.skills.push((s, Vec::new(), Vec::new()));
        }
        if r.method.is_some() && !agent.bindings.contains(&r.binding) {
            agent.bindings.push(r.binding);
        }
        if r.method.as_deref().is_some_and(|m| m.contains('/')) {
            agent.v03 = true;
        }
        // (A SubscribeToTask to a finished task gets -32004 too: only a send says it.)
        if r.method10().as_deref() == Some("SendStreamingMessage")
            && r.response.as_ref().is_some_and(|x| x.3 == Some(-32004))
        {
            agent.streaming = Some(false);
        }
    }
    if agent.bindings == [Binding::JsonRpc] || agent.v03 {
        agent.bindings.clear();
    }
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn ms(us: u64) -> u64 {
    (us + 500) / 1000
}

/// Delay worth writing between two instants (µs), in ms; 0 below the noise floor.
fn gap_ms(from: u64, to: u64) -> u64 {
    let g = ms(to.saturating_sub(from));
    if g < DELAY_MIN_MS { 0 } else { g }
}

fn note_rule(m: &mut Model, id: &'static str, why: impl Into<String>) {
    m.rules.entry(id).or_insert_with(|| why.into());
}

fn todo(m: &mut Model, agent: &str, seq: u64, what: impl Into<String>) -> StepLine {
    let what = what.into();
    m.unsupported.push(Unsupported {
        seq,
        agent: agent.to_string(),
        what: what.clone(),
    });
    StepLine::Todo(seq, what)
}

/// A request's description for comments.
fn describe(r: &ReqInfo) -> String {
    let method = r
        .method10()
        .unwrap_or_else(|| format!("{} {}", r.http_method, r.path));
    match r.text() {
        Some(t) => format!("seq {}: {method} {:?}", r.seq, clip(&t, 60)),
        None => format!("seq {}: {method}", r.seq),
    }
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}

/// What a request got, as a fault that acts before processing, if it was one.
fn pre_fault(r: &ReqInfo, journal_end: u64) -> Option<(Fault, String)> {
    if r.task.is_some() {
        return None;
    }
    if let Some((_, phase)) = &r.dropped
        && phase == "before_processing"
    {
        return Some((
            Fault::DropBefore,
            format!(
                "seq {}: the connection was dropped before processing",
                r.seq
            ),
        ));
    }
    if let Some((seq, _, status, rpc_error, body)) = &r.response {
        // What the mock answers by itself from its task store (an unknown or purged task, a
        // task that cannot be canceled, push or streaming unsupported) is no fault.
        let natural = !r.is_send() && matches!(rpc_error, Some(-32004..=-32001 | -32601));
        if let Some(code) = rpc_error.filter(|_| !natural) {
            let message = body
                .pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_string);
            return Some((
                Fault::RpcError { code, message },
                format!("seq {seq}: JSON-RPC error {code}"),
            ));
        }
        if *status >= 400 && !natural {
            return Some((
                Fault::HttpStatus {
                    status: *status,
                    retry_after_s: None,
                },
                format!("seq {seq}: HTTP {status}"),
            ));
        }
        return None;
    }
    if r.dropped.is_none() && r.events.is_empty() {
        // Never answered while the recording lasted: a stall longer than what is left of it.
        let left = ms(journal_end.saturating_sub(r.at_us));
        let stall = (left + 5000).div_ceil(1000) * 1000;
        return Some((
            Fault::Stall { ms: stall },
            format!(
                "seq {}: never answered in the {left} ms the recording went on; stalled longer than that",
                r.seq
            ),
        ));
    }
    None
}

#[allow(clippy::too_many_arguments)]
fn build_agent(
    name: &str,
    reqs: &BTreeMap<(String, u64), ReqInfo>,
    tasks: &BTreeMap<String, TaskView>,
    blobs: &[(String, u64, String)],
    children: &BTreeSet<String>,
    journal_end: u64,
    m: &mut Model,
) -> AgentModel {
    let mut mine: Vec<&ReqInfo> = reqs.values().filter(|r| r.agent == name).collect();
    mine.sort_by_key(|r| r.seq);
    let mut agent = AgentModel {
        name: name.to_string(),
        ..Default::default()
    };
    card(&mut agent, &mine);
    if agent.v03 {
        note_rule(m, "DLG-ROUTE-03", format!("agent {name} speaks A2A 0.3"));
    }
    // Methods that have seen a processed call: later faults on them cannot be queued.
    let mut processed: BTreeSet<String> = BTreeSet::new();
    // The last new send of each method that failed before processing.
    let mut last_failed: BTreeMap<String, (&ReqInfo, Fault)> = BTreeMap::new();
    for r in &mine {
        let Some(method) = r.method10() else {
            continue;
        };
        let new_send = r.is_send() && r.continues().is_none();
        if let Some((fault, comment)) = pre_fault(r, journal_end) {
            note_fault_rules(m, &fault, r, &mine);
            let resent_later = mine.iter().any(|o| {
                o.seq > r.seq
                    && o.is_send()
                    && o.message_id().is_some()
                    && o.message_id() == r.message_id()
            });
            let definite_error =
                matches!(fault, Fault::RpcError { .. }) && new_send && !resent_later;
            if definite_error {
                // The agent's answer to this message: an `error` step.
                let Fault::RpcError { code, message } = fault else {
                    continue;
                };
                note_rule(
                    m,
                    "DLG-SEND-09",
                    format!("agent {name} answered a send with JSON-RPC error {code}"),
                );
                push_rule(
                    &mut agent,
                    r,
                    None,
                    vec![StepLine::Step(ScriptStep::Error { code, message }, comment)],
                    Vec::new(),
                    None,
                );
                processed.insert(method);
                continue;
            }
            if !processed.contains(&method) {
                if new_send {
                    last_failed.insert(method.clone(), (*r, fault.clone()));
                }
                match agent.queued.last_mut() {
                    Some(q) if q.method == method && q.fault == fault => {
                        q.times += 1;
                        q.comment.push_str(&format!("; {comment}"));
                    }
                    _ => agent.queued.push(QueuedModel {
                        method,
                        times: 1,
                        fault,
                        comment,
                    }),
                }
            } else if new_send {
                // After a success of the same method: a rule of its own, once, in order.
                push_rule(
                    &mut agent,
                    r,
                    Some((fault, comment)),
                    Vec::new(),
                    Vec::new(),
                    None,
                );
            } else {
                let what = format!(
                    "{method} got {comment:?} after an earlier {method} succeeded: faults are queued only before the first processed call of a method"
                );
                let t = todo(m, name, r.seq, what);
                agent.notes.push(t);
            }
            continue;
        }
        processed.insert(method.clone());
        if !new_send {
            // A stream cut on a resubscription: a fault queued for that method.
            if method == "SubscribeToTask"
                && let Some((fault, comment)) = stream_fault(r)
            {
                note_rule(m, "DLG-OBS-02", format!("agent {name} cut a stream"));
                agent.queued.push(QueuedModel {
                    method,
                    times: 1,
                    fault,
                    comment,
                });
            }
            continue;
        }
        // A new send that was processed.
        match &r.task {
            Some((_, true)) => {
                // A resend deduplicated to the task it created: the mock does the same.
                if let Some(rule) = agent
                    .rules
                    .iter_mut()
                    .rev()
                    .find(|x| x.key == (r.skill(), r.text()))
                {
                    rule.comments.push(format!(
                        "seq {}: resent with the same messageId; the agent deduplicated it to this rule's task",
                        r.seq
                    ));
                }
                note_rule(
                    m,
                    "DLG-REC-05",
                    format!("agent {name} deduplicated a resent messageId"),
                );
            }
            Some((task_id, false)) => {
                let Some(view) = tasks.get(task_id) else {
                    continue;
                };
                let mut comments = Vec::new();
                if children.contains(task_id) {
                    comments
                        .push("sent by another agent of the network (a delegate step)".to_string());
                }
                let fault = rule_fault(r, view, m);
                let before: BTreeSet<&'static str> = m.rules.keys().copied().collect();
                let (steps, on_cancel) =
                    task_steps(journal_end, name, r, view, tasks, blobs, reqs, m);
                // Artifacts count for the rules only when the task completed: a delegator
                // commits nothing of a failed task.
                let completed = view.events.iter().any(|(_, _, e)| {
                    matches!(e, Event::TaskState { state, .. } if state_of(state) == Some(TaskState::Completed))
                });
                // Nor of one the delegator may rightly fail (a protocol error, a rejected type).
                if !completed || m.doubtful.contains_key(task_id) {
                    for id in [
                        "DLG-ART-01",
                        "DLG-ART-02",
                        "DLG-ART-03",
                        "DLG-ART-08",
                        "DLG-STATE-01",
                    ] {
                        if !before.contains(id) {
                            m.rules.remove(id);
                        }
                    }
                }
                push_rule(&mut agent, r, fault, steps, comments, on_cancel);
            }
            None => {
                // A Message reply, or something the journal does not explain.
                let reply = r
                    .response
                    .as_ref()
                    .map(|x| result_of(&x.4))
                    .into_iter()
                    .chain(r.events.iter().map(|(_, d)| result_of(d)))
                    .find_map(|res| match item_of(res) {
                        Some(Item::Message(msg)) => Some(msg.clone()),
                        _ => None,
                    });
                match reply {
                    Some(msg) => {
                        note_rule(
                            m,
                            "DLG-SEND-05",
                            format!("agent {name} answered with a Message"),
                        );
                        let parts: Vec<&Value> = msg
                            .get("parts")
                            .and_then(Value::as_array)
                            .map(|a| a.iter().collect())
                            .unwrap_or_default();
                        let line = if parts.iter().any(|p| has_summary(p)) {
                            todo(
                                m,
                                name,
                                r.seq,
                                "the Message reply holds text the journal summarised (its bytes are not in the journal)",
                            )
                        } else {
                            let mut specs: Vec<PartSpec> =
                                parts.iter().filter_map(|p| part_spec(p)).collect();
                            let text = match specs.first() {
                                Some(p)
                                    if p.text.is_some()
                                        && p.filename.is_none()
                                        && p.media_type.is_none()
                                        && p.metadata.is_none() =>
                                {
                                    specs.remove(0).text.unwrap_or_default()
                                }
                                _ => String::new(),
                            };
                            StepLine::Step(
                                ScriptStep::Reply { text, parts: specs },
                                format!(
                                    "seq {}: a Message reply",
                                    r.response.as_ref().map_or(r.seq, |x| x.0)
                                ),
                            )
                        };
                        // A Message ends its stream: no cut to reproduce.
                        push_rule(&mut agent, r, None, vec![line], Vec::new(), None);
                    }
                    None => {
                        let what = format!(
                            "{method} was answered (HTTP {}) with neither a task nor a Message nor an error",
                            r.response.as_ref().map_or(0, |x| x.2)
                        );
                        let t = todo(m, name, r.seq, what);
                        push_rule(&mut agent, r, None, vec![t], Vec::new(), None);
                    }
                }
            }
        }
    }
    // A method whose every send failed while recorded goes on failing: the queued faults
    // cover the recorded attempts, a rule the ones after.
    for (method, (r, fault)) in last_failed {
        if processed.contains(&method) {
            continue;
        }
        push_rule(
            &mut agent,
            r,
            Some((
                fault,
                format!(
                    "every {method} of this message failed so while recorded: further ones too"
                ),
            )),
            Vec::new(),
            Vec::new(),
            None,
        );
        if let Some(last) = agent.rules.last_mut() {
            last.sticky = true;
        }
    }
    // A rule with a fault acts once: further sends of its message (resends) get the same
    // steps without it, as the recorded resends did.
    let mut i = 0;
    while i < agent.rules.len() {
        let later = agent.rules[i + 1..]
            .iter()
            .any(|o| o.key == agent.rules[i].key);
        if agent.rules[i].fault.is_some() && !later && !agent.rules[i].sticky {
            let mut plain = agent.rules[i].clone();
            plain.fault = None;
            plain.comments = vec![format!(
                "further sends of that message, without the fault ({})",
                agent.rules[i].comments.first().cloned().unwrap_or_default()
            )];
            agent.rules.insert(i + 1, plain);
        }
        i += 1;
    }
    // All but the last rule of a matcher apply once; the last one takes any further sends.
    let n = agent.rules.len();
    for i in 0..n {
        let later = agent.rules[i + 1..]
            .iter()
            .any(|o| o.key == agent.rules[i].key);
        agent.rules[i].times = later.then_some(1);
    }
    // A rule whose text another rule's text contains goes after it: longest texts first.
    let texts: Vec<Option<String>> = agent.rules.iter().map(|r| r.key.1.clone()).collect();
    let overlap = texts.iter().enumerate().any(|(i, a)| {
        texts.iter().enumerate().any(|(j, b)| {
            i != j && matches!((a, b), (Some(a), Some(b)) if a != b && a.contains(b.as_str()))
        })
    });
    if overlap {
        agent
            .rules
            .sort_by_key(|r| std::cmp::Reverse(r.key.1.as_ref().map_or(0, String::len)));
    }
    // Output modes: a media type sent that the default card does not list is added.
    if agent.output_modes.is_empty() {
        let defaults = ["text/plain", "application/json", "application/octet-stream"];
        let mut extra: Vec<String> = Vec::new();
        for t in tasks.values().filter(|t| t.agent == name) {
            for list in t.updates.values() {
                for u in list {
                    for p in u
                        .pointer("/artifact/parts")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(mt) = p.get("mediaType").and_then(Value::as_str)
                            && !defaults.contains(&mt)
                            && !extra.iter().any(|e| e == mt)
                        {
                            extra.push(mt.to_string());
                        }
                    }
                }
            }
        }
        if !extra.is_empty() {
            agent.output_modes = defaults
                .iter()
                .map(|s| s.to_string())
                .chain(extra)
                .collect();
        }
    }
    agent
}

fn push_rule(
    agent: &mut AgentModel,
    r: &ReqInfo,
    fault: Option<(Fault, String)>,
    steps: Vec<StepLine>,
    mut comments: Vec<String>,
    on_cancel: Option<CancelBehaviour>,
) {
    comments.insert(0, describe(r));
    let key = (r.skill(), r.text());
    agent.rules.push(RuleModel {
        comments,
        when: Matcher {
            skill: key.0.clone(),
            text_contains: key.1.clone(),
            ..Default::default()
        },
        times: None,
        fault,
        on_cancel,
        steps,
        key,
        sticky: false,
    });
}

fn note_fault_rules(m: &mut Model, fault: &Fault, r: &ReqInfo, all: &[&ReqInfo]) {
    let resent = all.iter().any(|o| {
        o.seq > r.seq
            && o.method == r.method
            && o.message_id().is_some()
            && o.message_id() == r.message_id()
    });
    match fault {
        // A transient failure (429, 5xx, a dropped connection) followed by a resend: backoff.
        Fault::HttpStatus { status, .. } if resent && (*status == 429 || *status >= 500) => {
            note_rule(
                m,
                "DLG-RETRY-02",
                format!("HTTP {status} was followed by a resend (backoff)"),
            );
        }
        Fault::DropBefore if resent => {
            note_rule(
                m,
                "DLG-RETRY-02",
                "a dropped connection was followed by a resend (backoff)",
            );
        }
        Fault::RpcError { code, .. } if r.is_send() => {
            note_rule(
                m,
                "DLG-SEND-09",
                format!("a JSON-RPC error {code} answered a send"),
            );
        }
        _ => {}
    }
}

/// A stream that ended early: `close_after` (clean end) or `reset_after`.
fn stream_fault(r: &ReqInfo) -> Option<(Fault, String)> {
    let mock_kind = r
        .faults
        .iter()
        .find(|k| *k == "close_after" || *k == "reset_after")
        .map(String::as_str);
    let (seq, fault) = match (mock_kind, &r.closed, &r.dropped) {
        (Some("close_after"), Some((seq, events, _)), _) => {
            (*seq, Fault::CloseAfter { events: *events })
        }
        // The mock journals the half event it sends before the reset.
        (Some("reset_after"), _, Some((seq, _))) => (
            *seq,
            Fault::ResetAfter {
                events: r.events.len().saturating_sub(1) as u32,
            },
        ),
        // A recorder sees only whole events.
        (None, Some((seq, events, reason)), _) if reason == "upstream_closed" => {
            (*seq, Fault::CloseAfter { events: *events })
        }
        (None, Some((seq, events, reason)), _) if reason == "upstream_reset" => {
            (*seq, Fault::ResetAfter { events: *events })
        }
        _ => return None,
    };
    let (what, events) = match fault {
        Fault::CloseAfter { events } => ("closed cleanly", events),
        Fault::ResetAfter { events } => ("reset mid-event", events),
        _ => return None,
    };
    Some((
        fault,
        format!("seq {seq}: the stream was {what} after {events} events, before a final state"),
    ))
}

/// The fault of a rule whose send created a task.
fn rule_fault(r: &ReqInfo, view: &TaskView, m: &mut Model) -> Option<(Fault, String)> {
    if let Some((seq, phase)) = &r.dropped
        && phase == "after_processing"
    {
        note_rule(
            m,
            "DLG-RETRY-03",
            "a send was processed and its response dropped (indefinite)",
        );
        return Some((
            Fault::DropResponse,
            format!("seq {seq}: processed, then the connection was dropped instead of answering"),
        ));
    }
    if r.faults.iter().any(|k| k == "stall") {
        let ms = gap_ms(r.at_us, view.created_at).max(1);
        return Some((
            Fault::Stall { ms },
            format!("seq {}: held {ms} ms before processing", r.seq),
        ));
    }
    let f = stream_fault(r);
    if f.is_some() {
        note_rule(m, "DLG-OBS-02", "a stream ended before a final state");
    }
    f
}

/// Generated content: (chunks, chunk bytes, content kind, media type).
type Shape = (u32, u64, ContentKind, Option<String>);

/// One artifact's chunks as recorded: (seq, at_us, append, last_chunk, bytes).
type ChunkRec = (u64, u64, bool, bool, u64);

/// The steps of a task, and its `on_cancel`.
#[allow(clippy::too_many_arguments)]
fn task_steps(
    journal_end: u64,
    agent: &str,
    creator: &ReqInfo,
    view: &TaskView,
    tasks: &BTreeMap<String, TaskView>,
    blobs: &[(String, u64, String)],
    reqs: &BTreeMap<(String, u64), ReqInfo>,
    m: &mut Model,
) -> (Vec<StepLine>, Option<CancelBehaviour>) {
    let mut steps: Vec<StepLine> = Vec::new();
    let mut last_at = view.created_at;
    let mut seen_states: BTreeMap<String, usize> = BTreeMap::new();
    let mut after_accepted = false;
    let mut input_open: Option<usize> = None;
    let mut wrong = 0u32;
    let mut pending_chunks: Vec<(String, ChunkRec)> = Vec::new();
    let mut sent: BTreeMap<String, (u64, String)> = BTreeMap::new();
    let mut on_cancel = None;
    let mut canceled_by_client = false;
    let mut rejected_by_limits = false;
    let mut final_state: Option<TaskState> = None;
    let message_for = |state: &str, k: usize| -> Option<String> {
        view.statuses
            .iter()
            .filter(|s| state_of(&s.0) == state_of(state))
            .nth(k)
            .or_else(|| {
                view.statuses
                    .iter()
                    .rfind(|s| state_of(&s.0) == state_of(state))
            })
            .and_then(|s| s.2.clone())
    };
    let continuation = |message_id: &str| -> Option<&ReqInfo> {
        reqs.values().find(|r| {
            r.agent == agent && r.continues().is_some() && r.message_id() == Some(message_id)
        })
    };
    // The task's own stream events and the raw ones, in journal order.
    let mut raw = view.raw.iter().peekable();
    let mut doubtful: Vec<String> = Vec::new();
    let mut active_seen = false;
    for (i, (seq, at, ev)) in view.events.iter().enumerate() {
        if !matches!(ev, Event::ArtifactChunk { .. } | Event::ArtifactSent { .. })
            && !pending_chunks.is_empty()
        {
            let run = std::mem::take(&mut pending_chunks);
            flush_artifacts(agent, view, &run, &sent, blobs, &mut last_at, &mut steps, m);
        }
        while let Some((rseq, rat, data)) = raw.next_if(|r| r.0 < *seq) {
            if !pending_chunks.is_empty() {
                let run = std::mem::take(&mut pending_chunks);
                flush_artifacts(agent, view, &run, &sent, blobs, &mut last_at, &mut steps, m);
            }
            raw_step(
                agent,
                *rseq,
                *rat,
                data,
                &mut last_at,
                &mut steps,
                &mut doubtful,
                m,
            );
        }
        match ev {
            Event::TaskState { state, .. } => {
                let k = seen_states.entry(state.clone()).or_insert(0);
                let occurrence = *k;
                *k += 1;
                let Some(s) = state_of(state) else {
                    steps.push(StepLine::Step(
                        ScriptStep::UnknownState {
                            state: state.clone(),
                        },
                        format!("seq {seq}: a state outside the protocol's enum"),
                    ));
                    note_rule(m, "DLG-STATE-04", "an unknown state was sent");
                    last_at = *at;
                    continue;
                };
                if s == TaskState::Submitted && occurrence == 0 {
                    continue; // Set by the agent on creation.
                }
                if s == TaskState::Working && after_accepted {
                    after_accepted = false;
                    last_at = *at;
                    continue; // Set by the input_required step once answered.
                }
                after_accepted = false;
                if s == TaskState::InputRequired && input_open.is_some() && wrong > 0 {
                    last_at = *at;
                    continue; // The same question again after a wrong answer.
                }
                if s == TaskState::Rejected && rejected_by_limits {
                    final_state = Some(s);
                    continue;
                }
                if s == TaskState::Canceled && view.cancels.iter().any(|(c, _)| *c < *seq) {
                    canceled_by_client = true;
                    final_state = Some(s);
                    continue; // The mock cancels on CancelTask by itself.
                }
                if s == TaskState::Failed
                    && let Some(ix) = input_open
                    && wrong > 0
                {
                    // Failed on a wrong answer: the step fails the task itself.
                    if let Some(StepLine::Step(
                        ScriptStep::InputRequired {
                            on_wrong,
                            max_wrong,
                            ..
                        },
                        _,
                    )) = steps.get_mut(ix)
                    {
                        if wrong == 1 {
                            *on_wrong = OnWrongAnswer::Fail;
                        } else {
                            *max_wrong = wrong - 1;
                        }
                    }
                    final_state = Some(s);
                    continue;
                }
                let delay = gap_ms(last_at, *at);
                last_at = *at;
                let message = message_for(state, occurrence);
                match s {
                    TaskState::InputRequired => {
                        note_rule(m, "DLG-INPUT-01", "the agent asked for input");
                        input_open = Some(steps.len());
                        wrong = 0;
                        if delay > 0 {
                            steps.push(StepLine::Step(
                                ScriptStep::Wait { ms: delay },
                                format!("before seq {seq}"),
                            ));
                            input_open = Some(steps.len());
                        }
                        let question = message.clone().unwrap_or_default();
                        steps.push(StepLine::Step(
                            ScriptStep::InputRequired {
                                question,
                                expect: None,
                                rounds: 1,
                                on_wrong: OnWrongAnswer::Reask,
                                max_wrong: 3,
                                timeout_ms: 30_000,
                            },
                            format!("seq {seq}: INPUT_REQUIRED"),
                        ));
                        if message.is_none() {
                            let t = todo(
                                m,
                                agent,
                                *seq,
                                "the question of this INPUT_REQUIRED is not in the journal",
                            );
                            steps.push(t);
                        }
                    }
                    TaskState::AuthRequired => {
                        note_rule(m, "DLG-AUTH-01", "the agent asked for credentials");
                        // The credential: the Authorization header of the accepted continuation.
                        let cred = view.events[i..].iter().find_map(|(_, _, e)| match e {
                            Event::Continued {
                                message_id,
                                outcome,
                                ..
                            } if outcome == "accepted" => continuation(message_id)
                                .and_then(|r| r.headers.get("authorization").cloned()),
                            _ => None,
                        });
                        match cred.filter(|c| !c.to_ascii_lowercase().contains("redacted") && !c.is_empty()) {
                            Some(credential) => steps.push(StepLine::Step(
                                ScriptStep::AuthRequired {
                                    credential,
                                    message: message.clone(),
                                    max_wrong: 3,
                                    timeout_ms: 30_000,
                                },
                                format!("seq {seq}: AUTH_REQUIRED; the credential is the accepted continuation's Authorization header"),
                            )),
                            None => {
                                let t = todo(m, agent, *seq, "AUTH_REQUIRED: the credential the agent accepted is not in the journal (redacted or never given)");
                                steps.push(t);
                            }
                        }
                        input_open = None;
                    }
                    _ => {
                        if s.is_terminal() {
                            final_state = Some(s);
                            match s {
                                TaskState::Completed => {}
                                _ => note_rule(
                                    m,
                                    "DLG-STATE-03",
                                    format!("a task ended {}", s.as_str()),
                                ),
                            }
                        } else if s == TaskState::Unspecified {
                            note_rule(m, "DLG-STATE-04", "an UNSPECIFIED state was sent");
                        } else {
                            active_seen = true;
                        }
                        steps.push(StepLine::Step(
                            ScriptStep::State {
                                state: s.as_str().to_string(),
                                message,
                                parts: Vec::new(),
                                delay_ms: delay,
                            },
                            format!("seq {seq}"),
                        ));
                    }
                }
            }
            Event::Continued {
                message_id,
                outcome,
                ..
            } => {
                last_at = *at;
                match outcome.as_str() {
                    "accepted" => {
                        after_accepted = true;
                        if let Some(ix) = input_open.take() {
                            let answer = continuation(message_id)
                                .and_then(|r| r.message().and_then(all_text));
                            if let Some(StepLine::Step(ScriptStep::InputRequired { expect, .. }, c)) =
                                steps.get_mut(ix)
                                && let Some(a) = answer.filter(|a| !a.trim().is_empty())
                            {
                                c.push_str(&format!(
                                    "; answered at seq {seq} with {:?}",
                                    clip(&a, 40)
                                ));
                                *expect = Some(Matcher {
                                    text_contains: Some(a),
                                    ..Default::default()
                                });
                            }
                        }
                        wrong = 0;
                    }
                    "wrong_answer" => {
                        wrong += 1;
                        if wrong > 3
                            && let Some(ix) = input_open
                            && let Some(StepLine::Step(
                                ScriptStep::InputRequired { max_wrong, .. },
                                _,
                            )) = steps.get_mut(ix)
                        {
                            *max_wrong = wrong;
                        }
                    }
                    "wrong_credential" => {}
                    other => {
                        let t = todo(
                            m,
                            agent,
                            *seq,
                            format!("a continuation the agent took as {other:?}"),
                        );
                        steps.push(t);
                    }
                }
            }
            Event::ArtifactChunk {
                artifact_id,
                append,
                last_chunk,
                bytes,
                ..
            } => pending_chunks.push((
                artifact_id.clone(),
                (*seq, *at, *append, *last_chunk, *bytes),
            )),
            Event::ArtifactSent {
                artifact_id,
                bytes,
                sha256,
                ..
            } => {
                sent.insert(artifact_id.clone(), (*bytes, sha256.clone()));
            }
            Event::TaskPurged { .. } => {
                let delay = gap_ms(last_at, *at);
                last_at = *at;
                if delay > 0 {
                    steps.push(StepLine::Step(
                        ScriptStep::Wait { ms: delay },
                        format!("before seq {seq}"),
                    ));
                }
                steps.push(StepLine::Step(
                    ScriptStep::Purge,
                    format!("seq {seq}: the agent forgot the task"),
                ));
                note_rule(m, "DLG-REC-04", "the agent purged a task it had created");
            }
            Event::LimitRejected { reason, .. } => {
                rejected_by_limits = true;
                steps.push(StepLine::Comment(format!(
                    "seq {seq}: the agent rejected the work on its x-deleg limits ({reason}); the mock's own check (enforce_x_deleg, max_depth) does the same, no step needed"
                )));
                note_rule(m, "DLG-STATE-03", "the agent rejected the work");
            }
            Event::Delegated {
                to, child_task_id, ..
            } => {
                let delay = gap_ms(last_at, *at);
                last_at = *at;
                let child = child_task_id.as_ref().and_then(|c| {
                    reqs.values()
                        .find(|r| r.task.as_ref().is_some_and(|t| t.0 == *c && !t.1))
                });
                match child.and_then(|c| c.text().map(|t| (t, c.skill()))) {
                    Some((text, skill)) => {
                        if delay > 0 {
                            steps.push(StepLine::Step(
                                ScriptStep::Wait { ms: delay },
                                format!("before seq {seq}"),
                            ));
                        }
                        steps.push(StepLine::Step(
                            ScriptStep::Delegate {
                                to: to.clone(),
                                text,
                                skill,
                                margin_ms: 1000,
                                budget_share: 0.5,
                            },
                            format!("seq {seq}: delegated to {to}"),
                        ));
                        let _ = tasks;
                    }
                    None => {
                        let t = todo(
                            m,
                            agent,
                            *seq,
                            format!(
                                "delegated to {to}, but the child's request is not in the journal"
                            ),
                        );
                        steps.push(t);
                    }
                }
            }
            Event::Push { .. } => {}
            _ => {}
        }
    }
    if !pending_chunks.is_empty() {
        let run = std::mem::take(&mut pending_chunks);
        flush_artifacts(agent, view, &run, &sent, blobs, &mut last_at, &mut steps, m);
    }
    for (rseq, rat, data) in raw {
        raw_step(
            agent,
            *rseq,
            *rat,
            data,
            &mut last_at,
            &mut steps,
            &mut doubtful,
            m,
        );
    }
    // Silent for the rest of the recording without a final state: the agent holds the task
    // (and its streams) open at least as long, instead of ending its script.
    let interrupted = steps.iter().any(|s| {
        matches!(
            s,
            StepLine::Step(
                ScriptStep::InputRequired { .. } | ScriptStep::AuthRequired { .. },
                _
            )
        )
    });
    if final_state.is_none() && !interrupted {
        let left = ms(journal_end.saturating_sub(last_at));
        let hold = (left + 5000).div_ceil(1000) * 1000;
        steps.push(StepLine::Step(
            ScriptStep::Wait { ms: hold },
            format!("silent for the {left} ms the recording went on, with no final state"),
        ));
    }
    // What a correct delegator may rightly reject: an append to an artifact never started, an
    // artifact of a media type the request did not accept.
    let accepted = strings(creator.params.pointer("/configuration/acceptedOutputModes"));
    for line in &steps {
        match line {
            StepLine::Step(ScriptStep::AppendUnknown, _) => {
                doubtful.push("an append to an artifact never started".into());
            }
            StepLine::Step(step, _) => {
                for mt in media_types(step) {
                    if !accepted.is_empty() && !accepted.iter().any(|a| accepts(a, &mt)) {
                        note_rule(
                            m,
                            "DLG-ART-05",
                            format!("an artifact of {mt}, which the request did not accept"),
                        );
                        doubtful.push(format!(
                            "an artifact of {mt}, which the request did not accept"
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    if active_seen && final_state.is_some_and(TaskState::is_terminal) && doubtful.is_empty() {
        note_rule(
            m,
            "DLG-STATE-01",
            "the task was SUBMITTED or WORKING, then ended",
        );
    }
    if final_state == Some(TaskState::Completed) && doubtful.is_empty() {
        note_rule(m, "DLG-STATE-02", "a task completed");
    }
    if !doubtful.is_empty()
        && let Some(task_id) = view_task_id(view)
    {
        m.doubtful.insert(task_id, doubtful.join("; "));
    }
    // A cancel the agent answered without canceling: it ignores cancels.
    if !canceled_by_client
        && view.cancels.iter().any(|(_, ok)| *ok)
        && !final_state.is_some_and(TaskState::is_terminal)
    {
        on_cancel = Some(CancelBehaviour::Ignore);
    }
    if final_state.is_none()
        && !steps.iter().any(|s| {
            matches!(
                s,
                StepLine::Step(
                    ScriptStep::InputRequired { .. } | ScriptStep::AuthRequired { .. },
                    _
                )
            )
        })
    {
        note_rule(
            m,
            "DLG-OBS-01",
            "the task never reached a final state while recorded",
        );
    }
    let _ = creator;
    (steps, on_cancel)
}

/// Write a run of artifact chunks (consecutive in the task's events) as steps.
#[allow(clippy::too_many_arguments)]
fn flush_artifacts(
    agent: &str,
    view: &TaskView,
    run: &[(String, ChunkRec)],
    sent: &BTreeMap<String, (u64, String)>,
    blobs: &[(String, u64, String)],
    last_at: &mut u64,
    steps: &mut Vec<StepLine>,
    m: &mut Model,
) {
    let Some((_, first)) = run.first() else {
        return;
    };
    let delay = gap_ms(*last_at, first.1);
    if delay > 0 {
        steps.push(StepLine::Step(
            ScriptStep::Wait { ms: delay },
            format!("before seq {}", first.0),
        ));
    }
    if let Some((_, last)) = run.last() {
        *last_at = last.1;
    }
    // Artifacts in order of their first chunk.
    let mut ids: Vec<&str> = Vec::new();
    for (id, _) in run {
        if !ids.contains(&id.as_str()) {
            ids.push(id);
        }
    }
    let interleaved =
        ids.len() > 1 && run.windows(2).filter(|w| w[0].0 != w[1].0).count() >= ids.len();
    let per: Vec<(&str, Vec<ChunkRec>)> = ids
        .iter()
        .map(|id| {
            (
                *id,
                run.iter()
                    .filter(|(a, _)| a == id)
                    .map(|(_, c)| *c)
                    .collect(),
            )
        })
        .collect();
    // Interleaved generated artifacts of one shape: one `artifacts` step.
    if interleaved {
        let shapes: Vec<Option<Shape>> = per
            .iter()
            .map(|(id, chunks)| generated_shape(view, id, chunks))
            .collect();
        if let Some(Some(s)) = shapes.first()
            && shapes.iter().all(|x| x.as_ref() == Some(s))
            && per.iter().all(|(id, c)| !literal_ok(view, id, c))
        {
            let (chunks, chunk_bytes, content, media_type) = s.clone();
            note_rule(m, "DLG-ART-01", "artifact chunks were appended");
            note_rule(m, "DLG-ART-02", "artifacts came in several chunks");
            steps.push(StepLine::Step(
                ScriptStep::Artifacts {
                    count: per.len() as u32,
                    chunks,
                    chunk_bytes: chunk_bytes as usize,
                    content,
                    text: None,
                    interleave: true,
                    media_type,
                    omit_last_chunk: false,
                    delay_ms: chunk_delay(run.iter().map(|(_, c)| *c)),
                },
                format!(
                    "seq {}-{}: {} artifacts interleaved, generated content of the recorded lengths ({})",
                    first.0,
                    run.last().map_or(first.0, |l| l.1.0),
                    per.len(),
                    recorded_hashes(&ids, sent)
                ),
            ));
            return;
        }
        let t = todo(
            m,
            agent,
            first.0,
            format!(
                "the chunks of {} artifacts were interleaved; written one artifact after another",
                ids.len()
            ),
        );
        steps.push(t);
    }
    for (id, chunks) in per {
        artifact_steps(agent, view, id, &chunks, sent, blobs, steps, m);
    }
}

fn recorded_hashes(ids: &[&str], sent: &BTreeMap<String, (u64, String)>) -> String {
    ids.iter()
        .map(|id| match sent.get(*id) {
            Some((b, h)) => format!("{id}: {b} bytes, sha256 {h}"),
            None => format!("{id}: not completed"),
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The typical gap between chunks, in ms (0 below the noise floor).
fn chunk_delay(chunks: impl Iterator<Item = ChunkRec>) -> u64 {
    let ats: Vec<u64> = chunks.map(|c| c.1).collect();
    let mut gaps: Vec<u64> = ats.windows(2).map(|w| gap_ms(w[0], w[1])).collect();
    gaps.sort_unstable();
    gaps.get(gaps.len() / 2).copied().unwrap_or(0)
}

/// The recorded parts of each chunk of one artifact, where the journal kept them: aligned from
/// the streams that carried its updates, else from a task snapshot.
fn chunk_parts(view: &TaskView, id: &str, chunks: &[ChunkRec]) -> Vec<Option<Vec<Value>>> {
    let mut out: Vec<Option<Vec<Value>>> = vec![None; chunks.len()];
    let mut meta_seen = false;
    for list in view.updates.values() {
        let mine: Vec<&Value> = list
            .iter()
            .filter(|u| u.pointer("/artifact/artifactId").and_then(Value::as_str) == Some(id))
            .collect();
        if mine.is_empty() {
            continue;
        }
        let fits = |o: usize| {
            mine.iter().enumerate().all(|(j, u)| {
                chunks.get(o + j).is_some_and(|c| {
                    let parts = u.pointer("/artifact/parts").and_then(Value::as_array);
                    let bytes: u64 = parts.into_iter().flatten().filter_map(part_bytes).sum();
                    u.get("append").and_then(Value::as_bool).unwrap_or(false) == c.2
                        && u.get("lastChunk").and_then(Value::as_bool).unwrap_or(false) == c.3
                        && bytes == c.4
                })
            })
        };
        if let Some(o) = (0..chunks.len()).find(|o| fits(*o)) {
            for (j, u) in mine.iter().enumerate() {
                if out[o + j].is_none() {
                    out[o + j] = u
                        .pointer("/artifact/parts")
                        .and_then(Value::as_array)
                        .cloned();
                }
            }
            meta_seen = true;
        }
    }
    let _ = meta_seen;
    // A snapshot keeps the appended parts in order: one part per chunk lines up.
    if out.iter().any(Option::is_none)
        && let Some(parts) = view
            .snapshot
            .as_ref()
            .and_then(|t| t.get("artifacts"))
            .and_then(Value::as_array)
            .and_then(|a| {
                a.iter()
                    .find(|x| x.get("artifactId").and_then(Value::as_str) == Some(id))
            })
            .and_then(|a| a.get("parts"))
            .and_then(Value::as_array)
        && parts.len() == chunks.len()
        && parts
            .iter()
            .zip(chunks)
            .all(|(p, c)| part_bytes(p).unwrap_or(0) == c.4)
    {
        for (j, p) in parts.iter().enumerate() {
            if out[j].is_none() {
                out[j] = Some(vec![p.clone()]);
            }
        }
    }
    out
}

/// The artifact's own fields (name, description, metadata) from its first recorded update.
fn artifact_fields(view: &TaskView, id: &str) -> Option<Value> {
    view.updates
        .values()
        .flatten()
        .filter_map(|u| u.get("artifact"))
        .chain(
            view.snapshot
                .as_ref()
                .and_then(|t| t.get("artifacts"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        )
        .find(|a| {
            a.get("artifactId").and_then(Value::as_str) == Some(id) && a.get("name").is_some()
        })
        .cloned()
}

fn total(chunks: &[ChunkRec]) -> u64 {
    chunks.iter().map(|c| c.4).sum()
}

fn standard_flags(chunks: &[ChunkRec]) -> bool {
    chunks
        .iter()
        .enumerate()
        .all(|(i, c)| c.2 == (i > 0) && c.3 == (i + 1 == chunks.len()))
}

/// Whether the artifact is written literally: small, and every chunk's bytes in the journal.
fn literal_ok(view: &TaskView, id: &str, chunks: &[ChunkRec]) -> bool {
    total(chunks) <= LITERAL_MAX_BYTES
        && chunk_parts(view, id, chunks)
            .iter()
            .all(|p| p.as_ref().is_some_and(|p| !p.iter().any(has_summary)))
}

/// The shape of generated content that reproduces these chunks: (chunks, chunk bytes, content
/// kind, media type), when every chunk but none is of one size.
fn generated_shape(view: &TaskView, id: &str, chunks: &[ChunkRec]) -> Option<Shape> {
    let size = chunks.first()?.4;
    if size == 0 || chunks.iter().any(|c| c.4 != size) {
        return None;
    }
    let part = view
        .updates
        .values()
        .flatten()
        .chain(view.snapshot.iter())
        .filter_map(|u| {
            u.get("artifact")
                .filter(|a| a.get("artifactId").and_then(Value::as_str) == Some(id))
                .or_else(|| {
                    u.get("artifacts").and_then(Value::as_array).and_then(|a| {
                        a.iter()
                            .find(|x| x.get("artifactId").and_then(Value::as_str) == Some(id))
                    })
                })
        })
        .find_map(|a| a.pointer("/parts/0").cloned());
    let content = match &part {
        Some(p) if p.get("raw").is_some() => ContentKind::Raw,
        _ => ContentKind::Text,
    };
    let media = part
        .as_ref()
        .and_then(|p| p.get("mediaType"))
        .and_then(Value::as_str)
        .map(str::to_string);
    Some((chunks.len() as u32, size, content, media))
}

#[allow(clippy::too_many_arguments)]
fn artifact_steps(
    agent: &str,
    view: &TaskView,
    id: &str,
    chunks: &[ChunkRec],
    sent: &BTreeMap<String, (u64, String)>,
    blobs: &[(String, u64, String)],
    steps: &mut Vec<StepLine>,
    m: &mut Model,
) {
    let Some(first) = chunks.first() else {
        return;
    };
    let seqs = match chunks.last() {
        Some(l) if l.0 != first.0 => format!("seq {}-{}", first.0, l.0),
        _ => format!("seq {}", first.0),
    };
    let recorded = match sent.get(id) {
        Some((b, h)) => format!("recorded {b} bytes, sha256 {h}"),
        None => "never completed".to_string(),
    };
    // Only an artifact sent in full is one a delegator reports.
    if sent.contains_key(id) {
        note_rule(m, "DLG-ART-08", "an artifact was delivered");
        if chunks.len() > 1 {
            note_rule(m, "DLG-ART-01", "artifact chunks were appended");
            note_rule(m, "DLG-ART-02", "an artifact came in several chunks");
        }
    }
    // An append to an artifact this task never started: the mock's `append_unknown`.
    let started_before = view.events.iter().any(|(s, _, e)| {
        *s < first.0 && matches!(e, Event::ArtifactChunk { artifact_id, .. } if artifact_id == id)
    });
    if first.2 && !started_before && chunks.len() == 1 {
        note_rule(m, "DLG-ART-09", "an append to an artifact never started");
        steps.push(StepLine::Step(
            ScriptStep::AppendUnknown,
            format!(
                "{seqs}: an append (lastChunk={}) to artifact {id:?}, never started",
                first.3
            ),
        ));
        return;
    }
    let parts = chunk_parts(view, id, chunks);
    let fields = artifact_fields(view, id);
    // A url part (zero inline bytes): by reference.
    if chunks.len() == 1
        && first.4 == 0
        && let Some(Some(p)) = parts.first()
        && let [part] = p.as_slice()
        && let Some(url) = part.get("url").and_then(Value::as_str)
    {
        note_rule(
            m,
            "DLG-ART-03",
            "an artifact was sent by reference (url part)",
        );
        let blob = blobs.iter().find(|(k, _, _)| url.contains(k.as_str()));
        let media_type = part
            .get("mediaType")
            .and_then(Value::as_str)
            .map(str::to_string);
        match blob {
            Some((_, bytes, sha)) => steps.push(StepLine::Step(
                ScriptStep::ArtifactUrl {
                    bytes: *bytes,
                    media_type,
                },
                format!("{seqs}: a url part served by the agent, {bytes} bytes (recorded sha256 {sha}; the generated bytes differ)"),
            )),
            None => steps.push(StepLine::Step(
                literal_artifact(id, fields.as_ref(), &[vec![part.clone()]]),
                format!("{seqs}: a url part ({url}); the mock does not serve that address"),
            )),
        }
        return;
    }
    if literal_ok(view, id, chunks) {
        let lists: Vec<Vec<Value>> = parts.into_iter().flatten().collect();
        if standard_flags(chunks) {
            steps.push(StepLine::Step(
                literal_artifact(id, fields.as_ref(), &lists),
                format!(
                    "{seqs}: {} bytes in {} chunk(s), literal ({recorded})",
                    total(chunks),
                    chunks.len()
                ),
            ));
            return;
        }
        // Unusual flags: hand-made chunks, when each is one text part.
        let texts: Option<Vec<String>> = lists
            .iter()
            .map(|l| match l.as_slice() {
                [p] => p.get("text").and_then(Value::as_str).map(str::to_string),
                _ => None,
            })
            .collect();
        if let Some(texts) = texts {
            for (c, text) in chunks.iter().zip(texts) {
                steps.push(StepLine::Step(
                    ScriptStep::Chunk {
                        artifact_id: id.to_string(),
                        text,
                        append: c.2,
                        last_chunk: c.3,
                    },
                    format!("seq {}: append={} lastChunk={}", c.0, c.2, c.3),
                ));
            }
            return;
        }
        let t = todo(
            m,
            agent,
            first.0,
            format!(
                "artifact {id:?}: chunks with unusual append/lastChunk flags and parts other than one text part"
            ),
        );
        steps.push(t);
        return;
    }
    // Large, or its bytes not in the journal: generated content of the same length.
    let omit_last = !chunks.last().is_some_and(|c| c.3);
    let flags_ok = chunks.iter().enumerate().all(|(i, c)| c.2 == (i > 0))
        && chunks[..chunks.len() - 1].iter().all(|c| !c.3);
    match generated_shape(view, id, chunks) {
        Some((n, size, content, media_type)) if flags_ok => {
            let data_part = parts
                .iter()
                .flatten()
                .flatten()
                .any(|p| p.get("data").is_some());
            if data_part {
                let t = todo(
                    m,
                    agent,
                    first.0,
                    format!("artifact {id:?}: a large data part; its value is not in the journal"),
                );
                steps.push(t);
                return;
            }
            steps.push(StepLine::Step(
                ScriptStep::Artifacts {
                    count: 1,
                    chunks: n,
                    chunk_bytes: size as usize,
                    content,
                    text: None,
                    interleave: false,
                    media_type,
                    omit_last_chunk: omit_last,
                    delay_ms: chunk_delay(chunks.iter().copied()),
                },
                format!(
                    "{seqs}: {} bytes in {n} chunk(s) of {size}, generated: same length and media type, not the same bytes ({recorded}; the artifact id becomes artifact-N)",
                    total(chunks)
                ),
            ));
        }
        _ => {
            let sizes: Vec<u64> = chunks.iter().map(|c| c.4).collect();
            let t = todo(
                m,
                agent,
                first.0,
                format!(
                    "artifact {id:?}: {} bytes in chunks of {sizes:?} with flags the generated step cannot reproduce ({recorded})",
                    total(chunks)
                ),
            );
            steps.push(t);
        }
    }
}

/// An `artifact` step of literal parts.
fn literal_artifact(id: &str, fields: Option<&Value>, lists: &[Vec<Value>]) -> ScriptStep {
    let specs: Vec<Vec<PartSpec>> = lists
        .iter()
        .map(|l| l.iter().filter_map(part_spec).collect())
        .collect();
    let name = fields
        .and_then(|f| f.get("name"))
        .and_then(Value::as_str)
        .filter(|n| *n != id)
        .map(str::to_string);
    let (parts, chunks) = if specs.len() == 1 {
        (specs.into_iter().next().unwrap_or_default(), Vec::new())
    } else {
        (Vec::new(), specs)
    };
    ScriptStep::Artifact {
        artifact_id: Some(id.to_string()),
        name,
        description: fields
            .and_then(|f| f.get("description"))
            .and_then(Value::as_str)
            .map(str::to_string),
        metadata: fields
            .and_then(|f| f.get("metadata"))
            .and_then(Value::as_object)
            .cloned(),
        parts,
        chunks,
        delay_ms: 0,
    }
}

/// The delegations: the first new send of each (skill, text), from the delegator (not a child
/// of a `delegate` step).
fn build_delegations(
    reqs: &BTreeMap<(String, u64), ReqInfo>,
    tasks: &BTreeMap<String, TaskView>,
    children: &BTreeSet<String>,
    journal_end: u64,
    m: &mut Model,
) {
    let mut sends: Vec<&ReqInfo> = reqs
        .values()
        .filter(|r| r.is_send() && r.continues().is_none())
        .filter(|r| !r.task.as_ref().is_some_and(|(t, _)| children.contains(t)))
        .collect();
    sends.sort_by_key(|r| r.seq);
    let mut keys: Vec<(Option<String>, Option<String>)> = Vec::new();
    for r in &sends {
        let key = (r.skill(), r.text());
        if keys.contains(&key) {
            continue;
        }
        keys.push(key.clone());
        let n = m.delegations.len() + 1;
        let mut d = DelegationModel {
            id: format!("d{n}"),
            ..Default::default()
        };
        d.comments
            .push(format!("{} to agent {}", describe(r), r.agent));
        d.text = match &key.1 {
            Some(t) => t.clone(),
            None => {
                d.comments.push(format!(
                    "TODO (seq {}): the message has no text part; the text here is a placeholder",
                    r.seq
                ));
                m.unsupported.push(Unsupported {
                    seq: r.seq,
                    agent: r.agent.clone(),
                    what: "the delegation's first message has no text part".into(),
                });
                format!("(no text: seq {})", r.seq)
            }
        };
        d.capability =
            match &key.0 {
                Some(s) => s.clone(),
                None => {
                    let skill = m
                        .agents
                        .iter()
                        .find(|a| a.name == r.agent)
                        .and_then(|a| a.skills.first())
                        .map(|s| s.0.clone());
                    d.comments.push(format!(
                    "the message names no skill (metadata.skill): the capability is the agent's {}",
                    if skill.is_some() { "first skill" } else { "placeholder skill `recorded`" }
                ));
                    match skill {
                        Some(s) => s,
                        None => {
                            if let Some(a) = m.agents.iter_mut().find(|a| a.name == r.agent) {
                                a.skills.push(("recorded".into(), Vec::new(), Vec::new()));
                            }
                            "recorded".into()
                        }
                    }
                }
            };
        if let Some(msg) = r.message() {
            d.inputs = msg
                .get("parts")
                .and_then(Value::as_array)
                .and_then(|ps| {
                    ps.iter()
                        .find_map(|p| p.get("data").and_then(Value::as_object))
                })
                .cloned();
        }
        let modes = strings(r.params.pointer("/configuration/acceptedOutputModes"));
        if !modes.is_empty() {
            d.mime_types = Some(modes);
        }
        if r.method10().as_deref() == Some("SendMessage") {
            d.streaming_preferred = Some(false);
            d.comments.push("the recorded delegator sent SendMessage, not SendStreamingMessage: streaming_preferred = false".into());
        }
        if let Some(x) = r.params.pointer("/metadata/x-deleg") {
            x_deleg(&mut d, x, r, tasks);
        }
        // Refinement: a reference to a task of an earlier delegation.
        if let Some(refs) = r
            .message()
            .and_then(|m| m.get("referenceTaskIds"))
            .and_then(Value::as_array)
            && let Some(prev) = refs.iter().filter_map(Value::as_str).find_map(|t| {
                sends
                    .iter()
                    .find(|o| o.task.as_ref().is_some_and(|x| x.0 == t))
            })
        {
            let pk = (prev.skill(), prev.text());
            if let Some(pd) = keys.iter().position(|k| *k == pk) {
                d.refine_of = Some(format!("d{}", pd + 1));
                note_rule(m, "DLG-STATE-06", "a refinement referenced an earlier task");
            }
        }
        // What the agent ended in, for this delegation's tasks.
        let mine: Vec<&&ReqInfo> = sends
            .iter()
            .filter(|o| (o.skill(), o.text()) == key)
            .collect();
        outcome(&mut d, &mine, tasks, reqs, &m.doubtful, journal_end);
        m.delegations.push(d);
    }
    if m.delegations.iter().any(|d| d.deadline_in_ms.is_some()) {
        let open = m
            .delegations
            .iter()
            .any(|d| d.deadline_in_ms.is_some() && d.expect_state.contains(&"CANCELED"));
        if open {
            note_rule(
                m,
                "DLG-LIMIT-03",
                "a delegation with a deadline was left open by its agent",
            );
        }
    }
}

/// Deadline, budget, depth and chain from the forwarded `x-deleg`.
fn x_deleg(d: &mut DelegationModel, x: &Value, r: &ReqInfo, tasks: &BTreeMap<String, TaskView>) {
    if let Some(b) = x.get("budget_usd").and_then(Value::as_f64) {
        d.budget_usd = Some(b);
        d.comments.push(format!(
            "budget_usd: what the delegator forwarded ({b}); its own budget was at least that"
        ));
    }
    if let Some(depth) = x.get("depth").and_then(Value::as_u64) {
        // The delegator adds one before forwarding (DLG-LIMIT-08).
        d.depth = Some(depth.saturating_sub(1) as u32);
    }
    if let Some(chain) = x.get("chain").and_then(Value::as_array) {
        let chain: Vec<String> = chain
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        // The delegator appends its own identity (DLG-LIMIT-08): the incoming chain is the rest.
        if let Some((own, incoming)) = chain.split_last() {
            let incoming: Vec<String> = incoming
                .iter()
                .map(|u| {
                    if u == own {
                        "$self".to_string()
                    } else {
                        u.clone()
                    }
                })
                .collect();
            if !incoming.is_empty() {
                d.chain = Some(incoming);
            }
        }
    }
    let Some(deadline) = x.get("deadline").and_then(Value::as_str) else {
        return;
    };
    let Ok(deadline) =
        time::OffsetDateTime::parse(deadline, &time::format_description::well_known::Rfc3339)
    else {
        d.comments.push(format!(
            "x-deleg deadline {deadline:?} is not RFC 3339: deadline_in_ms not set"
        ));
        return;
    };
    // A wall-clock anchor: a status timestamp the agent sent, at a known journal time.
    let anchor = tasks.values().filter(|t| t.agent == r.agent).find_map(|t| {
        t.statuses.iter().find_map(|(state, ts, _)| {
            let at = t
                .events
                .iter()
                .find_map(|(_, at, e)| match e {
                    Event::TaskState { state: s, .. } if s == state => Some(*at),
                    _ => None,
                })
                .or_else(|| {
                    (state_of(state) == Some(TaskState::Submitted)).then_some(t.created_at)
                })?;
            let wall =
                time::OffsetDateTime::parse(ts, &time::format_description::well_known::Rfc3339)
                    .ok()?;
            Some((wall, at))
        })
    });
    match anchor {
        Some((wall, at)) => {
            let request_wall = wall - time::Duration::microseconds(at as i64 - r.at_us as i64);
            let left_ms = (deadline - request_wall).whole_milliseconds();
            // To the nearest 100 ms: status timestamps have millisecond precision at best.
            let rounded = ((left_ms as f64 / 100.0).round() * 100.0) as i64;
            let default_ms = 60_000;
            if (rounded - default_ms).abs() < 1000 {
                d.comments.push(format!(
                    "the forwarded deadline was {left_ms} ms after the first request: the default timeout (60 s), so deadline_in_ms is left unset"
                ));
            } else if rounded.abs() <= 10 * 24 * 3_600_000 {
                d.deadline_in_ms = Some(rounded);
                d.comments.push(format!(
                    "deadline_in_ms: the forwarded deadline was {left_ms} ms after the first request (wall clock from the agent's status timestamps); the delegator keeps a margin, so its own was a little later"
                ));
            }
        }
        None => d.comments.push("x-deleg deadline: no wall-clock anchor in the journal (no status timestamp), deadline_in_ms not set".into()),
    }
}

/// `expect.state` from what the agent ended in, where the rules leave a correct delegator no
/// choice; answers for the input and auth rounds.
fn outcome(
    d: &mut DelegationModel,
    sends: &[&&ReqInfo],
    tasks: &BTreeMap<String, TaskView>,
    reqs: &BTreeMap<(String, u64), ReqInfo>,
    doubtful: &BTreeMap<String, String>,
    journal_end: u64,
) {
    let last = sends.last();
    let task = sends.iter().rev().find_map(|r| match &r.task {
        Some((t, false)) => tasks.get(t).map(|v| (t.clone(), v)),
        _ => None,
    });
    if let Some((task_id, view)) = &task {
        // After a protocol error a cancel is the delegator's own reaction, not the caller's.
        if !doubtful.contains_key(task_id) {
            caller_cancels(d, sends, view);
        }
        // An artifact larger than the default size bound (10 MiB), sent in full.
        let largest = view
            .events
            .iter()
            .filter_map(|(_, _, e)| match e {
                Event::ArtifactSent { bytes, .. } => Some(*bytes),
                _ => None,
            })
            .max()
            .unwrap_or(0);
        if largest > 10 * 1024 * 1024 {
            let bound = largest.div_ceil(1024 * 1024).next_power_of_two() * 1024 * 1024;
            d.max_size_bytes = Some(bound);
            d.comments.push(format!(
                "max_size_bytes: the agent sent a {largest}-byte artifact in full, which the default bound (10 MiB) would reject; the journal does not hold the delegation's own bound"
            ));
        }
        for (seq, _, e) in &view.events {
            if let Event::Continued {
                message_id,
                outcome,
                ..
            } = e
                && outcome == "accepted"
                && let Some(c) = reqs.values().find(|r| {
                    r.continues().is_some() && r.message_id() == Some(message_id.as_str())
                })
            {
                let awaited = view.events.iter().rev().find_map(|(s, _, e)| match e {
                    Event::TaskState { state, .. }
                        if *s < *seq
                            && (state == "TASK_STATE_INPUT_REQUIRED"
                                || state == "TASK_STATE_AUTH_REQUIRED") =>
                    {
                        Some(state.clone())
                    }
                    _ => None,
                });
                match awaited.as_deref() {
                    Some("TASK_STATE_AUTH_REQUIRED") => {
                        if let Some(cred) = c
                            .headers
                            .get("authorization")
                            .filter(|v| !v.to_ascii_lowercase().contains("redacted"))
                        {
                            d.answers.push((
                                "auth",
                                cred.clone(),
                                format!("seq {}: the credential the agent accepted", c.seq),
                            ));
                        }
                    }
                    _ => {
                        if let Some(a) = c.message().and_then(all_text) {
                            d.answers.push(("input", a, format!("seq {}: the answer the agent accepted (given if the delegator escalates)", c.seq)));
                        }
                    }
                }
            }
        }
        let final_state = view.events.iter().rev().find_map(|(_, _, e)| match e {
            Event::TaskState { state, .. } => state_of(state).filter(|s| s.is_terminal()),
            _ => None,
        });
        let canceled_by_client =
            final_state == Some(TaskState::Canceled) && !view.cancels.is_empty();
        match final_state {
            Some(s) if s != TaskState::Completed && doubtful.contains_key(task_id) => {
                d.expect_state = vec!["FAILED", "CANCELED"];
                d.comments.push(format!(
                    "expect: the agent sent {} and its task ended {}: a correct delegator fails visibly (DLG-ART-09)",
                    doubtful[task_id],
                    s.as_str()
                ));
            }
            Some(TaskState::Completed) if doubtful.contains_key(task_id) => {
                d.expect_state = vec!["COMPLETED", "FAILED"];
                d.comments.push(format!(
                    "expect: the agent's task completed, but with {}: a correct delegator fails visibly or completes with what it may keep (DLG-ART-05, DLG-ART-09)",
                    doubtful[task_id]
                ));
            }
            Some(s) if !canceled_by_client => {
                let name = match s {
                    TaskState::Completed => "COMPLETED",
                    TaskState::Failed => "FAILED",
                    TaskState::Canceled => "CANCELED",
                    _ => "REJECTED",
                };
                d.expect_state = vec![name];
                d.comments.push(format!(
                    "expect: the agent's task ended {} (DLG-STATE-02/03: a correct delegator reports that final state); edit if yours may rightly decide otherwise (a rejected artifact)",
                    s.as_str()
                ));
            }
            Some(_) => d.comments.push("expect left empty: the delegator canceled the task itself; a recording shows one run, not what every correct delegator must do".into()),
            None => {
                // Open past the deadline: the delegator must cancel at its deadline.
                let past = match (d.deadline_in_ms, sends.first()) {
                    (Some(dl), Some(first)) => {
                        (journal_end.saturating_sub(first.at_us) / 1000) as i64 >= dl
                    }
                    _ => false,
                };
                if let Some(what) = doubtful.get(task_id) {
                    d.expect_state = vec!["FAILED", "CANCELED"];
                    d.comments.push(format!("expect: the agent sent {what} and its task never ended while recorded: a correct delegator fails visibly (DLG-ART-09) or cancels at its deadline"));
                } else if past {
                    d.expect_state = vec!["CANCELED", "FAILED"];
                    d.comments.push("expect: the agent left its task open past the delegation's deadline: a correct delegator cancels it at its deadline (DLG-LIMIT-03) and ends CANCELED or FAILED".into());
                } else {
                    d.comments.push("expect left empty: the agent's task never reached a final state while recorded; a recording shows one run, not what every correct delegator must do".into());
                }
            }
        }
        return;
    }
    let Some(r) = last else {
        return;
    };
    let reply = r
        .response
        .as_ref()
        .map(|x| result_of(&x.4))
        .into_iter()
        .chain(r.events.iter().map(|(_, v)| result_of(v)))
        .any(|res| matches!(item_of(res), Some(Item::Message(_))));
    if reply {
        d.expect_state = vec!["ANSWERED_DIRECT"];
        d.comments.push(
            "expect: the agent answered with a Message (DLG-SEND-05: answered directly)".into(),
        );
    } else if let Some(code) = r.response.as_ref().and_then(|x| x.3) {
        d.expect_state = vec!["SEND_FAILED"];
        d.comments.push(format!(
            "expect: the agent answered error {code} to the send (DLG-SEND-09: a definite error)"
        ));
    } else {
        d.comments.push("expect left empty: the agent created no task and sent no answer the rules tie to an outcome; a recording shows one run, not what every correct delegator must do".into());
    }
}

/// The task id of a view (from its events).
fn view_task_id(view: &TaskView) -> Option<String> {
    view.events.iter().find_map(|(_, _, e)| match e {
        Event::TaskState { task_id, .. }
        | Event::ArtifactChunk { task_id, .. }
        | Event::Continued { task_id, .. } => Some(task_id.clone()),
        _ => None,
    })
}

/// The media types of the parts a step sends.
fn media_types(step: &ScriptStep) -> Vec<String> {
    match step {
        ScriptStep::Artifact { parts, chunks, .. } => parts
            .iter()
            .chain(chunks.iter().flatten())
            .filter_map(|p| p.media_type.clone())
            .collect(),
        ScriptStep::Artifacts { media_type, .. }
        | ScriptStep::ArtifactUrl { media_type, .. }
        | ScriptStep::DataArtifact { media_type, .. } => media_type.iter().cloned().collect(),
        _ => Vec::new(),
    }
}

/// Does an accepted mode (`type/sub`, `type/*`, `*/*`) accept this media type?
fn accepts(mode: &str, media_type: &str) -> bool {
    let essence = |m: &str| {
        m.split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    };
    let (mode, mt) = (essence(mode), essence(media_type));
    mode == mt
        || mode == "*/*"
        || mode
            .strip_suffix("/*")
            .is_some_and(|fam| mt.split('/').next() == Some(fam))
}

/// A stream event that is no event of the task's own, as a raw step.
#[allow(clippy::too_many_arguments)]
fn raw_step(
    agent: &str,
    seq: u64,
    at: u64,
    data: &Value,
    last_at: &mut u64,
    steps: &mut Vec<StepLine>,
    doubtful: &mut Vec<String>,
    m: &mut Model,
) {
    let delay = gap_ms(*last_at, at);
    *last_at = at;
    if has_summary(data) {
        let t = todo(
            m,
            agent,
            seq,
            "a stream event that is no event of the task's own holds text the journal summarised",
        );
        steps.push(t);
        doubtful.push("a stream event of unknown content".into());
        return;
    }
    if delay > 0 {
        steps.push(StepLine::Step(
            ScriptStep::Wait { ms: delay },
            format!("before seq {seq}"),
        ));
    }
    note_rule(
        m,
        "DLG-ART-09",
        "the stream carried an event that is no event of the task's own",
    );
    let (step, what) = match data {
        Value::String(text) => (
            ScriptStep::RawSse { data: text.clone() },
            "a stream event that is not JSON",
        ),
        _ => {
            let res = result_of(data);
            let what = match item_of(res) {
                Some(Item::Message(_)) => "a Message on a task's stream",
                Some(Item::Status(_)) => "a status update for another task or of an unknown state",
                Some(Item::Artifact(_)) => "an artifact update for another task",
                Some(Item::Task(_)) => "another task",
                None => "an event that is no A2A stream event",
            };
            (
                ScriptStep::RawEvent {
                    result: res.clone(),
                },
                what,
            )
        }
    };
    doubtful.push(what.to_string());
    steps.push(StepLine::Step(
        step,
        format!("seq {seq}: {what}, sent as recorded"),
    ));
}

/// Cancels that came well before the delegation's deadline were asked by the caller, not by the
/// delegator's deadline watch (DLG-LIMIT-03): the harness sends one when the delegator reports
/// the state the task was in.
fn caller_cancels(d: &mut DelegationModel, sends: &[&&ReqInfo], view: &TaskView) {
    let Some(first) = sends.first() else {
        return;
    };
    let deadline_ms = d.deadline_in_ms.unwrap_or(60_000);
    for (k, at) in view.cancel_at.iter().enumerate() {
        let after_ms = at.saturating_sub(first.at_us) as i64 / 1000;
        if after_ms + 1000 >= deadline_ms {
            continue;
        }
        let seq = view.cancels.get(k).map_or(0, |c| c.0);
        let state = view
            .events
            .iter()
            .filter(|(s, _, _)| *s < seq)
            .filter_map(|(_, _, e)| match e {
                Event::TaskState { state, .. } => state_of(state),
                _ => None,
            })
            .next_back()
            .unwrap_or(TaskState::Submitted);
        let name = state.as_str().trim_start_matches("TASK_STATE_").to_string();
        d.cancels.push((
            name.clone(),
            format!(
                "seq {seq}: the delegator canceled the task {after_ms} ms after the first request, well before its deadline: a cancel the caller asked for, sent once the delegator reports {name}"
            ),
        ));
    }
}
