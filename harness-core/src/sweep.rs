//! The crash sweep (`run --crash-sweep`): each selected case once clean, to learn how long its
//! journal is, then once per journal position k with its crash replaced by `at_event = k`
//! (SIGKILL when entry k is recorded, restart on the same store with `recovering: true`). Every
//! position is a result of its own (`<case id>@event<k>`), judged by the case's rules and the
//! [history invariants](crate::invariants).
//!
//! The positions swept are 1..=N, N being the last journal sequence of the clean run that every
//! run is certain to record before the harness has every outcome (see [`sweep_length`]): a kill
//! after the last outcome lands when there is nothing left to recover (the harness has stopped
//! taking in and only asks for the snapshot), so it would test the shutdown, not recovery, and
//! a position in the race with that outcome would be killed in some runs and not in others. A
//! run whose journal never reaches k (the delegator took another path, or its timing one poll
//! fewer) has no kill: the position is run again, [`POSITION_RUNS`] runs at most, and is NOT
//! EXERCISED only when none reached it; its notes say so.

use crate::catalog::CaseGlob;
use crate::invariants;
use crate::run::{Job, Progress, run_jobs};
use crate::runner::{CaseResult, RunSettings, Verdict, apply_known_failing};
use crate::scenario::{Crash, Scenario};
use a2a_driver_contract::FromDelegator;
use a2a_mock_agents::{Entry, Event};
use a2a_protocol::TaskState;
use rand::{RngExt, SeedableRng};
use serde_json::Value;
use std::collections::BTreeMap;
use std::num::NonZeroU64;
use std::path::PathBuf;
use std::time::Instant;

/// Positions swept per case by default: enough for every position of every recovery case of
/// the catalog (their clean journals are 13 to 33 entries long; the six sweep exhaustively in
/// 124 runs, about 30 s on two cores), while a long case (a large stream, a retry storm, a
/// fan-out) is sampled instead of costing one run per chunk: a position that breaks recovery
/// waits out the case's time bound, so 40 of them is already minutes.
pub const DEFAULT_SWEEP_MAX: u64 = 40;

/// How to sweep.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// The delegator command.
    pub delegator: String,
    /// The seed of every run (so that the swept runs replay the clean run's network) and of
    /// the sampling of positions.
    pub seed: u64,
    /// Runs at once (at least 1).
    pub jobs: usize,
    /// At most this many positions per case; a longer case is sampled (first and last kept).
    pub max_positions: u64,
    /// Known-failing cases (globs match the case id or the position's result id).
    pub known_failing: Vec<CaseGlob>,
    /// Where per-run stores go.
    pub work_dir: PathBuf,
}

/// The positions chosen for one case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CasePlan {
    /// The case.
    pub id: String,
    /// N: the clean run's last journal sequence certain to come before every outcome (its
    /// last sequence when some delegation had none); see [`sweep_length`].
    pub length: u64,
    /// The verdict of the clean run, in words.
    pub clean_verdict: String,
    /// The positions run, ascending.
    pub positions: Vec<u64>,
    /// True when `positions` is a sample of 1..=N (N over the maximum).
    pub sampled: bool,
}

/// The results of a sweep.
#[derive(Debug, Clone)]
pub struct SweepReport {
    /// One plan per case, in case order.
    pub plans: Vec<CasePlan>,
    /// One result per position (`<case id>@event<k>`), in case and position order; a case
    /// whose clean run recorded no journal entry has its clean run's result instead.
    pub results: Vec<CaseResult>,
    /// Wall time of the whole sweep.
    pub wall_ms: u64,
    /// The seed.
    pub seed: u64,
}

/// The result id of position `k` of case `id`.
pub fn position_id(id: &str, k: u64) -> String {
    format!("{id}@event{k}")
}

/// The case with its crash replaced by a SIGKILL at journal entry `k`.
pub fn at_event(s: &Scenario, k: NonZeroU64) -> Scenario {
    let mut s = s.clone();
    s.crash = Some(Crash::swept_at_event(k));
    s
}

