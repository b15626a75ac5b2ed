//! DLG-OBS-05: a delegator polling a task backs off while nothing changes (quiet stretches of
//! the task measured in its first polling interval).

use super::*;

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
pub(in crate::rules) fn polling_backs_off(ev: &Evidence) -> Check {
    let p_us = crate::rules::retry::option_ms(ev, "poll_interval_ms", DEFAULT_POLL_INTERVAL_MS)
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
                    crate::rules::words::list(intervals)
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
