//! The CLI: exit codes, bad input, and a delegator that breaks the contract.

mod common;

use assert_cmd::Command;

fn harness() -> Command {
    let mut c = Command::new(common::harness());
    c.current_dir(common::root());
    c
}

#[test]
fn list_and_rules_work() {
    let out = harness()
        .arg("list")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(String::from_utf8_lossy(&out).contains("states.completed"));
    let out = harness()
        .arg("rules")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("DLG-SEND-02"));
    assert!(
        text.contains("NOT TESTED"),
        "rules without cases are shown as NOT TESTED"
    );
}

#[test]
fn explain_knows_rules_and_cases_and_rejects_others() {
    harness()
        .args(["explain", "DLG-SEND-02"])
        .assert()
        .success();
    harness()
        .args(["explain", "states.completed"])
        .assert()
        .success();
    harness().args(["explain", "nope"]).assert().code(2);
}

#[test]
fn bad_scenario_directory_is_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.toml"), "id = \"x\"\ntitle = 3\n").unwrap();
    let out = harness()
        .arg("--scenarios")
        .arg(dir.path())
        .arg("list")
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&out);
    assert!(err.contains("bad.toml:2:"), "{err}");
}

#[test]
fn no_matching_case_and_bad_delegator_command_are_exit_2() {
    harness()
        .args(["run", "--case", "no-such-case*"])
        .assert()
        .code(2);
    harness()
        .args([
            "run",
            "--case",
            "states.completed",
            "--delegator",
            "'unterminated",
        ])
        .assert()
        .code(2);
}

#[test]
fn delegator_that_prints_garbage_or_dies_gets_a_recorded_failure() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in [
        "sh -c 'echo this-is-not-json; exit 0'",
        "false",
        "/nonexistent/delegator",
    ] {
        let out = harness()
            .args([
                "run",
                "--case",
                "states.completed",
                "--delegator",
                cmd,
                "--out",
            ])
            .arg(dir.path())
            .timeout(std::time::Duration::from_secs(60))
            .assert()
            .code(1)
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8_lossy(&out);
        assert!(
            text.contains("0 passed, 1 failed, 0 skipped"),
            "{cmd}: {text}"
        );
        assert!(dir.path().join("index.json").exists());
        assert!(dir.path().join("junit.xml").exists());
    }
}

#[test]
fn a_run_writes_every_report_and_known_failing_marks_xpass() {
    let dir = tempfile::tempdir().unwrap();
    let delegator = format!("{} drive", common::delegator().display());
    harness()
        .args([
            "run",
            "--case",
            "states.rejected",
            "--delegator",
            &delegator,
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success();
    for f in [
        "index.json",
        "junit.xml",
        "summary.md",
        "index.html",
        "cases/states.rejected.json",
    ] {
        assert!(dir.path().join(f).exists(), "{f} missing");
    }
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("index.json")).unwrap()).unwrap();
    assert_eq!(index["cases"][0]["verdict"], "PASS");
    let summary = std::fs::read_to_string(dir.path().join("summary.md")).unwrap();
    assert!(
        summary
            .trim_end()
            .ends_with("1 passed, 0 failed, 0 skipped")
    );
    // A passing case listed as known-failing is XPASS, which fails the run: the list is stale.
    let known = dir.path().join("known.txt");
    std::fs::write(&known, "# stale entry\nstates.rejected\n").unwrap();
    let out = harness()
        .args([
            "run",
            "--case",
            "states.rejected",
            "--delegator",
            &delegator,
            "--known-failing",
        ])
        .arg(&known)
        .arg("--out")
        .arg(dir.path().join("again"))
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    assert!(String::from_utf8_lossy(&out).contains("XPASS states.rejected"));
}
