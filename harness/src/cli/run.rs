//! `a2a-harness run`: everything is checked (selection, known-failing file, delegator,
//! `--out`) before the first case starts; results print as they come ([`a2a_harness_core::console`]);
//! Ctrl-C stops the run, writes a partial report marked incomplete and removes the temporary
//! directories. `--crash-sweep` and `--crash-at-event` go to [`super::sweep`].

use super::reports::report_dir;
use super::{Ended, check_delegator, default_delegator};
use a2a_driver_contract::HarnessExitCode;
use a2a_harness_core::catalog::{
    CaseGlob, Catalog, Selection, read_known_failing, stale_known_failing,
};
use a2a_harness_core::console;
use a2a_harness_core::report;
use a2a_harness_core::run::{RunOptions, default_jobs, run_with_progress};
use a2a_harness_core::runner::CaseResult;
use a2a_harness_core::scenario::Scenario;
use anyhow::Context;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use tokio::signal::unix::{SignalKind, signal as unix_signal};

/// What `run` was asked for (its command-line options).
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The delegator command; `None`: the reference delegator ([`default_delegator`]).
    pub delegator: Option<String>,
    /// Which cases.
    pub selection: Selection,
    /// Seed for every random choice.
    pub seed: u64,
    /// Cases run in parallel (`None`: [`default_jobs`]).
    pub jobs: Option<usize>,
    /// Runs of each case (seeds seed, seed+1, ...).
    pub repeat: u32,
    /// A file of case ids (or globs) known to fail.
    pub known_failing: Option<PathBuf>,
    /// The report directory (`None`: `reports/<timestamp>`).
    pub out: Option<PathBuf>,
    /// One pass per binding (empty: each case as it says).
    pub bindings: Vec<a2a_protocol::Binding>,
    /// The `--binding` values as given (`jsonrpc`, `all`, ...), for the error when no selected
    /// case has a meaning over them.
    pub binding_names: Vec<String>,
    /// Serve every agent over TLS.
    pub tls: bool,
    /// The crash sweep instead of a plain run ([`super::sweep`]).
    pub crash_sweep: bool,
    /// With `crash_sweep`: at most this many positions per case.
    pub sweep_max: u64,
    /// One crash-sweep position for every selected case ([`super::sweep`]).
    pub crash_at_event: Option<u64>,
    /// Run each case twice and compare.
    pub check_determinism: bool,
    /// Judge every case by the history invariants too.
    pub invariants: bool,
}

/// `run`: the selected cases of `cat` (or the crash sweep of them, when `crash_sweep` or
/// `crash_at_event` says so), the reports and the closing lines on `out`.
pub fn run(cat: &Catalog, a: RunSettings, out: &mut impl std::io::Write) -> anyhow::Result<Ended> {
    if a.crash_sweep || a.crash_at_event.is_some() {
        super::sweep::sweep_cases(cat, a, out)
    } else {
        run_cases(cat, a, out)
    }
}

/// What every form of `run` settles before anything runs: the selected cases, the
/// known-failing entries and the delegator command (checked).
pub(super) struct RunPlan {
    pub(super) selected: Vec<Scenario>,
    pub(super) known: Vec<CaseGlob>,
    pub(super) delegator: String,
}

impl RunPlan {
    pub(super) fn new(cat: &Catalog, a: &RunSettings) -> anyhow::Result<RunPlan> {
        let selected = a.selection.apply(&cat.cases);
        if selected.is_empty() {
            anyhow::bail!(
                "no case matches {} (see `a2a-harness list`)",
                a.selection.describe()
            );
        }
        let known = match &a.known_failing {
            Some(p) => read_known_failing(p)?,
            None => Vec::new(),
        };
        let delegator = match &a.delegator {
            Some(d) => d.clone(),
            None => default_delegator()?,
        };
        check_delegator(&delegator)?;
        Ok(RunPlan {
            selected,
            known,
            delegator,
        })
    }

    /// The report directory of `run` ([`report_dir`], default `reports/<timestamp>`).
    pub(super) fn report_dir(
        a: &RunSettings,
        out: &mut impl std::io::Write,
    ) -> anyhow::Result<PathBuf> {
        report_dir(a.out.clone(), "", out)
    }

