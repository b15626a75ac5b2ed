//! The Python example adapter (`examples/python-delegator/`, a delegator on the official
//! `a2a-sdk`) run through the harness over the whole catalog: its verdicts must match its
//! `known-failing.txt` exactly — every listed case XFAIL, every other case PASS, no FAIL, no
//! XPASS — so the file and the README's figures can never go stale silently.
//!
//! Needs `.venv` made by `scripts/setup-python.sh` (which installs the example's pinned
//! requirements); without it the test fails saying so, it never passes silently.

use crate::common;

use a2a_harness_core::catalog::{load_catalog, read_known_failing};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const EXAMPLE: &str = "examples/python-delegator";

/// The venv's interpreter, checked to import what the example imports.
fn venv_python(root: &Path) -> PathBuf {
    let py = root.join(".venv/bin/python");
    let hint = "run `bash scripts/setup-python.sh` (it creates .venv with a2a-sdk and the \
                example's requirements from examples/python-delegator/requirements.txt)";
    assert!(py.exists(), "{} is missing: {hint}", py.display());
    let probe = Command::new(&py)
        .args([
            "-c",
            "import a2a.client, httpx, jsonschema, google.protobuf",
        ])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {hint}", py.display()));
    assert!(
        probe.status.success(),
        "{} cannot import the example's dependencies ({}): {hint}",
        py.display(),
        String::from_utf8_lossy(&probe.stderr).trim()
    );
    py
}

#[test]
fn python_example_meets_the_catalog_except_its_known_failing_cases() {
    let root = common::root();
    let py = venv_python(&root);
    let script = root.join(EXAMPLE).join("delegator.py");
    let known_file = root.join(EXAMPLE).join("known-failing.txt");
    let known = read_known_failing(&known_file).expect("known-failing.txt parses");
    let catalog = load_catalog(&root.join("scenarios")).expect("catalog loads");
    let expected_xfail: BTreeSet<&str> = catalog
        .iter()
        .filter(|s| known.iter().any(|k| k.matches(&s.id)))
        .map(|s| s.id.as_str())
        .collect();
    for k in &known {
        assert!(
            catalog.iter().any(|s| k.matches(&s.id)),
            "known-failing entry {:?} names no case of the catalog: remove it",
            k.as_str()
        );
    }

    let out = tempfile::tempdir().expect("temp dir");
    let report = out.path().join("report");
    let delegator = format!("{} {}", py.display(), script.display());
    let run = Command::new(common::harness())
        .current_dir(&root)
        .args(["run", "--seed", "1", "--jobs", "4", "--delegator"])
        .arg(&delegator)
        .arg("--known-failing")
        .arg(&known_file)
        .arg("--out")
        .arg(&report)
        .output()
        .expect("run a2a-harness");
    let console = format!(
        "{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );

    let index: Value = serde_json::from_slice(
        &std::fs::read(report.join("index.json"))
            .unwrap_or_else(|e| panic!("no index.json ({e}); console:\n{console}")),
    )
    .expect("index.json is JSON");
    let cases = index["cases"].as_array().expect("index.json cases");
    let verdict_of = |want: &str| -> BTreeSet<&str> {
        cases
            .iter()
            .filter(|c| c["verdict"] == want)
            .filter_map(|c| c["id"].as_str())
            .collect()
    };
    let passed = verdict_of("PASS");
    let xfail = verdict_of("XFAIL");
    let other: Vec<String> = cases
        .iter()
        .filter(|c| c["verdict"] != "PASS" && c["verdict"] != "XFAIL")
        .map(|c| format!("{} {}", c["verdict"], c["id"]))
        .collect();

    assert_eq!(cases.len(), catalog.len(), "every catalog case ran");
    assert!(
        other.is_empty(),
        "verdicts other than PASS and XFAIL (a FAIL, an XPASS: update {EXAMPLE}/known-failing.txt \
         only with a reason): {other:?}\nconsole:\n{console}"
    );
    assert_eq!(
        xfail, expected_xfail,
        "XFAIL cases must be exactly the known-failing ones"
    );
    assert!(!passed.is_empty(), "no case passed: console:\n{console}");
    assert_eq!(
        passed.len(),
        catalog.len() - expected_xfail.len(),
        "every case not listed as known-failing passes"
    );
    assert!(
        run.status.success(),
        "a2a-harness exited {:?}; console:\n{console}",
        run.status.code()
    );
}
