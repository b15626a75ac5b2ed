//! # a2a-journal-diff: comparing two network journals modulo timing, ports and ids
//!
//! Owns where two runs' traffic first differs. Used by `a2a-harness journal diff` and by
//! `a2a-harness run --check-determinism` (the determinism check of `a2a-harness-core`). It
//! stands alone on the journal format of `a2a_mock_agents`: it must not know scenarios, rules,
//! runs or reports, so that any tool holding two journals can compare them.
//!
//! A journal is first put in a canonical form ([`normalise`]) that keeps what the delegator
//! and the agents did and drops what timing, the operating system or a random generator
//! decided ([`IGNORED`] says exactly what); two canonical forms are then compared line by line
//! ([`first_difference`]).
//!
//! ```
//! use a2a_journal_diff::{compare, normalise};
//! let a = normalise(&[]);
//! assert!(compare(&[], &[]).is_none());
//! assert!(a.lines.is_empty());
//! ```

#![warn(missing_docs)]

mod load;
mod normalise;

pub use load::{LoadError, load_journal};

use a2a_mock_agents::Entry;
use serde_json::Value;
use std::fmt;

/// What the comparison ignores, as `journal diff --help` and the determinism notes say it.
pub const IGNORED: &str = "\
Ignored: entry sequence numbers and times (`seq`, `at_us`); points in time anywhere (RFC 3339 \
timestamps, `timestamp` and `deadline` fields, the HTTP dates of `last-modified` and \
`if-modified-since`); loopback ports (127.0.0.1:N, localhost:N, \
[::1]:N, and those of other loopback addresses such as the trap's 127.0.0.9:N, which keep their \
address; numbered by first appearance, so a URL to another agent still differs); the \
`content-length` header; task ids, context ids, messageIds, push tokens and credentials and \
a card's entity tag (`etag`, `if-none-match`: it hashes card bytes holding ports), and \
any other UUID (each replaced by a placeholder numbered by first appearance, per kind: the same \
id keeps the same placeholder everywhere); JSON-RPC ids and the journal's request numbers \
(numbered within each request: only whether a response names its request counts); how traffic \
to different agents, and to different tasks of one agent, interleaves (entries are compared per \
agent, then per task, each task's own life, its push notifications and the requests about it \
apart, and the resent messages it deduplicated apart too; tasks are ordered by their first request, not by when they ran, and an agent's requests \
about no task, such as card fetches, by their content); how many times in \
a row an identical request got an identical answer (a run of identical polls counts once), and \
how many identical entries in a row a task's life, its pushes or a stream have (a flood of \
identical chunks counts once; an SSE event's `index` and a stream's event count are left out, \
the order of the lines keeps them); the webhook's answer to a push (its status or error: whether a push lands \
before or after the delegator finished with the delegation is timing); the `artifacts` and \
`history` of task objects in answers (a snapshot of how far the agent had got, which its task \
life records exactly); in the answers to observations (GetTask, ListTasks, CancelTask), task \
objects keep only their ids (when the delegator asked is timing: the states the agent went \
through are compared in its task life); of a subscription's stream (SubscribeToTask, or a resent message the agent deduplicated \
to its task), only the first event (the task as it joined) and how the stream ended (it joins \
when timing says); \
what agents recorded after the last request of the journal (they went on alone; \
where the case's end cut them short is timing), past the point where both journals have it; \
and the tail of a stream the client left (`client_gone`) or that never closed, past the point \
where both journals still agree (also when one journal counts a resent request as a repeat of \
the one before, both streams left at the same point, and the other's stream ran on). \
Everything else is compared: methods, paths, bindings, params and bodies, states, artifact \
chunks (flags, byte counts, sha256), faults, stream ends, push deliveries, headers.";

/// A journal in canonical form: one line per entry, grouped by agent and task.
#[derive(Debug, Clone, PartialEq)]
pub struct NormalisedJournal {
    /// The lines, in canonical order.
    pub lines: Vec<Line>,
}