/// The case with no crash (the clean run of a sweep).
fn clean(s: &Scenario) -> Scenario {
    let mut s = s.clone();
    s.crash = None;
    s
}

/// N of a clean run: how many journal entries every run of the case records before the harness
/// has every outcome, or the journal's last sequence when some delegation had none.
///
/// Per delegation, only the entries that happen before its outcome are counted: the entries up
/// to the task's final `task_state` (which the agent records before it sends the state to
/// anyone), then the first `response` or `sse_event` that handed that state to the delegator
/// (recorded before it is sent) with the entries of its own request or stream between the two.
/// Entries recorded when something the delegator does not wait for completes race with the
/// outcome wherever they fall, and are not counted: a `push` (recorded once delivered), a
/// `stream_closed` (or, when the delegator drops a stream first, `client_gone`), a
/// `client_closed`; nor, after the final state, the stream's own copy of a state a CancelTask
/// answered. A delegation with no final `task_state` before its outcome keeps `done_at`.
///
/// So no position kills the delegator after it has the final state and before it reports the
/// outcome: the journal has no entry that is certain to fall in that window (a kill at the
/// handing-over entry lands before the state is sent).
pub fn sweep_length(s: &Scenario, r: &CaseResult) -> u64 {
    let last = r.journal.last().map_or(0, |e| e.seq);
    let all = s.delegations.iter().all(|d| r.done_at.contains_key(&d.id));
    if !all {
        return last;
    }
    r.done_at
        .iter()
        .map(|(id, at)| certain_before(r, id, (*at).min(last)))
        .max()
        .unwrap_or(last)
}

/// How many entries every run records before delegation `id`'s outcome, its `done_at` being
/// `at`: the entries up to the final `task_state` that do not race with it, the first entry
/// that gave the delegator that state and the entries of the same request or stream between.
fn certain_before(r: &CaseResult, id: &str, at: u64) -> u64 {
    let Some(FromDelegator::Done(done)) = r.outcomes.get(id) else {
        return at;
    };
    let Some(task) = done.task_id.as_deref() else {
        return at;
    };
    let seen: Vec<&Entry> = r.journal.iter().filter(|e| e.seq <= at).collect();
    let Some((ended, held)) = seen.iter().rev().find_map(|e| match &e.event {
        Event::TaskState { task_id, state } if task_id == task => task_state(state)
            .filter(|s| s.is_terminal())
            .map(|s| (e.seq, s)),
        _ => None,
    }) else {
        return at;
    };
    let racing = |e: &Event| {
        matches!(
            e,
            Event::Push { .. } | Event::StreamClosed { .. } | Event::ClientClosed { .. }
        )
    };
    let before = seen
        .iter()
        .filter(|e| e.seq <= ended && !racing(&e.event))
        .count() as u64;
    let handed = seen.iter().find_map(|e| match &e.event {
        Event::Response { req, body, .. } if e.seq > ended && carries(body, task, held) => {
            Some((e.seq, *req))
        }
        Event::SseEvent { req, data, .. } if e.seq > ended && carries(data, task, held) => {
            Some((e.seq, *req))
        }
        _ => None,
    });
    let Some((handed, via)) = handed else {
        return before;
    };
    let leading = seen
        .iter()
        .filter(|e| e.seq > ended && e.seq < handed)
        .filter(|e| match &e.event {
            Event::Request { req, .. }
            | Event::Response { req, .. }
            | Event::SseEvent { req, .. } => *req == via,
            _ => false,
        })
        .count() as u64;
    before + leading + 1
}

/// The task state a journal string names, in any spelling (1.0 or 0.3).
fn task_state(s: &str) -> Option<TaskState> {
    TaskState::parse_lenient(s)
}

/// Whether a response body or stream event holds `task` (an object whose `id` or `taskId` is
/// it: a task, a status update) with `held` as its `status.state`.
fn carries(v: &Value, task: &str, held: TaskState) -> bool {
    match v {
        Value::Object(m) => {
            let names_task = ["id", "taskId"]
                .iter()
                .any(|k| m.get(*k).and_then(Value::as_str) == Some(task));
            let state = m
                .get("status")
                .and_then(|s| s.get("state"))
                .and_then(Value::as_str)
                .and_then(task_state);
            (names_task && state == Some(held)) || m.values().any(|x| carries(x, task, held))
        }
        Value::Array(a) => a.iter().any(|x| carries(x, task, held)),
        _ => false,
    }
}

