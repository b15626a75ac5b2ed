//! Shared by the `report_*` tests: a small run of the catalog against the reference delegator
//! built with the planted bug `ignore-append` (artifact chunks replace instead of append), so
//! some cases fail DLG-ART-01 with witnesses and some pass.

#![allow(dead_code)]

use super::common;
use a2a_harness_core::catalog::load_catalog;
use a2a_harness_core::run::{Job, run_jobs};
use a2a_harness_core::runner::{CaseResult, RunSettings};
use a2a_harness_core::scenario::Scenario;
use std::path::Path;

/// Cases the planted bug fails (DLG-ART-01/02 on their artifacts).
pub const FAILING: &[&str] = &["artifacts.interleaved-chunks", "hostile.legacy-fields"];
/// Fast cases it does not touch.
pub const PASSING: &[&str] = &["limits.loop-in-chain", "hostile.unknown-field"];

/// The delegator command with the planted bug.
pub fn bugged_delegator() -> String {
    format!(
        "{} drive --bug ignore-append",
        common::delegator().display()
    )
}

/// The whole catalog.
pub fn catalog() -> Vec<Scenario> {
    load_catalog(&common::root().join("scenarios")).expect("the catalog loads")
}

/// Run each list of case ids as its own run (seed 1) against `delegator`, all at once; the
/// results in the order of the lists.
pub fn run_lists(lists: &[&[&str]], delegator: &str, work: &Path) -> Vec<Vec<CaseResult>> {
    let cat = catalog();
    let mut jobs = Vec::new();
    let mut sizes = Vec::new();
    for (k, ids) in lists.iter().enumerate() {
        sizes.push(ids.len());
        for (i, id) in ids.iter().enumerate() {
            let scenario = cat
                .iter()
                .find(|s| s.id == *id)
                .unwrap_or_else(|| panic!("no catalog case {id}"))
                .clone();
            jobs.push(Job {
                scenario,
                settings: RunSettings {
                    delegator: delegator.to_string(),
                    seed: 1,
                    work_dir: work.join(format!("{k}-{i}")),
                    binding: None,
                    tls: false,
                },
                label: None,
            });
        }
    }
    let rt = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let mut all = rt.block_on(run_jobs(jobs, 4, |_| {})).into_iter();
    let out: Vec<Vec<CaseResult>> = sizes
        .iter()
        .map(|n| all.by_ref().take(*n).collect())
        .collect();
    for r in out.iter().flatten() {
        if FAILING.contains(&r.id.as_str()) {
            assert!(
                r.rules
                    .iter()
                    .any(|v| v.id == "DLG-ART-01" && v.verdict.fails_run()),
                "{} did not fail DLG-ART-01 against the planted bug: is {} built with `--features planted-bugs` (scripts/test.sh builds the workspace with --all-features)? notes: {:?}",
                r.id,
                common::delegator().display(),
                r.notes
            );
        }
    }
    out
}

/// Run `ids` against the bugged delegator and write the report into `dir`.
pub fn write_failing_run(ids: &[&str], dir: &Path) -> Vec<CaseResult> {
    let work = tempfile::tempdir().expect("a temporary directory");
    let delegator = bugged_delegator();
    let results = run_lists(&[ids], &delegator, work.path())
        .pop()
        .unwrap_or_default();
    a2a_harness_core::report::write_all(
        dir,
        &a2a_harness_core::report::ReportRun {
            delegator: &delegator,
            seed: 1,
            wall_ms: 1234,
            incomplete: false,
        },
        &catalog(),
        &results,
    )
    .expect("the report is written");
    results
}