/// One entry of a normalised journal.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Where it belongs: agent, task placeholder and section (`task life`, `pushes`,
    /// `requests`), such as `agent flights, task <task#1>, requests`.
    pub place: String,
    /// The entry's sequence number in its journal (the first of a run of repeats).
    pub seq: u64,
    /// How many identical requests in a row this line stands for (1 when not repeated);
    /// ignored by the comparison.
    pub repeats: usize,
    /// The entry with timing, ports and ids replaced (no `seq`, `at_us` or `agent`).
    pub value: Value,
    /// The request (numbered within the normalised journal) this line belongs to, for the
    /// lines of the requests section.
    pub exchange: Option<usize>,
    /// A line of a stream the client left (`client_gone`) or that never closed: the stream's
    /// tail is compared only as far as both journals have it.
    pub abandoned: bool,
    /// A line of a task's life or pushes recorded after the last request of the journal: the
    /// agent went on alone, and where the case's end cut it short is timing.
    pub late: bool,
}

impl Line {
    /// Same place and same normalised entry (repeats aside).
    pub fn same_as(&self, other: &Line) -> bool {
        self.place == other.place && self.value == other.value
    }

    /// An SSE event or the end of a stream.
    fn is_stream(&self) -> bool {
        matches!(
            self.value.get("event").and_then(Value::as_str),
            Some("sse_event" | "stream_closed")
        )
    }
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.value.to_string();
        write!(f, "seq {:>5}  {}", self.seq, shorten(&text, 400))?;
        if self.repeats > 1 {
            write!(f, "  (x{} in a row)", self.repeats)?;
        }
        Ok(())
    }
}

/// Put a journal in canonical form (see [`IGNORED`]).
pub fn normalise(entries: &[Entry]) -> NormalisedJournal {
    normalise::normalise(entries)
}

/// The first place where two normalised journals differ.
#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    /// The index of the differing line in the first journal's canonical form.
    pub index: usize,
    /// The line of the first journal (`None`: it ended here).
    pub left: Option<Line>,
    /// The line of the second journal (`None`: it ended here).
    pub right: Option<Line>,
    /// Up to [`CONTEXT`] lines before it, the same in both, as the first journal has them.
    pub context_left: Vec<Line>,
    /// The same lines as the second journal has them (their `seq` may differ).
    pub context_right: Vec<Line>,
    /// Where inside the entries they differ (a JSON path such as
    /// `data.result.statusUpdate.status.state`), when both lines exist at the same place.
    pub path: Option<String>,
}

/// Lines of context shown before a difference.
pub const CONTEXT: usize = 3;

/// Find the first difference of two normalised journals; `None` when they are equal.
///
/// Where the two differ inside a stream that one of them abandoned (see [`Line::abandoned`]),
/// the rest of that stream is skipped on both sides and the comparison goes on after it.
pub fn first_difference(a: &NormalisedJournal, b: &NormalisedJournal) -> Option<Difference> {
    let (x, y) = (&a.lines, &b.lines);
    let (mut i, mut j) = (0, 0);
    // Equal lines so far, as (index in a, index in b), for the context.
    let mut matched: Vec<(usize, usize)> = Vec::new();
    loop {
        match (x.get(i), y.get(j)) {
            (None, None) => return None,
            (Some(l), Some(r)) if l.same_as(r) => {
                matched.push((i, j));
                i += 1;
                j += 1;
                continue;
            }
            (l, r) => {
                let abandoned =
                    |line: Option<&Line>| line.is_some_and(|l| l.is_stream() && l.abandoned);
                let stream = |line: Option<&Line>| line.is_some_and(Line::is_stream);
                let same_place = matches!((l, r), (Some(l), Some(r)) if l.place == r.place);
                // What an agent did alone after the last request, one journal has further
                // than the other: skipped where the other has nothing in its place.
                let (i0, j0) = (i, j);
                if !same_place {
                    i = skip_late(x, i, r);
                    j = skip_late(y, j, l);
                }
                if (i, j) != (i0, j0) {
                    continue;
                }
                if same_place && (abandoned(l) || abandoned(r)) && (stream(l) || stream(r)) {
                    i = skip_stream(x, i);
                    j = skip_stream(y, j);
                    continue;
                }
                // One journal took an exchange for a repeat of the one before it (the same
                // request, its stream left by the client where the earlier one was) while the
                // other, its stream having run further, keeps it apart: skip it there.
                if let Some(k) = skip_unrepeated(y, j, x, i) {
                    j = k;
                    continue;
                }
                if let Some(k) = skip_unrepeated(x, i, y, j) {
                    i = k;
                    continue;
                }
                let left = l.cloned();
                let right = r.cloned();
                let path = match (&left, &right) {
                    (Some(l), Some(r)) if l.place == r.place => {
                        value_difference(&l.value, &r.value, "")
                    }
                    _ => None,
                };
                let context = &matched[matched.len().saturating_sub(CONTEXT)..];
                return Some(Difference {
                    index: i,
                    left,
                    right,
                    context_left: context.iter().map(|(p, _)| x[*p].clone()).collect(),
                    context_right: context.iter().map(|(_, q)| y[*q].clone()).collect(),
                    path,
                });
            }
        }
    }
}

