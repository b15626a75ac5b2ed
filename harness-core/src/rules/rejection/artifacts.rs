//! DLG-ART-05, -06, -07: an artifact with a media type the request did not accept, over its
//! size bound, or against its schema reached the delegator and was never released as a result.

use super::{byte_exact, objects, steps_of};
use crate::rules::evidence::*;
use crate::rules::registry::{Check, fail};
use crate::rules::state::reported_done;
use a2a_driver_contract::Outcome;
use a2a_mock_agents::Event;
use serde_json::Value;

/// What made an artifact unacceptable.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Bad {
    /// A media type the request did not accept (DLG-ART-05).
    MediaType,
    /// Over `max_size_bytes` (DLG-ART-06).
    Size,
    /// A data part against the schema (DLG-ART-07).
    Schema,
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
pub(super) fn scripted(
    ev: &Evidence,
    d: &crate::scenario::Delegation,
    agent: &str,
    bad: Bad,
) -> bool {
    match bad {
        Bad::MediaType => scripted_media_types(ev, agent).iter().any(|m| {
            !d.mime_types
                .iter()
                .any(|acc| crate::rules::route::media_type_accepts(acc, m))
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

/// The journal sequence at which the bad artifact of `task` existed at the agent: its first
/// chunk, or for a size bound the chunk (or served blob) that crossed it.
pub(super) fn cause(
    ev: &Evidence,
    task: &str,
    agent: &str,
    bad: Bad,
    max: Option<u64>,
) -> Option<u64> {
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

pub(super) fn rejected(ev: &Evidence, bad: Bad) -> Check {
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
                    crate::rules::words::list(&bad_ids)
                ),
                format!(
                    "reason {}",
                    crate::rules::words::quoted_or(done.reason.as_deref(), "absent")
                ),
                vec![seen],
            );
        }
    }
    Check::held_if_seen(any)
}

/// DLG-ART-05.
pub(in crate::rules) fn wrong_media_type_rejected(ev: &Evidence) -> Check {
    rejected(ev, Bad::MediaType)
}

/// DLG-ART-06.
pub(in crate::rules) fn oversize_rejected(ev: &Evidence) -> Check {
    rejected(ev, Bad::Size)
}

/// DLG-ART-07.
pub(in crate::rules) fn schema_violation_rejected(ev: &Evidence) -> Check {
    rejected(ev, Bad::Schema)
}
