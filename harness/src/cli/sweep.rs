//! `run --crash-sweep` and `run --crash-at-event K`: the console side of
//! [`a2a_harness_core::sweep`], with the same checks before anything runs, the same live console,
//! reports and exit code as `run` ([`super::run`](mod@super::run)).

use super::Ended;
use super::run::{Finished, RunPlan, RunSettings};
use a2a_harness_core::catalog::Catalog;
use a2a_harness_core::console;
use a2a_harness_core::run::default_jobs;
use a2a_harness_core::runner::CaseResult;
use a2a_harness_core::sweep::{self, SweepOptions};
use anyhow::Context;
use std::cell::RefCell;
use std::num::NonZeroU64;
use tokio::signal::unix::{SignalKind, signal as unix_signal};

/// Run the sweep (or one position of it) over the selected cases and write the reports.
pub(super) fn sweep_cases(
    cat: &Catalog,
    a: RunSettings,
    out: &mut impl std::io::Write,
) -> anyhow::Result<Ended> {
    let plan = RunPlan::new(cat, &a)?;
    let (selected, known, delegator) = (&plan.selected, &plan.known, &plan.delegator);
    let out_dir = RunPlan::report_dir(&a, out)?;
    let work = tempfile::tempdir().context("creating the store directory")?;
    let options = SweepOptions {
        delegator: delegator.clone(),
        seed: a.seed,
        jobs: a.jobs.unwrap_or_else(default_jobs).max(1),
        max_positions: a.sweep_max,
        known_failing: known.clone(),
        work_dir: work.path().to_path_buf(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    // The number of position runs is known once the clean runs are done.
    let live: RefCell<Option<console::Live>> = RefCell::new(None);
    let so_far: RefCell<Vec<CaseResult>> = RefCell::new(Vec::new());
    let t0 = std::time::Instant::now();
    let at_event = a.crash_at_event.and_then(NonZeroU64::new);
    if at_event.is_none() {
        writeln!(
            out,
            "crash sweep: a clean run of each of {} cases to learn its journal length...",
            selected.len()
        )?;
        out.flush()?;
    }
    let on_result = |r: &CaseResult| {
        if let Some(l) = live.borrow_mut().as_mut() {
            l.finished(r);
        }
        so_far.borrow_mut().push(r.clone());
    };
    let finished = rt.block_on(async {
        let mut int = unix_signal(SignalKind::interrupt())?;
        let run = async {
            match at_event {
                Some(k) => {
                    *live.borrow_mut() = Some(console::Live::new(
                        selected.len() as u64,
                        known.clone(),
                        a.known_failing.clone(),
                    ));
                    let results = sweep::run_at_event(selected, k, &options, on_result).await;
                    (results, None)
                }
                None => {
                    let report = sweep::crash_sweep(
                        selected,
                        &options,
                        |_, total| {
                            *live.borrow_mut() = Some(console::Live::new(
                                total as u64,
                                known.clone(),
                                a.known_failing.clone(),
                            ));
                        },
                        on_result,
                    )
                    .await;
                    (report.results.clone(), Some(report))
                }
            }
        };
        Ok::<_, std::io::Error>(tokio::select! {
            run = run => Some(run),
            _ = int.recv() => None,
        })
    })?;
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
    if let Some(l) = live.into_inner() {
        l.finish();
    }
    let wall_ms = t0.elapsed().as_millis() as u64;
    let (results, sweep_report, interrupted) = match finished {
        Some((results, report)) => (results, report, None),
        None => (so_far.into_inner(), None, Some(0)),
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
        &[],
        sweep_report.as_ref().map(sweep::summary_text),
        out,
    )
}
