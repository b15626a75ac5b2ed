//! `a2a-harness explore`: options checked (delegator, topic, durations, `--out`) before
//! anything runs; findings print as they come; Ctrl-C or SIGTERM stops exploring or shrinking
//! and writes what there is ([`a2a_harness_explore::explore`]).

use super::reports::report_dir;
use super::{Ended, check_delegator, default_delegator};
use a2a_driver_contract::HarnessExitCode;
use a2a_harness_core::catalog::CaseGlob;
use a2a_harness_core::rules::registry;
use a2a_harness_core::run::default_jobs;
use anyhow::Context;
use std::io::Write as _;
use std::path::PathBuf;
use tokio::signal::unix::{SignalKind, signal as unix_signal};

/// What `explore` was asked for (its command-line options, unparsed: [`explore`] checks them
/// in order and names the option of a bad value).
#[derive(Debug, Clone)]
pub struct ExploreSettings {
    /// The delegator command; `None`: the reference delegator ([`default_delegator`]).
    pub delegator: Option<String>,
    /// Stop starting runs after this long (`90s`, `5m`, `1h30m`).
    pub time: Option<String>,
    /// Stop after this many generated scenarios.
    pub runs: Option<u64>,
    /// The first seed.
    pub seed: u64,
    /// Aim every scenario at one rule family ([`a2a_harness_explore::generate::Topic`]).
    pub topic: Option<String>,
    /// The report directory (`None`: `reports/explore-<timestamp>`).
    pub out: Option<PathBuf>,
    /// Runs at once (`None`: [`default_jobs`]).
    pub jobs: Option<usize>,
    /// Runs a shrinking candidate must fail in to count.
    pub confirm: u32,
    /// The baseline delegator command (`None`: the reference delegator, when there is one).
    pub baseline: Option<String>,
    /// Shrink without a baseline delegator.
    pub no_baseline: bool,
    /// Delegator runs per shrink at most.
    pub shrink_runs: usize,
    /// Wall time per shrink at most (a duration as for `time`).
    pub shrink_time: String,
    /// Shrink only the findings of rules matching these ids or globs (empty: all).
    pub shrink_rule: Vec<String>,
}

/// `--shrink-rule` values as globs, each matching some rule explore can report (a registry
/// rule, a history invariant or `CONTRACT`).
pub fn shrink_rule_globs(values: &[String]) -> anyhow::Result<Vec<CaseGlob>> {
    let ids: Vec<&str> = registry()
        .iter()
        .map(|r| r.id)
        .chain(
            a2a_harness_core::invariants::INVARIANTS
                .iter()
                .map(|i| i.id),
        )
        .chain([a2a_harness_core::report::CONTRACT])
        .collect();
    values
        .iter()
        .map(|v| {
            let g = CaseGlob::new(v).with_context(|| format!("--shrink-rule {v:?}"))?;
            if !ids.iter().any(|id| g.matches(id)) {
                anyhow::bail!(
                    "--shrink-rule {v:?} matches no rule (see `a2a-harness rules`; HIST-01..03 and CONTRACT too)"
                );
            }
            Ok(g)
        })
        .collect()
}

/// `explore`: generated scenarios until the time or the runs are used up, each finding
/// shrunk; the reports, then the summary on `out`; exit 1 when something was found.
pub fn explore(a: ExploreSettings, out: &mut impl std::io::Write) -> anyhow::Result<Ended> {
    use a2a_harness_explore::explore::{self as ex, ExploreOptions, parse_duration};
    let delegator = match a.delegator {
        Some(d) => d,
        None => default_delegator()?,
    };
    check_delegator(&delegator)?;
    let topic = a
        .topic
        .as_deref()
        .map(str::parse::<a2a_harness_explore::generate::Topic>)
        .transpose()
        .context("--topic")?;
    let shrink_rules = shrink_rule_globs(&a.shrink_rule)?;
    let time = match (&a.time, a.runs) {
        (Some(t), _) => parse_duration(t).context("--time")?,
        // --runs alone: the runs bound it (still a day at most).
        (None, Some(_)) => std::time::Duration::from_secs(24 * 3600),
        (None, None) => std::time::Duration::from_secs(300),
    };
    if a.runs == Some(0) {
        anyhow::bail!("--runs must be at least 1");
    }
    anyhow::ensure!(a.confirm >= 1, "--confirm must be at least 1");
    let baseline = match (a.baseline, a.no_baseline) {
        (_, true) => None,
        (Some(b), false) => {
            check_delegator(&b).context("--baseline")?;
            Some(b)
        }
        (None, false) => default_delegator().ok(),
    };
    let out_dir = report_dir(a.out.clone(), "explore-", out)?;
    let opts = ExploreOptions {
        seed: a.seed,
        runs: a.runs,
        time,
        topic,
        jobs: a.jobs.unwrap_or_else(default_jobs).max(1),
        confirm: a.confirm,
        shrink_runs: a.shrink_runs,
        baseline,
        shrink_time: parse_duration(&a.shrink_time).context("--shrink-time")?,
        shrink_rules,
        ..ExploreOptions::new(delegator, out_dir.clone())
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let log: ex::Log = std::sync::Arc::new(|line: &str| {
        let _ = writeln!(anstream::stderr(), "{line}");
    });
    let explored = rt.block_on(async {
        // Listening before the first run starts.
        // Ctrl-C, or SIGTERM (a CI job's timeout): stop and write what there is.
        let mut int = unix_signal(SignalKind::interrupt())?;
        let mut term = unix_signal(SignalKind::terminate())?;
        let on_int = cancel.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = int.recv() => {}
                _ = term.recv() => {}
            }
            on_int.cancel();
        });
        ex::explore(&opts, cancel.clone(), log)
            .await
            .map_err(anyhow::Error::from)
    })?;
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
    ex::write_report(&opts, &explored)
        .with_context(|| format!("writing reports to {}", out_dir.display()))?;
    write!(out, "{}", ex::summary_text(&explored.summary, &out_dir))?;
    if cancel.is_cancelled() {
        return Ok(Ended::Interrupted);
    }
    Ok(if explored.summary.found() {
        HarnessExitCode::Failure
    } else {
        HarnessExitCode::Success
    }
    .into())
}
