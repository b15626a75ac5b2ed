//! DLG-ART-09: an agent's protocol error (an event that is not JSON, huge, of another request
//! or task, appending to an artifact never started, after the final state, or lacking REQUIRED
//! fields) reached the delegator and was never committed as a result.

use super::{byte_exact, objects, script_of};
use crate::rules::evidence::*;
use crate::rules::registry::{Check, fail};
use crate::rules::state::reported_done;
use a2a_driver_contract::{Done, Outcome};
use a2a_mock_agents::Event;
use a2a_protocol::Method;
use serde_json::Value;

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
pub(super) fn omitted_events(j: &[a2a_mock_agents::Entry]) -> std::collections::BTreeSet<u64> {
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

/// What one stream showed so far, to tell a faulty event from a good one.
#[derive(Default)]
pub(super) struct StreamView {
    /// Artifacts the stream started (or its first snapshot held).
    artifacts: std::collections::BTreeSet<String>,
    /// The task's final state went by.
    ended: bool,
}

/// Whether one recorded event of a stream about `task` (asked with JSON-RPC id `rpc_id`) is an
/// agent protocol error of the kinds in [`PROTOCOL_ERRORS`]: not JSON, a huge event, the answer
/// to another request id, an event of another task, an append to an artifact the stream never
/// started, or anything after the final state.
pub(super) fn faulty_event(
    data: &Value,
    task: &str,
    rpc_id: Option<&Value>,
    view: &mut StreamView,
) -> bool {
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
pub(in crate::rules) fn protocol_error_not_garbage(ev: &Evidence) -> Check {
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
                crate::rules::words::list(truth.keys())
            ),
            format!(
                "it reported {}",
                crate::rules::words::list(
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