    /// Write the reports of `results` to `out_dir`, then `summary` (if any) and the closing
    /// lines on `out`; the exit.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn close(
        &self,
        cat: &Catalog,
        a: &RunSettings,
        out_dir: &Path,
        finished: Finished,
        bindings: &[a2a_protocol::Binding],
        summary: Option<String>,
        out: &mut impl std::io::Write,
    ) -> anyhow::Result<Ended> {
        let Finished {
            results,
            wall_ms,
            interrupted,
        } = finished;
        report::write_all(
            out_dir,
            &report::ReportRun {
                delegator: &self.delegator,
                seed: a.seed,
                wall_ms,
                incomplete: interrupted.is_some(),
            },
            &cat.cases,
            &results,
        )
        .with_context(|| format!("writing reports to {}", out_dir.display()))?;
        if let Some(s) = summary {
            write!(out, "{s}")?;
        }
        let ids: Vec<&str> = self.selected.iter().map(|s| s.id.as_str()).collect();
        let stale = stale_known_failing(&self.known, &ids);
        write!(
            out,
            "{}",
            console::closing(
                &results,
                &stale,
                a.known_failing.as_deref(),
                out_dir,
                bindings,
                interrupted,
            )
        )?;
        if interrupted.is_some() {
            return Ok(Ended::Interrupted);
        }
        let failing = console::Counts::of(&results).failing();
        Ok(HarnessExitCode::for_run(failing as u64).into())
    }
}

/// The results of a run, however it ended.
pub(super) struct Finished {
    pub(super) results: Vec<CaseResult>,
    pub(super) wall_ms: u64,
    /// `Some(cases not run)` when Ctrl-C stopped it.
    pub(super) interrupted: Option<usize>,
}

/// A plain `run` (no crash injection).
fn run_cases(
    cat: &Catalog,
    a: RunSettings,
    out: &mut impl std::io::Write,
) -> anyhow::Result<Ended> {
    let plan = RunPlan::new(cat, &a)?;
    let (selection, selected, known) = (&a.selection, &plan.selected, &plan.known);
    for s in selected {
        for d in &s.bytes_differ {
            eprintln!(
                "a2a-harness: note: case {}: the recorded bytes are not replayed ({d}): the replayed artifact has the recorded length, not its bytes",
                s.id
            );
        }
    }
    let options = RunOptions {
        delegator: plan.delegator.clone(),
        seed: a.seed,
        jobs: a.jobs.unwrap_or_else(default_jobs).max(1),
        repeat: a.repeat,
        known_failing: known.clone(),
        work_dir: None,
        bindings: a.bindings.clone(),
        tls: a.tls,
        running: Default::default(),
        check_determinism: a.check_determinism,
        invariants: a.invariants,
    };
    let per_repeat = a2a_harness_core::run::passes(selected, &options.bindings).len();
    if per_repeat == 0 {
        anyhow::bail!(
            "no case matching {} has a meaning over {} (see each case's `bindings`)",
            selection.describe(),
            a.binding_names.join(", ")
        );
    }
    let out_dir = RunPlan::report_dir(&a, out)?;
    let work = tempfile::tempdir().context("creating the store directory")?;
    let options = RunOptions {
        work_dir: Some(work.path().to_path_buf()),
        ..options
    };
    let total = per_repeat * a.repeat.max(1) as usize * if a.check_determinism { 2 } else { 1 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let live = RefCell::new(console::Live::new(
        total as u64,
        known.clone(),
        a.known_failing.clone(),
    ));
    let so_far: RefCell<Vec<CaseResult>> = RefCell::new(Vec::new());
    let t0 = std::time::Instant::now();
    let finished = rt.block_on(async {
        // Listening before the first case starts.
        let mut int = unix_signal(SignalKind::interrupt())?;
        let run = run_with_progress(selected, &options, |p| {
            live.borrow_mut().finished(p.result);
            so_far.borrow_mut().push(p.result.clone());
        });
        // Names a slow case on the bar while it runs.
        let ticker = async {
            let mut every = tokio::time::interval(std::time::Duration::from_secs(1));
            loop {
                every.tick().await;
                live.borrow_mut().tick(options.running.longest());
            }
        };
        Ok::<_, std::io::Error>(tokio::select! {
            run = run => Some(run),
            _ = int.recv() => None,
            _ = ticker => None,
        })
    })?;
    // Every case task is dropped with the runtime: their delegator process groups are killed
    // before the store directory goes.
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
    live.into_inner().finish();
    let (results, wall_ms, interrupted) = match finished {
        Some(run) => (run.results, run.wall_ms, None),
        None => {
            let done = so_far.into_inner();
            let left = total.saturating_sub(done.len());
            (done, t0.elapsed().as_millis() as u64, Some(left))
        }
    };
    drop(work);
    plan.close(
        cat,
        &a,
        &out_dir,
        Finished {
            results,
            wall_ms,
            interrupted,
        },
        &options.bindings,
        None,
        out,
    )
}
