//! Adversarial delegators (`tests/adversaries/adversary.py`): each speaks the driver protocol and
//! does none of the work (never answers `init`; reports FAILED, COMPLETED or REFUSED at once;
//! fabricates artifacts; sends the first request and never reads the reply). Over the whole
//! catalog each must get 0 PASS: no case passes on evidence the delegator did not produce.

use crate::common;

use a2a_harness_core::catalog::load_catalog;
use a2a_harness_core::run::{RunOptions, run};
use a2a_harness_core::runner::Verdict;
use a2a_harness_core::scenario::Scenario;

/// Every catalog case, its bound cut to a few seconds: an adversary needs no time to do nothing,
/// and the verdicts must not depend on running out of it.
fn catalog(bound_ms: u64) -> Vec<Scenario> {
    let mut cat = load_catalog(&common::root().join("scenarios")).expect("catalog loads");
    for s in &mut cat {
        s.timeout_ms = s.timeout_ms.min(bound_ms);
    }
    cat
}

/// The Python interpreter's own path (`sys.executable`), not the `python3` found on PATH: that
/// one may be a version manager's shim (pyenv's is a shell script costing about 0.15 CPU-s a
/// start, 150 CPU-s over the six catalog runs here).
fn python() -> Option<String> {
    ["python3", "python"].into_iter().find_map(|p| {
        let out = std::process::Command::new(p)
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .ok()?;
        let exe = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (out.status.success() && !exe.is_empty()).then_some(exe)
    })
}

async fn zero_pass(mode: &str) {
    let py = python().expect("python3 on PATH (the adversaries are Python scripts)");
    let script = common::root().join("harness/tests/adversaries/adversary.py");
    // Adversaries that answer at once keep the catalog's bounds (they never reach them); the
    // two that never answer are cut short.
    let waits = matches!(mode, "never-init" | "send-no-read");
    let cases = catalog(if waits { 6000 } else { 600_000 });
    // `-S`: no site module. The script needs only the standard library, and a machine's `.pth`
    // hooks (certifi patching, say) would cost more than the script at every start.
    let mut options = RunOptions::new(format!("{py} -S {} {mode}", script.display()));
    // The two that never answer sit idle until the bound: many at once cost no CPU (168 cases
    // x 6 s at 12 at once took 90 s of the suite; at 40, about 25 s).
    options.jobs = if waits { 40 } else { 12 };
    options.seed = 1;
    let report = run(&cases, &options).await;
    assert_eq!(report.results.len(), cases.len());
    let passed: Vec<(&str, Vec<&str>)> = report
        .results
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Pass | Verdict::XPass))
        .map(|r| {
            (
                r.id.as_str(),
                r.rules
                    .iter()
                    .filter(|v| v.verdict == Verdict::Pass)
                    .map(|v| v.id.as_str())
                    .collect(),
            )
        })
        .collect();
    if !waits {
        // The verdicts judge what the adversary did, not a machine too loaded to let it answer:
        // every delegation it was given got its instant outcome.
        let unanswered: Vec<(&str, &Vec<String>)> = report
            .results
            .iter()
            .filter(|r| r.notes.iter().any(|n| n.contains("time bound")))
            .map(|r| (r.id.as_str(), &r.notes))
            .collect();
        assert!(unanswered.is_empty(), "{mode}: {unanswered:#?}");
    }
    eprintln!(
        "adversary {mode}: {:?}",
        report.results.iter().fold(
            std::collections::BTreeMap::<String, usize>::new(),
            |mut m, r| {
                *m.entry(format!("{:?}", r.verdict)).or_default() += 1;
                m
            }
        )
    );
    assert!(
        passed.is_empty(),
        "adversary {mode} passed {} of {} cases (with the rules that passed): {passed:#?}",
        passed.len(),
        cases.len()
    );
    assert_eq!(
        report.totals().passed,
        0,
        "{mode}: nothing counted as passed"
    );
    assert!(report.failed(), "{mode}: the run fails");
}

#[tokio::test(flavor = "multi_thread")]
async fn never_answers_init() {
    zero_pass("never-init").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn done_failed_at_once() {
    zero_pass("done-failed").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn done_completed_at_once() {
    zero_pass("done-completed").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn done_refused_at_once() {
    zero_pass("done-refused").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn fabricates_artifacts_without_contacting_an_agent() {
    zero_pass("fabricate").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sends_and_never_reads_the_reply() {
    zero_pass("send-no-read").await;
}
