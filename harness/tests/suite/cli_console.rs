//! The console of a real run, as a snapshot (times and temporary paths redacted): a failure
//! printed with its rules, notes, the tail of the delegator's stderr and its repro line; a
//! known-failing case printed as XFAIL; a stale known-failing entry reported; the closing
//! counts with each verdict apart.

use crate::common;

use std::path::Path;

/// Replace what changes from run to run: durations, the temporary directory.
fn redact(text: &str, tmp: &Path) -> String {
    let text = text.replace(&tmp.display().to_string(), "[TMP]");
    let times = regex::Regex::new(r"\[ *[0-9]+\.[0-9]s\]").unwrap();
    times.replace_all(&text, "[TIME]").into_owned()
}

#[test]
fn a_failing_run_prints_failures_as_they_happen_and_counts_each_verdict() {
    let tmp = tempfile::tempdir().unwrap();
    // Reads init, complains on stderr, and leaves.
    let script = tmp.path().join("broken.sh");
    std::fs::write(
        &script,
        "read -r init\nfor i in $(seq 1 14); do echo \"stderr line $i\" >&2; done\nexit 3\n",
    )
    .unwrap();
    let known = tmp.path().join("known.txt");
    std::fs::write(&known, "states.rejected\ngone.case  # stale\n").unwrap();
    let o = std::process::Command::new(common::harness())
        .current_dir(common::root())
        .env("NO_COLOR", "1")
        .args([
            "run",
            "--case",
            "states.completed",
            "--case",
            "states.rejected",
        ])
        .args(["--jobs", "1", "--delegator"])
        .arg(format!("sh {}", script.display()))
        .arg("--known-failing")
        .arg(&known)
        .arg("--out")
        .arg(tmp.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(!stdout.contains('\u{1b}'), "no colour off a terminal");
    insta::assert_snapshot!(redact(&stdout, tmp.path()));
}

#[test]
fn colour_is_forced_by_clicolor_force_and_always_off_with_no_color() {
    let out = tempfile::tempdir().unwrap();
    let run = |env: &[(&str, &str)]| {
        let mut c = std::process::Command::new(common::harness());
        c.current_dir(common::root())
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .args([
                "run",
                "--case",
                "states.completed",
                "--delegator",
                "false",
                "--out",
            ])
            .arg(out.path());
        for (k, v) in env {
            c.env(k, v);
        }
        let o = c.output().unwrap();
        assert_eq!(o.status.code(), Some(1));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert!(run(&[("CLICOLOR_FORCE", "1")]).contains("\u{1b}["));
    assert!(!run(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]).contains('\u{1b}'));
    assert!(!run(&[]).contains('\u{1b}'), "no terminal, no colour");
}
