//! Running many cases: the scheduling loop (parallel jobs, repeats, a result per case even when
//! its task panicked, progress), used by the CLI and by the self-test.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use a2a_harness_core::catalog::load_catalog;
//! use a2a_harness_core::run::{RunOptions, run};
//!
//! let cases = load_catalog(std::path::Path::new("scenarios"))?;
//! let report = run(&cases, &RunOptions::new("a2a-delegator drive")).await;
//! println!("{} passed", report.totals().passed);
//! # Ok(())
//! # }
//! ```

use crate::catalog::CaseGlob;
use crate::determinism::{RERUN_SUFFIX, determinism_result, first_run_label};
use crate::report::{Totals, totals};
use crate::runner::{CaseResult, RunSettings, apply_known_failing, run_case};
use crate::scenario::Scenario;
use a2a_mock_agents::script::Fault;
use a2a_protocol::Binding;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// How to run a set of cases.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The delegator command (speaks `docs/driver-protocol.md`).
    pub delegator: String,
    /// The seed of the first repetition; repetition `r` uses `seed + r`.
    pub seed: u64,
    /// Cases run at once (at least 1).
    pub jobs: usize,
    /// Run each case this many times; with more than one, result ids are `<case id>@<seed>`.
    pub repeat: u32,
    /// Known-failing cases: FAIL becomes XFAIL, PASS becomes XPASS.
    pub known_failing: Vec<CaseGlob>,
    /// Where per-case stores go; `None`: a temporary directory removed afterwards.
    pub work_dir: Option<PathBuf>,
    /// Run the catalog once per binding (`run --binding`): each case over each binding it has
    /// a meaning for, reported as `<case id>:<binding>`. Empty: once, as each case says.
    pub bindings: Vec<Binding>,
    /// Serve every agent of every case over TLS (`run --tls`), the delegator given the
    /// case's certificate authority as `init.tls_roots`.
    pub tls: bool,
    /// The cases in flight, for a console that names slow ones while they run.
    pub running: Running,
    /// Run each case twice with the same seed and add a `<id>#determinism` result comparing
    /// the two runs (see [`crate::determinism`]).
    pub check_determinism: bool,
    /// Judge every case by the history invariants too (`HIST-*`, [`crate::invariants`]), as
    /// explore and crash sweeps do: the repro of a `HIST-*` finding.
    pub invariants: bool,
}

/// The cases in flight (by result id) and when each started.
#[derive(Debug, Clone, Default)]
pub struct Running(Arc<Mutex<BTreeMap<String, Instant>>>);

impl Running {
    fn start(&self, id: &str) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.to_string(), Instant::now());
    }

    fn end(&self, id: &str) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).remove(id);
    }

    /// The case running longest, and for how long.
    pub fn longest(&self) -> Option<(String, std::time::Duration)> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .min_by_key(|(_, t)| **t)
            .map(|(id, t)| (id.clone(), t.elapsed()))
    }
}

impl RunOptions {
    /// Options for `delegator` with seed 1, [`default_jobs`] jobs, one repetition.
    pub fn new(delegator: impl Into<String>) -> Self {
        RunOptions {
            delegator: delegator.into(),
            seed: 1,
            jobs: default_jobs(),
            repeat: 1,
            known_failing: Vec::new(),
            work_dir: None,
            bindings: Vec::new(),
            tls: false,
            running: Running::default(),
            check_determinism: false,
            invariants: false,
        }
    }
}

/// Cases run at once by default: eight per core (2 cores when unknown), at most 64.
///
/// A case spends its time on timers (deadlines, backoffs, stalled peers), not on CPU: on two
/// cores the reference catalog's 169 cases add up to about 82 s of case time and 13 CPU-s.
/// Measured side by side there (seed 1, quiet machine): 13.0 s of wall time at four per core,
/// 10.1 s at six, 8.9 s at eight, every verdict the same; the cases that measure gaps (backoff,
/// polling) keep their margins because the cores are still half idle.
pub fn default_jobs() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    (cores * 8).min(64)
}

/// The results of a run.
#[derive(Debug, Clone)]
pub struct RunReport {
    /// One result per case and repetition, in catalog order (repetition by repetition).
    pub results: Vec<CaseResult>,
    /// Wall time of the whole run.
    pub wall_ms: u64,
}

impl RunReport {
    /// Counts of passed, failed and skipped results.
    pub fn totals(&self) -> Totals {
        totals(&self.results)
    }