/// The index after the late lines (see [`Line::late`]) at `i` in one place, when `other` (the
/// other journal's line) is elsewhere.
fn skip_late(lines: &[Line], mut i: usize, other: Option<&Line>) -> usize {
    let Some(place) = lines.get(i).filter(|l| l.late).map(|l| l.place.clone()) else {
        return i;
    };
    if other.is_some_and(|o| o.place == place) {
        return i;
    }
    while lines.get(i).is_some_and(|l| l.late && l.place == place) {
        i += 1;
    }
    i
}

/// The index after the exchange that starts at `at` in `lines`, when the other journal counted
/// it as one more repeat of the exchange before it: the other's previous line stands for one
/// more repeat than this one's and is a stream the client left, and this exchange equals the
/// one before it up to where the earlier one's stream was left.
fn skip_unrepeated(lines: &[Line], at: usize, other: &[Line], other_at: usize) -> Option<usize> {
    let cur = lines.get(at)?;
    let exchange = cur.exchange?;
    let before = lines.get(at.checked_sub(1)?)?;
    let previous = before.exchange.filter(|p| *p != exchange)?;
    let theirs = other.get(other_at.checked_sub(1)?)?;
    if before.place != cur.place || theirs.repeats <= before.repeats || !theirs.abandoned {
        return None;
    }
    let this: Vec<&Line> = lines[at..]
        .iter()
        .take_while(|l| l.exchange == Some(exchange))
        .collect();
    let earlier: Vec<&Line> = lines[..at]
        .iter()
        .rev()
        .take_while(|l| l.exchange == Some(previous))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let k = this
        .iter()
        .zip(&earlier)
        .take_while(|(a, b)| a.same_as(b))
        .count();
    let left_there = earlier.get(k).is_some_and(|l| l.is_stream() && l.abandoned);
    left_there.then_some(at + this.len())
}

/// The index after the stream lines of the exchange at `i` (`i` itself when it is no stream
/// line).
fn skip_stream(lines: &[Line], mut i: usize) -> usize {
    let Some(exchange) = lines
        .get(i)
        .filter(|l| l.is_stream())
        .and_then(|l| l.exchange)
    else {
        return i;
    };
    while lines
        .get(i)
        .is_some_and(|l| l.exchange == Some(exchange) && l.is_stream())
    {
        i += 1;
    }
    i
}

/// Normalise two journals and find their first difference; `None` when they are equal modulo
/// ids, ports and timing.
pub fn compare(a: &[Entry], b: &[Entry]) -> Option<Difference> {
    first_difference(&normalise(a), &normalise(b))
}

/// What [`compare_agent_behaviour`] (`journal diff --agent-behaviour`) compares, on top of
/// what [`IGNORED`] leaves out.
pub const AGENT_BEHAVIOUR: &str = "\
Only what the agents did, not what the delegator sent nor how each side serialised it. \
Compared: each task's life (creation, states in order, artifact chunks with their append/\
lastChunk flags and byte counts, each artifact's total bytes and sha256; an artifact known \
only whole, as a recorder knows one read back with the final task, counts as one chunk), \
deduplicated resends, push notifications, blobs served; of each answer its HTTP status, \
JSON-RPC error code, gRPC status and Retry-After and what kind of answer it was (a task and \
its state, a message, a status update and its state, an artifact update with its artifact id \
and flags, an error code); dropped connections and how streams ended, as an observer can tell \
(a final or interrupted state, a gRPC status, a reset, otherwise closed: who hung up first \
after the last event is timing). Left out: the delegator's requests; the answers to its reads \
of a task (GetTask, SubscribeToTask, ListTasks: whether and when it reads is its choice; their \
errors count); notes; the mock's own account of an injected fault (its effect is compared) \
and of the client closing; an event a reset cut in half (the client never had it); answer \
bodies beyond their kind (field order, optional fields such as timestamps or a repeated \
artifact name, content compared as bytes and sha256); a card's body (the mock journals only \
its version); ids, ports and contexts (each agent's tasks, and its exchanges about no task, \
are compared in an order of their own lines: which delegation got which answer is not \
compared, only that the agent gave the same answers); what only a mock agent journals of itself \
(a continuation taken, its own delegations, a purge, a limit rejection, a planted URL); how many \
times in a row an identical line came. A dropped connection is compared as before any answer or \
inside a stream; a stream that delivered a final or interrupted state ended there. Use it to compare a recording (`a2a-harness record`) \
with the replay of the scenario made from it.";

