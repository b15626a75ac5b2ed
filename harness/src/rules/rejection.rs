//! Rejected artifacts and agent protocol errors (DLG-ART-05, -06, -07, -09): the bad bytes
//! reached the delegator, were never released as a result, and the problem was reported.
//! Failing, completing without the bad artifact, refining, or (for a protocol error)
//! recovering byte-exact from a fresh `GetTask` are all correct.

use super::evidence::*;
use super::registry::{Check, fail};
use super::state::reported_done;
use a2a_driver_contract::{Done, Outcome};
use a2a_mock_agents::Event;
use a2a_protocol::Method;
use serde_json::Value;

/// What made an artifact unacceptable.
#[derive(Clone, Copy, PartialEq)]
enum Bad {
    /// A media type the request did not accept (DLG-ART-05).
    MediaType,
    /// Over `max_size_bytes` (DLG-ART-06).
    Size,
    /// A data part against the schema (DLG-ART-07).
    Schema,
}

/// The script of agent `name` (its rules and queued faults) as JSON, for the situation tests
/// below: what the agent was told to send is known from the scenario, not guessed from names.
fn script_of(ev: &Evidence, name: &str) -> Value {
    ev.scenario
        .network
        .agents
        .iter()
        .find(|a| a.name == name)
        .and_then(|a| serde_json::to_value((&a.rules, &a.queued_faults)).ok())
        .unwrap_or(Value::Null)
}

/// The steps of `agent`'s rules as JSON (what it sends; not its matchers).
fn steps_of(ev: &Evidence, name: &str) -> Value {
    ev.scenario
        .network
        .agents
        .iter()
        .find(|a| a.name == name)
        .and_then(|a| {
            serde_json::to_value(a.rules.iter().map(|r| &r.steps).collect::<Vec<_>>()).ok()
        })
        .unwrap_or(Value::Null)
}

/// Every JSON object in `v`, recursively.
fn objects<'v>(v: &'v Value, out: &mut Vec<&'v serde_json::Map<String, Value>>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| objects(x, out)),
        Value::Object(o) => {
            out.push(o);
            o.values().for_each(|x| objects(x, out));
        }
        _ => {}
    }
}

/// The media types `agent`'s script gives its artifacts: explicit ones (`media_type`,
/// `mediaType`), and the defaults of artifact steps without one (text: `text/plain`, raw:
/// `application/octet-stream`, data: `application/json`).
fn scripted_media_types(ev: &Evidence, agent: &str) -> Vec<String> {
    let script = steps_of(ev, agent);
    let mut objs = Vec::new();
    objects(&script, &mut objs);
    let mut out = Vec::new();
    for o in objs {
        let explicit = ["media_type", "mediaType"]
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_str));
        let default = match o.get("do").and_then(Value::as_str) {
            Some("artifacts" | "artifact" | "chunk") => {
                Some(if o.get("content").and_then(Value::as_str) == Some("raw") {
                    "application/octet-stream"
                } else {
                    "text/plain"
                })
            }
            Some("data_artifact") => Some("application/json"),
            _ => None,
        };
        if let Some(m) = explicit.or(default) {
            out.push(m.to_string());
        }
    }
    out
}

/// Whether `agent`'s script makes the situation of `bad` for delegation `d`: a media type `d`
/// does not accept; a data value `d`'s schema rejects (no schema: no violation possible). A
/// size bound is judged by the bytes the journal shows ([`cause`]).
fn scripted(ev: &Evidence, d: &crate::scenario::Delegation, agent: &str, bad: Bad) -> bool {
    match bad {
        Bad::MediaType => scripted_media_types(ev, agent).iter().any(|m| {
            !d.mime_types
                .iter()
                .any(|acc| super::route::media_type_accepts(acc, m))
        }),
        Bad::Schema => {
            let Some(validator) = d
                .schema
                .as_ref()
                .and_then(|s| jsonschema::validator_for(s).ok())
            else {
                return false;
            };
            let script = steps_of(ev, agent);
            let mut objs = Vec::new();
            objects(&script, &mut objs);
            objs.iter()
                .filter_map(|o| o.get("data").filter(|v| !v.is_null()))
                .any(|data| !validator.is_valid(data))
        }
        Bad::Size => true,
    }
}

/// Steps and faults by which an agent breaks the protocol in its stream or replies
/// (DLG-ART-09's situation).
const PROTOCOL_ERRORS: [&str; 7] = [
    "raw_event",
    "raw_sse",
    "append_unknown",
    "huge_event",
    "wrong_rpc_id",
    "malformed_event",
    "omit_fields",
];

/// The protocol errors that only leave out REQUIRED fields (spec §5.7, §14.1.1): the
/// `malformed_event` step and the `omit_fields` fault. The journal marks each event or answer
/// they made ([`omitted_events`]).
const OMISSIONS: [&str; 2] = ["malformed_event", "omit_fields"];

/// The protocol errors `agent`'s script commits: those of [`PROTOCOL_ERRORS`] it names as a
/// step (`do`), a fault (`kind`) or a wire mutation.
fn scripted_protocol_errors(ev: &Evidence, agent: &str) -> Vec<&'static str> {
    let script = script_of(ev, agent);
    let mut objs = Vec::new();
    objects(&script, &mut objs);
    let mut out = Vec::new();
    for o in objs {
        for w in ["do", "kind"]
            .iter()
            .filter_map(|k| o.get(*k).and_then(Value::as_str))
            .chain(
                o.get("mutate")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str),
            )
        {
            if let Some(p) = PROTOCOL_ERRORS.iter().find(|p| **p == w)
                && !out.contains(p)
            {
                out.push(*p);
            }
        }
    }
    out
}

