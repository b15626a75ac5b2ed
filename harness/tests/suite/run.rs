//! The library run loop (`a2a_harness_core::run`): parallel jobs, repeats, known-failing lists and
//! a result for every job, against the reference delegator.

use crate::common;

use a2a_harness_core::catalog::{CaseGlob, load_catalog, select};
use a2a_harness_core::run::{Job, RunOptions, run, run_jobs};
use a2a_harness_core::runner::{RunSettings, Verdict};

fn cases(pattern: &str) -> Vec<a2a_harness_core::scenario::Scenario> {
    let cat = load_catalog(&common::root().join("scenarios")).expect("catalog loads");
    select(&cat, &CaseGlob::new(pattern).unwrap())
}

fn delegator() -> String {
    format!("{} drive", common::delegator().display())
}

#[tokio::test(flavor = "multi_thread")]
async fn repeats_are_reported_per_seed_in_catalog_order() {
    let cases = cases("states.{completed,rejected}");
    assert_eq!(cases.len(), 2);
    let mut options = RunOptions::new(delegator());
    options.seed = 7;
    options.repeat = 2;
    options.jobs = 2;
    let report = run(&cases, &options).await;
    let ids: Vec<&str> = report.results.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        vec![
            "states.completed@7",
            "states.rejected@7",
            "states.completed@8",
            "states.rejected@8"
        ]
    );
    assert!(
        report.results.iter().all(|r| r.verdict == Verdict::Pass),
        "{:?}",
        report
            .results
            .iter()
            .map(|r| (&r.id, r.verdict, &r.notes))
            .collect::<Vec<_>>()
    );
    assert_eq!(report.totals().passed, 4);
    assert!(!report.failed());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_known_failing_case_that_passes_fails_the_run() {
    let cases = cases("states.completed");
    let mut options = RunOptions::new(delegator());
    options.known_failing = vec![CaseGlob::new("states.*").unwrap()];
    let mut seen = Vec::new();
    let report = a2a_harness_core::run::run_with_progress(&cases, &options, |p| {
        seen.push((p.result.id.clone(), p.done, p.total))
    })
    .await;
    assert_eq!(seen, vec![("states.completed".to_string(), 1, 1)]);
    assert_eq!(report.results[0].verdict, Verdict::XPass);
    assert!(report.failed());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_that_cannot_start_its_delegator_still_gets_a_result() {
    let cases = cases("states.completed");
    let job = |delegator: &str, label: Option<&str>| Job {
        scenario: cases[0].clone(),
        settings: RunSettings {
            delegator: delegator.to_string(),
            seed: 1,
            work_dir: std::env::temp_dir().join("a2a-harness-run-test"),
            binding: None,
            tls: false,
        },
        label: label.map(str::to_string),
    };
    let results = run_jobs(
        vec![
            job("/no/such/delegator drive", Some("missing")),
            job("'unterminated", None),
        ],
        2,
        |_| {},
    )
    .await;
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].id, "missing");
    assert_eq!(results[1].id, "states.completed");
    for r in &results {
        assert_eq!(r.verdict, Verdict::Fail, "{:?}", r.notes);
    }
    assert!(
        results[1]
            .notes
            .iter()
            .any(|n| n.contains("bad delegator command")),
        "{:?}",
        results[1].notes
    );
}
