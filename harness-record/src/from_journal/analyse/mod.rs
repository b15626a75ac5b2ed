//! From journal records to a [`Model`]: per agent its card, rules (matched to the requests that
//! triggered them) and queued faults; the delegations; the rules of the registry the constructs
//! exercise; and what could not be expressed.

use super::{Record, Unsupported};
use a2a_mock_agents::script::{CancelBehaviour, ContentKind, OnWrongAnswer};
use a2a_mock_agents::{Entry, Event, Fault, Matcher, PartSpec, ScriptStep};
use a2a_protocol::{Binding, TaskState};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

mod agent;
mod artifacts;
mod delegations;
mod task;
mod wire;

use agent::*;
use artifacts::*;
use delegations::*;
use task::*;
use wire::*;

/// An artifact whose bytes the journal kept is written as literal parts, byte for byte: a part
/// up to this many bytes in the TOML, a longer one (or a `data` value TOML cannot hold, such
/// as one with a `null`) in a file beside it (`<case>.d/artifact-N.chunk-C.part-P.bin`).
/// Generated content of the same length stands in only where the journal summarised the bytes.
pub const LITERAL_MAX_BYTES: u64 = 512;

/// Gaps shorter than this between an agent's events are processing noise, not delays.
pub(super) const DELAY_MIN_MS: u64 = 10;

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
    /// The directory of part files, relative to the scenario (`case.d`).
    pub files_dir: String,
    /// Part files to write beside the scenario: (path relative to the scenario, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    /// Artifacts with part files so far (numbers their files).
    pub file_artifacts: u32,
    /// Artifacts written as generated content (the journal summarised their bytes): (seq,
    /// what: the artifact and its recorded length and sha256), for `bytes_differ`.
    pub generated: Vec<(u64, String)>,
}

/// Build the model.
pub(crate) fn analyse(records: &[Record], files_dir: &str) -> Model {
    let entries: Vec<&Entry> = super::entries_of(records).collect();
    let first_at = entries.iter().map(|e| e.at_us).min().unwrap_or(0);
    let last_at = entries.iter().map(|e| e.at_us).max().unwrap_or(0);
    let mut m = Model {
        span_us: last_at.saturating_sub(first_at),
        entries: records.len(),
        files_dir: files_dir.to_string(),
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
                        retry_after_s: None,
                        events: Vec::new(),
                        closed: None,
                        dropped: None,
                        faults: Vec::new(),
                        task: None,
                        text_as: None,
                    },
                );
            }
            Event::Response {
                req,
                status,
                rpc_error,
                retry_after_s,
                body,
                ..
            } => {
                if let Some(r) = reqs.get_mut(&key(*req)) {
                    r.response = Some((e.seq, e.at_us, *status, *rpc_error, body.clone()));
                    r.retry_after_s = *retry_after_s;
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
            // A recorder's remark: a comment at its agent (below).
            Event::Note { .. } => {}
            // The mock network's own url-part bookkeeping (a recorder never writes these).
            Event::ForbiddenUrl { .. } | Event::TrapConnection { .. } => {}
            // The TLS layer's view of a connection: no A2A exchange to replay.
            Event::Tls { .. } => {}
            // A connection's end after a fault's `Connection: close`: the fault says it all.
            Event::ClientClosed { .. } => {}
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
    keep_delegations_apart(&mut reqs, &children);
    let journal_end = last_at;
    for name in &agent_names {
        let agent = build_agent(name, &reqs, &tasks, &blobs, &children, journal_end, &mut m);
        m.agents.push(agent);
    }
    // Recorder notes and unknown events go to their agent's notes.
    for r in records {
        match r {
            Record::Entry(Entry {
                seq,
                agent,
                event: Event::Note { req, text },
                ..
            }) => {
                if let Some(a) = m.agents.iter_mut().find(|a| a.name == agent.as_str()) {
                    let about = req
                        .map(|q| format!(" about request {q}"))
                        .unwrap_or_default();
                    a.notes.push(StepLine::Comment(format!(
                        "recorder note (seq {seq}){about}: {text}"
                    )));
                }
            }
            Record::Other {
                seq, agent, event, ..
            } => {
                if let Some(a) = m.agents.iter_mut().find(|a| a.name == *agent) {
                    let what = format!("journal event {event:?} is not known to this version");
                    m.unsupported.push(Unsupported {
                        seq: *seq,
                        agent: agent.clone(),
                        what: what.clone(),
                    });
                    a.notes.push(StepLine::Todo(*seq, what));
                }
            }
            Record::Entry(_) => {}
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

pub(super) fn ms(us: u64) -> u64 {
    (us + 500) / 1000
}

/// Delay worth writing between two instants (µs), in ms; 0 below the noise floor.
pub(super) fn gap_ms(from: u64, to: u64) -> u64 {
    let g = ms(to.saturating_sub(from));
    if g < DELAY_MIN_MS { 0 } else { g }
}

pub(super) fn note_rule(m: &mut Model, id: &'static str, why: impl Into<String>) {
    m.rules.entry(id).or_insert_with(|| why.into());
}

pub(super) fn todo(m: &mut Model, agent: &str, seq: u64, what: impl Into<String>) -> StepLine {
    let what = what.into();
    m.unsupported.push(Unsupported {
        seq,
        agent: agent.to_string(),
        what: what.clone(),
    });
    StepLine::Todo(seq, what)
}

/// Two delegations with the same skill and text stay two: a new send of an earlier send's skill
/// and text is a resend of that delegation when it repeats one of its `messageId`s or when none
/// of its sends created a task yet (a retry after an error or a lost connection); otherwise it
/// is a new delegation, whose text becomes `<text> [n]` (n counting the delegations of that
/// text), in its `[[delegate]]` and in its agent's rule, so that each rule answers its own
/// delegation and the rules of the registry, which tell delegations apart by text, judge each
/// on its own.
fn keep_delegations_apart(
    reqs: &mut BTreeMap<(String, u64), ReqInfo>,
    children: &BTreeSet<String>,
) {
    let mut sends: Vec<(u64, (String, u64))> = reqs
        .iter()
        .filter(|(_, r)| r.is_send() && r.continues().is_none())
        .filter(|(_, r)| !r.task.as_ref().is_some_and(|(t, _)| children.contains(t)))
        .map(|(k, r)| (r.seq, k.clone()))
        .collect();
    sends.sort();
    // Per (skill, text): each delegation's messageIds and whether one of its sends made a task.
    type Groups = Vec<(BTreeSet<String>, bool)>;
    let mut seen: BTreeMap<(Option<String>, Option<String>), Groups> = BTreeMap::new();
    for (_, k) in sends {
        let Some(r) = reqs.get_mut(&k) else {
            continue;
        };
        let Some(text) = r.text() else {
            continue;
        };
        let mid = r.message_id().map(str::to_string).unwrap_or_default();
        let made_task = r.task.as_ref().is_some_and(|(_, dedup)| !dedup);
        let groups = seen.entry((r.skill(), Some(text.clone()))).or_default();
        let same = groups
            .iter()
            .position(|(ids, _)| ids.contains(&mid))
            .or_else(|| {
                groups
                    .last()
                    .is_some_and(|(_, made)| !made)
                    .then(|| groups.len() - 1)
            });
        let n = match same {
            Some(i) => i,
            None => {
                groups.push((BTreeSet::new(), false));
                groups.len() - 1
            }
        };
        groups[n].0.insert(mid);
        groups[n].1 |= made_task;
        if n > 0 {
            r.text_as = Some(format!("{text} [{}]", n + 1));
        }
    }
}
