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

/// DLG-OBS-01: every delegation and every fan-out child reached an outcome, and every task each
/// created was observed: its
/// final state reached the delegator before the `done` (stream, poll or push), or the delegator
/// canceled it or decided the outcome itself after observing it.
pub(super) fn every_task_observed_until_final(ev: &Evidence) -> Check {
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

/// The `poll_interval_ms` the harness gives a delegator unless the scenario overrides it: its
/// first polling interval, the unit DLG-OBS-05 measures backing off in.
pub const DEFAULT_POLL_INTERVAL_MS: u64 = 50;

/// DLG-OBS-05 judges a quiet stretch once it lasted this many first polling intervals from its
/// first poll, and looks at the polls after [`LATE_AFTER_INTERVALS`] of them.
const QUIET_INTERVALS: u64 = 20;
/// Where the late part of a quiet stretch begins, in first polling intervals after its first poll:
/// by then any backoff has slowed down (a poller doubling from the first interval has made at
/// least four polls, since 1+2+4 < 10).
const LATE_AFTER_INTERVALS: u64 = 10;
/// The late polls of a stretch are on average at least this many first polling intervals
/// apart: a poller backing off ×1.5 is past 3 by then, one doubling past 8 (with full jitter,
/// 4 on average), and a cap of three intervals or more keeps it there.
const SLOWED_INTERVALS: u64 = 3;
/// Polls the late part may hold beyond its length over [`SLOWED_INTERVALS`] first intervals (the
/// count of a poller exactly at that pace, plus one at each end).
const LATE_SLACK: u64 = 2;

/// What changes a task (it ends a quiet stretch): a state, a continuation, an artifact, a
/// purge, a delegation, its creation.
fn task_changed(e: &Event) -> Option<(&str, Option<&str>)> {
    match e {
        Event::TaskState { task_id, state } => Some((task_id, Some(state))),
        Event::TaskCreated { task_id, .. }
        | Event::Continued { task_id, .. }
        | Event::ArtifactChunk { task_id, .. }
        | Event::ArtifactSent { task_id, .. }
        | Event::TaskPurged { task_id }
        | Event::Delegated { task_id, .. } => Some((task_id, None)),
        _ => None,
    }
}

/// One quiet stretch of a task judged by DLG-OBS-05: the polls (µs) in it, from its first, and
/// its end (µs).
struct Quiet<'a> {
    task: &'a str,
    /// (seq, µs) of each poll.
    polls: Vec<(u64, u64)>,
    end_us: u64,
}