/// Compare what the agents did only (see [`AGENT_BEHAVIOUR`]): the first difference of two
/// journals' [`agent_behaviour`]; `None` when the agents behaved the same.
pub fn compare_agent_behaviour(a: &[Entry], b: &[Entry]) -> Option<Difference> {
    first_difference(
        &agent_behaviour(&normalise(a)),
        &agent_behaviour(&normalise(b)),
    )
}

/// The lines of a normalised journal that say what the agents did (see [`AGENT_BEHAVIOUR`]):
/// each line reduced, a run of identical lines in one place counted once, ids anonymous and
/// each agent's tasks in an order of their own lines (which request came first is the
/// delegator's side).
pub fn agent_behaviour(j: &NormalisedJournal) -> NormalisedJournal {
    // Threads: the consecutive lines of one agent and task (or of no task).
    let mut threads: Vec<(String, Vec<Line>)> = Vec::new();
    for l in &j.lines {
        let thread = l.place.rsplit_once(", ").map_or(&*l.place, |(t, _)| t);
        match threads.last_mut() {
            Some((t, lines)) if t == thread => lines.push(l.clone()),
            _ => threads.push((thread.to_string(), vec![l.clone()])),
        }
    }
    let mut out: Vec<(String, bool, String, Vec<Line>)> = Vec::new();
    for (thread, lines) in threads {
        let agent = thread
            .rsplit_once(", ")
            .map_or(thread.as_str(), |(a, _)| a)
            .to_string();
        let has_task = !thread.ends_with(", no task");
        let mut lines = behaviour_lines(&lines);
        if !has_task {
            lines = in_order_of_their_own(lines);
        }
        let key: String = lines
            .iter()
            .map(|l| format!("{} {}\n", l.place, l.value))
            .collect();
        out.push((agent, has_task, key, lines));
    }
    // Stable: the normalised order of agents and of their task-less threads stays.
    out.sort_by(|a, b| {
        (&a.0, a.1).cmp(&(&b.0, b.1)).then_with(|| {
            if a.1 {
                a.2.cmp(&b.2)
            } else {
                std::cmp::Ordering::Equal
            }
        })
    });
    NormalisedJournal {
        lines: out.into_iter().flat_map(|(_, _, _, l)| l).collect(),
    }
}

/// The exchanges of a thread about no task (card fetches, stray calls) in an order of their
/// reduced lines: normalise orders them by their requests, the delegator's side.
fn in_order_of_their_own(lines: Vec<Line>) -> Vec<Line> {
    let mut groups: Vec<Vec<Line>> = Vec::new();
    for l in lines {
        match groups.last_mut() {
            Some(g) if g.first().is_some_and(|f| f.exchange == l.exchange) => g.push(l),
            _ => groups.push(vec![l]),
        }
    }
    let key = |g: &Vec<Line>| g.iter().map(|l| l.value.to_string()).collect::<Vec<_>>();
    groups.sort_by_cached_key(key);
    merge_runs(groups.into_iter().flatten())
}

/// Runs of identical lines (same place and entry) as one, their repeats added up.
fn merge_runs(lines: impl IntoIterator<Item = Line>) -> Vec<Line> {
    let mut merged: Vec<Line> = Vec::new();
    for line in lines {
        match merged.last_mut() {
            Some(last) if last.same_as(&line) => last.repeats += line.repeats,
            _ => merged.push(line),
        }
    }
    merged
}