/// The journal sequences of the events and answers that lack REQUIRED fields: for each `fault`
/// entry of kind `omit_fields:<pointers>`, the next `sse_event` or `response` of the same
/// request.
fn omitted_events(j: &[a2a_mock_agents::Entry]) -> std::collections::BTreeSet<u64> {
    let mut pending: std::collections::BTreeSet<u64> = Default::default();
    let mut out = std::collections::BTreeSet::new();
    for e in j {
        match &e.event {
            Event::Fault { req, kind } if kind.starts_with("omit_fields:") => {
                pending.insert(*req);
            }
            Event::SseEvent { req, .. } | Event::Response { req, .. } if pending.remove(req) => {
                out.insert(e.seq);
            }
            _ => {}
        }
    }
    out
}

/// The journal sequence at which the bad artifact of `task` existed at the agent: its first
/// chunk, or for a size bound the chunk (or served blob) that crossed it.
fn cause(ev: &Evidence, task: &str, agent: &str, bad: Bad, max: Option<u64>) -> Option<u64> {
    let mut first = None;
    let mut sums: std::collections::BTreeMap<&str, u64> = Default::default();
    for e in ev.journal {
        match &e.event {
            Event::ArtifactChunk {
                task_id,
                artifact_id,
                append,
                bytes,
                ..
            } if task_id == task => {
                first.get_or_insert(e.seq);
                let sum = sums.entry(artifact_id).or_default();
                *sum = if *append { *sum + bytes } else { *bytes };
                if bad == Bad::Size && max.is_some_and(|m| *sum > m) {
                    return Some(e.seq);
                }
            }
            Event::BlobServed { bytes, .. }
                if bad == Bad::Size
                    && e.agent == agent
                    && first.is_some()
                    && max.is_some_and(|m| *bytes > m) =>
            {
                return Some(e.seq);
            }
            _ => {}
        }
    }
    // A url part may be rejected by its declared size before it is fetched: when the agent
    // that holds the task scripts a url part over the bound.
    if bad == Bad::Size {
        return first.filter(|_| {
            ev.scenario
                .network
                .agents
                .iter()
                .filter(|a| a.name == agent)
                .flat_map(|a| &a.rules)
                .flat_map(|r| &r.steps)
                .any(|s| {
                    matches!(s, a2a_mock_agents::ScriptStep::ArtifactUrl { bytes, .. }
                        if max.is_some_and(|m| *bytes > m))
                })
        });
    }
    first
}

/// The cause reached the delegator: a delivery of `task` news (or the blob GET that is the
/// cause) after it and no later than the `done`.
fn cause_seen(ev: &Evidence, id: &str, task: &str, cause: u64) -> Option<u64> {
    let until = seen_until(ev, id);
    let blob = ev
        .journal
        .iter()
        .any(|e| e.seq == cause && matches!(e.event, Event::BlobServed { .. }));
    if blob && cause <= until {
        return Some(cause);
    }
    delivered_between(ev.journal, task, cause.saturating_sub(1), until)
}

/// The reported artifacts are byte-exact with what the agent delivered in `tasks`; returns the
/// first that is not.
fn byte_exact(ev: &Evidence, done: &Done, tasks: &[String]) -> Result<(), Check> {
    for a in &done.artifacts {
        let exact = tasks.iter().any(|t| {
            artifact_truth(ev.journal, t)
                .get(a.artifact_id.as_str())
                .is_some_and(|(b, sha, _)| *b == a.bytes && *sha == a.sha256)
        });
        if !exact {
            return Err(fail(
                format!(
                    "{}: artifact {} byte-exact with what the agent delivered",
                    done.id, a.artifact_id
                ),
                format!(
                    "{} bytes, sha256 {} match nothing the agent sent",
                    a.bytes, a.sha256
                ),
                vec![],
            ));
        }
    }
    Ok(())
}

fn rejected(ev: &Evidence, bad: Bad) -> Check {
    let mut any = false;
    for w in works(ev) {
        let (d, id) = (w.delegation, w.id);
        if d.expect.state.is_empty() || d.expect.nothing_sent {
            continue;
        }
        // Only a delegation whose agent sent it the unacceptable thing is in this situation.
        let Ok((task, agent, _)) = work_task(ev, id) else {
            continue;
        };
        if !scripted(ev, d, &agent, bad) {
            continue;
        }
        let Some(at) = cause(ev, &task, &agent, bad, Some(d.max_size_bytes)) else {
            continue;
        };
        any = true;
        let done = match reported_done(ev, id) {
            Ok(x) => x,
            Err(f) => return f,
        };
        let Some(seen) = cause_seen(ev, id, &task, at) else {
            return fail(
                format!(
                    "{} decided only after the unacceptable artifact reached it",
                    id
                ),
                format!(
                    "it reported {} with no cause: the artifact never reached it before",
                    done.state
                ),
                vec![at],
            );
        };
        // The bad artifact: what the agent sent in that task.
        let bad_truth = artifact_truth(ev.journal, &task);
        let bad_ids: Vec<String> = ev
            .journal
            .iter()
            .filter_map(|e| match &e.event {
                Event::ArtifactChunk {
                    task_id,
                    artifact_id,
                    ..
                } if *task_id == task => Some(artifact_id.clone()),
                _ => None,
            })
            .collect();
        if done.state != Outcome::Completed {
            if let Some(a) = done.artifacts.first() {
                return fail(
                    format!("{}: nothing released from a {} delegation", id, done.state),
                    format!("artifact {} reported", a.artifact_id),
                    vec![seen],
                );
            }
            continue;
        }
        // Completed without the bad artifact (or with a refinement's): it is never released and
        // the rejection is named in `reason`.
        let later: Vec<String> = tasks_of(ev, id)
            .into_iter()
            .map(|(t, _)| t)
            .filter(|t| *t != task)
            .collect();
        for a in &done.artifacts {
            let is_bad = bad_truth.values().any(|(_, sha, _)| *sha == a.sha256)
                || bad_ids.contains(&a.artifact_id)
                    && !later.iter().any(|t| {
                        artifact_truth(ev.journal, t)
                            .get(a.artifact_id.as_str())
                            .is_some_and(|(_, sha, _)| *sha == a.sha256)
                    });
            if is_bad {
                return fail(
                    format!(
                        "{}: the unacceptable artifact {} is never released",
                        id, a.artifact_id
                    ),
                    "it was reported as a COMPLETED result",
                    vec![seen],
                );
            }
        }
        if let Err(f) = byte_exact(ev, done, &later) {
            return f;
        }
        let reason = done.reason.as_deref().unwrap_or_default();
        if !bad_ids.iter().any(|b| reason.contains(b.as_str())) {
            return fail(
                format!(
                    "{}: the rejection reported in done.reason, naming the artifact ({})",
                    id,
                    super::words::list(&bad_ids)
                ),
                format!(
                    "reason {}",
                    super::words::quoted_or(done.reason.as_deref(), "absent")
                ),
                vec![seen],
            );
        }
    }
    Check::held_if_seen(any)
}