/// DLG-OBS-05: polling backs off. A GetTask that a push notification prompted is not polling:
/// each push the delegator's webhook accepted (2xx) for a task licenses one read of that task,
/// matched to the GetTask nearest in time (the agent journals a push after the webhook answered,
/// so the read it prompts may come before or after that entry). Pushes are the agent's pace,
/// not the delegator's; the remaining GetTasks are polls.
///
/// Backing off is judged where it must show: in a *quiet stretch* of a task (no state change,
/// continuation, artifact or other change at the agent; the task not final; one process life)
/// that the delegator polled at least twice and that lasted [`QUIET_INTERVALS`] first polling
/// intervals P (`poll_interval_ms`) from its first poll. Its polls after the first
/// [`LATE_AFTER_INTERVALS`]·P are the late ones: a poller that backs off (exponentially, in steps,
/// with any jitter, up to a cap of at least [`SLOWED_INTERVALS`]·P) is by then polling that far
/// apart on average, so more late polls than the late part's length over
/// [`SLOWED_INTERVALS`]·P (plus [`LATE_SLACK`]) are a poller that never slowed down (FAIL). A
/// count, not single intervals: one delayed poll does not hide a constant poller, and one short
/// jittered interval does not fail a backing-off one. Polls are timed by their arrival at the
/// agent, so load only spreads them: it can hide a constant poller, never fail a backing-off
/// one. Few polls, a stretch polled slowly, push-driven observation with a slow reconciliation
/// poll all PASS. A backoff that restarts at a change is fine (the stretch starts at the
/// change); a cap below three first intervals is not backing off. Apart from stretches, a burst
/// of eight or more polls above 50/s of one task fails too. Observation by stream or push alone
/// (no polls) is NOT EXERCISED.
pub(super) fn polling_backs_off(ev: &Evidence) -> Check {
    let p_us = super::retry::option_ms(ev, "poll_interval_ms", DEFAULT_POLL_INTERVAL_MS)
        .max(1)
        .saturating_mul(1000);
    // Per task, its polls as (seq, µs).
    let mut per_task: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
    let mut pushes: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for e in ev.journal {
        match &e.event {
            Event::Request {
                method: Some(m),
                params,
                ..
            } if v1_method(m) == Some(Method::GetTask) => {
                if let Some(t) = params.get("id").and_then(Value::as_str) {
                    per_task.entry(t).or_default().push((e.seq, e.at_us));
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
    for (t, polls) in per_task.iter_mut() {
        for p in pushes.get(t).into_iter().flatten() {
            if let Some(i) = (0..polls.len()).min_by_key(|&i| polls[i].1.abs_diff(*p)) {
                polls.remove(i);
            }
        }
    }
    per_task.retain(|_, polls| !polls.is_empty());
    let observed_otherwise = ev.journal.iter().any(|e| {
        matches!(
            &e.event,
            Event::SseEvent { .. }
                | Event::Push {
                    status: Some(200..=299),
                    ..
                }
        )
    });
    if per_task.is_empty() {
        // Observed by a stream or push instead of polling: another correct path.
        return if observed_otherwise {
            Check::NotExercised {
                why: "the delegator observed its tasks by streaming or push, not by polling".into(),
            }
        } else {
            Check::NotApplicable
        };
    }
    for (t, polls) in &per_task {
        // A handful of polls is not hammering, whatever their spacing.
        if polls.len() < 8 {
            continue;
        }
        let mut times: Vec<u64> = polls.iter().map(|p| p.1).collect();
        times.sort_unstable();
        let span_s = times[times.len() - 1].saturating_sub(times[0]) as f64 / 1e6;
        let rate = times.len() as f64 / span_s.max(0.001);
        // A delegator may legitimately read the task at once when a stream event wakes it, so
        // single short gaps are fine; a burst is not.
        if rate > 50.0 {
            return fail(
                format!("GetTask on {t} backs off (at most 50 polls/s)"),
                format!("{} polls at {rate:.0}/s", times.len()),
                polls.iter().map(|p| p.0).take(8).collect(),
            );
        }
    }
    let stretches = quiet_stretches(ev, &per_task, p_us);
    if stretches.is_empty() {
        return if observed_otherwise {
            Check::NotExercised {
                why: format!(
                    "no task was polled through a quiet stretch of {QUIET_INTERVALS} polling intervals: the delegator observed by streaming or push"
                ),
            }
        } else {
            Check::NotApplicable
        };
    }
    for q in &stretches {
        let first = q.polls[0].1;
        let late_from = first + LATE_AFTER_INTERVALS * p_us;
        let late: Vec<(u64, u64)> = q
            .polls
            .iter()
            .copied()
            .filter(|p| p.1 >= late_from)
            .collect();
        let length = q.end_us.saturating_sub(late_from);
        let allowed = length / (SLOWED_INTERVALS * p_us) + LATE_SLACK;
        if late.len() as u64 > allowed {
            let ms = |us: u64| us / 1000;
            let intervals = late.windows(2).map(|w| ms(w[1].1.saturating_sub(w[0].1)));
            return fail(
                format!(
                    "polling {} backs off while nothing changes: after {} ms of a quiet stretch, polls on average at least {} ms apart (three first polling intervals), at most {allowed} in its last {} ms",
                    q.task,
                    ms(LATE_AFTER_INTERVALS * p_us),
                    ms(SLOWED_INTERVALS * p_us),
                    ms(length)
                ),
                format!(
                    "{} polls in those {} ms (of {} over {} ms of no change), intervals {} ms",
                    late.len(),
                    ms(length),
                    q.polls.len(),
                    ms(q.end_us.saturating_sub(first)),
                    super::words::list(intervals)
                ),
                late.iter().map(|p| p.0).take(8).collect(),
            );
        }
    }
    Check::Pass
}

/// The quiet stretches of the polled tasks that DLG-OBS-05 judges (see [`polling_backs_off`]):
/// each at least [`QUIET_INTERVALS`]·P long from its first poll, with two polls or more.
fn quiet_stretches<'a>(
    ev: &Evidence,
    per_task: &BTreeMap<&'a str, Vec<(u64, u64)>>,
    p_us: u64,
) -> Vec<Quiet<'a>> {
    let last_us = ev.journal.iter().map(|e| e.at_us).max().unwrap_or(0);
    let mut out = Vec::new();
    for (task, polls) in per_task {
        // The boundaries of its stretches: (seq, µs, state after it is final).
        let mut bounds: Vec<(u64, u64, bool)> = Vec::new();
        let mut terminal = false;
        for e in ev.journal {
            if let Some((t, state)) = task_changed(&e.event)
                && t == *task
            {
                if let Some(s) = state {
                    terminal =
                        a2a_protocol::TaskState::parse_lenient(s).is_some_and(|s| s.is_terminal());
                }
                bounds.push((e.seq, e.at_us, terminal));
            }
            if ev.crash_seq == Some(e.seq) {
                // A new process life: its polling starts over.
                bounds.push((e.seq, e.at_us, terminal));
            }
        }
        // Stretch k runs from bound k (or the journal's start) to bound k+1 (or its end).
        let mut starts: Vec<(u64, bool)> = vec![(0, false)];
        starts.extend(bounds.iter().map(|b| (b.0, b.2)));
        for (k, &(from_seq, final_state)) in starts.iter().enumerate() {
            if final_state {
                continue;
            }
            let (to_seq, end_us) = bounds.get(k).map_or((u64::MAX, last_us), |b| (b.0, b.1));
            let in_it: Vec<(u64, u64)> = polls
                .iter()
                .filter(|(seq, _)| *seq > from_seq && *seq < to_seq)
                .copied()
                .collect();
            if in_it.len() < 2 || end_us.saturating_sub(in_it[0].1) < QUIET_INTERVALS * p_us {
                continue;
            }
            out.push(Quiet {
                task,
                polls: in_it,
                end_us,
            });
        }
    }
    out
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

    /// Task t1 WORKING from time 0 (ms) until `end_ms`, then COMPLETED; a GetTask of t1 at each
    /// time of `polls` (ms), and the state changes of `changes` (ms, WORKING again) between.
    fn polled(polls: &[u64], changes: &[u64], end_ms: u64) -> Case {
        let mut c = Case::new(&delegation(""));
        let (s, r) = c.j.send("a", "m1", "do the thing", json!({}));
        c.j.at(s, 0);
        let s = c.j.created("a", "t1", "c1", "m1", false);
        c.j.at(s, 0);
        let s =
            c.j.resp("a", r, 200, None, json!({"result": {"task": {"id": "t1"}}}));
        c.j.at(s, 0);
        let s = c.j.state("a", "t1", "TASK_STATE_WORKING");
        c.j.at(s, 0);
        let mut events: Vec<(u64, bool)> = polls.iter().map(|p| (*p, true)).collect();
        events.extend(changes.iter().map(|c| (*c, false)));
        events.push((end_ms, false));
        events.sort();
        let n = events.len();
        for (i, (ms, poll)) in events.into_iter().enumerate() {
            let s = if poll {
                c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]).0
            } else if i + 1 == n {
                c.j.state("a", "t1", "TASK_STATE_COMPLETED")
            } else {
                c.j.state("a", "t1", "TASK_STATE_WORKING")
            };
            c.j.at(s, ms * 1000);
        }
        c
    }

    /// Poll times (ms) from `first`, each interval from `interval(i)` (the i-th, from 0), until
    /// `until`.
    fn schedule(first: u64, until: u64, interval: impl Fn(usize) -> u64) -> Vec<u64> {
        let mut t = first;
        let mut v = Vec::new();
        let mut i = 0;
        while t < until {
            v.push(t);
            t += interval(i).max(1);
            i += 1;
        }
        v
    }

    /// A deterministic stand-in for jitter: the i-th value of a fixed uniform sequence in [0, 1).
    fn u(i: usize) -> f64 {
        ((i as u64).wrapping_mul(2654435761) % 1000) as f64 / 1000.0
    }

    fn obs05(c: &Case) -> Check {
        c.check(checker("DLG-OBS-05"))
    }

    #[test]
    fn obs_05_a_constant_poller_over_a_long_quiet_stretch_fails() {
        // P = 50 ms: a poller that never slows down (about 20 polls/s, under the 50/s burst cap).
        let c = polled(&schedule(50, 1500, |_| 50), &[], 1500);
        assert!(fails(obs05(&c)), "{:?}", obs05(&c));
        // Constant at 2·P: never three first intervals apart.
        let c = polled(&schedule(50, 2000, |_| 100), &[], 2000);
        assert!(fails(obs05(&c)), "{:?}", obs05(&c));
        // Constant, under load: intervals of 50-90 ms, a few delayed to 300 ms.
        let c = polled(
            &schedule(50, 2000, |i| {
                if i % 7 == 3 {
                    300
                } else {
                    50 + (u(i) * 40.0) as u64
                }
            }),
            &[],
            2000,
        );
        assert!(fails(obs05(&c)), "{:?}", obs05(&c));
    }

    #[test]
    fn obs_05_backing_off_passes_whatever_the_schedule() {
        let cases: Vec<(&str, Vec<u64>)> = vec![
            // ×1.5 up to 10·P, as the reference delegator.
            (
                "exponential ×1.5, capped",
                schedule(50, 3000, |i| {
                    (50.0 * 1.5f64.powi(i as i32)).min(500.0) as u64
                }),
            ),
            // ×2 with equal jitter.
            (
                "exponential ×2, equal jitter",
                schedule(50, 3000, |i| {
                    let e = (50u64 << i.min(10)).min(1000) as f64;
                    (e / 2.0 + u(i) * e / 2.0) as u64
                }),
            ),
            // ×2 with full jitter: each interval anywhere in [0, E].
            (
                "exponential ×2, full jitter",
                schedule(50, 3000, |i| {
                    let e = (50u64 << i.min(10)).min(1000) as f64;
                    (u(i + 7) * e) as u64
                }),
            ),
            // Ten polls at P, then every 5·P.
            (
                "stepped",
                schedule(50, 3000, |i| if i < 10 { 50 } else { 250 }),
            ),
            // A capped backoff that reached its cap (500 ms) before this stretch.
            ("at its cap", schedule(300, 3000, |_| 500)),
            // A constant poll three first intervals apart or slower.
            ("constant at 3·P", schedule(50, 3000, |_| 150)),
            // A slow reconciliation poll (push does the rest).
            ("slow reconciliation", vec![900, 2400]),
            // Under load the first intervals came late: it still slows down.
            (
                "exponential, early polls delayed",
                schedule(50, 3000, |i| {
                    if i < 3 {
                        300
                    } else {
                        (50.0 * 1.5f64.powi(i as i32)).min(500.0) as u64
                    }
                }),
            ),
        ];
        for (name, polls) in cases {
            let c = polled(&polls, &[], 3000);
            assert_eq!(obs05(&c), Check::Pass, "{name}: {polls:?}");
        }
    }

    #[test]
    fn obs_05_jittered_backoffs_pass_run_after_run() {
        use rand::{RngExt, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for run in 0..300 {
            // Doubling from P up to 10·P, full jitter (anywhere in [0, E]) or equal jitter, plus
            // 0-40 ms of the machine; 3 s without a change.
            let full = run % 2 == 0;
            let mut polls = Vec::new();
            let (mut t, mut e) = (50.0f64, 50.0f64);
            while t < 3000.0 {
                polls.push(t as u64);
                let sleep = if full {
                    rng.random_range(0.0..=e)
                } else {
                    e / 2.0 + rng.random_range(0.0..=e / 2.0)
                };
                t += sleep + rng.random_range(1.0..=40.0);
                e = (e * 2.0).min(500.0);
            }
            let c = polled(&polls, &[], 3000);
            assert_eq!(obs05(&c), Check::Pass, "run {run}: {polls:?}");
        }
    }

    #[test]
    fn obs_05_a_backoff_that_restarts_at_each_change_passes() {
        // The task changes at 1000 and 2500 ms; the poller starts over from P at each change it
        // sees and backs off ×1.5 in between.
        let backoff = |from: u64, until: u64| {
            schedule(from, until, |i| {
                (50.0 * 1.5f64.powi(i as i32)).min(500.0) as u64
            })
        };
        let mut polls = backoff(50, 1000);
        polls.extend(backoff(1010, 2500));
        polls.extend(backoff(2510, 4500));
        let c = polled(&polls, &[1000, 2500], 4500);
        assert_eq!(obs05(&c), Check::Pass);
        // The same constant poller with changes every 300 ms: no stretch long enough to judge.
        let changes: Vec<u64> = (1..10).map(|k| k * 300).collect();
        let c = polled(&schedule(50, 3000, |_| 50), &changes, 3000);
        assert_eq!(obs05(&c), Check::NotApplicable);
    }

    #[test]
    fn obs_05_a_short_wait_is_not_judged() {
        // 600 ms of constant polling: under 20 first intervals, nothing shows yet.
        let c = polled(&schedule(50, 600, |_| 50), &[], 600);
        assert_eq!(obs05(&c), Check::NotApplicable);
        // The polls of a final task are not a running task's polling.
        let mut c = polled(&[20], &[], 40);
        for t in schedule(100, 2000, |_| 50) {
            let (s, _) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
            c.j.at(s, t * 1000);
        }
        assert_eq!(obs05(&c), Check::NotApplicable);
    }

    #[test]
    fn obs_05_a_restart_starts_a_new_stretch() {
        // Constant polling from 50 to 700 ms, killed, then a backing-off process: the killed
        // process's stretch was too short, the new one backs off.
        let mut polls = schedule(50, 700, |_| 50);
        polls.extend(schedule(800, 2500, |i| {
            (50.0 * 1.5f64.powi(i as i32)).min(500.0) as u64
        }));
        let mut c = polled(&polls, &[], 2500);
        let kill =
            c.j.entries
                .iter()
                .find(|e| e.at_us == 650_000)
                .map(|e| e.seq);
        c.crash = kill;
        assert_eq!(obs05(&c), Check::Pass);
        // Without the kill it is one stretch whose late part (from 550 ms) begins with 50 ms
        // polls, but it slowed down after: still a PASS.
        c.crash = None;
        assert_eq!(obs05(&c), Check::Pass);
    }

    #[test]
    fn obs_05_push_driven_observation_passes_or_is_not_exercised() {
        // Pushes prompt the reads; a reconciliation poll twice in 2.5 s.
        let mut c = polled(&[1000, 2400], &[], 2500);
        for at in [300u64, 600, 900] {
            let s = c.j.push(
                "a",
                Event::Push {
                    task_id: "t1".into(),
                    url: "http://127.0.0.1:1/a2a-webhook/d1".into(),
                    status: Some(200),
                    error: None,
                },
            );
            c.j.at(s, at * 1000);
            let (s, _) = c.j.rpc("a", "GetTask", json!({"id": "t1"}), &[]);
            c.j.at(s, at * 1000 + 1000);
        }
        assert_eq!(obs05(&c), Check::Pass);
        // Pushes alone, one reconciliation poll: polling did not happen to judge.
        let mut c = polled(&[1000], &[], 2500);
        let s = c.j.push(
            "a",
            Event::Push {
                task_id: "t1".into(),
                url: "http://127.0.0.1:1/a2a-webhook/d1".into(),
                status: Some(200),
                error: None,
            },
        );
        c.j.at(s, 300_000);
        assert!(
            matches!(obs05(&c), Check::NotExercised { .. }),
            "{:?}",
            obs05(&c)
        );
    }
}