/// One thread's lines reduced to the agent's behaviour: the delegator's requests, notes, the
/// mock's account of its faults and the client's closing left out; an event cut by a reset
/// (the client never had it whole) and the recorder's second account of a reset dropped;
/// stream ends said as an observer can tell them; ids anonymous; runs counted once.
fn behaviour_lines(lines: &[Line]) -> Vec<Line> {
    // First each line on its own (the checks below look at the line before, not at a run),
    // then runs of identical lines merged.
    let mut out: Vec<Line> = Vec::new();
    // The exchanges that read a task (GetTask, SubscribeToTask, ListTasks): whether and when
    // the delegator reads is its own choice, so of their answers only errors count.
    let mut reading: Option<usize> = None;
    // The last state a stream delivered, by exchange: how the stream ended, as its client saw.
    let mut last_state: Option<(Option<usize>, String)> = None;
    for l in lines {
        if l.value.get("event").and_then(Value::as_str) == Some("request") {
            let method = l.value.get("method").and_then(Value::as_str);
            reading = (method != Some("CancelTask")
                && method != Some("tasks/cancel")
                && normalise::observation(method).0)
                .then_some(l.exchange)
                .flatten();
        }
        if reading.is_some() && l.exchange == reading && !is_error(&l.value) {
            continue;
        }
        // The mock journals the event it cut in half before its reset; a client (and so a
        // recording) never had that event.
        if l.value.get("kind").and_then(Value::as_str) == Some("reset_after")
            && let Some(last) = out.last_mut()
            && last.exchange == l.exchange
            && last.value.get("event").and_then(Value::as_str) == Some("sse_event")
        {
            if last.repeats > 1 {
                last.repeats -= 1;
            } else {
                out.pop();
            }
        }
        let Some(mut value) = behaviour_value(&l.value) else {
            continue;
        };
        let event = value.get("event").and_then(Value::as_str).unwrap_or("");
        if event == "sse_event"
            && let Some(state) = value
                .pointer("/answer/task")
                .or_else(|| value.pointer("/answer/statusUpdate"))
                .and_then(Value::as_str)
        {
            last_state = Some((l.exchange, state.to_string()));
        }
        // An artifact known only whole (a recorder that saw it in a task read back, not
        // streamed) is one whole chunk, as the mock journals an artifact it sends at once.
        if event == "artifact_sent"
            && !out.iter().any(|p| {
                p.value.get("event").and_then(Value::as_str) == Some("artifact_chunk")
                    && p.value.get("artifact_id") == value.get("artifact_id")
            })
        {
            out.push(Line {
                place: anonymous_ids(&l.place),
                value: serde_json::json!({
                    "event": "artifact_chunk",
                    "task_id": value.get("task_id"),
                    "artifact_id": value.get("artifact_id"),
                    "append": false,
                    "last_chunk": true,
                    "bytes": value.get("bytes"),
                }),
                repeats: 1,
                ..l.clone()
            });
        }
        if event == "stream_closed" {
            let reason = value.get("reason").and_then(Value::as_str).unwrap_or("");
            // The recorder's second account of a reset its `connection_dropped` already gave.
            if reason == "reset"
                && out.last().is_some_and(|p| {
                    p.exchange == l.exchange
                        && p.value.get("event").and_then(Value::as_str)
                            == Some("connection_dropped")
                })
            {
                continue;
            }
            // A stream that delivered a final or interrupted state ended there, whoever closed
            // it then (the mock says why its script ended, a recorder what it last saw).
            if reason == "closed"
                && let Some((x, state)) = &last_state
                && *x == l.exchange
            {
                let said = match a2a_protocol::TaskState::parse_lenient(state) {
                    Some(s) if s.is_terminal() => Some("terminal"),
                    Some(s) if s.is_interrupted() => Some("interrupted"),
                    _ => None,
                };
                if let Some(said) = said {
                    value["reason"] = said.into();
                }
            }
        }
        out.push(Line {
            place: anonymous_ids(&l.place),
            value,
            ..l.clone()
        });
    }
    merge_runs(out)
}