/// DLG-ART-05.
pub(super) fn wrong_media_type_rejected(ev: &Evidence) -> Check {
    rejected(ev, Bad::MediaType)
}

/// DLG-ART-06.
pub(super) fn oversize_rejected(ev: &Evidence) -> Check {
    rejected(ev, Bad::Size)
}

/// DLG-ART-07.
pub(super) fn schema_violation_rejected(ev: &Evidence) -> Check {
    rejected(ev, Bad::Schema)
}

/// What one stream showed so far, to tell a faulty event from a good one.
#[derive(Default)]
struct StreamView {
    /// Artifacts the stream started (or its first snapshot held).
    artifacts: std::collections::BTreeSet<String>,
    /// The task's final state went by.
    ended: bool,
}

/// Whether one recorded event of a stream about `task` (asked with JSON-RPC id `rpc_id`) is an
/// agent protocol error of the kinds in [`PROTOCOL_ERRORS`]: not JSON, a huge event, the answer
/// to another request id, an event of another task, an append to an artifact the stream never
/// started, or anything after the final state.
fn faulty_event(data: &Value, task: &str, rpc_id: Option<&Value>, view: &mut StreamView) -> bool {
    let Some(obj) = data.as_object() else {
        // Chunks of generated content are recorded as a summary; any other text is the event
        // as sent, which was not JSON (or was huge).
        return !data
            .as_str()
            .is_some_and(|t| t.starts_with("<artifact-update event of"));
    };
    if let (Some(sent), Some(asked)) = (obj.get("id"), rpc_id)
        && sent != asked
    {
        return true;
    }
    let Some(result) = obj.get("result") else {
        return false;
    };
    let other_task = |field: &str| {
        result
            .pointer(field)
            .and_then(Value::as_str)
            .is_some_and(|t| t != task)
    };
    let terminal = |state: Option<&Value>| {
        state
            .and_then(Value::as_str)
            .and_then(a2a_protocol::TaskState::parse_lenient)
            .is_some_and(|s| s.is_terminal())
    };
    if let Some(t) = result.get("task") {
        if other_task("/task/id") {
            return true;
        }
        for a in t
            .get("artifacts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(id) = a.get("artifactId").and_then(Value::as_str) {
                view.artifacts.insert(id.to_string());
            }
        }
        view.ended |= terminal(t.pointer("/status/state"));
        return false;
    }
    if let Some(u) = result.get("statusUpdate") {
        if other_task("/statusUpdate/taskId") || view.ended {
            return true;
        }
        view.ended |= terminal(u.pointer("/status/state"));
        return false;
    }
    if let Some(u) = result.get("artifactUpdate") {
        if other_task("/artifactUpdate/taskId") || view.ended {
            return true;
        }
        let Some(id) = u.pointer("/artifact/artifactId").and_then(Value::as_str) else {
            return true;
        };
        let append = u.get("append").and_then(Value::as_bool) == Some(true);
        let known = !view.artifacts.insert(id.to_string());
        return append && !known;
    }
    false
}

/// Where the faulty events of `task`'s streams fell ([`faulty_event`]).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Faults {
    /// The first faulty event before its stream showed the task's final state.
    in_stream: Option<u64>,
    /// The first faulty event after its stream showed the final state (a late chunk, say): a
    /// delegator may stop reading there, as the server should have closed the stream.
    after_end: Option<u64>,
}

impl Faults {
    /// The first faulty event of either kind.
    fn first(&self) -> Option<u64> {
        match (self.in_stream, self.after_end) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// The faulty events of `task` on the streams the delegator opened after journal entry `after`
/// (0: every stream; after a kill at `k`: those of the restarted process), no later than
/// `until`.
fn stream_faults(ev: &Evidence, task: &str, after: u64, until: u64) -> Faults {
    let by_req = request_tasks(ev.journal);
    let asked: std::collections::BTreeMap<u64, Option<&Value>> = ev
        .journal
        .iter()
        .filter_map(|e| match &e.event {
            Event::Request { req, rpc_id, .. } if e.seq > after => Some((*req, rpc_id.as_deref())),
            _ => None,
        })
        .collect();
    let omitted = omitted_events(ev.journal);
    let mut views: std::collections::BTreeMap<u64, StreamView> = Default::default();
    let mut faults = Faults::default();
    for e in ev.journal.iter().filter(|e| e.seq <= until) {
        let (req, data) = match &e.event {
            Event::SseEvent { req, data, .. } => (req, data),
            // A unary answer about the task that lacks REQUIRED fields (a GetTask answer
            // without `status`, say) is a faulty answer as well.
            Event::Response { req, .. } if omitted.contains(&e.seq) => {
                if by_req.get(req).is_some_and(|t| t == task) && asked.contains_key(req) {
                    faults.in_stream.get_or_insert(e.seq);
                }
                continue;
            }
            _ => continue,
        };
        if by_req.get(req).is_none_or(|t| t != task) {
            continue;
        }
        let Some(rpc_id) = asked.get(req) else {
            continue;
        };
        let view = views.entry(*req).or_default();
        let ended = view.ended;
        // Run the view on every event, so that what it learns stays whole.
        let faulty = faulty_event(data, task, *rpc_id, view);
        if faulty || omitted.contains(&e.seq) {
            let slot = if ended {
                &mut faults.after_end
            } else {
                &mut faults.in_stream
            };
            slot.get_or_insert(e.seq);
        }
    }
    faults
}

/// The agent's truth about `task`'s artifacts as they stood when it first reached a terminal
/// state: what a delegator that stopped reading at the final status received.
fn artifact_truth_at_end<'a>(
    ev: &Evidence<'a>,
    task: &str,
) -> std::collections::BTreeMap<&'a str, (u64, &'a str, u64)> {
    let end = ev.journal.iter().find_map(|e| match &e.event {
        Event::TaskState { task_id, state }
            if task_id == task
                && a2a_protocol::TaskState::parse_lenient(state)
                    .is_some_and(|s| s.is_terminal()) =>
        {
            Some(e.seq)
        }
        _ => None,
    });
    let mut truth = artifact_truth(ev.journal, task);
    truth.retain(|_, (_, _, seq)| end.is_none_or(|end| *seq < end));
    truth
}

