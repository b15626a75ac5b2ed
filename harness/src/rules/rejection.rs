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

/// The journal sequence at which the bad artifact of `task` existed at the agent: its first
/// chunk, or for a size bound the chunk (or served blob) that crossed it.
fn cause(ev: &Evidence, task: &str, bad: Bad, max: Option<u64>) -> Option<u64> {
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
                if bad == Bad::Size && first.is_some() && max.is_some_and(|m| *bytes > m) =>
            {
                return Some(e.seq);
            }
            _ => {}
        }
    }
    // A url part may be rejected by its declared size before it is fetched.
    if bad == Bad::Size {
        return first.filter(|_| {
            ev.scenario.network.agents.iter().any(|a| {
                a.rules.iter().any(|r| {
                    r.steps
                        .iter()
                        .any(|s| matches!(s, a2a_mock_agents::ScriptStep::ArtifactUrl { .. }))
                })
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
    for d in ev
        .scenario
        .delegations
        .iter()
        .filter(|d| d.children.is_empty())
    {
        if d.expect.state.is_empty() || d.expect.nothing_sent {
            continue;
        }
        any = true;
        let (task, _, _) = match work_task(ev, &d.id) {
            Ok(t) => t,
            Err(f) => return f,
        };
        let done = match reported_done(ev, &d.id) {
            Ok(x) => x,
            Err(f) => return f,
        };
        let Some(at) = cause(ev, &task, bad, Some(d.max_size_bytes)) else {
            return fail(
                format!("the agent's unacceptable artifact for task {task}"),
                "the agent never sent it: the situation of this rule did not arise",
                vec![],
            );
        };
        let Some(seen) = cause_seen(ev, &d.id, &task, at) else {
            return fail(
                format!(
                    "{} decided only after the unacceptable artifact reached it",
                    d.id
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
                    format!(
                        "{}: nothing released from a {} delegation",
                        d.id, done.state
                    ),
                    format!("artifact {} reported", a.artifact_id),
                    vec![seen],
                );
            }
            continue;
        }
        // Completed without the bad artifact (or with a refinement's): it is never released and
        // the rejection is named in `reason`.
        let later: Vec<String> = tasks_of(ev, &d.id)
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
                        d.id, a.artifact_id
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
                    d.id,
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

/// DLG-ART-09: the agent's protocol error reached the delegator (its events were delivered),
/// and the delegator failed visibly, or reported the problem and recovered the result from a
/// fresh `GetTask` that it reports byte-exact.
pub(super) fn protocol_error_not_garbage(ev: &Evidence) -> Check {
    let mut any = false;
    for d in ev
        .scenario
        .delegations
        .iter()
        .filter(|d| d.children.is_empty())
    {
        if d.expect.state.is_empty() {
            continue;
        }
        any = true;
        let (task, _, created) = match work_task(ev, &d.id) {
            Ok(t) => t,
            Err(f) => return f,
        };
        let done = match reported_done(ev, &d.id) {
            Ok(x) => x,
            Err(f) => return f,
        };
        let Some(seen) = delivered_between(ev.journal, &task, created, seen_until(ev, &d.id))
        else {
            return fail(
                format!(
                    "{} decided only after the agent's faulty events reached it",
                    d.id
                ),
                format!(
                    "it reported {} with no cause: nothing of task {task} was delivered before",
                    done.state
                ),
                vec![created],
            );
        };
        match done.state {
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
                            d.id
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
                        format!("{}: the recovered result is complete", d.id),
                        format!("artifact {aid} missing"),
                        vec![],
                    );
                }
                if done.reason.as_deref().is_none_or(str::is_empty) {
                    return fail(
                        format!("{}: the protocol error reported in done.reason", d.id),
                        "no reason",
                        vec![seen],
                    );
                }
            }
            s => {
                if let Some(a) = done.artifacts.first() {
                    return fail(
                        format!("{}: nothing released from a {s} delegation", d.id),
                        format!("artifact {} reported", a.artifact_id),
                        vec![seen],
                    );
                }
            }
        }
    }
    Check::held_if_seen(any)
}

#[cfg(test)]
mod tests {
    use super::super::registry::Check;
    use crate::rules::test_support::*;
    use serde_json::json;

    const RULES: [&str; 4] = ["DLG-ART-05", "DLG-ART-06", "DLG-ART-07", "DLG-ART-09"];

    #[test]
    fn a_failed_done_with_an_empty_journal_is_no_rejection() {
        for rule in RULES {
            let mut c = Case::new(&delegation("expect = { state = [\"FAILED\"] }"));
            c.done("d1", "FAILED", json!([]));
            let got = c.check(checker(rule));
            assert!(fails(got.clone()), "{rule}: {got:?}");
        }
    }

    #[test]
    fn failing_after_the_bad_artifact_arrived_passes() {
        for rule in RULES {
            let (mut c, _) = streamed(
                "expect = { state = [\"FAILED\"] }\nmax_size_bytes = 50",
                100,
            );
            c.done("d1", "FAILED", json!([]));
            assert_eq!(c.check(checker(rule)), Check::Pass, "{rule}");
        }
    }

    #[test]
    fn failing_before_the_bad_artifact_reached_the_delegator_has_no_cause() {
        for rule in RULES {
            let (mut c, chunk) = streamed(
                "expect = { state = [\"FAILED\"] }\nmax_size_bytes = 50",
                100,
            );
            c.done("d1", "FAILED", json!([]));
            // The `done` arrived when the journal stood just after the task was created.
            c.done_at.insert("d1".into(), chunk - 3);
            assert!(fails(c.check(checker(rule))), "{rule}");
        }
    }

    #[test]
    fn completing_without_the_bad_artifact_is_correct_when_reported() {
        for rule in ["DLG-ART-05", "DLG-ART-06", "DLG-ART-07"] {
            let (mut c, _) = streamed(
                "expect = { state = [\"FAILED\"] }\nmax_size_bytes = 50",
                100,
            );
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
        let (mut c, _) = streamed("expect = { state = [\"FAILED\"] }", 100);
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
}
