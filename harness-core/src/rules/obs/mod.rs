//! Observation (DLG-OBS-*): early stream ends, committed results, forged pushes, polling rate.
//!
//! Here: DLG-OBS-01..04; `polling`: DLG-OBS-05 (the polling rate backs off while nothing changes).

mod polling;
#[cfg(test)]
mod tests;

pub use polling::DEFAULT_POLL_INTERVAL_MS;
pub(super) use polling::polling_backs_off;

use super::evidence::*;
use super::registry::{Check, and_then, fail};
use super::state::outcome_expected;
use a2a_driver_contract::{FromDelegator, Outcome};
use a2a_mock_agents::Event;
use a2a_protocol::Method;
use serde_json::Value;
use std::collections::BTreeMap;

/// The context of task `tid`, from the journal's `task_created`.
fn context_of_task(journal: &[a2a_mock_agents::Entry], tid: &str) -> Option<String> {
    journal.iter().find_map(|e| match &e.event {
        Event::TaskCreated {
            task_id,
            context_id,
            ..
        } if task_id == tid => Some(context_id.clone()),
        _ => None,
    })
}

pub(in crate::rules) fn early_stream_end_followed_up(ev: &Evidence) -> Check {
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
        // A stream of the killed process that ended after the kill: the restarted process never
        // saw it end, and finds the task again by recovering (resending the same messageId,
        // which the agent deduplicates onto the task, or ListTasks in its context).
        let killed_stream = ev.crash_seq.filter(|k| r.seq <= *k && e.seq > *k);
        let ctx = context_of_task(ev.journal, &tid);
        let recovered = |o: &Req<'_>| {
            killed_stream.is_some_and(|k| o.seq > k)
                && o.agent == r.agent
                && (o.is_new_send() && o.message_id().is_some() && o.message_id() == r.message_id()
                    || o.calls(&[Method::ListTasks])
                        && ctx.is_some()
                        && o.params.get("contextId").and_then(Value::as_str) == ctx.as_deref())
        };
        // Reading the task again, answering it, or canceling it all show the close was not
        // taken as the outcome.
        let followed = reqs.iter().any(|o| {
            o.seq > e.seq
                && (o.calls(&[Method::GetTask, Method::SubscribeToTask, Method::CancelTask])
                    && o.params.get("id").and_then(Value::as_str) == Some(tid.as_str())
                    || o.task_id() == Some(tid.as_str()))
                || recovered(o)
        });
        if !followed {
            return fail(
                format!("SubscribeToTask or GetTask for {tid} after the stream ended early"),
                "nothing",
                vec![e.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

/// DLG-OBS-01: every delegation and every fan-out child reached an outcome, and every task each
/// created was observed: its
/// final state reached the delegator before the `done` (stream, poll or push), or the delegator
/// canceled it or decided the outcome itself after observing it.
pub(in crate::rules) fn every_task_observed_until_final(ev: &Evidence) -> Check {
    let mut any = false;
    let reached = |id: &str| match ev.outcomes.get(id) {
        None => Err(fail(
            format!("{id} reaches an outcome"),
            "no outcome reported before the bound",
            vec![],
        )),
        // Declined with `unsupported`: nothing was left open by this delegator.
        Some(FromDelegator::Error(_)) => Ok(false),
        Some(_) => Ok(true),
    };
    // Every delegation reaches an outcome, a fan-out parent included.
    for d in &ev.scenario.delegations {
        any = true;
        if let Err(f) = reached(&d.id) {
            return f;
        }
    }
    // So does every unit of work (a fan-out's children each), and each of its tasks is observed.
    for w in works(ev) {
        let id = w.id;
        // A fan-out refused (or declined) as a whole started no children: only its parent
        // reports.
        if !matches!(reached(&w.delegation.id), Ok(true))
            || w.id != w.delegation.id && done_state(ev, &w.delegation.id) == Some(Outcome::Refused)
        {
            continue;
        }
        match reached(id) {
            Err(f) => return f,
            Ok(false) => continue,
            Ok(true) => {}
        }
        let tasks = tasks_of(ev, id);
        if tasks.is_empty() {
            // No task: a REFUSED, a direct answer, a send that failed; but a completion needs a
            // task at an agent.
            if done_state(ev, id) == Some(Outcome::Completed) {
                return fail(
                    format!("{id} reported COMPLETED only after a task for it existed at an agent"),
                    "no task was ever created for it",
                    vec![],
                );
            }
            continue;
        }
        for (t, _) in &tasks {
            if let Err(f) = super::state::observed_to_final(ev, id, t, false) {
                // An earlier task of the delegation (retried, refined, resumed) is fine as long
                // as it was read at least once; the last one is the delegation's.
                if Some(t) == tasks.last().map(|x| &x.0)
                    || delivered_between(ev.journal, t, 0, seen_until(ev, id)).is_none()
                {
                    return f;
                }
            }
        }
    }
    Check::held_if_seen(any)
}

/// DLG-OBS-03: artifacts are committed only from a task the agent completed (byte-exact checks
/// are DLG-ART-04's); chunks streamed into a delegation that did not complete are not reported.
/// Judged only where the journal shows chunks reached the delegator or artifacts were reported.
pub(in crate::rules) fn only_completed_work_committed(ev: &Evidence) -> Check {
    let mut any = false;
    for (id, d) in ev.outcomes {
        let FromDelegator::Done(done) = d else {
            continue;
        };
        let until = seen_until(ev, id);
        let tasks = tasks_of(ev, id);
        let streamed = tasks.iter().any(|(t, _)| {
            ev.journal.iter().any(|e| {
                matches!(&e.event, Event::ArtifactChunk { task_id, .. } if task_id == t)
                    && delivered_between(ev.journal, t, e.seq, until).is_some()
            })
        });
        let observed = tasks
            .iter()
            .any(|(t, _)| delivered_between(ev.journal, t, 0, until).is_some());
        if done.state != Outcome::Completed {
            if !streamed && !observed && done.artifacts.is_empty() {
                continue;
            }
            any = true;
            if !done.artifacts.is_empty() {
                return fail(
                    format!(
                        "{id}: no artifacts committed from a {} delegation",
                        done.state
                    ),
                    format!("{} artifacts reported", done.artifacts.len()),
                    vec![],
                );
            }
            continue;
        }
        if done.artifacts.is_empty() && !streamed {
            continue;
        }
        any = true;
        // A fan-out parent commits what its children's tasks delivered.
        let parent = ev
            .scenario
            .delegations
            .iter()
            .all(|d| d.id != *id || !d.children.is_empty());
        let all: Vec<(String, String)> = if parent {
            ev.journal
                .iter()
                .filter_map(|e| match &e.event {
                    Event::TaskCreated { task_id, .. } => {
                        Some((task_id.clone(), e.agent.to_string()))
                    }
                    _ => None,
                })
                .collect()
        } else {
            tasks.clone()
        };
        let completed: Vec<&String> = all
            .iter()
            .map(|(t, _)| t)
            .filter(|t| {
                terminal_truth(ev.journal, t).is_some_and(|(s, at)| s == "COMPLETED" && at <= until)
            })
            .collect();
        for a in &done.artifacts {
            let from_completed = completed
                .iter()
                .any(|t| artifact_truth(ev.journal, t).contains_key(a.artifact_id.as_str()));
            if !from_completed {
                return fail(
                    format!(
                        "{id}: artifact {} committed only as delivered by a completed task",
                        a.artifact_id
                    ),
                    "no completed task of the delegation delivered it",
                    vec![],
                );
            }
        }
    }
    Check::held_if_seen(any)
}

pub(in crate::rules) fn forged_push_rejected(ev: &Evidence) -> Check {
    if !ev.scenario.forge_push {
        return Check::NotApplicable;
    }
    if ev.forged_pushes.is_empty() {
        // The harness forges only once the delegator gave an agent a push config.
        let configs: Vec<u64> = requests(ev.journal)
            .iter()
            .filter(|r| {
                r.params
                    .pointer("/configuration/taskPushNotificationConfig")
                    .or_else(|| r.params.pointer("/configuration/pushNotificationConfig"))
                    .or_else(|| r.params.get("pushNotificationConfig"))
                    .is_some_and(|v| !v.is_null())
            })
            .map(|r| r.seq)
            .collect();
        if let Some(k) = ev.crash_seq
            && !configs.is_empty()
            && configs.iter().all(|seq| *seq <= k)
        {
            // The only webhook configured was the killed process's, gone with it.
            return Check::NotExercised {
                why: format!(
                    "every push config was given before the delegator was killed (after journal \
                     entry {k}); its webhook died with it and the restarted process configured none"
                ),
            };
        }
        return if !configs.is_empty() {
            fail(
                "a forged push notification delivered to the webhook of the push config",
                "the webhook was never reached",
                vec![],
            )
        } else {
            Check::NotExercised {
                why: "the delegator configured no push notifications (it streamed or polled)"
                    .into(),
            }
        };
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