/// An answer that is an error: an HTTP status of 400 or more, a JSON-RPC error, a gRPC status
/// other than OK, a dropped connection, a reset stream.
fn is_error(v: &Value) -> bool {
    let status = v.get("status").and_then(Value::as_u64).unwrap_or(0);
    let grpc = v.get("grpc_status").and_then(Value::as_u64).unwrap_or(0);
    let reason = v.get("reason").and_then(Value::as_str).unwrap_or("");
    status >= 400
        || grpc != 0
        || v.get("rpc_error").is_some_and(|e| !e.is_null())
        || v.get("event").and_then(Value::as_str) == Some("connection_dropped")
        || reason == "upstream_reset"
        || reason.starts_with("grpc_status")
}

/// Placeholders of ids (`<task#2>`) without their number (`<task>`).
fn anonymous_ids(s: &str) -> String {
    static PLACEHOLDER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"<([a-z_]+)#[0-9]+>").expect("a valid pattern")
    });
    PLACEHOLDER.replace_all(s, "<$1>").into_owned()
}

/// A line's value reduced to the agent's behaviour; `None` when it says nothing of it.
fn behaviour_value(v: &Value) -> Option<Value> {
    let reduced = match v.get("event").and_then(Value::as_str)? {
        // Notes; the delegator's requests; the mock's account of its faults and of the client
        // closing; what only a mock agent can journal of itself (a continuation taken, its own
        // delegations, a purge, a limit, a URL it planted), which a recording cannot hold.
        "note" | "request" | "fault" | "client_closed" | "continued" | "delegated"
        | "task_purged" | "limit_rejected" | "forbidden_url" => return None,
        "connection_dropped" => {
            // Before any answer (however far the agent had got: its task life says) or inside
            // a stream.
            let phase = match v.get("phase").and_then(Value::as_str) {
                Some("mid_event") => "mid_event",
                _ => "before_response",
            };
            serde_json::json!({ "event": "connection_dropped", "phase": phase })
        }
        "response" => {
            let mut m = serde_json::Map::new();
            for k in [
                "event",
                "status",
                "rpc_error",
                "grpc_status",
                "retry_after_s",
            ] {
                if let Some(x) = v.get(k) {
                    m.insert(k.into(), x.clone());
                }
            }
            if let Some(kind) = v.get("body").and_then(answer_kind) {
                m.insert("answer".into(), kind);
            }
            Value::Object(m)
        }
        "sse_event" => {
            let mut m = serde_json::Map::new();
            m.insert("event".into(), "sse_event".into());
            if let Some(kind) = v.get("data").and_then(answer_kind) {
                m.insert("answer".into(), kind);
            }
            Value::Object(m)
        }
        "stream_closed" => {
            // What an observer of the stream can tell: a final or interrupted state, a gRPC
            // status, a reset; any other end (the agent's or the client's: who hung up first
            // after the last event is timing) is a close.
            let reason = v.get("reason").and_then(Value::as_str).unwrap_or("");
            let said = match reason {
                "terminal" | "interrupted" => reason,
                "upstream_reset" => "reset",
                r if r.starts_with("grpc_status") => r,
                _ => "closed",
            };
            serde_json::json!({ "event": "stream_closed", "reason": said })
        }
        _ => v.clone(),
    };
    let text = anonymous_ids(&reduced.to_string());
    serde_json::from_str(&text).ok().or(Some(reduced))
}