/// Whether `done` reports exactly the artifacts of `truth`: each byte-exact, none missing.
fn reports_exactly(
    done: &Done,
    truth: &std::collections::BTreeMap<&str, (u64, &str, u64)>,
) -> bool {
    done.artifacts.len() == truth.len()
        && done.artifacts.iter().all(|a| {
            truth
                .get(a.artifact_id.as_str())
                .is_some_and(|(b, sha, _)| *b == a.bytes && *sha == a.sha256)
        })
}

/// DLG-ART-09 when the agent's only faulty events came after the stream's final status: a
/// delegator may stop reading there (or read and ignore what follows), so reporting the
/// artifacts as they stood at the terminal state is correct without a fresh `GetTask`. What
/// the agent kept after it (a late chunk its task took) counts only once a fresh `GetTask`,
/// answered after it, showed it; committing a late chunk's bytes otherwise is the garbage.
fn completed_after_late_faults(ev: &Evidence, done: &Done, task: &str, late: u64) -> Check {
    if reports_exactly(done, &artifact_truth_at_end(ev, task)) {
        return Check::Pass;
    }
    let truth = artifact_truth(ev.journal, task);
    let kept_at = truth.values().map(|(_, _, s)| *s).max().unwrap_or(0);
    let fresh = requests(ev.journal).iter().any(|r| {
        r.seq > kept_at.max(late)
            && r.seq <= seen_until(ev, &done.id)
            && r.calls(&[Method::GetTask])
            && r.params.get("id").and_then(Value::as_str) == Some(task)
    });
    if fresh && reports_exactly(done, &truth) {
        return Check::Pass;
    }
    fail(
        format!(
            "{}: the artifacts as they stood at the terminal state (or as a fresh GetTask after the late events showed them), byte-exact and complete",
            done.id
        ),
        if fresh {
            "the reported artifacts match neither".to_string()
        } else {
            "the reported artifacts are not the ones of the terminal state, and no fresh GetTask showed what the agent sent after it".to_string()
        },
        vec![late],
    )
}

/// DLG-ART-09: the agent's protocol error reached the delegator (its events were delivered),
/// and the delegator failed visibly, or reported the problem and recovered the result from a
/// fresh `GetTask` that it reports byte-exact. When every faulty event came after the stream's
/// final status, reporting the artifacts as they stood at that status is correct as well
/// ([`completed_after_late_faults`]).
pub(super) fn protocol_error_not_garbage(ev: &Evidence) -> Check {
    let mut any = false;
    // An event lacking REQUIRED fields went only to streams the delegator did not read.
    let mut unread_omissions = false;
    for w in works(ev) {
        let (d, id) = (w.delegation, w.id);
        if d.expect.state.is_empty() {
            continue;
        }
        // Only a delegation whose agent breaks the protocol is in this situation.
        let Ok((task, agent, created)) = work_task(ev, id) else {
            continue;
        };
        let errors = scripted_protocol_errors(ev, &agent);
        if errors.is_empty() {
            continue;
        }
        if errors.iter().all(|e| OMISSIONS.contains(e)) {
            match omissions_not_garbage(ev, d, &task) {
                Some(f @ Check::Fail { .. }) => return f,
                Some(_) => any = true,
                None => unread_omissions = true,
            }
            continue;
        }
        // Killed before the outcome: the restarted process reports from what it saw itself.
        // When no faulty event reached it ([`faulty_event`]), the agent's protocol error never
        // reached a process that reported anything: not this rule's situation.
        let killed = ev.crash_seq.filter(|k| *k < seen_until(ev, id));
        let faults = stream_faults(ev, &task, killed.unwrap_or(0), seen_until(ev, id));
        let after_restart = match killed {
            Some(_) => match faults.first() {
                Some(s) => Some(s),
                None => continue,
            },
            None => None,
        };
        any = true;
        let done = match reported_done(ev, id) {
            Ok(x) => x,
            Err(f) => return f,
        };
        let Some(seen) = after_restart
            .or_else(|| delivered_between(ev.journal, &task, created, seen_until(ev, id)))
        else {
            return fail(
                format!(
                    "{} decided only after the agent's faulty events reached it",
                    id
                ),
                format!(
                    "it reported {} with no cause: nothing of task {task} was delivered before",
                    done.state
                ),
                vec![created],
            );
        };
        match done.state {
            // Every faulty event came after the stream's final status: the delegator may have
            // stopped reading there.
            Outcome::Completed if faults.in_stream.is_none() && faults.after_end.is_some() => {
                let late = faults.after_end.unwrap_or(seen);
                if let f @ Check::Fail { .. } = completed_after_late_faults(ev, done, &task, late) {
                    return f;
                }
            }
            Outcome::Completed => {
                let reread = requests(ev.journal).iter().any(|r| {
                    r.seq > seen
                        && r.calls(&[Method::GetTask])
                        && r.params.get("id").and_then(Value::as_str) == Some(task.as_str())
                });
                if !reread {
                    return fail(
                        format!(
                            "{}: a result after a protocol error comes from a fresh GetTask",
                            id
                        ),
                        "COMPLETED without reading the task again",
                        vec![seen],
                    );
                }
                if let Err(f) = byte_exact(ev, done, std::slice::from_ref(&task)) {
                    return f;
                }
                let truth = artifact_truth(ev.journal, &task);
                if let Some(aid) = truth
                    .keys()
                    .find(|a| !done.artifacts.iter().any(|r| r.artifact_id == **a))
                {
                    return fail(
                        format!("{}: the recovered result is complete", id),
                        format!("artifact {aid} missing"),
                        vec![],
                    );
                }
                if done.reason.as_deref().is_none_or(str::is_empty) {
                    return fail(
                        format!("{}: the protocol error reported in done.reason", id),
                        "no reason",
                        vec![seen],
                    );
                }
            }
            s => {
                if let Some(a) = done.artifacts.first() {
                    return fail(
                        format!("{}: nothing released from a {s} delegation", id),
                        format!("artifact {} reported", a.artifact_id),
                        vec![seen],
                    );
                }
            }
        }
    }
    if !any && unread_omissions {
        return Check::NotExercised {
            why: "the events lacking REQUIRED fields went to streams the delegator did not read (it polled or used push)".into(),
        };
    }
    Check::held_if_seen(any)
}

