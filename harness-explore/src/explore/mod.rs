//! `a2a-harness explore`: run generated scenarios (seed S, S+1, ...) against a delegator until
//! a time or run bound, collect findings, shrink each to a small scenario file that reproduces
//! it, and write a report.
//!
//! - `finding`: [`Finding`] / [`findings`], the one definition of a finding, used by the
//!   loop, the shrinking oracle and the report;
//! - `oracle`: the shrinking oracle over real runs (confirmation runs, the baseline);
//! - [`explore()`]: the loop (parallel runs, each bounded in time and bytes, Ctrl-C aware),
//!   then the shrinking of each distinct finding;
//! - [`shrink`]: the delta-debugging reducer (and why it is not proptest);
//! - `output`: the found files (`found/<rule>-<seed>.toml`), `explore.json`, `explore.md` and
//!   the console summary.
//!
//! Every run's seed derives from `--seed`: run `i` generates its scenario from seed `S + i` and
//! runs it with that seed, so the seed in a finding reproduces it alone
//! (`a2a-harness explore --seed S+i --runs 1`).

mod finding;
mod members;
mod oracle;
mod output;
pub mod shrink;

pub use finding::{Finding, RuleCounts, findings, shows};
pub use output::{found_file_name, scenario_toml, summary_markdown, summary_text};

use crate::generate::{Topic, generate};
use a2a_harness_core::report::CONTRACT;
use a2a_harness_core::rules::{Level, registry};
use a2a_harness_core::runner::{CaseResult, RunSettings, Verdict, run_case};
use a2a_harness_core::scenario::Scenario;
use a2a_mock_agents::script::ScriptStep;
use serde::Serialize;
use shrink::Oracle as _;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How to explore.
#[derive(Debug, Clone)]
pub struct ExploreOptions {
    /// The delegator command (speaks `docs/driver-protocol.md`).
    pub delegator: String,
    /// The first seed; run `i` uses seed `seed + i`.
    pub seed: u64,
    /// Stop after this many generated scenarios (`None`: only the time bound).
    pub runs: Option<u64>,
    /// Stop starting runs after this long.
    pub time: Duration,
    /// Aim every scenario at this rule family (`None`: families drawn with weights).
    pub topic: Option<Topic>,
    /// Runs at once (loop and shrinking).
    pub jobs: usize,
    /// A shrinking candidate counts as failing only if it fails in every one of this many runs;
    /// the final scenario is confirmed the same way.
    pub confirm: u32,
    /// A delegator known to keep the rules (the reference one): a shrinking candidate counts
    /// only if that one passes it (no FAIL, UNKNOWN, nor the finding), so that shrinking never
    /// walks into a scenario any delegator would fail (say, an expected escalation whose cause
    /// was dropped).
    /// `None`: no such guard.
    pub baseline: Option<String>,
    /// Delegator runs per shrink at most.
    pub shrink_runs: usize,
    /// Wall time per shrink at most.
    pub shrink_time: Duration,
    /// Shrink (and confirm) only the findings whose rule matches one of these; the others are
    /// written as found. Empty: every finding.
    pub shrink_rules: Vec<a2a_harness_core::catalog::CaseGlob>,
    /// A generated scenario whose scripts would send more than this many bytes is not run.
    pub max_bytes: u64,
    /// A case's time bound is lowered to this when longer.
    pub max_case_ms: u64,
    /// Where the report and the found files go.
    pub out: PathBuf,
}

impl ExploreOptions {
    /// Options for `delegator` with seed 1, five minutes, [`DEFAULT_CONFIRM`] confirmations and
    /// no baseline, writing to `out`.
    pub fn new(delegator: impl Into<String>, out: impl Into<PathBuf>) -> Self {
        ExploreOptions {
            delegator: delegator.into(),
            seed: 1,
            runs: None,
            time: Duration::from_secs(300),
            topic: None,
            jobs: a2a_harness_core::run::default_jobs(),
            confirm: DEFAULT_CONFIRM,
            baseline: None,
            shrink_runs: 300,
            shrink_time: Duration::from_secs(180),
            shrink_rules: Vec::new(),
            max_bytes: 64 * 1024 * 1024,
            max_case_ms: 60_000,
            out: out.into(),
        }
    }

