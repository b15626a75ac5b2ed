//! Observation (DLG-OBS-*): early stream ends, committed results, forged pushes, polling rate.

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

pub(super) fn early_stream_end_followed_up(ev: &Evidence) -> Check {
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

/// DLG-OBS-01: every delegation reached an outcome, and every task it created was observed: its
/// final state reached the delegator before the `done` (stream, poll or push), or the delegator
/// canceled it or decided the outcome itself after observing it.
pub(super) fn every_task_observed_until_final(ev: &Evidence) -> Check {
    let mut any = false;
    for d in &ev.scenario.delegations {
        any = true;
        match ev.outcomes.get(&d.id) {
            None => {
                return fail(
                    format!("{} reaches an outcome", d.id),
                    "no outcome reported before the bound",
                    vec![],
                );
            }
            // Declined with `unsupported`: nothing was left open by this delegator.
            Some(FromDelegator::Error(_)) => continue,
            Some(_) => {}
        }
        let tasks = tasks_of(ev, &d.id);
        if tasks.is_empty() {
            // No task: a REFUSED, a direct answer, a fan-out parent, a send that failed; but a
            // completion needs a task at an agent.
            if done_state(ev, &d.id) == Some(Outcome::Completed) && d.children.is_empty() {
                return fail(
                    format!(
                        "{} reported COMPLETED only after a task for it existed at an agent",
                        d.id
                    ),
                    "no task was ever created for it",
                    vec![],
                );
            }
            continue;
        }
        for (t, _) in &tasks {
            if let Err(f) = super::state::observed_to_final(ev, &d.id, t, false) {
                // An earlier task of the delegation (retried, refined, resumed) is fine as long
                // as it was read at least once; the last one is the delegation's.
                if Some(t) == tasks.last().map(|x| &x.0)
                    || delivered_between(ev.journal, t, 0, seen_until(ev, &d.id)).is_none()
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
pub(super) fn only_completed_work_committed(ev: &Evidence) -> Check {
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

pub(super) fn forged_push_rejected(ev: &Evidence) -> Check {
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

/// DLG-OBS-05: polling backs off. A GetTask that a push notification prompted is not polling:
/// each push the delegator's webhook accepted (2xx) for a task licenses one read of that task,
/// matched to the GetTask nearest in time (the agent journals a push after the webhook answered,
/// so the read it prompts may come before or after that entry). Pushes are the agent's pace,
/// not the delegator's; the remaining GetTasks are polls and are judged by their rate.
pub(super) fn polling_backs_off(ev: &Evidence) -> Check {
    let mut per_task: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut pushes: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for e in ev.journal {
        match &e.event {
            Event::Request {
                method: Some(m),
                params,
                ..
            } if v1_method(m) == Some(Method::GetTask) => {
                if let Some(t) = params.get("id").and_then(Value::as_str) {
                    per_task.entry(t).or_default().push(e.at_us);
                }
            }
            Event::Push {
                task_id,
                status: Some(200..=299),
                ..
            } => pushes.entry(task_id.as_str()).or_default().push(e.at_us),
            _ => {}
        }
    }
    for (t, times) in per_task.iter_mut() {
        for p in pushes.get(t).into_iter().flatten() {
            if let Some(i) = (0..times.len()).min_by_key(|&i| times[i].abs_diff(*p)) {
                times.swap_remove(i);
            }
        }
    }
    per_task.retain(|_, times| !times.is_empty());
    if per_task.is_empty() {
        // Observed by a stream or push instead of polling: another correct path.
        let observed = ev.journal.iter().any(|e| {
            matches!(
                &e.event,
                Event::SseEvent { .. }
                    | Event::Push {
                        status: Some(200..=299),
                        ..
                    }
            )
        });
        return if observed {
            Check::NotExercised {
                why: "the delegator observed its tasks by streaming or push, not by polling".into(),
            }
        } else {
            Check::NotApplicable
        };
    }
    for (t, mut times) in per_task {
        // A handful of polls is not hammering, whatever their spacing.
        if times.len() < 8 {
            continue;
        }
        times.sort_unstable();
        let span_s = times[times.len() - 1].saturating_sub(times[0]) as f64 / 1e6;
        let rate = times.len() as f64 / span_s.max(0.001);
        // Only the rate is judged: a delegator may legitimately read the task at once when a
        // stream event wakes it, so single short gaps are fine.
        if rate > 50.0 {
            return fail(
                format!("GetTask on {t} backs off (at most 50 polls/s)"),
                format!("{} polls at {rate:.0}/s", times.len()),
                vec![],
            );
        }
    }
    Check::Pass
}

#[cfg(test)]
mod tests {
    use super::super::registry::Check;
    use crate::rules::test_support::*;
    use a2a_mock_agents::Event;
    use serde_json::json;

    #[test]
    fn obs_02_stream_end_taken_as_outcome() {
        let mut c = Case::new(&delegation(""));
        let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.created("a", "t1", "c1", "m1", false);
        c.j.state("a", "t1", "TASK_STATE_WORKING");
        c.j.push(
            "a",
            Event::StreamClosed {
                req: r,
                events: 2,
                reason: "fault".into(),
            },
        );
        assert!(fails(c.check(checker("DLG-OBS-02"))));
        c.j.rpc("a", "SubscribeToTask", json!({"id": "t1"}), &[]);
        assert_eq!(c.check(checker("DLG-OBS-02")), Check::Pass);
    }

    #[test]
    fn obs_02_a_stream_of_the_killed_process_is_followed_up_by_recovery() {
        let stream_case = || {
            let mut c = Case::new(&delegation(""));
            let (_, r) = c.j.send("a", "m1", "do the thing", json!({}));
            let created = c.j.created("a", "t1", "c1", "m1", false);
            c.crash = Some(created);
            c.j.state("a", "t1", "TASK_STATE_WORKING");
            c.j.push(
                "a",
                Event::StreamClosed {
                    req: r,
                    events: 2,
                    reason: "fault".into(),
                },
            );
            c
        };
        // The restarted process resends the same messageId: the agent's task again.
        let mut c = stream_case();
        assert!(fails(c.check(checker("DLG-OBS-02"))), "no follow-up at all");
        c.j.send("a", "m1", "do the thing", json!({}));
        assert_eq!(c.check(checker("DLG-OBS-02")), Check::Pass);
        // Or lists the tasks of its context.
        let mut c = stream_case();
        c.j.rpc("a", "ListTasks", json!({"contextId": "c1"}), &[]);
        assert_eq!(c.check(checker("DLG-OBS-02")), Check::Pass);
        // A send with another messageId is new work, not a follow-up.
        let mut c = stream_case();
        c.j.send("a", "m9", "do the thing", json!({}));
        assert!(fails(c.check(checker("DLG-OBS-02"))));
        // Without a crash a resend does not replace reading the task.
        let mut c = stream_case();
        c.crash = None;
        c.j.send("a", "m1", "do the thing", json!({}));
        assert!(fails(c.check(checker("DLG-OBS-02"))));
    }

    #[test]
    fn obs_03_an_empty_journal_shows_nothing() {
        let mut c = Case::new(&delegation(""));
        c.done("d1", "FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-OBS-03")), Check::NotApplicable);
        c.done(
            "d1",
            "COMPLETED",
            json!([{"artifact_id": "artifact-1", "bytes": 3, "sha256": "x"}]),
        );
        assert!(
            fails(c.check(checker("DLG-OBS-03"))),
            "fabricated artifacts"
        );
    }

    #[test]
    fn obs_01_a_declined_delegation_has_an_outcome() {
        let mut c = Case::new(&delegation(""));
        assert!(fails(c.check(checker("DLG-OBS-01"))));
        c.outcomes.insert(
            "d1".into(),
            a2a_driver_contract::FromDelegator::Error(a2a_driver_contract::ErrorReply {
                id: Some("d1".into()),
                code: a2a_driver_contract::DriverErrorCode::Unsupported,
                message: "0.3 agents are not supported".into(),
            }),
        );
        assert_eq!(c.check(checker("DLG-OBS-01")), Check::Pass);
    }

    #[test]
    fn obs_03_artifacts_committed_from_a_failed_task() {
        let mut c = good("");
        c.done("d1", "FAILED", json!([{"artifact_id": "artifact-1"}]));
        assert!(fails(c.check(checker("DLG-OBS-03"))));
    }

    #[test]
    fn obs_05_polling_hammers() {
        let mut c = good("");
        for i in 0..40 {
            let (seq, _) = c.j.rpc("a", "GetTask", json!({"id": "t9"}), &[]);
            c.j.at(seq, 1_000_000 + i * 1000);
        }
        assert!(fails(c.check(checker("DLG-OBS-05"))));
    }

    #[test]
    fn obs_04_forged_push_believed() {
        let mut c = good("expect = { state = [\"COMPLETED\"] }");
        c.s.forge_push = true;
        assert!(
            matches!(c.check(checker("DLG-OBS-04")), Check::NotExercised { .. }),
            "no push config: nothing to forge"
        );
        c.j.send(
            "a",
            "m2",
            "do the thing",
            json!({"configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:1/h"}}}),
        );
        assert!(fails(c.check(checker("DLG-OBS-04"))), "never delivered");
        c.forged.push(401);
        assert_eq!(c.check(checker("DLG-OBS-04")), Check::Pass);
        c.done("d1", "FAILED", json!([]));
        assert!(
            fails(c.check(checker("DLG-OBS-04"))),
            "the forged FAILED was believed"
        );
    }

    #[test]
    fn obs_04_only_the_killed_process_configured_push() {
        let mut c = good("expect = { state = [\"COMPLETED\"] }");
        c.s.forge_push = true;
        let (seq, _) = c.j.send(
            "a",
            "m2",
            "do the thing",
            json!({"configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:1/h"}}}),
        );
        // Killed after it configured its webhook: nothing could reach the dead webhook.
        c.crash = Some(seq);
        assert!(
            matches!(c.check(checker("DLG-OBS-04")), Check::NotExercised { .. }),
            "{:?}",
            c.check(checker("DLG-OBS-04"))
        );
        // The restarted process configured its own webhook: the forge must reach it.
        c.j.send(
            "a",
            "m2",
            "do the thing",
            json!({"configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:2/h"}}}),
        );
        assert!(fails(c.check(checker("DLG-OBS-04"))), "never delivered");
        c.forged.push(401);
        assert_eq!(c.check(checker("DLG-OBS-04")), Check::Pass);
    }

    #[test]
    fn obs_04_forged_push_accepted_with_2xx() {
        let mut c = good("expect = { state = [\"COMPLETED\"] }");
        c.s.forge_push = true;
        c.forged.push(204);
        assert!(fails(c.check(checker("DLG-OBS-04"))));
    }

    #[test]
    fn obs_05_push_instead_of_polling_is_not_exercised() {
        let mut c = Case::new(&delegation(""));
        c.j.push(
            "a",
            Event::Push {
                task_id: "t1".into(),
                url: "http://127.0.0.1:1/a2a-webhook/d1".into(),
                status: Some(200),
                error: None,
            },
        );
        assert!(matches!(
            c.check(checker("DLG-OBS-05")),
            Check::NotExercised { .. }
        ));
    }

    /// `n` pushes accepted for t1, each followed 1 ms later by a GetTask of t1, 10 ms apart;
    /// then `polls` GetTasks 1 ms apart.
    fn push_prompted_reads(n: u64, polls: u64) -> Case {
        let mut c = Case::new(&delegation(""));
        let get = |c: &mut Case, at: u64| {
            let (s, _) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
            c.j.at(s, at);
        };
        for i in 0..n {
            let s = c.j.push(
                "a",
                Event::Push {
                    task_id: "t1".into(),
                    url: "http://127.0.0.1:1/a2a-webhook/d1".into(),
                    status: Some(200),
                    error: None,
                },
            );
            c.j.at(s, i * 10_000);
            get(&mut c, i * 10_000 + 1_000);
        }
        for i in 0..polls {
            get(&mut c, n * 10_000 + i * 1_000);
        }
        c
    }

    #[test]
    fn obs_05_reads_prompted_by_pushes_are_not_polling() {
        // 17 pushes at 100/s, each read at once: the agent's pace, not hammering.
        let c = push_prompted_reads(17, 0);
        assert!(!fails(c.check(checker("DLG-OBS-05"))));
        // The same pushes plus 10 polls at 1000/s: hammering all the same.
        let c = push_prompted_reads(17, 10);
        assert!(fails(c.check(checker("DLG-OBS-05"))));
    }
}