    /// True when some result fails the run (FAIL, UNKNOWN or XPASS).
    pub fn failed(&self) -> bool {
        self.totals().failed > 0
    }
}

/// One case to run with its settings.
#[derive(Debug, Clone)]
pub struct Job {
    /// The case.
    pub scenario: Scenario,
    /// The delegator, seed and store directory for it.
    pub settings: RunSettings,
    /// The id its result is reported under (default: the case id).
    pub label: Option<String>,
}

/// A case finished.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// Its result.
    pub result: &'a CaseResult,
    /// Results so far, this one included.
    pub done: usize,
    /// Results in all.
    pub total: usize,
}

/// Run `cases` as `options` say; see [`run_with_progress`].
pub async fn run(cases: &[Scenario], options: &RunOptions) -> RunReport {
    run_with_progress(cases, options, |_| {}).await
}

/// Run `cases` (each `options.repeat` times) against the delegator, `options.jobs` at once,
/// calling `progress` as each finishes; known-failing entries are applied to the results. With
/// `check_determinism`, each case runs twice and its result is followed by its determinism
/// result (both given to `progress` once the second run is done).
pub async fn run_with_progress(
    cases: &[Scenario],
    options: &RunOptions,
    mut progress: impl FnMut(Progress<'_>),
) -> RunReport {
    let t0 = Instant::now();
    // Kept until the end of the run when it is ours.
    let temp = match &options.work_dir {
        Some(_) => None,
        None => tempfile::tempdir().ok(),
    };
    let work_dir = options
        .work_dir
        .clone()
        .or_else(|| temp.as_ref().map(|t| t.path().to_path_buf()))
        .unwrap_or_else(std::env::temp_dir);
    let mut jobs = Vec::new();
    for r in 0..options.repeat.max(1) {
        let seed = options.seed.wrapping_add(u64::from(r));
        for (s, binding) in passes(cases, &options.bindings) {
            let i = jobs.len();
            let mut label = match binding {
                Some(b) => format!("{}:{b}", s.id),
                None => s.id.clone(),
            };
            if options.repeat > 1 {
                label = format!("{label}@{seed}");
            }
            let job = Job {
                label: Some(label.clone()),
                scenario: s.clone(),
                settings: RunSettings {
                    delegator: options.delegator.clone(),
                    seed,
                    work_dir: work_dir.join(i.to_string()),
                    binding,
                    tls: options.tls,
                },
            };
            if options.check_determinism {
                // The same case with the same seed, right after it (its own store).
                let mut again = job.clone();
                again.label = Some(format!("{label}{RERUN_SUFFIX}"));
                again.settings.work_dir = work_dir.join(format!("{i}{RERUN_SUFFIX}"));
                jobs.push(job);
                jobs.push(again);
            } else {
                jobs.push(job);
            }
        }
    }
    // Known-failing entries apply as each result comes, so that progress sees XFAIL, not FAIL.
    if !options.check_determinism {
        let results = run_jobs_known(
            jobs,
            options.jobs,
            &options.known_failing,
            &options.running,
            options.invariants,
            progress,
        )
        .await;
        return RunReport {
            results,
            wall_ms: t0.elapsed().as_millis() as u64,
        };
    }
    // Each pair is reported when both runs are done: the first run's result, then the
    // determinism result.
    let mut waiting: HashMap<String, CaseResult> = HashMap::new();
    let mut judged: HashMap<String, CaseResult> = HashMap::new();
    let mut done = 0;
    let raw = run_jobs_known(
        jobs,
        options.jobs,
        &options.known_failing,
        &options.running,
        options.invariants,
        |p: Progress<'_>| {
            let label = first_run_label(&p.result.id).to_string();
            let Some(other) = waiting.remove(&label) else {
                waiting.insert(label, p.result.clone());
                return;
            };
            let (first, second) = if p.result.id == label {
                (p.result, &other)
            } else {
                (&other, p.result)
            };
            let mut det = determinism_result(first, second);
            apply_known_failing(std::slice::from_mut(&mut det), &options.known_failing);
            for r in [first, &det] {
                done += 1;
                progress(Progress {
                    result: r,
                    done,
                    total: p.total,
                });
            }
            judged.insert(label, det);
        },
    )
    .await;
    let mut results = Vec::with_capacity(raw.len());
    let mut pairs = raw.into_iter();
    while let (Some(first), Some(second)) = (pairs.next(), pairs.next()) {
        let det = judged
            .remove(&first.id)
            .unwrap_or_else(|| determinism_result(&first, &second));
        results.push(first);
        results.push(det);
    }
    RunReport {
        results,
        wall_ms: t0.elapsed().as_millis() as u64,
    }
}

