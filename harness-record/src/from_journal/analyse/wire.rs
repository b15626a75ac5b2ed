//! What the journal says, as the analysis reads it: requests with what they got ([`ReqInfo`]),
//! tasks with what the bodies said about them ([`TaskView`]), and the JSON of messages, parts,
//! stream items and long-string summaries.

use super::*;

/// What happened to one request.
#[derive(Debug, Clone)]
pub(super) struct ReqInfo {
    pub(super) seq: u64,
    pub(super) at_us: u64,
    pub(super) agent: String,
    pub(super) binding: Binding,
    pub(super) http_method: String,
    pub(super) path: String,
    pub(super) method: Option<String>,
    pub(super) params: Value,
    pub(super) headers: BTreeMap<String, String>,
    pub(super) response: Option<(u64, u64, u16, Option<i64>, Value)>,
    /// The response's `Retry-After` in seconds, as the journal recorded it.
    pub(super) retry_after_s: Option<u64>,
    pub(super) events: Vec<(u64, Value)>,
    pub(super) closed: Option<(u64, u32, String)>,
    pub(super) dropped: Option<(u64, String)>,
    pub(super) faults: Vec<String>,
    /// The task it created or was deduplicated to: (task id, dedup).
    pub(super) task: Option<(String, bool)>,
    /// The text this send stands for in the scenario, when not its own: a later delegation
    /// with the same skill and text as an earlier one gets ` [n]` appended
    /// (`keep_delegations_apart` in the analysis).
    pub(super) text_as: Option<String>,
}

impl ReqInfo {
    /// The 1.0 method name.
    pub(super) fn method10(&self) -> Option<String> {
        let m = self.method.as_deref()?;
        Some(a2a_protocol::compat03::method_to_v1(m).map_or_else(|| m.to_string(), str::to_string))
    }

    pub(super) fn is_send(&self) -> bool {
        matches!(
            self.method10().as_deref(),
            Some("SendMessage" | "SendStreamingMessage")
        )
    }

    pub(super) fn message(&self) -> Option<&Value> {
        self.params.get("message")
    }

    pub(super) fn continues(&self) -> Option<&str> {
        self.message()?.get("taskId")?.as_str()
    }

    pub(super) fn message_id(&self) -> Option<&str> {
        self.message()?.get("messageId")?.as_str()
    }

    /// The text of the message: its first text part.
    pub(super) fn text(&self) -> Option<String> {
        self.text_as
            .clone()
            .or_else(|| self.message().and_then(first_text))
    }

    pub(super) fn skill(&self) -> Option<String> {
        let m = self.message()?;
        m.pointer("/metadata/skill")
            .or_else(|| self.params.pointer("/metadata/skill"))
            .and_then(Value::as_str)
            .map(str::to_string)
    }
}

/// The first text part of a message.
pub(super) fn first_text(m: &Value) -> Option<String> {
    m.get("parts")?
        .as_array()?
        .iter()
        .find_map(|p| p.get("text").and_then(Value::as_str))
        .map(str::to_string)
}

/// All text parts of a message, joined.
pub(super) fn all_text(m: &Value) -> Option<String> {
    let t: Vec<&str> = m
        .get("parts")?
        .as_array()?
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    (!t.is_empty()).then(|| t.join(" "))
}

/// A journal summary of a long string (`<N bytes, sha256 H...>`): its length.
pub(super) fn summarised_len(s: &str) -> Option<u64> {
    let rest = s.strip_prefix('<')?;
    let (n, tail) = rest.split_once(" bytes, sha256 ")?;
    if !s.ends_with('>') || tail.len() < 64 {
        return None;
    }
    n.parse().ok()
}

pub(super) fn has_summary(v: &Value) -> bool {
    match v {
        Value::String(s) => summarised_len(s).is_some(),
        Value::Array(a) => a.iter().any(has_summary),
        Value::Object(o) => o.values().any(has_summary),
        _ => false,
    }
}

/// Content bytes of a part as the mock counts them (text bytes, raw decoded bytes, data as
/// JSON), the summarised length where the journal summarised it; `None` for a url part.
pub(super) fn part_bytes(p: &Value) -> Option<u64> {
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
pub(super) fn part_spec(p: &Value) -> Option<PartSpec> {
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
pub(super) fn result_of(v: &Value) -> &Value {
    v.get("result").unwrap_or(v)
}

/// A status update, task, message or artifact update in a result (1.0 or 0.3 shapes).
pub(super) enum Item<'a> {
    Task(&'a Value),
    Message(&'a Value),
    Status(&'a Value),
    Artifact(&'a Value),
}

pub(super) fn item_of(r: &Value) -> Option<Item<'_>> {
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
pub(super) fn state_of(s: &str) -> Option<TaskState> {
    TaskState::parse_lenient(s).filter(|_| !s.is_empty())
}

/// What the journal shows about one task.
#[derive(Debug, Default)]
pub(super) struct TaskView {
    pub(super) agent: String,
    pub(super) created_seq: u64,
    pub(super) created_at: u64,
    /// Its own events, in order.
    pub(super) events: Vec<(u64, u64, Event)>,
    /// Status objects seen in any body: (state name, timestamp, message text).
    pub(super) statuses: Vec<(String, String, Option<String>)>,
    /// Artifact updates seen per stream: req -> [(artifact update)].
    pub(super) updates: BTreeMap<u64, Vec<Value>>,
    /// The last snapshot of the task seen in any body.
    pub(super) snapshot: Option<Value>,
    /// CancelTask requests about it: (seq, answered without error).
    pub(super) cancels: Vec<(u64, bool)>,
    /// When each cancel came (µs), in order.
    pub(super) cancel_at: Vec<u64>,
    /// Stream events about it that are no event of its own (a foreign task's, a Message after
    /// the task, not JSON): (seq, at_us, the event's data).
    pub(super) raw: Vec<(u64, u64, Value)>,
}

pub(super) fn push_status(view: &mut TaskView, status: &Value) {
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

pub(super) fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// A request's description for comments.
pub(super) fn describe(r: &ReqInfo) -> String {
    let method = r
        .method10()
        .unwrap_or_else(|| format!("{} {}", r.http_method, r.path));
    match r.text() {
        Some(t) => format!("seq {}: {method} {:?}", r.seq, clip(&t, 60)),
        None => format!("seq {}: {method}", r.seq),
    }
}

pub(super) fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}