/// DLG-ART-09 for an agent whose only protocol errors leave out REQUIRED fields (a
/// `malformed_event` step, an `omit_fields` fault: spec §5.7, §14.1.1 say a client should
/// reject such an event). `None` when no such event or answer of the task reached the
/// delegator before its outcome. Rejecting the event (ignoring it) is what the spec asks, so a
/// delegator that carried on and completed is right as long as it committed nothing from the
/// faulty event: its artifacts are exactly the task's (byte-exact, none missing, none made up
/// from the event), whether it read them from the stream or from a fresh `GetTask`. Failing the
/// delegation visibly is right as well, with nothing released.
fn omissions_not_garbage(
    ev: &Evidence,
    d: &crate::scenario::Delegation,
    task: &str,
) -> Option<Check> {
    let until = seen_until(ev, &d.id);
    let after = ev.crash_seq.filter(|k| *k < until).unwrap_or(0);
    let first = stream_faults(ev, task, after, until).first()?;
    let done = match reported_done(ev, &d.id) {
        Ok(x) => x,
        Err(f) => return Some(f),
    };
    if done.state != Outcome::Completed {
        return Some(match done.artifacts.first() {
            Some(a) => fail(
                format!(
                    "{}: nothing released from a {} delegation",
                    d.id, done.state
                ),
                format!("artifact {} reported", a.artifact_id),
                vec![first],
            ),
            None => Check::Pass,
        });
    }
    if terminal_truth(ev.journal, task).is_none_or(|(st, at)| st != "COMPLETED" || at > until) {
        return Some(fail(
            format!("{}: COMPLETED only once task {task} completed", d.id),
            "it reported COMPLETED while the task had not completed",
            vec![first],
        ));
    }
    let truth = artifact_truth(ev.journal, task);
    if !reports_exactly(done, &truth) {
        return Some(fail(
            format!(
                "{}: nothing committed from the event lacking REQUIRED fields: the artifacts are exactly task {task}'s ({})",
                d.id,
                super::words::list(truth.keys())
            ),
            format!(
                "it reported {}",
                super::words::list(
                    done.artifacts
                        .iter()
                        .map(|a| format!("{} ({} bytes)", a.artifact_id, a.bytes))
                )
            ),
            vec![first],
        ));
    }
    Some(Check::Pass)
}

#[cfg(test)]
mod tests {
    use super::super::registry::Check;
    use crate::rules::test_support::*;
    use serde_json::json;

    const RULES: [&str; 4] = ["DLG-ART-05", "DLG-ART-06", "DLG-ART-07", "DLG-ART-09"];

    /// The delegation's extra TOML: expects FAILED, a 50-byte bound and a schema.
    const EXTRA: &str = "expect = { state = [\"FAILED\"] }\nmax_size_bytes = 50\nschema = { type = \"object\", required = [\"clauses\"] }";

    /// Agent `a`'s script makes `rule`'s situation (the size bound needs none: 100 bytes > 50).
    fn bad_script(c: &mut Case, rule: &str) {
        let step = match rule {
            "DLG-ART-05" => json!({"do": "artifacts", "content": "raw", "media_type": "image/png"}),
            "DLG-ART-07" => json!({"do": "data_artifact", "data": {"items": []}}),
            "DLG-ART-09" => json!({"do": "append_unknown"}),
            _ => return,
        };
        c.script(
            "a",
            json!({"steps": [step, {"do": "state", "state": "TASK_STATE_COMPLETED"}]}),
        );
    }

    /// [`streamed`] with 100 bytes, the situation of `rule` scripted.
    fn bad(rule: &str) -> (Case, u64) {
        let (mut c, chunk) = streamed(EXTRA, 100);
        bad_script(&mut c, rule);
        (c, chunk)
    }

    #[test]
    fn a_failed_done_with_an_empty_journal_is_no_rejection() {
        for rule in RULES {
            let mut c = Case::new(&delegation(EXTRA));
            bad_script(&mut c, rule);
            c.done("d1", "FAILED", json!([]));
            let got = c.check(checker(rule));
            assert_ne!(got, Check::Pass, "{rule}");
        }
    }