/// The positions to sweep in a journal of `n` entries: all of 1..=n when `n <= max`, otherwise
/// `max` of them drawn with `seed` (mixed with the case id, so cases draw differently), the
/// first and the last always included. Ascending; the flag says whether it is a sample.
pub fn positions(n: u64, max: u64, seed: u64, case_id: &str) -> (Vec<u64>, bool) {
    let max = max.max(2);
    if n <= max {
        return ((1..=n).collect(), false);
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ fnv1a(case_id));
    // A partial Fisher-Yates over the inner positions 2..n.
    let mut inner: Vec<u64> = (2..n).collect();
    let take = (max - 2) as usize;
    for i in 0..take {
        let j = rng.random_range(i..inner.len());
        inner.swap(i, j);
    }
    let mut out: Vec<u64> = inner[..take].to_vec();
    out.push(1);
    out.push(n);
    out.sort_unstable();
    (out, true)
}

fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn settings(o: &SweepOptions, dir: String) -> RunSettings {
    RunSettings {
        delegator: o.delegator.clone(),
        seed: o.seed,
        work_dir: o.work_dir.join(dir),
        binding: None,
        tls: false,
    }
}

/// The repro of position `k`: `run --crash-at-event K` on the case (the same seed and
/// delegator), which replays exactly that run.
fn position_repro(r: &mut CaseResult, k: u64) {
    if !r.repro.contains("--crash-at-event") {
        r.repro = r.repro.replacen(
            "a2a-harness run ",
            &format!("a2a-harness run --crash-at-event {k} "),
            1,
        );
    }
}

/// Run `cases`, each with its crash replaced by a SIGKILL at journal entry `k`, judged by
/// their rules and the history invariants; results are `<case id>@event<k>`. This is
/// `run --crash-at-event K`, the repro of one sweep position.
pub async fn run_at_event(
    cases: &[Scenario],
    k: NonZeroU64,
    o: &SweepOptions,
    mut progress: impl FnMut(&CaseResult),
) -> Vec<CaseResult> {
    let jobs: Vec<Job> = cases
        .iter()
        .enumerate()
        .map(|(i, s)| Job {
            scenario: at_event(s, k),
            settings: settings(o, format!("at{i}")),
            label: Some(position_id(&s.id, k.get())),
        })
        .collect();
    judge_positions(jobs, o, |r| progress(r)).await
}

/// Runs of one position at most: a run whose journal ended before entry k (the delegator's
/// timing took a shorter path, such as one poll fewer before a timed purge under load) tested no
/// recovery, so the position is run again on a fresh store, up to this many runs in all, before
/// it is reported NOT EXERCISED.
pub const POSITION_RUNS: usize = 3;

