//! `run --crash-sweep` and `run --crash-at-event K`: the console side of
//! [`a2a_harness::sweep`], with the same checks before anything runs, the same live console,
//! reports and exit code as `run`.

use super::{Ended, RunArgs, check_delegator, console, default_delegator, prepare_out};
use a2a_driver_contract::HarnessExitCode;
use a2a_harness::catalog::{Catalog, read_known_failing, stale_known_failing};
use a2a_harness::report;
use a2a_harness::run::default_jobs;
use a2a_harness::runner::CaseResult;
use a2a_harness::sweep::{self, SweepOptions};
use anyhow::Context;
use std::cell::RefCell;
use std::num::NonZeroU64;
use std::path::PathBuf;
use tokio::signal::unix::{SignalKind, signal as unix_signal};

/// Run the sweep (or one position of it) over the selected cases and write the reports.
pub(super) fn sweep_cases(
    cat: &Catalog,
    a: RunArgs,
    out: &mut impl std::io::Write,
) -> anyhow::Result<Ended> {
    let selection = a.select.selection()?;
    let selected = selection.apply(&cat.cases);
    if selected.is_empty() {
        anyhow::bail!(
            "no case matches {} (see `a2a-harness list`)",
            selection.describe()
        );
    }
    let known = match &a.known_failing {
        Some(p) => read_known_failing(p)?,
        None => Vec::new(),
    };
    let delegator = match a.delegator {
        Some(d) => d,
        None => default_delegator()?,
    };
    check_delegator(&delegator)?;
    let out_dir = a
        .out
        .unwrap_or_else(|| PathBuf::from(format!("reports/{}", report::stamp())));
    if prepare_out(&out_dir)? {
        writeln!(
            out,
            "note: removed the earlier report in {}",
            out_dir.display()
        )?;
    }
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
                    let results = sweep::run_at_event(&selected, k, &options, on_result).await;
                    (results, None)
                }
                None => {
                    let report = sweep::crash_sweep(
                        &selected,
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
    report::write_all(
        &out_dir,
        &report::ReportRun {
            delegator: &delegator,
            seed: a.seed,
            wall_ms,
            incomplete: interrupted.is_some(),
        },
        &cat.cases,
        &results,
    )
    .with_context(|| format!("writing reports to {}", out_dir.display()))?;
    if let Some(r) = &sweep_report {
        write!(out, "{}", sweep::summary_text(r))?;
    }
    let ids: Vec<&str> = selected.iter().map(|s| s.id.as_str()).collect();
    let stale = stale_known_failing(&known, &ids);
    write!(
        out,
        "{}",
        console::closing(
            &results,
            &stale,
            a.known_failing.as_deref(),
            &out_dir,
            &[],
            interrupted,
        )
    )?;
    if interrupted.is_some() {
        return Ok(Ended::Interrupted);
    }
    let failing = console::Counts::of(&results).failing();
    Ok(HarnessExitCode::for_run(failing as u64).into())
}