/// The (case, binding) pairs a run covers, binding by binding: with no `bindings`, every case
/// once as it says; otherwise each case over each of `bindings` that it lists as meaningful. A
/// case whose every agent pins its own bindings is the same over any binding: it runs once, in
/// the first pass that applies to it.
pub fn passes<'a>(
    cases: &'a [Scenario],
    bindings: &[Binding],
) -> Vec<(&'a Scenario, Option<Binding>)> {
    if bindings.is_empty() {
        return cases.iter().map(|s| (s, None)).collect();
    }
    let mut out = Vec::new();
    for (k, b) in bindings.iter().enumerate() {
        for s in cases {
            if !s.bindings.contains(b) {
                continue;
            }
            let pinned = crate::runner::pins_every_agent(s);
            if pinned && bindings[..k].iter().any(|e| s.bindings.contains(e)) {
                continue;
            }
            out.push((s, Some(*b)));
        }
    }
    out
}

/// A rough measure of how long a case waits, to start the long ones first: the longest its
/// agents' scripts hold a request by their own timers (waits, stalls, `Retry-After`, and a
/// delegator's backoff of half the retry cap per injected transient error), cut at its furthest
/// delegation deadline when it has one (the delegator stops there), else at its bound; plus a
/// few seconds for a memory case (it streams a large payload).
fn expected_wait_ms(s: &Scenario) -> u64 {
    let cap = s
        .options
        .get("retry_cap_ms")
        .and_then(Value::as_u64)
        .unwrap_or(crate::rules::DEFAULT_RETRY_CAP_MS);
    let script = s
        .network
        .agents
        .iter()
        .flat_map(|a| &a.rules)
        .map(|r| {
            let backoffs = match r.fault {
                Some(Fault::HttpStatus { .. }) => {
                    u64::from(r.times.unwrap_or(1)).saturating_mul(cap / 2)
                }
                _ => 0,
            };
            r.scripted_wait_ms().saturating_add(backoffs)
        })
        .max()
        .unwrap_or(0);
    let deadline = s
        .delegations
        .iter()
        .filter_map(|d| d.deadline_in_ms)
        .max()
        .and_then(|d| u64::try_from(d).ok())
        .filter(|d| *d > 0);
    let wait = match deadline {
        Some(d) => d,
        None => script.min(s.timeout_ms),
    };
    wait + if s.memory_bound_mib.is_some() {
        3_000
    } else {
        0
    }
}