/// Run position jobs and judge each result by the history invariants (then known-failing),
/// calling `progress` with each final result; results in job order. A position not reached is
/// run again (at most [`POSITION_RUNS`] runs in all); its result is the first run that reached it.
async fn judge_positions(
    jobs: Vec<Job>,
    o: &SweepOptions,
    mut progress: impl FnMut(&CaseResult),
) -> Vec<CaseResult> {
    let by_label: BTreeMap<String, (usize, Job)> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| (j.label.clone().unwrap_or_default(), (i, j.clone())))
        .collect();
    let mut judged: Vec<(usize, CaseResult)> = Vec::new();
    let mut pending = jobs;
    for run in 1..=POSITION_RUNS {
        let mut again = Vec::new();
        run_jobs(pending, o.jobs, |p: Progress<'_>| {
            let mut r = p.result.clone();
            let Some((i, job)) = by_label.get(&r.id) else {
                return;
            };
            let s = &job.scenario;
            invariants::apply(s, &mut r);
            let k = s.crash.as_ref().and_then(|c| c.event).map(NonZeroU64::get);
            if r.crash.is_none() && r.verdict == Verdict::Pass {
                // The journal ended before entry k: no kill, so the run tested no recovery.
                if run < POSITION_RUNS {
                    // A fresh store: `<dir>-run2`, `<dir>-run3`.
                    let mut job = job.clone();
                    let mut dir = job.settings.work_dir.into_os_string();
                    dir.push(format!("-run{}", run + 1));
                    job.settings.work_dir = dir.into();
                    again.push(job);
                    return;
                }
                r.verdict = Verdict::NotExercised;
                r.notes.push(format!(
                    "position not reached in {POSITION_RUNS} runs: no crash, nothing recovered; \
                     NOT EXERCISED"
                ));
            } else if run > 1 {
                r.notes.push(format!(
                    "position reached in run {run} of at most {POSITION_RUNS} (the journals of \
                     the runs before ended before entry {})",
                    k.unwrap_or_default()
                ));
            }
            if let Some(k) = k {
                position_repro(&mut r, k);
            }
            apply_known_failing(std::slice::from_mut(&mut r), &o.known_failing);
            progress(&r);
            judged.push((*i, r));
        })
        .await;
        if again.is_empty() {
            break;
        }
        pending = again;
    }
    judged.sort_by_key(|(i, _)| *i);
    judged.into_iter().map(|(_, r)| r).collect()
}

/// Sweep `cases`: a clean run of each (in parallel), then every chosen position of every case
/// (in parallel). `progress` sees each position's result as it finishes, `planned` the plans
/// once the clean runs are done (with the number of position runs to come).
pub async fn crash_sweep(
    cases: &[Scenario],
    o: &SweepOptions,
    planned: impl FnOnce(&[CasePlan], usize),
    progress: impl FnMut(&CaseResult),
) -> SweepReport {
    let t0 = Instant::now();
    let clean_jobs: Vec<Job> = cases
        .iter()
        .enumerate()
        .map(|(i, s)| Job {
            scenario: clean(s),
            settings: settings(o, format!("clean{i}")),
            label: None,
        })
        .collect();
    let cleans = run_jobs(clean_jobs, o.jobs, |_| {}).await;
    let mut plans = Vec::new();
    let mut jobs = Vec::new();
    let mut empty = Vec::new();
    for (s, c) in cases.iter().zip(&cleans) {
        let n = sweep_length(s, c);
        let (ks, sampled) = positions(n, o.max_positions, o.seed, &s.id);
        plans.push(CasePlan {
            id: s.id.clone(),
            length: n,
            clean_verdict: c.verdict.label().to_string(),
            positions: ks.clone(),
            sampled,
        });
        if ks.is_empty() {
            // Nothing reached an agent: the clean run is the case's only evidence.
            empty.push(c.clone());
        }
        for k in ks.into_iter().filter_map(NonZeroU64::new) {
            let n = jobs.len();
            jobs.push(Job {
                scenario: at_event(s, k),
                settings: settings(o, format!("pos{n}")),
                label: Some(position_id(&s.id, k.get())),
            });
        }
    }
    planned(&plans, jobs.len());
    let mut results = judge_positions(jobs, o, progress).await;
    apply_known_failing(&mut empty, &o.known_failing);
    results.extend(empty);
    SweepReport {
        plans,
        results,
        wall_ms: t0.elapsed().as_millis() as u64,
        seed: o.seed,
    }
}

