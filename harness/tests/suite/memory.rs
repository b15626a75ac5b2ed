//! DLG-ART-10 measures the delegator's whole process group against its baseline at `init_ok`:
//! a wrapper whose child holds the memory fails, the reference delegator passes.

use crate::common;

use a2a_harness_core::catalog::{CaseGlob, load_catalog, select};
use a2a_harness_core::delegator_process::shell_quote;
use a2a_harness_core::runner::{CaseResult, RunSettings, Verdict, run_case};

async fn run(case: &str, delegator: String) -> CaseResult {
    let cat = load_catalog(&common::root().join("scenarios")).expect("catalog loads");
    let s = select(&cat, &CaseGlob::new(case).unwrap());
    assert_eq!(s.len(), 1, "{case}");
    let work = tempfile::tempdir().unwrap();
    let cfg = RunSettings {
        delegator,
        seed: 1,
        work_dir: work.path().to_path_buf(),
        binding: None,
        tls: false,
    };
    run_case(&s[0], &cfg).await
}

fn art_10(r: &CaseResult) -> (Verdict, String) {
    let v = r
        .rules
        .iter()
        .find(|v| v.id == "DLG-ART-10")
        .unwrap_or_else(|| panic!("no DLG-ART-10 verdict: {:?}", r.notes));
    (v.verdict, format!("{:?} / {:?}", v.expected, v.observed))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrapper_whose_child_holds_300_mib_fails_art_10() {
    // `sh` leads the process group and stays small; the reference delegator streams the
    // artifact to disk; a filter between it and the harness allocates 300 MiB once the first
    // line after `init_ok` passes (so after the baseline, and before `done` reaches the harness).
    let dir = tempfile::tempdir().unwrap();
    let filter = dir.path().join("filter.py");
    std::fs::write(
        &filter,
        "import sys\nheld = None\nfor line in sys.stdin:\n    if held is None and '\"init_ok\"' not in line:\n        held = b'x' * (300 << 20)\n    sys.stdout.write(line)\n    sys.stdout.flush()\n",
    )
    .unwrap();
    let inner = format!(
        "{} drive | python3 -u {}",
        shell_quote(&common::delegator().display().to_string()),
        shell_quote(&filter.display().to_string())
    );
    let r = run(
        "artifacts.large-stream-memory",
        format!("sh -c {}", shell_quote(&inner)),
    )
    .await;
    let (verdict, detail) = art_10(&r);
    assert_eq!(verdict, Verdict::NonStrict, "{detail}; notes {:?}", r.notes);
    // Judged on the peak of the whole group (the 300 MiB child counted), not on a payload that
    // never streamed.
    let observed = r
        .rules
        .iter()
        .find(|v| v.id == "DLG-ART-10")
        .and_then(|v| v.observed.clone())
        .unwrap_or_default();
    let peak_mib: f64 = observed
        .split(" MiB over ")
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{observed}"));
    assert!(peak_mib >= 300.0, "{observed}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_reference_delegator_streams_within_its_bound() {
    for case in ["artifacts.large-stream-memory", "hostile.huge-event"] {
        let r = run(case, format!("{} drive", common::delegator().display())).await;
        let (verdict, detail) = art_10(&r);
        assert_eq!(
            verdict,
            Verdict::Pass,
            "{case}: {detail}; notes {:?}",
            r.notes
        );
    }
}