/// What kind of answer a body (or an SSE event's data) is, for [`AGENT_BEHAVIOUR`]: `None` for
/// no body, a card or what the mock journals of one.
fn answer_kind(body: &Value) -> Option<Value> {
    let state = |t: &Value| t.pointer("/status/state").cloned().unwrap_or(Value::Null);
    // A text body (an error page, a stream's placeholder) says nothing the status does not.
    let Value::Object(m) = body else {
        return None;
    };
    if let Some(r) = m.get("result") {
        return answer_kind(r).or(Some(Value::Null));
    }
    if let Some(e) = m.get("error") {
        return Some(serde_json::json!({ "error": e.get("code").cloned().unwrap_or(Value::Null) }));
    }
    // 0.3 results name their kind.
    match m.get("kind").and_then(Value::as_str) {
        Some("task") => return Some(serde_json::json!({ "task": state(body) })),
        Some("message") => return Some(serde_json::json!("message")),
        Some("status-update") => return Some(serde_json::json!({ "statusUpdate": state(body) })),
        Some("artifact-update") => {
            return Some(serde_json::json!({ "artifactUpdate": {
                "artifactId": body.pointer("/artifact/artifactId").cloned().unwrap_or(Value::Null),
                "append": m.get("append").and_then(Value::as_bool).unwrap_or(false),
                "lastChunk": m.get("lastChunk").and_then(Value::as_bool).unwrap_or(false),
            }}));
        }
        _ => {}
    }
    Some(if let Some(t) = m.get("task") {
        serde_json::json!({ "task": state(t) })
    } else if m.get("message").is_some_and(Value::is_object) || m.contains_key("messageId") {
        serde_json::json!("message")
    } else if let Some(u) = m.get("statusUpdate") {
        serde_json::json!({ "statusUpdate": state(u) })
    } else if let Some(u) = m.get("artifactUpdate") {
        serde_json::json!({ "artifactUpdate": {
            "artifactId": u.pointer("/artifact/artifactId").cloned().unwrap_or(Value::Null),
            "append": u.get("append").and_then(Value::as_bool).unwrap_or(false),
            "lastChunk": u.get("lastChunk").and_then(Value::as_bool).unwrap_or(false),
        }})
    } else if let Some(list) = m.get("tasks").and_then(Value::as_array) {
        serde_json::json!({ "tasks": list.len() })
    } else if m.contains_key("id") && (m.contains_key("status") || m.contains_key("contextId")) {
        serde_json::json!({ "task": state(body) })
    } else if [
        "card_version",
        "skills",
        "supportedInterfaces",
        "capabilities",
    ]
    .iter()
    .any(|k| m.contains_key(*k))
    {
        return None;
    } else {
        // Anything else (a push config, a problem document): its keys.
        Value::Array(m.keys().map(|k| Value::String(k.clone())).collect())
    })
}

/// The JSON path of the first difference of two values (keys in order).
fn value_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    let join = |k: &str| {
        if at.is_empty() {
            k.to_string()
        } else {
            format!("{at}.{k}")
        }
    };
    match (a, b) {
        _ if a == b => None,
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .find_map(|k| match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => value_difference(p, q, &join(k)),
                    _ => Some(join(k)),
                })
                .or_else(|| Some(at.to_string()))
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| value_difference(p, q, &format!("{at}[{i}]"))),
        _ => Some(if at.is_empty() {
            "(the whole entry)".to_string()
        } else {
            at.to_string()
        }),
    }
}

/// The value at a JSON path made by [`value_difference`], as compact text.
fn value_at<'v>(v: &'v Value, path: &str) -> Option<&'v Value> {
    if path.is_empty() || path == "(the whole entry)" {
        return Some(v);
    }
    let mut cur = v;
    for part in path.split('.') {
        let (key, indices) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            cur = cur.get(key)?;
        }
        for idx in indices.split(['[', ']']).filter(|s| !s.is_empty()) {
            cur = cur.get(idx.parse::<usize>().ok()?)?;
        }
    }
    Some(cur)
}

fn shorten(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes)", &s[..end], s.len())
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = self
            .left
            .as_ref()
            .or(self.right.as_ref())
            .map_or("", |l| l.place.as_str());
        writeln!(
            f,
            "first difference at line {} of A's normalised journal ({place}):",
            self.index + 1
        )?;
        if !self.context_left.is_empty() {
            writeln!(f, "  before it, the same in both (seq in A / seq in B):")?;
            for (l, r) in self.context_left.iter().zip(&self.context_right) {
                writeln!(
                    f,
                    "    {:>5} / {:<5}  [{}] {}",
                    l.seq,
                    r.seq,
                    l.place,
                    shorten(&l.value.to_string(), 200)
                )?;
            }
        }
        for (side, line) in [("A", &self.left), ("B", &self.right)] {
            match line {
                Some(l) => writeln!(f, "  {side}: [{}] {l}", l.place)?,
                None => writeln!(f, "  {side}: (ends here: no more entries)")?,
            }
        }
        if let (Some(path), Some(l), Some(r)) = (&self.path, &self.left, &self.right) {
            let show = |v: &Value| {
                value_at(v, path).map_or("(absent)".to_string(), |x| shorten(&x.to_string(), 200))
            };
            writeln!(
                f,
                "  they differ at {path}: A {} / B {}",
                show(&l.value),
                show(&r.value)
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