/// The sweep's own summary: per case N, the positions run (and the seed of a sample), then every
/// position at which a rule or invariant broke, with the ids broken.
pub fn summary_text(report: &SweepReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "crash sweep (seed {}):", report.seed);
    for p in &report.plans {
        let how = if p.sampled {
            format!(
                "{} positions sampled with seed {}: {}",
                p.positions.len(),
                report.seed,
                join(&p.positions)
            )
        } else if p.positions.is_empty() {
            "no journal entry: nothing to sweep".to_string()
        } else {
            format!("every position 1..={}", p.length)
        };
        let _ = writeln!(
            s,
            "  {}: N = {} (its clean run, no crash: {}), {how}",
            p.id, p.length, p.clean_verdict
        );
    }
    let unreached: Vec<&str> = report
        .results
        .iter()
        .filter(|r| r.verdict == Verdict::NotExercised && r.crash.is_none())
        .map(|r| r.id.as_str())
        .collect();
    if !unreached.is_empty() {
        let _ = writeln!(
            s,
            "positions not reached (every run's journal ended first; NOT EXERCISED): {}",
            unreached.join(", ")
        );
    }
    let broken: Vec<(&CaseResult, Vec<&str>)> = report
        .results
        .iter()
        .filter(|r| r.verdict.fails_run() || r.verdict == Verdict::XFail)
        .map(|r| {
            let mut ids: Vec<&str> = r.broken_rules().map(|v| v.id.as_str()).collect();
            ids.dedup();
            (r, ids)
        })
        .collect();
    if broken.is_empty() {
        let _ = writeln!(s, "no position broke a rule");
    } else {
        let _ = writeln!(s, "positions at which a rule broke ({}):", broken.len());
        for (r, ids) in broken {
            let what = if ids.is_empty() {
                format!("{} (no rule to blame: see its notes)", r.verdict.label())
            } else {
                ids.join(", ")
            };
            let _ = writeln!(s, "  {}: {what}", r.id);
            let _ = writeln!(s, "    repro: {}", r.repro);
        }
    }
    s
}