    /// The date-free command that generates and runs the scenario of `seed` alone.
    pub fn command_for(&self, seed: u64) -> String {
        let q = a2a_harness_core::delegator_process::shell_quote;
        format!(
            "a2a-harness explore --delegator {} --seed {seed} --runs 1{}",
            q(&self.delegator),
            self.topic
                .map(|t| format!(" --topic {t}"))
                .unwrap_or_default()
        )
    }
}

/// Confirmation runs per shrinking candidate by default.
pub const DEFAULT_CONFIRM: u32 = 2;

/// A distinct finding (one per rule) and what became of it.
#[derive(Debug, Clone, Serialize)]
pub struct FoundRule {
    /// The rule id, or [`CONTRACT`].
    pub rule: String,
    /// MUST or SHOULD (MUST for [`CONTRACT`]).
    pub level: Level,
    /// The verdict of its first occurrence.
    pub verdict: Verdict,
    /// What its first occurrence observed.
    pub observed: String,
    /// The seed of the first run that showed it.
    pub seed: u64,
    /// The result id of that run.
    pub case: String,
    /// How many runs showed it.
    pub occurrences: u64,
    /// From the start of exploring to the end of the first run that showed it.
    pub first_after_ms: u64,
    /// The scenario file written (relative to the output directory), if any.
    pub file: Option<PathBuf>,
    /// Size before shrinking ([`shrink::size`]).
    pub original_size: usize,
    /// Size after shrinking.
    pub shrunk_size: usize,
    /// The shrinking steps taken.
    pub steps: Vec<String>,
    /// Shrinking candidates tested.
    pub candidates: usize,
    /// Delegator runs spent shrinking (confirmations included).
    pub shrink_runs: usize,
    /// Wall time spent shrinking.
    pub shrink_ms: u64,
    /// The shrink stopped at a bound before reaching a minimum.
    pub cut_short: bool,
    /// The written scenario failed the rule again in every one of the final confirmation runs.
    pub confirmed: bool,
    /// The date-free command that generated and ran the scenario that showed it.
    pub found_by: String,
    /// The one-line repro of the written file.
    pub repro: Option<String>,
    /// Why no file was written, or why it is not shrunk.
    pub problem: Option<String>,
}

/// Why the loop stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StoppedBy {
    /// `--runs` scenarios were generated.
    Runs,
    /// `--time` passed.
    Time,
    /// Ctrl-C.
    Interrupted,
}

/// Everything an exploration found (`explore.json`).
#[derive(Debug, Clone, Serialize)]
pub struct ExploreSummary {
    /// The delegator command.
    pub delegator: String,
    /// The first seed.
    pub seed: u64,
    /// The topic aimed at, if any.
    pub topic: Option<String>,
    /// Scenarios run.
    pub runs: u64,
    /// Scenarios generated but not run (over the byte bound, or not loadable).
    pub skipped: u64,
    /// Why the loop stopped.
    pub stopped_by: StoppedBy,
    /// Wall time of the loop.
    pub explore_ms: u64,
    /// Wall time in all (shrinking included).
    pub wall_ms: u64,
    /// Runs that showed at least one finding.
    pub failing_runs: u64,
    /// Distinct findings (by rule), in the order found.
    pub findings: Vec<FoundRule>,
    /// Per rule with a checker: how often it was judged each way.
    pub coverage: BTreeMap<String, RuleCounts>,
}

impl ExploreSummary {
    /// True when something was found.
    pub fn found(&self) -> bool {
        !self.findings.is_empty()
    }
}

/// The whole outcome: the summary and one result per run (for the run-format report; results
/// without findings are kept without their journal, messages and stderr).
#[derive(Debug, Clone)]
pub struct Explored {
    /// The summary.
    pub summary: ExploreSummary,
    /// One result per run, in seed order.
    pub results: Vec<CaseResult>,
    /// How many generated scenarios listed each rule (always-on rules: every run), the
    /// coverage of the run-format report.
    pub listed: BTreeMap<&'static str, usize>,
}

/// Exploring could not go on.
#[derive(Debug, thiserror::Error)]
pub enum ExploreError {
    /// The output directory or the store directory could not be made.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A bad option.
    #[error("{0}")]
    Usage(String),
}

