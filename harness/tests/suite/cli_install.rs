//! Installed anywhere: the binaries copied into a bare `bin/` directory run from a directory
//! outside the repository with only that `bin/` and the system directories on PATH, with the
//! built-in catalog or a local one, and their repro lines re-run from yet another directory.

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// `bin/` with the three binaries (hard links where possible: no copy of a large debug binary,
/// and no write handle that could make a concurrent exec fail with ETXTBSY).
fn install(into: &Path) -> PathBuf {
    let bin = into.join("bin");
    std::fs::create_dir(&bin).unwrap();
    for name in ["a2a-harness", "a2a-delegator", "a2a-mock"] {
        let from = if name == "a2a-harness" {
            common::harness()
        } else {
            common::bin_dir().join(name)
        };
        assert!(
            from.exists(),
            "{} is missing: build the workspace binaries first (`cargo build --workspace`)",
            from.display()
        );
        if std::fs::hard_link(&from, bin.join(name)).is_err() {
            std::fs::copy(&from, bin.join(name)).unwrap();
        }
    }
    bin
}

/// Run `sh -c line` in `cwd` with PATH = `bin` and the system directories, bounded.
fn sh(bin: &Path, cwd: &Path, line: &str) -> Output {
    let mut child = Command::new("sh")
        .args(["-c", line])
        .current_dir(cwd)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env_remove("A2A_HARNESS_SCENARIOS")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Bounded: a hung run is killed and reported.
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let guard = std::thread::spawn(move || {
        if rx.recv_timeout(Duration::from_secs(120)).is_err() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    });
    let stdout = child.stdout.take().unwrap();
    let stderr = child.stderr.take().unwrap();
    let err = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let out = std::io::read_to_string(stdout).unwrap_or_default();
    let status = child.wait().unwrap();
    let _ = tx.send(());
    let _ = guard.join();
    Output {
        status,
        stdout: out.into_bytes(),
        stderr: err.join().unwrap_or_default().into_bytes(),
    }
}

fn ok(o: &Output, what: &str) -> String {
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{what}: {:?}\n{text}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    text
}

fn repro_of(report: &Path) -> String {
    let index: Value =
        serde_json::from_slice(&std::fs::read(report.join("index.json")).unwrap()).unwrap();
    index["cases"][0]["repro"].as_str().unwrap().to_string()
}

#[test]
fn the_installed_binaries_run_anywhere_and_their_repro_lines_rerun() {
    let root = tempfile::tempdir().unwrap();
    let bin = install(root.path());
    let here = root.path().join("somewhere");
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir(&here).unwrap();
    std::fs::create_dir(&elsewhere).unwrap();

    // The built-in catalog.
    let list = ok(&sh(&bin, &here, "a2a-harness list"), "list");
    assert!(list.contains("states.completed"), "{list}");
    assert!(list.lines().count() >= 50, "{list}");
    let out = ok(
        &sh(
            &bin,
            &here,
            "a2a-harness run --case states.completed --out rep",
        ),
        "run",
    );
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    let repro = repro_of(&here.join("rep"));
    assert!(
        repro.contains(&bin.join("a2a-delegator").display().to_string()),
        "the delegator is named by its path: {repro}"
    );
    let again = ok(&sh(&bin, &elsewhere, &repro), "repro");
    assert!(again.contains("1 passed, 0 failed"), "{again}");

    // A local catalog only: the repro line names it.
    let local = root.path().join("my-cases");
    std::fs::create_dir(&local).unwrap();
    // The built-in states.completed under another id.
    let text = std::fs::read_to_string(common::root().join("scenarios/states/completed.toml"))
        .unwrap()
        .replace("id = \"states.completed\"", "id = \"mine.one\"");
    std::fs::write(local.join("one.toml"), text).unwrap();
    let out = ok(
        &sh(
            &bin,
            &here,
            "a2a-harness run --scenarios ../my-cases --no-builtin --case 'mine.*' --out rep2",
        ),
        "local run",
    );
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    let repro = repro_of(&here.join("rep2"));
    assert!(
        repro.contains(&format!("--scenarios {}", local.display())),
        "{repro}"
    );
    let again = ok(&sh(&bin, &elsewhere, &repro), "local repro");
    assert!(again.contains("1 passed, 0 failed"), "{again}");
}

#[test]
fn without_a_reference_delegator_the_error_names_every_way_to_get_one() {
    let root = tempfile::tempdir().unwrap();
    let bin = root.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    if std::fs::hard_link(common::harness(), bin.join("a2a-harness")).is_err() {
        std::fs::copy(common::harness(), bin.join("a2a-harness")).unwrap();
    }
    let o = sh(
        &bin,
        root.path(),
        "a2a-harness run --case states.completed --out rep",
    );
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    for want in ["next to this binary", "PATH", "--delegator"] {
        assert!(err.contains(want), "{want}: {err}");
    }
    assert!(!root.path().join("rep").exists(), "nothing ran");
}
