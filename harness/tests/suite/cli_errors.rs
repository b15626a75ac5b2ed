//! Errors before anything runs: a case no agent can serve, an unwritable `--out`, and `--out`
//! holding an earlier report (emptied, so no stale case file remains) or someone else's files.

use crate::common;

use assert_cmd::Command;
use std::path::Path;

fn harness() -> Command {
    let mut c = Command::new(common::harness());
    c.current_dir(common::root())
        .env_remove("A2A_HARNESS_SCENARIOS");
    c
}

/// A delegator that leaves a mark when it starts (so a test can tell that nothing ran).
fn marking_delegator(dir: &Path) -> String {
    let p = dir.join("mark.sh");
    std::fs::write(
        &p,
        format!("touch {}\nexit 1\n", dir.join("started").display()),
    )
    .unwrap();
    format!("sh {}", p.display())
}

#[test]
fn a_case_no_agent_can_serve_is_exit_2_naming_file_and_field_before_anything_runs() {
    let cat = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let file = cat.path().join("bad.toml");
    for (body, field) in [
        (
            "[network]\n[[network.agent]]\nname = \"a\"\n[[network.agent.skill]]\nid = \"s\"\n[[delegate]]\nid = \"d1\"\ncapability = \"translate\"\ntext = \"x\"\n",
            "delegate \"d1\": capability: \"translate\" is offered by no agent",
        ),
        (
            "[network]\n[[delegate]]\nid = \"d1\"\ncapability = \"s\"\ntext = \"x\"\n",
            "network.agent: the case has no agents",
        ),
    ] {
        std::fs::write(
            &file,
            format!("id = \"t.bad\"\ntitle = \"t\"\nrules = [\"DLG-STATE-01\"]\n{body}"),
        )
        .unwrap();
        let err = harness()
            .arg("--scenarios")
            .arg(cat.path())
            .args(["run", "--case", "t.bad", "--delegator"])
            .arg(marking_delegator(work.path()))
            .arg("--out")
            .arg(work.path().join("out"))
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        let err = String::from_utf8_lossy(&err);
        assert!(
            err.contains(&format!("{}: {field}", file.display())),
            "{err}"
        );
        assert!(!work.path().join("started").exists(), "a delegator ran");
        assert!(!work.path().join("out").exists(), "a report was written");
    }
}

#[test]
fn an_unwritable_out_is_exit_2_before_anything_runs() {
    let work = tempfile::tempdir().unwrap();
    // Under a regular file: no directory can be made there (whoever runs the test).
    let blocker = work.path().join("a-file");
    std::fs::write(&blocker, "").unwrap();
    let err = harness()
        .args(["run", "--case", "states.*", "--delegator"])
        .arg(marking_delegator(work.path()))
        .arg("--out")
        .arg(blocker.join("out"))
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&err);
    assert!(err.contains("is not writable"), "{err}");
    assert!(!work.path().join("started").exists(), "a delegator ran");
}

#[test]
fn an_old_report_in_out_is_emptied_and_a_foreign_directory_refused() {
    let out = tempfile::tempdir().unwrap();
    let delegator = format!("{} drive", common::delegator().display());
    let run = |case: &str| {
        harness()
            .args(["run", "--case", case, "--delegator", &delegator, "--out"])
            .arg(out.path())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone()
    };
    run("states.rejected");
    assert!(out.path().join("cases/states.rejected.json").exists());
    let again = run("states.completed");
    assert!(
        String::from_utf8_lossy(&again).contains("note: removed the earlier report in"),
        "{}",
        String::from_utf8_lossy(&again)
    );
    let cases: Vec<String> = std::fs::read_dir(out.path().join("cases"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(cases, ["states.completed.json"], "no stale case file");
    // An index.json that is not ours: refused, untouched.
    let foreign = tempfile::tempdir().unwrap();
    std::fs::write(foreign.path().join("index.json"), "{\"mine\": true}").unwrap();
    let err = harness()
        .args([
            "run",
            "--case",
            "states.rejected",
            "--delegator",
            &delegator,
            "--out",
        ])
        .arg(foreign.path())
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(
        String::from_utf8_lossy(&err).contains("no a2a-harness report"),
        "{}",
        String::from_utf8_lossy(&err)
    );
    assert_eq!(
        std::fs::read_to_string(foreign.path().join("index.json")).unwrap(),
        "{\"mine\": true}"
    );
}