/// A `--time` value: `90`, `90s`, `5m`, `2h`, `1h30m`, `500ms`.
pub fn parse_duration(text: &str) -> Result<Duration, ExploreError> {
    let bad = || {
        ExploreError::Usage(format!(
            "{text:?} is no duration: use e.g. 90s, 5m, 2h or 1h30m"
        ))
    };
    let t = text.trim();
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(secs) = t.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut rest = t;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let per = match &rest[..unit_len] {
            "ms" => Duration::from_millis(1),
            "s" => Duration::from_secs(1),
            "m" => Duration::from_secs(60),
            "h" => Duration::from_secs(3600),
            _ => return Err(bad()),
        };
        total = per
            .checked_mul(u32::try_from(n).map_err(|_| bad())?)
            .and_then(|d| total.checked_add(d))
            .ok_or_else(bad)?;
        rest = &rest[unit_len..];
    }
    Ok(total)
}

/// An upper estimate of the bytes the scenario's scripts send (generated and literal
/// artifacts, blobs, huge events), per matching request.
pub fn scripted_bytes(s: &Scenario) -> u64 {
    let mut total: u64 = 0;
    for a in &s.network.agents {
        for r in &a.rules {
            for st in &r.steps {
                let n = match st {
                    ScriptStep::Artifacts {
                        count,
                        chunks,
                        chunk_bytes,
                        text,
                        ..
                    } => match text {
                        Some(t) => t.len() as u64,
                        None => u64::from(*count)
                            .saturating_mul(u64::from(*chunks))
                            .saturating_mul(*chunk_bytes as u64),
                    },
                    ScriptStep::ArtifactUrl { bytes, .. } => *bytes,
                    ScriptStep::HugeEvent { bytes } => *bytes as u64,
                    _ => 0,
                };
                total = total.saturating_add(n);
            }
        }
    }
    total
}

/// Make a generated scenario safe to run: its time bound at most `max_case_ms`, its scripted
/// bytes at most `max_bytes`, and loadable as a catalog file (what a found file must be).
fn bounded(mut s: Scenario, opts: &ExploreOptions) -> Result<Scenario, String> {
    s.timeout_ms = s.timeout_ms.min(opts.max_case_ms.max(1));
    let bytes = scripted_bytes(&s);
    if bytes > opts.max_bytes {
        return Err(format!(
            "its scripts send about {bytes} bytes, over the bound of {}",
            opts.max_bytes
        ));
    }
    loadable(&s).map_err(|e| format!("not loadable as a case: {e}"))?;
    Ok(s)
}