/// Run `jobs`, at most `parallel` at once, calling `progress` as each finishes; the results
/// come back in job order. A job whose task panicked gets a FAIL result saying so.
pub async fn run_jobs(
    jobs: Vec<Job>,
    parallel: usize,
    progress: impl FnMut(Progress<'_>),
) -> Vec<CaseResult> {
    run_jobs_known(jobs, parallel, &[], &Running::default(), false, progress).await
}

/// [`run_jobs`], with the known-failing entries applied to each result before `progress` sees
/// it, and with `invariants` each case judged by the history invariants too.
async fn run_jobs_known(
    jobs: Vec<Job>,
    parallel: usize,
    known_failing: &[CaseGlob],
    running: &Running,
    invariants: bool,
    mut progress: impl FnMut(Progress<'_>),
) -> Vec<CaseResult> {
    let total = jobs.len();
    let sem = Arc::new(tokio::sync::Semaphore::new(parallel.max(1)));
    let mut set = tokio::task::JoinSet::new();
    // The cases that wait longest start first, so that they do not stretch the end of the run
    // (results still come back in job order). Each task takes the next job off this queue once
    // it holds a permit, so jobs start in this order whichever task the runtime polls first
    // (`--check-determinism --jobs 1` runs a case's first run first).
    let mut order: Vec<(usize, Job)> = jobs.into_iter().enumerate().collect();
    order.sort_by_key(|(i, j)| (std::cmp::Reverse(expected_wait_ms(&j.scenario)), *i));
    let queue = Arc::new(Mutex::new(std::collections::VecDeque::from(order)));
    // Which job each task took, so a task that panicked still gets its result.
    let started: Arc<Mutex<HashMap<tokio::task::Id, (usize, Job)>>> = Arc::default();
    for _ in 0..total {
        let (sem, queue, started) = (sem.clone(), queue.clone(), started.clone());
        let running = running.clone();
        set.spawn(async move {
            let _permit = sem.acquire_owned().await;
            let (i, job) = queue
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .pop_front()?;
            let Job {
                scenario,
                settings,
                label,
            } = job.clone();
            started
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(tokio::task::id(), (i, job));
            let id = label.unwrap_or_else(|| scenario.id.clone());
            running.start(&id);
            // Ended however the task ends (a panic included).
            let _running = RunningGuard { running, id };
            #[cfg(debug_assertions)]
            if std::env::var("A2A_HARNESS_TEST_PANIC").is_ok_and(|c| c == scenario.id) {
                panic!(
                    "A2A_HARNESS_TEST_PANIC: planted panic in case {}",
                    scenario.id
                );
            }
            let mut r = run_case(&scenario, &settings).await;
            if invariants {
                crate::invariants::apply(&scenario, &mut r);
            }
            Some(r)
        });
    }
    let mut out = Vec::with_capacity(total);
    while let Some(joined) = set.join_next_with_id().await {
        let (id, r) = match joined {
            Ok((_, None)) => continue,
            Ok((id, Some(r))) => (id, Ok(r)),
            Err(e) => (e.id(), Err(e)),
        };
        let taken = started
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        let Some((i, job)) = taken else {
            continue;
        };
        let mut r = r.unwrap_or_else(|e| {
            let why = if e.is_panic() {
                format!("panicked: {}", panic_text(&*e.into_panic()))
            } else {
                "was cancelled".to_string()
            };
            CaseResult::harness_failure(
                &job.scenario,
                &job.settings,
                format!("harness error: the task running this case {why}"),
            )
        });
        if let Some(label) = job.label {
            r.id = label;
        }
        apply_known_failing(std::slice::from_mut(&mut r), known_failing);
        out.push((i, r));
        if let Some((_, r)) = out.last() {
            progress(Progress {
                result: r,
                done: out.len(),
                total,
            });
        }
    }
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

/// Takes a case off [`Running`] when its task ends.
struct RunningGuard {
    running: Running,
    id: String,
}

impl Drop for RunningGuard {
    fn drop(&mut self) {
        self.running.end(&self.id);
    }
}

/// A panic payload as text.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn scenario(body: &str) -> Scenario {
        let text = format!(
            "id = \"t.case\"\ntitle = \"t\"\nrules = [\"DLG-SEND-01\"]\n{body}\n[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"x\"\n"
        );
        Scenario::from_toml(Path::new("t.toml"), &text).expect("the test scenario parses")
    }

    const AGENT: &str = "[network]\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n[[network.agent.rule]]\n";

    #[test]
    fn expected_wait_reads_script_timers_backoffs_and_deadlines() {
        let quick = scenario(&format!(
            "{AGENT}steps = [{{ do = \"state\", state = \"TASK_STATE_COMPLETED\" }}]"
        ));
        assert_eq!(expected_wait_ms(&quick), 0);
        let waits = scenario(&format!(
            "{AGENT}steps = [{{ do = \"wait\", ms = 1200 }}, {{ do = \"artifacts\", chunks = 4, delay_ms = 100 }}, {{ do = \"state\", state = \"TASK_STATE_COMPLETED\" }}]"
        ));
        assert_eq!(expected_wait_ms(&waits), 1600);
        // Ten transient errors: ten backoffs of half the harness's retry cap.
        let backoffs = scenario(&format!(
            "{AGENT}times = 10\nfault = {{ kind = \"http_status\", status = 503 }}"
        ));
        assert_eq!(
            expected_wait_ms(&backoffs),
            10 * crate::rules::DEFAULT_RETRY_CAP_MS / 2
        );
        // A stall longer than the case's bound counts as the bound.
        let stall = scenario(&format!(
            "timeout_ms = 9000\n{AGENT}fault = {{ kind = \"stall\", ms = 600000 }}"
        ));
        assert_eq!(expected_wait_ms(&stall), 9000);
    }

    #[test]
    fn a_deadline_cuts_the_scripted_wait() {
        let mut s = scenario(&format!(
            "{AGENT}steps = [{{ do = \"wait\", ms = 120000 }}, {{ do = \"state\", state = \"TASK_STATE_COMPLETED\" }}]"
        ));
        s.delegations[0].deadline_in_ms = Some(2500);
        assert_eq!(expected_wait_ms(&s), 2500);
    }
}