fn join(ks: &[u64]) -> String {
    ks.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_journals_are_swept_whole_and_long_ones_sampled_from_the_seed() {
        assert_eq!(positions(0, 40, 1, "c"), (vec![], false));
        assert_eq!(positions(3, 40, 1, "c"), (vec![1, 2, 3], false));
        let (ks, sampled) = positions(100, 10, 7, "c");
        assert!(sampled);
        assert_eq!(ks.len(), 10);
        assert_eq!((ks[0], ks[9]), (1, 100));
        assert!(ks.windows(2).all(|w| w[0] < w[1]), "{ks:?}");
        assert_eq!(positions(100, 10, 7, "c").0, ks, "the seed decides");
        assert_ne!(positions(100, 10, 8, "c").0, ks);
    }

    /// crash-during-cancel's clean run, either way the race went: the delegator's CancelTask
    /// answered CANCELED (entry 12), then the stream sent CANCELED and closed (13, 14), or the
    /// delegator dropped the stream first (13: `client_gone`).
    #[test]
    fn the_sweep_ends_where_the_final_state_reached_the_delegator_however_the_race_went() {
        use a2a_driver_contract::{Done, Outcome};
        use serde_json::json;
        let s = crate::rules::test_support::scenario(&crate::rules::test_support::delegation(""));
        let cfg = RunSettings {
            delegator: "d".into(),
            seed: 1,
            work_dir: std::env::temp_dir(),
            binding: None,
            tls: false,
        };
        let entry = |seq: u64, rest: Value| -> Entry {
            let mut e = json!({"seq": seq, "at_us": seq, "agent": "a"});
            e.as_object_mut()
                .unwrap()
                .extend(rest.as_object().unwrap().clone());
            serde_json::from_value(e).unwrap()
        };
        let run = |tail: Vec<Value>| {
            let mut r = CaseResult::harness_failure(&s, &cfg, String::new());
            r.journal = (1..=10)
                .map(|i| entry(i, json!({"event": "fault", "req": i, "kind": "filler"})))
                .collect();
            r.journal.push(entry(
                11,
                json!({"event": "task_state", "task_id": "t1", "state": "TASK_STATE_CANCELED"}),
            ));
            for (i, e) in tail.into_iter().enumerate() {
                r.journal.push(entry(12 + i as u64, e));
            }
            r.done_at.insert("d1".into(), r.journal.last().unwrap().seq);
            r.outcomes.insert(
                "d1".into(),
                FromDelegator::Done(Done {
                    id: "d1".into(),
                    state: Outcome::Canceled,
                    reason: None,
                    task_id: Some("t1".into()),
                    context_id: None,
                    message: None,
                    artifacts: vec![],
                }),
            );
            r
        };
        let canceled = json!({"id": "t1", "status": {"state": "TASK_STATE_CANCELED"}});
        let answered = json!({"event": "response", "req": 3, "status": 200,
            "body": {"jsonrpc": "2.0", "id": "x", "result": canceled}});
        let streamed = json!({"event": "sse_event", "req": 2, "index": 2,
            "data": {"jsonrpc": "2.0", "id": "y", "result": {"statusUpdate":
                {"taskId": "t1", "status": {"state": "TASK_STATE_CANCELED"}}}}});
        let closed = |reason: &str, events: u64| json!({"event": "stream_closed", "req": 2, "events": events, "reason": reason});
        let long = run(vec![answered.clone(), streamed, closed("terminal", 3)]);
        let short = run(vec![answered, closed("client_gone", 2)]);
        assert_eq!(
            sweep_length(&s, &long),
            12,
            "not 14: 13 and 14 race with the done"
        );
        assert_eq!(sweep_length(&s, &short), 12, "not 13");
        // Pushes (recorded once delivered) land before or after the confirming GetTask: only
        // the GetTask's request and response count, wherever the pushes fell.
        let push = || json!({"event": "push", "task_id": "t1", "url": "http://127.0.0.1:1/w", "status": 200});
        let asked = json!({"event": "request", "req": 9, "binding": "jsonrpc",
            "http_method": "POST", "path": "/a2a", "method": "GetTask", "params": {"id": "t1"},
            "headers": {}});
        let got = json!({"event": "response", "req": 9, "status": 200,
            "body": {"jsonrpc": "2.0", "id": "z", "result": canceled.clone()}});
        let early = run(vec![push(), push(), asked.clone(), got.clone(), push()]);
        let late = run(vec![asked, got, push(), push(), push()]);
        assert_eq!(
            (sweep_length(&s, &early), sweep_length(&s, &late)),
            (13, 13)
        );
        // No entry handed the state over (a push, say): the final state itself.
        let pushed = run(vec![push()]);
        assert_eq!(sweep_length(&s, &pushed), 11);
        // A push of an earlier state, or a stream's close, before the final state in this run
        // may come after the outcome in another: not counted there either.
        for racing in [push(), closed("terminal", 1)] {
            let mut r = long.clone();
            r.journal[4] = entry(5, racing);
            assert_eq!(sweep_length(&s, &r), 11, "{:?}", r.journal[4].event);
        }
        // A body that names the task beside another task's final state hands nothing over.
        let other = json!({"event": "response", "req": 3, "status": 200, "body": {"jsonrpc": "2.0",
            "id": "x", "result": {"tasks": [{"id": "t1", "status": {"state": "TASK_STATE_WORKING"}},
            {"id": "t2", "status": {"state": "TASK_STATE_CANCELED"}}]}}});
        assert_eq!(sweep_length(&s, &run(vec![other])), 11);
        // No final state before the outcome (a purged task): the outcome's sequence, as before.
        let mut purged = run(vec![closed("client_gone", 2)]);
        purged.journal.remove(10);
        assert_eq!(sweep_length(&s, &purged), 12);
    }

    #[test]
    fn a_position_replaces_the_case_crash_and_its_repro_names_it() {
        let s = crate::rules::test_support::scenario("[crash]\ntrigger = \"first_request\"\n");
        let k = NonZeroU64::new(5).unwrap();
        let swept = at_event(&s, k);
        let c = swept.crash.as_ref().unwrap();
        assert_eq!(
            (c.trigger, c.event),
            (crate::scenario::CrashTrigger::AtEvent, Some(k))
        );
        assert_eq!(position_id("recovery.x", 5), "recovery.x@event5");
        let cfg = RunSettings {
            delegator: "d".into(),
            seed: 3,
            work_dir: std::env::temp_dir(),
            binding: None,
            tls: false,
        };
        let mut r = CaseResult::harness_failure(&s, &cfg, String::new());
        position_repro(&mut r, 5);
        assert!(
            r.repro
                .starts_with("a2a-harness run --crash-at-event 5 --case t "),
            "{}",
            r.repro
        );
    }
}