/// The scenario written as TOML loads back as a catalog case.
pub fn loadable(s: &Scenario) -> Result<(), String> {
    let text = output::scenario_toml_full(s).map_err(|e| e.to_string())?;
    a2a_harness_core::catalog::parse_case(Path::new("candidate.toml"), &text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// What the loop prints as it goes.
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// Explore as `opts` say until the bound or `cancel`, then shrink each distinct finding and
/// write the found files under `opts.out/found/`. The report files are written by the caller
/// ([`write_report`]).
pub async fn explore(
    opts: &ExploreOptions,
    cancel: CancellationToken,
    log: Log,
) -> Result<Explored, ExploreError> {
    if opts.jobs == 0 || opts.confirm == 0 {
        return Err(ExploreError::Usage(
            "--jobs and --confirm must be at least 1".into(),
        ));
    }
    let t0 = Instant::now();
    let work = tempfile::tempdir().map_err(|source| ExploreError::Io {
        path: std::env::temp_dir(),
        source,
    })?;
    let mut lp = Loop::new();
    let stopped_by = lp.run(opts, work.path(), &cancel, &log).await;
    let explore_ms = t0.elapsed().as_millis() as u64;
    let mut found = lp.found;
    let found_dir = opts.out.join("found");
    if !found.is_empty() {
        std::fs::create_dir_all(&found_dir).map_err(|source| ExploreError::Io {
            path: found_dir.clone(),
            source,
        })?;
    }
    for f in &mut found {
        let selected = opts.shrink_rules.is_empty()
            || opts.shrink_rules.iter().any(|g| g.matches(&f.summary.rule));
        let shrink_it = selected && stopped_by != StoppedBy::Interrupted && !cancel.is_cancelled();
        if !selected {
            f.summary.problem = Some(
                "not shrunk nor confirmed: --shrink-rule selects other rules (written as found)"
                    .into(),
            );
        }
        if shrink_it {
            log(&format!(
                "shrinking {} (seed {}, size {})",
                f.summary.rule,
                f.summary.seed,
                shrink::size(&f.scenario)
            ));
        }
        shrink_and_write(
            opts,
            f,
            Treatment {
                shrink: shrink_it,
                confirm: selected,
            },
            &found_dir,
            work.path(),
            &cancel,
        )
        .await;
        if let Some(file) = &f.summary.file {
            log(&format!(
                "{}: {} ({} -> {}){}",
                f.summary.rule,
                opts.out.join(file).display(),
                f.summary.original_size,
                f.summary.shrunk_size,
                if f.summary.confirmed {
                    ""
                } else {
                    " NOT CONFIRMED"
                }
            ));
        }
    }
    let summary = ExploreSummary {
        delegator: opts.delegator.clone(),
        seed: opts.seed,
        topic: opts.topic.map(|t| t.to_string()),
        runs: lp.ran,
        skipped: lp.skipped,
        stopped_by,
        explore_ms,
        wall_ms: t0.elapsed().as_millis() as u64,
        failing_runs: lp.failing_runs,
        findings: found.into_iter().map(|f| f.summary).collect(),
        coverage: lp.coverage,
    };
    let mut results: Vec<(u64, CaseResult)> = lp.results;
    results.sort_by_key(|(seed, _)| *seed);
    Ok(Explored {
        summary,
        results: results.into_iter().map(|(_, r)| r).collect(),
        listed: lp.listed,
    })
}

/// A distinct finding with the scenario of its first occurrence.
struct Found {
    summary: FoundRule,
    scenario: Scenario,
}

/// The state of the exploring loop.
struct Loop {
    ran: u64,
    skipped: u64,
    failing_runs: u64,
    found: Vec<Found>,
    coverage: BTreeMap<String, RuleCounts>,
    listed: BTreeMap<&'static str, usize>,
    results: Vec<(u64, CaseResult)>,
    t0: Instant,
}

impl Loop {
    fn new() -> Self {
        let coverage = registry()
            .iter()
            .filter(|r| r.check.is_some())
            .map(|r| (r.id.to_string(), RuleCounts::default()))
            .collect();
        Loop {
            ran: 0,
            skipped: 0,
            failing_runs: 0,
            found: Vec::new(),
            coverage,
            listed: BTreeMap::new(),
            results: Vec::new(),
            t0: Instant::now(),
        }
    }

    /// Generate and run scenarios, `opts.jobs` at once, until a bound or `cancel`.
    async fn run(
        &mut self,
        opts: &ExploreOptions,
        work: &Path,
        cancel: &CancellationToken,
        log: &Log,
    ) -> StoppedBy {
        let deadline = self.t0 + opts.time;
        let mut next: u64 = 0;
        let mut set = tokio::task::JoinSet::new();
        let mut stopped = None;
        loop {
            while set.len() < opts.jobs && stopped.is_none() {
                if opts.runs.is_some_and(|n| next >= n) {
                    stopped = Some(StoppedBy::Runs);
                } else if Instant::now() >= deadline {
                    stopped = Some(StoppedBy::Time);
                } else if cancel.is_cancelled() {
                    stopped = Some(StoppedBy::Interrupted);
                }
                if stopped.is_some() {
                    break;
                }
                let seed = opts.seed.wrapping_add(next);
                next += 1;
                let generated = generate(seed, opts.topic);
                let s = match bounded(generated, opts) {
                    Ok(s) => s,
                    Err(why) => {
                        self.skipped += 1;
                        log(&format!("seed {seed}: not run: {why}"));
                        continue;
                    }
                };
                let settings = RunSettings {
                    delegator: opts.delegator.clone(),
                    seed,
                    work_dir: work.join(format!("run-{seed}")),
                    binding: None,
                    tls: false,
                };
                set.spawn(async move {
                    let mut r = run_case(&s, &settings).await;
                    add_invariants(&s, &mut r);
                    let _ = std::fs::remove_dir_all(&settings.work_dir);
                    (seed, s, r)
                });
            }
            if set.is_empty() {
                break;
            }
            tokio::select! {
                joined = set.join_next() => match joined {
                    Some(Ok((seed, s, r))) => self.take(opts, seed, s, r, log),
                    Some(Err(e)) => log(&format!("a run's task ended abnormally: {e}")),
                    None => {}
                },
                () = cancel.cancelled() => {
                    // The in-flight runs are dropped: their delegator process groups are killed.
                    set.abort_all();
                    while set.join_next().await.is_some() {}
                    return StoppedBy::Interrupted;
                }
            }
        }
        stopped.unwrap_or(StoppedBy::Runs)
    }

    /// Take in one run's result.
    fn take(
        &mut self,
        opts: &ExploreOptions,
        seed: u64,
        s: Scenario,
        mut r: CaseResult,
        log: &Log,
    ) {
        self.ran += 1;
        r.id = format!("{}@{seed}", s.id);
        for rule in registry() {
            if rule.always || s.rules.iter().any(|x| x == rule.id) {
                *self.listed.entry(rule.id).or_default() += 1;
                self.coverage.entry(rule.id.to_string()).or_default().listed += 1;
            }
        }
        // The history invariants judge every run (explore applies them to each).
        for inv in a2a_harness_core::invariants::INVARIANTS {
            self.coverage.entry(inv.id.to_string()).or_default().listed += 1;
        }
        for v in &r.rules {
            let c = self.coverage.entry(v.id.clone()).or_default();
            match v.verdict {
                Verdict::Pass => c.pass += 1,
                Verdict::Fail if !v.never_sent() => c.fail += 1,
                Verdict::NonStrict => c.non_strict += 1,
                _ => c.not_judged += 1,
            }
        }
        let fs = findings(&r);
        if fs.is_empty() {
            r.journal = Vec::new();
            r.messages = Vec::new();
            r.stderr = String::new();
        } else {
            self.failing_runs += 1;
        }
        for f in fs {
            if let Some(known) = self.found.iter_mut().find(|k| k.summary.rule == f.rule) {
                known.summary.occurrences += 1;
                continue;
            }
            log(&format!(
                "finding: {} {} in {} (seed {seed}): {}",
                f.rule,
                f.verdict.label(),
                s.id,
                f.observed
            ));
            let level =
                a2a_harness_core::invariants::describe(&f.rule).map_or(Level::Must, |(l, _)| l);
            self.found.push(Found {
                summary: FoundRule {
                    rule: f.rule,
                    level,
                    verdict: f.verdict,
                    observed: f.observed,
                    seed,
                    case: r.id.clone(),
                    occurrences: 1,
                    first_after_ms: self.t0.elapsed().as_millis() as u64,
                    file: None,
                    original_size: shrink::size(&s),
                    shrunk_size: shrink::size(&s),
                    steps: Vec::new(),
                    candidates: 0,
                    shrink_runs: 0,
                    shrink_ms: 0,
                    cut_short: false,
                    confirmed: false,
                    found_by: opts.command_for(seed),
                    repro: None,
                    problem: None,
                },
                scenario: s.clone(),
            });
        }
        self.results.push((seed, r));
    }
}

/// Judge a generated run by the history invariants too (verdicts that need no expected
/// outcome), in the loop and in every shrinking run alike, so that [`findings`] sees them.
///
/// The invariants' ids (`HIST-*`) are no registry rules: a found file keeps them out of its
/// `rules` (see `shrink_and_write`); `run` judges them with `--invariants`, which the repro
/// of a `HIST-*` finding carries.
fn add_invariants(s: &Scenario, r: &mut CaseResult) {
    a2a_harness_core::invariants::apply(s, r);
}

/// What [`shrink_and_write`] does to a finding before writing it.
#[derive(Debug, Clone, Copy)]
struct Treatment {
    /// Shrink it (otherwise the scenario is written as found).
    shrink: bool,
    /// Confirm the written scenario (`--confirm` runs).
    confirm: bool,
}

/// Shrink one finding (unless `treat.shrink` is false: then the scenario is written as
/// found), confirm the result (unless `treat.confirm` is false) and write it to `found_dir`.
async fn shrink_and_write(
    opts: &ExploreOptions,
    f: &mut Found,
    treat: Treatment,
    found_dir: &Path,
    work: &Path,
    cancel: &CancellationToken,
) {
    let rule = f.summary.rule.clone();
    let keep_rule = (rule != CONTRACT).then(|| rule.clone());
    let mut start = f.scenario.clone();
    // Listed, so that `run` judges it there (a registry rule only: other ids do not load).
    if let Some(r) = &keep_rule
        && !start.rules.contains(r)
        && registry().iter().any(|x| x.id == r.as_str())
    {
        start.rules.push(r.clone());
    }
    start.id = format!("found.{}.{}", rule.to_ascii_lowercase(), f.summary.seed);
    start.title = format!(
        "explore finding: {rule} (seed {}{})",
        f.summary.seed,
        opts.topic
            .map(|t| format!(", topic {t}"))
            .unwrap_or_default()
    );
    let oracle = oracle::RunOracle {
        handle: tokio::runtime::Handle::current(),
        delegator: opts.delegator.clone(),
        seed: f.summary.seed,
        confirm: opts.confirm,
        jobs: opts.jobs,
        work: work.join(format!("shrink-{}", found_file_name(&rule, f.summary.seed))),
        rule: rule.clone(),
        runs: Arc::new(AtomicUsize::new(0)),
        counter: Arc::new(AtomicU64::new(0)),
        cancel: cancel.clone(),
        baseline: opts.baseline.clone().filter(|b| *b != opts.delegator),
        baseline_failed: Arc::new(AtomicUsize::new(0)),
        slowest_ms: Arc::new(AtomicU64::new(0)),
        time_bound_ms: None,
        deadline: None,
    };
    let limits = shrink::Limits {
        max_runs: opts.shrink_runs,
        max_time: opts.shrink_time,
    };
    let max_bytes = opts.max_bytes;
    let outcome = tokio::task::spawn_blocking(move || {
        let mut oracle = oracle;
        let valid = |c: &Scenario| scripted_bytes(c) <= max_bytes && loadable(c).is_ok();
        // The finding must stand on the start before anything is shrunk from it.
        let mut problem = None;
        let shrink_it = treat.shrink;
        if shrink_it && !oracle.test(std::slice::from_ref(&start))[0] && !oracle.stopped() {
            problem = Some(if oracle.baseline_failed.load(Ordering::Relaxed) > 0 {
                "not shrunk: the baseline delegator fails this scenario too (its expectations may be at fault)".to_string()
            } else {
                format!(
                    "not shrunk: the finding did not show again in every one of {} runs (flaky)",
                    oracle.confirm
                )
            });
        }
        let shrink_it = shrink_it && problem.is_none();
        // Candidates are bounded by the time the finding took to show (with room): one that
        // hangs does not cost the case's whole bound. The final confirmation runs unbounded.
        let slowest = oracle.slowest_ms.load(Ordering::Relaxed);
        if slowest > 0 {
            oracle.time_bound_ms = Some(slowest.saturating_mul(2).saturating_add(3_000));
        }
        oracle.deadline = Some(tokio::time::Instant::now() + limits.max_time);
        let shrunk = if shrink_it {
            Some(shrink::shrink(
                &start,
                keep_rule.as_deref(),
                limits,
                &valid,
                &mut oracle,
            ))
        } else {
            None
        };
        let best = shrunk.as_ref().map_or(&start, |s| &s.scenario).clone();
        oracle.time_bound_ms = None;
        oracle.deadline = None;
        // The final scenario, confirmed again (not when interrupted).
        let confirmed =
            treat.confirm && !oracle.stopped() && oracle.test(std::slice::from_ref(&best))[0];
        (start, shrunk, best, confirmed, oracle.runs(), problem)
    })
    .await;
    let Ok((start, shrunk, best, confirmed, runs, problem)) = outcome else {
        f.summary.problem = Some("the shrinking task ended abnormally".into());
        return;
    };
    f.summary.confirmed = confirmed;
    f.summary.shrink_runs = runs;
    f.summary.original_size = shrink::size(&start);
    f.summary.shrunk_size = shrink::size(&best);
    match &shrunk {
        Some(s) => {
            f.summary.steps = s.steps.clone();
            f.summary.candidates = s.candidates;
            f.summary.shrink_ms = s.elapsed.as_millis() as u64;
            f.summary.cut_short = s.cut_short;
        }
        None => {
            f.summary.problem = Some(
                problem.unwrap_or_else(|| "not shrunk: interrupted (Ctrl-C or SIGTERM)".into()),
            )
        }
    }
    let name = found_file_name(&rule, f.summary.seed);
    let path = found_dir.join(&name);
    // A history invariant is judged by `run` only when asked.
    let invariants = if a2a_harness_core::invariants::INVARIANTS
        .iter()
        .any(|i| i.id == rule)
    {
        " --invariants"
    } else {
        ""
    };
    let repro = format!(
        "a2a-harness run --no-builtin --scenarios {} --seed {} --delegator {}{invariants}",
        a2a_harness_core::delegator_process::shell_quote(&path.display().to_string()),
        f.summary.seed,
        a2a_harness_core::delegator_process::shell_quote(&opts.delegator)
    );
    let text = match scenario_toml(&best) {
        Ok(t) => t,
        Err(e) => {
            f.summary.problem = Some(format!("the scenario does not serialise as TOML: {e}"));
            return;
        }
    };
    let header = output::header(opts, &f.summary, &repro);
    let written = std::fs::write(&path, format!("{header}{text}"))
        .map_err(|e| e.to_string())
        .and_then(|()| a2a_harness_core::catalog::load_case(&path).map_err(|e| e.to_string()));
    match written {
        Ok(_) => {
            f.summary.file = Some(PathBuf::from("found").join(name));
            f.summary.repro = Some(repro);
        }
        Err(e) => f.summary.problem = Some(format!("{}: {e}", path.display())),
    }
    f.scenario = best;
}

/// Write the run-format report (`index.json`, `cases/`, `journals/`, `junit.xml`,
/// `summary.md`, `index.html`) and explore's own (`explore.json`, `explore.md`) into
/// `opts.out`.
pub fn write_report(opts: &ExploreOptions, explored: &Explored) -> std::io::Result<()> {
    let s = &explored.summary;
    let index = a2a_harness_core::report::run_index(
        &a2a_harness_core::report::ReportRun {
            delegator: &opts.delegator,
            seed: opts.seed,
            wall_ms: s.wall_ms,
            incomplete: s.stopped_by == StoppedBy::Interrupted,
        },
        &explored.listed,
        &explored.results,
    );
    a2a_harness_core::report::write_report(&opts.out, &index, &explored.results)?;
    std::fs::write(opts.out.join("explore.json"), serde_json::to_vec_pretty(s)?)?;
    std::fs::write(opts.out.join("explore.md"), summary_markdown(s))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_harness_core::runner::RuleVerdict;

    fn verdict(id: &str, level: Level, verdict: Verdict, observed: &str) -> RuleVerdict {
        RuleVerdict {
            id: id.into(),
            level,
            verdict,
            expected: None,
            observed: Some(observed.into()),
            witnesses: vec![],
        }
    }

    #[test]
    fn a_finding_is_a_broken_must_or_should_or_a_failed_case_with_no_rule_to_blame() {
        let s = generate(1, None);
        let cfg = RunSettings {
            delegator: "d".into(),
            seed: 1,
            work_dir: PathBuf::from("/nonexistent"),
            binding: None,
            tls: false,
        };
        // A contract break or crash: FAIL with no rule verdict.
        let crashed = CaseResult::harness_failure(&s, &cfg, "the delegator exited".into());
        let f = findings(&crashed);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].rule.as_str(), f[0].observed.as_str()),
            (CONTRACT, "the delegator exited")
        );
        // Broken MUST and SHOULD are findings; UNKNOWN, PASS and an unexercised listed rule
        // (the work never sent anywhere) are not.
        let mut r = crashed.clone();
        r.rules = vec![
            verdict("DLG-ART-04", Level::Must, Verdict::Fail, "bad hash"),
            verdict("DLG-SEND-03", Level::Should, Verdict::NonStrict, "blocking"),
            verdict("DLG-OBS-05", Level::Should, Verdict::Unknown, "nothing"),
            verdict("DLG-SEND-02", Level::Must, Verdict::Pass, ""),
            verdict(
                "DLG-SEND-08",
                Level::Should,
                Verdict::Fail,
                "not exercised: the delegator never sent d1 to any agent",
            ),
        ];
        let rules: Vec<String> = findings(&r).into_iter().map(|f| f.rule).collect();
        assert_eq!(rules, ["DLG-ART-04", "DLG-SEND-03"]);
        assert!(shows(&r, "DLG-SEND-03") && !shows(&r, "DLG-SEND-08"));
        // A FAIL only because nothing was sent is no contract break either.
        r.rules.drain(..4);
        assert!(findings(&r).is_empty(), "{:?}", findings(&r));
        r.rules.clear();
        r.verdict = Verdict::Unknown;
        assert!(findings(&r).is_empty());
    }

    #[test]
    fn durations_parse_and_bad_ones_say_what_is_expected() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        for bad in ["", "m", "5x", "5m3", "-1s", "99999999999999999999h"] {
            let e = parse_duration(bad).unwrap_err().to_string();
            assert!(e.contains("no duration"), "{bad}: {e}");
        }
    }
}