    #[test]
    fn only_a_delegation_in_the_situation_is_judged() {
        // A well-behaved agent: no odd type, no schema to break, within the bound, no protocol
        // error. Whatever the delegator reports, these rules have nothing to say about it.
        for rule in RULES {
            let (mut c, _) = streamed("expect = { state = [\"FAILED\", \"COMPLETED\"] }", 100);
            c.done("d1", "FAILED", json!([]));
            assert_eq!(c.check(checker(rule)), Check::NotApplicable, "{rule}");
        }
        // A schema the data satisfies is no violation.
        let (mut c, _) = streamed(EXTRA, 10);
        c.script(
            "a",
            json!({"steps": [{"do": "data_artifact", "data": {"clauses": []}}]}),
        );
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-ART-07")), Check::NotApplicable);
        // A url part over the bound at another agent says nothing about d1's task at `a`.
        let (mut c, _) = streamed(EXTRA, 10);
        c.script(
            "old",
            json!({"steps": [{"do": "artifact_url", "bytes": 1000}]}),
        );
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "bad"}]),
        );
        assert_eq!(c.check(checker("DLG-ART-06")), Check::NotApplicable);
        c.script(
            "a",
            json!({"steps": [{"do": "artifact_url", "bytes": 1000}]}),
        );
        assert!(
            fails(c.check(checker("DLG-ART-06"))),
            "released over the bound"
        );
        // The genuine violation still fails: the bad bytes released.
        for rule in RULES {
            let (mut c, _) = bad(rule);
            c.done(
                "d1",
                "FAILED",
                json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "bad"}]),
            );
            assert!(fails(c.check(checker(rule))), "{rule}");
        }
    }

    #[test]
    fn failing_after_the_bad_artifact_arrived_passes() {
        for rule in RULES {
            let (mut c, _) = bad(rule);
            c.done("d1", "FAILED", json!([]));
            assert_eq!(c.check(checker(rule)), Check::Pass, "{rule}");
        }
    }

    #[test]
    fn failing_before_the_bad_artifact_reached_the_delegator_has_no_cause() {
        for rule in RULES {
            let (mut c, chunk) = bad(rule);
            c.done("d1", "FAILED", json!([]));
            // The `done` arrived when the journal stood just after the task was created.
            c.done_at.insert("d1".into(), chunk - 3);
            assert!(fails(c.check(checker(rule))), "{rule}");
        }
    }

    #[test]
    fn completing_without_the_bad_artifact_is_correct_when_reported() {
        for rule in ["DLG-ART-05", "DLG-ART-06", "DLG-ART-07"] {
            let (mut c, _) = bad(rule);
            c.done("d1", "COMPLETED", json!([]));
            assert!(
                fails(c.check(checker(rule))),
                "{rule}: the rejection is not reported"
            );
            if let Some(a2a_driver_contract::FromDelegator::Done(d)) = c.outcomes.get_mut("d1") {
                d.reason = Some("rejected artifact-1: not acceptable".into());
            }
            assert_eq!(c.check(checker(rule)), Check::Pass, "{rule}");
            c.done(
                "d1",
                "COMPLETED",
                json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "bad"}]),
            );
            assert!(
                fails(c.check(checker(rule))),
                "{rule}: the bad bytes released"
            );
        }
    }

    #[test]
    fn art_09_recovery_needs_a_fresh_get_task_and_byte_exact_results() {
        let (mut c, _) = bad("DLG-ART-09");
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "bad"}]),
        );
        if let Some(a2a_driver_contract::FromDelegator::Done(d)) = c.outcomes.get_mut("d1") {
            d.reason = Some("stream protocol error; recovered from GetTask".into());
        }
        assert!(fails(c.check(checker("DLG-ART-09"))), "no GetTask");
        let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", g, 200, None, json!({}));
        assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "made-up"}]),
        );
        assert!(fails(c.check(checker("DLG-ART-09"))), "not byte-exact");
    }

    /// A streamed delegation (expects COMPLETED or FAILED) whose agent completes t1 with
    /// artifact-1 (64 bytes) and then sends `late` on the stream, after the final status; the
    /// script commits that protocol error. Returns the case, the stream's request number and
    /// the late event's sequence.
    fn late_after_terminal(late: serde_json::Value) -> (Case, u64, u64) {
        let mut c = Case::new(&delegation(
            "expect = { state = [\"COMPLETED\", \"FAILED\"] }",
        ));
        c.script(
            "a",
            json!({"steps": [
                {"do": "artifacts", "count": 1, "chunks": 1, "chunk_bytes": 64},
                {"do": "state", "state": "TASK_STATE_COMPLETED"},
                {"do": "raw_event", "result": {}},
            ]}),
        );
        let (_, r) = c.j.rpc(
            "a",
            "SendStreamingMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "do the thing"}]}}),
            &[],
        );
        c.j.created("a", "t1", "c1", "m1", false);
        let ev = |result: serde_json::Value| json!({"jsonrpc": "2.0", "id": 1, "result": result});
        c.j.sse_data(
            "a",
            r,
            ev(json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}}})),
        );
        c.j.chunk("a", "t1", "artifact-1", false, 64);
        c.j.sse_data(
            "a",
            r,
            ev(json!({"artifactUpdate": {"taskId": "t1", "artifact": {"artifactId": "artifact-1"}}})),
        );
        c.j.sent("a", "t1", "artifact-1", 64, "sha-64");
        c.j.state("a", "t1", "TASK_STATE_COMPLETED");
        c.j.sse_data(
            "a",
            r,
            ev(json!({"statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_COMPLETED"}}})),
        );
        let seq = c.j.sse_data("a", r, ev(late));
        (c, r, seq)
    }

    /// A late chunk of another task (the catalog's `artifacts.chunk-after-terminal`): the agent's
    /// task never holds it.
    fn foreign_late_chunk() -> serde_json::Value {
        json!({"artifactUpdate": {"taskId": "late", "artifact": {"artifactId": "artifact-9"}}})
    }

    #[test]
    fn art_09_stopping_at_the_terminal_status_is_no_mistake() {
        // It stopped reading at COMPLETED (or read the late chunk and ignored it) and reports
        // the artifact as it stood then: no fresh GetTask needed, nothing to report.
        let (mut c, _, _) = late_after_terminal(foreign_late_chunk());
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 64, "sha256": "sha-64"}]),
        );
        assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
        // Failing visibly is still correct.
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
        // Committing the late chunk's bytes is the garbage.
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 64, "sha256": "sha-64"},
                   {"artifact_id": "artifact-9", "bytes": 10, "sha256": "late"}]),
        );
        assert!(fails(c.check(checker("DLG-ART-09"))));
        // So is an artifact that is not the one of the terminal state.
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 74, "sha256": "sha-64-and-late"}]),
        );
        assert!(fails(c.check(checker("DLG-ART-09"))));
    }

    #[test]
    fn art_09_a_late_chunk_the_task_kept_counts_only_through_a_fresh_get_task() {
        // A late chunk of the task itself: the agent's task (GetTask) takes it, and the
        // journal's artifact truth after it includes it.
        let late =
            json!({"artifactUpdate": {"taskId": "t1", "artifact": {"artifactId": "artifact-2"}}});
        let (mut c, _, _) = late_after_terminal(late);
        c.j.chunk("a", "t1", "artifact-2", false, 10);
        c.j.sent("a", "t1", "artifact-2", 10, "sha-late");
        let both = json!([{"artifact_id": "artifact-1", "bytes": 64, "sha256": "sha-64"},
                          {"artifact_id": "artifact-2", "bytes": 10, "sha256": "sha-late"}]);
        // As it stood at the terminal state: correct.
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 64, "sha256": "sha-64"}]),
        );
        assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
        // The late chunk committed from the stream, no GetTask showed it: garbage.
        c.done("d1", "COMPLETED", both.clone());
        assert!(fails(c.check(checker("DLG-ART-09"))));
        // A fresh GetTask after it holds it: the agent's own task, byte-exact.
        let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", g, 200, None, json!({}));
        assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
    }

    #[test]
    fn art_09_a_fault_before_the_final_status_still_needs_a_fresh_get_task() {
        // The same stream with an append to an unknown artifact before COMPLETED: the
        // delegator read it, so a result comes from a fresh GetTask with the problem reported.
        let (mut c, r, _) = late_after_terminal(foreign_late_chunk());
        let bad = json!({"jsonrpc": "2.0", "id": 1, "result": {"artifactUpdate": {"taskId": "t1", "append": true, "artifact": {"artifactId": "never-started"}}}});
        let pos =
            c.j.entries
                .iter()
                .position(|e| matches!(e.event, a2a_mock_agents::Event::TaskState { .. }))
                .expect("the final state");
        c.j.entries.insert(
            pos,
            a2a_mock_agents::Entry {
                seq: 0,
                at_us: 0,
                agent: "a".into(),
                event: a2a_mock_agents::Event::SseEvent {
                    req: r,
                    index: 0,
                    data: bad,
                },
            },
        );
        for (i, e) in c.j.entries.iter_mut().enumerate() {
            e.seq = i as u64 + 1;
            e.at_us = e.seq * 1000;
        }
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 64, "sha256": "sha-64"}]),
        );
        assert!(fails(c.check(checker("DLG-ART-09"))), "no fresh GetTask");
    }

    #[test]
    fn faulty_events_are_told_from_good_ones() {
        use super::{StreamView, faulty_event};
        let id = json!("r1");
        let ev =
            |result: serde_json::Value| json!({"jsonrpc": "2.0", "id": "r1", "result": result});
        let snapshot = ev(
            json!({"task": {"id": "t1", "status": {"state": "TASK_STATE_WORKING"},
            "artifacts": [{"artifactId": "a1"}]}}),
        );
        let chunk = |aid: &str, append: bool| {
            ev(json!({"artifactUpdate": {"taskId": "t1", "append": append,
                "artifact": {"artifactId": aid}}}))
        };
        let status = |task: &str, state: &str| {
            ev(json!({"statusUpdate": {"taskId": task, "status": {"state": state}}}))
        };
        // A good stream: snapshot, an append to its artifact, a new one, the final state.
        let mut v = StreamView::default();
        for good in [
            snapshot.clone(),
            chunk("a1", true),
            chunk("a2", false),
            chunk("a2", true),
            json!("<artifact-update event of 8192 generated bytes>"),
            status("t1", "TASK_STATE_COMPLETED"),
        ] {
            assert!(!faulty_event(&good, "t1", Some(&id), &mut v), "{good}");
        }
        assert!(
            faulty_event(&chunk("a3", false), "t1", Some(&id), &mut v),
            "after the end"
        );
        let fresh = || {
            let mut v = StreamView::default();
            faulty_event(&snapshot, "t1", Some(&id), &mut v);
            v
        };
        for bad in [
            json!("{not json"),
            json!("<huge event of 9000000 bytes>"),
            chunk("a9", true),
            status("t2", "TASK_STATE_WORKING"),
            json!({"jsonrpc": "2.0", "id": "r2", "result": {}}),
        ] {
            assert!(faulty_event(&bad, "t1", Some(&id), &mut fresh()), "{bad}");
        }
    }

    #[test]
    fn art_09_after_a_kill_judges_what_the_restarted_process_saw() {
        // Killed once the task existed (entry 2): the faulty stream went to a dead process. The
        // restarted one resends the message and gets the finished task as one snapshot.
        let (mut c, _) = bad("DLG-ART-09");
        c.crash = Some(2);
        let (_, again) = c.j.rpc(
            "a",
            "SendStreamingMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "do the thing"}]}}),
            &[],
        );
        c.j.created("a", "t1", "c1", "m1", true);
        c.j.sse("a", again);
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "bad"}]),
        );
        assert_eq!(c.check(checker("DLG-ART-09")), Check::NotApplicable);
        // Its stream went on past the snapshot: a faulty event can have reached it, and then a
        // result needs a fresh GetTask and the problem reported, as without a kill.
        let mut c2 = c;
        let ev = a2a_mock_agents::Event::SseEvent {
            req: again,
            index: 1,
            data: json!("{not json"),
        };
        c2.j.push("a", ev);
        c2.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "bad"}]),
        );
        assert!(fails(c2.check(checker("DLG-ART-09"))), "no GetTask");
        let (_, g) = c2.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c2.j.resp("a", g, 200, None, json!({}));
        if let Some(a2a_driver_contract::FromDelegator::Done(d)) = c2.outcomes.get_mut("d1") {
            d.reason = Some("stream protocol error; recovered from GetTask".into());
        }
        assert_eq!(c2.check(checker("DLG-ART-09")), Check::Pass);
    }

    /// A fault entry marking the next event or answer of request `req` as lacking `pointer`.
    fn omit(c: &mut Case, req: u64, pointer: &str) {
        c.j.push(
            "a",
            a2a_mock_agents::Event::Fault {
                req,
                kind: format!("omit_fields:{pointer}"),
            },
        );
    }

    /// A streamed delegation whose agent sends, before the real 100-byte artifact, an artifact
    /// update without `artifactId` (`malformed_event`); the task completes.
    fn malformed_stream() -> Case {
        let mut c = Case::new(&delegation(
            "expect = { state = [\"COMPLETED\", \"FAILED\"] }",
        ));
        c.script(
            "a",
            json!({"steps": [
                {"do": "state", "state": "TASK_STATE_WORKING"},
                {"do": "malformed_event", "omit": "artifact.artifactId"},
                {"do": "artifacts", "count": 1, "chunks": 1, "chunk_bytes": 100},
                {"do": "state", "state": "TASK_STATE_COMPLETED"},
            ]}),
        );
        let (_, r) = c.j.rpc(
            "a",
            "SendStreamingMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "do the thing"}]}}),
            &[],
        );
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.state("a", "t1", "TASK_STATE_WORKING");
        c.j.sse_data(
            "a",
            r,
            json!({"id": 1, "result": {"statusUpdate": {"taskId": "t1", "status": {"state": "TASK_STATE_WORKING"}}}}),
        );
        omit(&mut c, r, "/result/artifactUpdate/artifact/artifactId");
        c.j.sse_data(
            "a",
            r,
            json!({"id": 1, "result": {"artifactUpdate": {"taskId": "t1", "artifact": {"parts": [{"text": "junk"}]}}}}),
        );
        c.j.chunk("a", "t1", "artifact-1", false, 100);
        c.j.sent("a", "t1", "artifact-1", 100, "good");
        c.j.sse("a", r);
        c.j.state("a", "t1", "TASK_STATE_COMPLETED");
        c.j.sse("a", r);
        c
    }

    #[test]
    fn art_09_an_event_lacking_a_required_field_is_rejected_not_committed() {
        // Ignoring the event (the spec's "reject") and completing from the stream: right.
        let mut c = malformed_stream();
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "good"}]),
        );
        assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
        // Recovering from a fresh GetTask: right as well.
        let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", g, 200, None, json!({}));
        assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
        // Failing visibly with nothing released: right.
        let mut c = malformed_stream();
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
        // Committing the id-less artifact under a made-up id: garbage.
        let mut c = malformed_stream();
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 100, "sha256": "good"},
                   {"artifact_id": "unnamed-0", "bytes": 4, "sha256": "junk"}]),
        );
        assert!(fails(c.check(checker("DLG-ART-09"))));
        // Merging its bytes into the real artifact: garbage.
        let mut c = malformed_stream();
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 104, "sha256": "mixed"}]),
        );
        assert!(fails(c.check(checker("DLG-ART-09"))));
    }

    #[test]
    fn art_09_a_malformed_event_on_a_stream_nobody_read_is_not_exercised() {
        // The delegator polled: the event lacking a field went to no stream of its.
        let mut c = Case::new(&delegation("expect = { state = [\"COMPLETED\"] }"));
        c.script(
            "a",
            json!({"steps": [{"do": "malformed_event", "omit": "taskId"},
                             {"do": "state", "state": "TASK_STATE_COMPLETED"}]}),
        );
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.resp("a", r, 200, None, json!({"result": {"task": {"id": "t1"}}}));
        c.j.state("a", "t1", "TASK_STATE_COMPLETED");
        let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", g, 200, None, json!({}));
        c.done("d1", "COMPLETED", json!([]));
        assert!(matches!(
            c.check(checker("DLG-ART-09")),
            Check::NotExercised { .. }
        ));
    }

    #[test]
    fn art_09_a_get_task_answer_without_status_is_a_faulty_answer() {
        let mut c = Case::new(&delegation(
            "expect = { state = [\"COMPLETED\", \"FAILED\"] }",
        ));
        c.script(
            "a",
            json!({"when": {"method": "GetTask"}, "times": 1,
                   "fault": {"kind": "omit_fields", "pointers": ["/result/status"]}}),
        );
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.resp("a", r, 200, None, json!({"result": {"task": {"id": "t1"}}}));
        c.j.chunk("a", "t1", "artifact-1", false, 10);
        c.j.sent("a", "t1", "artifact-1", 10, "abc");
        c.j.state("a", "t1", "TASK_STATE_COMPLETED");
        let (_, g) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        omit(&mut c, g, "/result/status");
        c.j.resp("a", g, 200, None, json!({"result": {"id": "t1"}}));
        // Read again, complete and exact.
        let (_, g2) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
        c.j.resp("a", g2, 200, None, json!({"result": {"id": "t1"}}));
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 10, "sha256": "abc"}]),
        );
        assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
        // Failing on it visibly: right as well.
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-ART-09")), Check::Pass);
        // Completing with nothing although the task had an artifact: the answer's gap became
        // the result.
        c.done("d1", "COMPLETED", json!([]));
        assert!(fails(c.check(checker("DLG-ART-09"))));
    }

    #[test]
    fn omitted_events_are_the_next_answer_of_the_same_request() {
        let mut c = Case::new("");
        let (_, r1) = c.j.send("a", "m1", "x", json!({}));
        let (_, r2) = c.j.send("a", "m2", "y", json!({}));
        omit(&mut c, r1, "/result/task/id");
        let other = c.j.resp("a", r2, 200, None, json!({}));
        let marked = c.j.resp("a", r1, 200, None, json!({}));
        let later = c.j.resp("a", r1, 200, None, json!({}));
        let got = super::omitted_events(&c.j.entries);
        assert!(got.contains(&marked));
        assert!(!got.contains(&other) && !got.contains(&later));
    }
}
