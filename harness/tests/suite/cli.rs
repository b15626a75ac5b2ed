//! The CLI: exit codes, bad input, and a delegator that breaks the contract.

use crate::common;

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
    // Every rule shows how many cases list it, or that it is always-on (judged where its
    // situation arises: never claimed for the whole catalog), or NOT TESTED when none does;
    // the history invariants (HIST-*) come after the rules, judged by explore, sweeps and
    // --invariants. Group headings (`== ... ==`) and the requirements at a glance are the rest.
    let mut in_glance = false;
    for line in text.lines() {
        if line.starts_with("== ") {
            in_glance = line.starts_with("== A2A 1.0 client requirements");
            continue;
        }
        if in_glance {
            assert!(line.contains(" rows: "), "{line}");
            continue;
        }
        assert!(
            line.contains(" cases ")
                || line.contains("always-on, listed in")
                || line.contains("NOT TESTED")
                || (line.starts_with("HIST-") && line.contains("history invariant")),
            "{line}"
        );
    }
    assert!(in_glance, "the requirements at a glance come last: {text}");
    assert!(text.contains("all    68 rows: "), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("HIST-")).count(),
        3,
        "{text}"
    );
    let send02 = text.lines().find(|l| l.starts_with("DLG-SEND-02")).unwrap();
    assert!(send02.contains("always-on, listed in"), "{send02}");
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
    let c19 = harness()
        .args(["explain", "C-19"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let c19 = String::from_utf8_lossy(&c19);
    assert!(c19.contains("DLG-ROUTE-07"), "{c19}");
    harness().args(["explain", "nope"]).assert().code(2);
    harness().args(["explain", "C-69"]).assert().code(2);
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
    for cmd in ["sh -c 'echo this-is-not-json; exit 0'", "false"] {
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
            text.contains(
                "0 passed, 1 failed, 0 non-strict, 0 xfail, 0 xpass, 0 unknown, 0 skipped"
            ),
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
    assert_eq!(
        index["schema_version"],
        a2a_driver_contract::INDEX_SCHEMA_VERSION
    );
    // The index a real run writes is what the published schema describes.
    let schema: serde_json::Value = serde_json::from_slice(
        &std::fs::read(common::root().join("docs/report-schema/index.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&index)
        .map(|e| e.to_string())
        .collect();
    assert!(
        errors.is_empty(),
        "index.json vs index.schema.json: {errors:?}"
    );
    let typed: a2a_driver_contract::RunIndex = serde_json::from_value(index.clone()).unwrap();
    assert_eq!(typed.totals.passed, 1);
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
    let text = String::from_utf8_lossy(&out);
    assert!(
        text.lines()
            .any(|l| l.contains("XPASS") && l.contains("states.rejected")),
        "{text}"
    );
    assert!(
        text.contains("hint: it passed but is listed as known-failing (states.rejected in "),
        "{text}"
    );
}

/// A catalog of one small case `t.one` (one delegation `d1` with `text`) bounded by `timeout_ms`.
fn tiny_catalog(timeout_ms: u64, text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("one.toml"),
        format!(
            r#"id = "t.one"
title = "one delegation that completes"
rules = ["DLG-STATE-01"]
timeout_ms = {timeout_ms}

[network]
seed = 11
[[network.agent]]
name = "worker"
[[network.agent.skill]]
id = "summarize"
[[network.agent.rule]]
steps = [{{ do = "state", state = "TASK_STATE_COMPLETED" }}]

[[delegate]]
id = "d1"
capability = "summarize"
text = "{text}"
"#
        ),
    )
    .unwrap();
    dir
}

/// Write a throwaway delegator script into `dir`; returns the `--delegator` command.
fn script(dir: &Path, name: &str, interpreter: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    format!("{interpreter} {}", p.display())
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
    out: PathBuf,
}

/// `a2a-harness [--scenarios DIR] run --case CASE --delegator CMD --out OUT [extra]`, bounded.
fn run(scenarios: Option<&Path>, case: &str, delegator: &str, out: &Path, extra: &[&str]) -> Run {
    let mut c = harness();
    if let Some(s) = scenarios {
        c.arg("--scenarios").arg(s);
    }
    c.args(["run", "--case", case, "--delegator", delegator, "--out"])
        .arg(out)
        .args(extra)
        .timeout(Duration::from_secs(40));
    let t0 = Instant::now();
    let o = c.output().unwrap();
    Run {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        took: t0.elapsed(),
        out: out.to_path_buf(),
    }
}

impl Run {
    fn case(&self, id: &str) -> Value {
        let p = self.out.join("cases").join(format!("{id}.json"));
        serde_json::from_slice(&std::fs::read(&p).unwrap_or_else(|e| {
            panic!(
                "{}: {e}\nstdout: {}\nstderr: {}",
                p.display(),
                self.stdout,
                self.stderr
            )
        }))
        .unwrap()
    }
}

fn notes(case: &Value) -> Vec<String> {
    case["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .collect()
}

const INIT_OK: &str = r#"{"type":"init_ok","name":"t","version":"0","supports":[]}"#;

#[test]
fn init_ok_wait_is_bounded_by_the_case_deadline() {
    // A delegator that chatters without ever answering init: each line used to restart a 15 s
    // wait, forever.
    let cat = tiny_catalog(1500, "x");
    let out = tempfile::tempdir().unwrap();
    let d = script(
        cat.path(),
        "chatty.sh",
        "sh",
        r#"while :; do echo '{"type":"state","id":"d1","state":"WORKING","task_id":null,"context_id":null}'; sleep 0.2; done"#,
    );
    let r = run(Some(cat.path()), "t.one", &d, out.path(), &[]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.took < Duration::from_secs(12), "took {:?}", r.took);
    let n = notes(&r.case("t.one"));
    assert!(
        n.iter()
            .any(|n| n.contains("did not answer init within 1500 ms")),
        "{n:?}"
    );
    assert!(n.iter().any(|n| n == "contract: state before init_ok"));
}

#[test]
fn a_garbage_flood_is_cut_off_with_counted_notes() {
    let cat = tiny_catalog(30_000, "x");
    let out = tempfile::tempdir().unwrap();
    let r = run(
        Some(cat.path()),
        "t.one",
        "sh -c 'yes garbage'",
        out.path(),
        &[],
    );
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.took < Duration::from_secs(15), "took {:?}", r.took);
    let case = r.case("t.one");
    assert_eq!(case["verdict"], "FAIL");
    let n = notes(&case);
    assert!(n.len() <= 210, "{} notes", n.len());
    assert!(n.iter().any(|n| {
        n.contains("stopped reading the delegator's stdout after 1000 non-protocol lines")
    }));
    assert!(
        n.iter()
            .any(|n| n.contains("more non-protocol stdout lines not listed (1000 in all)")),
        "{n:?}"
    );
}

#[test]
fn messages_are_capped_and_the_rest_counted() {
    let cat = tiny_catalog(10_000, "x");
    let out = tempfile::tempdir().unwrap();
    let d = script(
        cat.path(),
        "chatty.py",
        "python3",
        &format!(
            r#"import sys, json
sys.stdin.readline()
w = sys.stdout.write
w({INIT_OK:?} + "\n")
sys.stdin.readline()
line = json.dumps({{"type": "state", "id": "d1", "state": "WORKING", "task_id": None, "context_id": None}}) + "\n"
w(line * 10050)
w(json.dumps({{"type": "done", "id": "d1", "state": "COMPLETED", "reason": "r", "task_id": None, "context_id": None, "message": None, "artifacts": []}}) + "\n")
sys.stdout.flush()
for l in sys.stdin:
    if json.loads(l)["type"] == "snapshot":
        w('{{"type":"snapshot_ok","records":[]}}\n')
        sys.stdout.flush()
"#
        ),
    );
    let r = run(Some(cat.path()), "t.one", &d, out.path(), &[]);
    assert!(r.took < Duration::from_secs(20), "took {:?}", r.took);
    let case = r.case("t.one");
    assert_eq!(case["messages"].as_array().unwrap().len(), 10_000);
    let n = notes(&case);
    assert!(
        n.iter()
            .any(|n| n.contains("53 more protocol messages not kept (the first 10000 are)")),
        "{n:?}"
    );
}

#[test]
fn a_delegator_that_does_not_read_its_stdin_cannot_block_the_run() {
    // The delegate line (1 MiB) cannot fit in the pipe of a delegator that never reads.
    let cat = tiny_catalog(1500, &"x".repeat(1 << 20));
    let out = tempfile::tempdir().unwrap();
    let d = script(
        cat.path(),
        "deaf.sh",
        "sh",
        &format!("echo '{INIT_OK}'\nexec sleep 60\n"),
    );
    let r = run(Some(cat.path()), "t.one", &d, out.path(), &[]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.took < Duration::from_secs(12), "took {:?}", r.took);
    let case = r.case("t.one");
    assert_eq!(case["verdict"], "FAIL");
    let n = notes(&case);
    assert!(
        n.iter()
            .any(|n| n.starts_with("contract: the delegator did not read its stdin")),
        "{n:?}"
    );
}

#[test]
fn a_case_that_panics_is_a_recorded_failure() {
    if !cfg!(debug_assertions) {
        return; // the planted panic exists only in debug builds
    }
    let out = tempfile::tempdir().unwrap();
    let delegator = format!("{} drive", common::delegator().display());
    let o = harness()
        .env("A2A_HARNESS_TEST_PANIC", "states.rejected")
        .args([
            "run",
            "--case",
            "states.rejected",
            "--delegator",
            &delegator,
            "--out",
        ])
        .arg(out.path())
        .timeout(Duration::from_secs(40))
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8_lossy(&o);
    assert!(
        text.contains("0 passed, 1 failed, 0 non-strict, 0 xfail, 0 xpass, 0 unknown, 0 skipped"),
        "{text}"
    );
    let case: Value = serde_json::from_slice(
        &std::fs::read(out.path().join("cases/states.rejected.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(case["verdict"], "FAIL");
    assert!(
        notes(&case)
            .iter()
            .any(|n| n.contains("panicked: A2A_HARNESS_TEST_PANIC")),
        "{case}"
    );
}

#[test]
fn repeats_are_reported_under_their_own_ids() {
    let out = tempfile::tempdir().unwrap();
    let delegator = format!("{} drive", common::delegator().display());
    let r = run(
        None,
        "states.rejected",
        &delegator,
        out.path(),
        &["--repeat", "2", "--seed", "5"],
    );
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("2 passed, 0 failed, 0 non-strict, 0 xfail, 0 xpass, 0 unknown, 0 skipped")
    );
    for id in ["states.rejected@5", "states.rejected@6"] {
        let case = r.case(id);
        assert_eq!(case["id"], id);
    }
    let index: Value =
        serde_json::from_slice(&std::fs::read(out.path().join("index.json")).unwrap()).unwrap();
    let row = index["matrix"][&delegator].as_object().unwrap();
    assert_eq!(
        row.keys().collect::<Vec<_>>(),
        ["states.rejected@5", "states.rejected@6"]
    );
    assert_eq!(index["cases"].as_array().unwrap().len(), 2);
}

#[test]
fn binding_passes_are_reported_per_binding_and_reproducible() {
    let out = tempfile::tempdir().unwrap();
    let delegator = format!("{} drive", common::delegator().display());
    let r = run(
        None,
        "states.rejected",
        &delegator,
        out.path(),
        &["--binding", "rest,grpc"],
    );
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    for b in ["rest", "grpc"] {
        assert!(
            r.stdout.contains(&format!(
                "{b}: 1 passed, 0 failed, 0 non-strict, 0 xfail, 0 xpass, 0 unknown, 0 skipped"
            )),
            "{}",
            r.stdout
        );
        let case = r.case(&format!("states.rejected:{b}"));
        assert_eq!(case["binding"], b);
        assert!(
            case["repro"]
                .as_str()
                .unwrap()
                .contains(&format!("--binding {b}")),
            "{case}"
        );
        // The journal shows the traffic went over that binding.
        let journal = case["journal"].as_array().unwrap();
        assert!(
            journal.iter().any(|e| e["event"] == "request"
                && e["binding"] == b
                && e["method"].as_str().is_some_and(|m| m.starts_with("Send"))),
            "no send over {b}"
        );
    }
    // A case that has no meaning over the only binding asked for is refused, not silently passed.
    let r = run(
        None,
        "hostile.wrong-rpc-id",
        &delegator,
        out.path(),
        &["--binding", "grpc"],
    );
    assert_eq!(r.code, Some(2), "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("no case matching"), "{}", r.stderr);
    let r = run(None, "*", &delegator, out.path(), &["--binding", "soap"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(r.stderr.contains("jsonrpc"), "{}", r.stderr);
}

#[test]
fn a_missing_or_non_executable_delegator_is_exit_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let not_exec = dir.path().join("not-executable");
    std::fs::write(&not_exec, "#!/bin/sh\n").unwrap();
    let not_exec = not_exec.display().to_string();
    for (cmd, named) in [
        ("/nonexistent/delegator drive", "/nonexistent/delegator"),
        (
            "no-such-delegator-on-path-xyz",
            "no-such-delegator-on-path-xyz",
        ),
        (not_exec.as_str(), not_exec.as_str()),
    ] {
        let r = run(None, "states.completed", cmd, &dir.path().join("out"), &[]);
        assert_eq!(r.code, Some(2), "{cmd}: {}", r.stderr);
        assert!(r.stderr.contains(named), "{cmd}: {}", r.stderr);
        assert!(!dir.path().join("out").exists(), "nothing ran");
    }
}

#[test]
fn the_default_delegator_falls_back_to_path_with_a_note() {
    // A harness binary without a sibling a2a-delegator.
    let dir = tempfile::tempdir().unwrap();
    let lonely = dir.path().join("a2a-harness");
    // A hard link opens no file for writing, so no concurrently forked test child can hold a
    // write handle to it (which makes exec fail with ETXTBSY); copy only across filesystems.
    if std::fs::hard_link(common::harness(), &lonely).is_err() {
        std::fs::copy(common::harness(), &lonely).unwrap();
    }
    let o = std::process::Command::new(&lonely)
        .current_dir(common::root())
        .env("PATH", "/usr/bin:/bin")
        .args(["run", "--case", "states.rejected", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("no a2a-delegator next to this binary") && err.contains("a2a-delegator"),
        "{err}"
    );
    // On PATH, it is named and used.
    let bin = common::delegator();
    let path = format!("{}:/usr/bin:/bin", bin.parent().unwrap().display());
    let o = std::process::Command::new(&lonely)
        .current_dir(common::root())
        .env("PATH", path)
        .args(["run", "--case", "states.rejected", "--out"])
        .arg(dir.path().join("out2"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains(&bin.display().to_string()), "{err}");
}

#[test]
fn contract_breaks_are_checked_against_the_driver_schemas() {
    let cat = tiny_catalog(5000, "x");
    let out = tempfile::tempdir().unwrap();
    let d = script(
        cat.path(),
        "sloppy.py",
        "python3",
        &format!(
            r#"import sys, json
def w(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
sys.stdin.readline()
w(json.loads({INIT_OK:?}))
sys.stdin.readline()
w({{"type": "state", "id": "d1", "state": "WORKING_HARD", "task_id": None, "context_id": None}})
w({{"type": "bogus", "id": "d1"}})
done = {{"type": "done", "id": "d1", "state": "COMPLETED", "reason": "r", "task_id": None, "context_id": None, "message": None, "artifacts": []}}
w(done)
w(done)
for l in sys.stdin:
    if json.loads(l)["type"] == "snapshot":
        w({{"type": "snapshot_ok", "records": []}})
"#
        ),
    );
    let r = run(Some(cat.path()), "t.one", &d, out.path(), &[]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    let case = r.case("t.one");
    assert_eq!(case["verdict"], "FAIL");
    let n = notes(&case);
    for want in [
        "contract: state message violates docs/driver-schema/state.json",
        "contract: unknown message type \"bogus\"",
        "contract: a second done for \"d1\" in the same process life",
    ] {
        assert!(n.iter().any(|n| n.starts_with(want)), "{want}: {n:?}");
    }
}

/// A delegator that answers `delegate` with `unsupported`, optionally breaking the contract too.
fn declining(dir: &Path, also_break: bool) -> String {
    script(
        dir,
        if also_break { "decl-bad.py" } else { "decl.py" },
        "python3",
        &format!(
            r#"import sys, json
def w(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
sys.stdin.readline()
w(json.loads({INIT_OK:?}))
sys.stdin.readline()
if {}:
    w({{"type": "bogus"}})
w({{"type": "error", "id": "d1", "code": "unsupported", "message": "no"}})
for l in sys.stdin:
    if json.loads(l)["type"] == "snapshot":
        w({{"type": "snapshot_ok", "records": []}})
"#,
            if also_break { "True" } else { "False" }
        ),
    )
}

#[test]
fn unsupported_does_not_hide_a_contract_break() {
    let cat = tiny_catalog(5000, "x");
    let out = tempfile::tempdir().unwrap();
    let r = run(
        Some(cat.path()),
        "t.one",
        &declining(cat.path(), false),
        out.path(),
        &[],
    );
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("0 passed, 0 failed, 0 non-strict, 0 xfail, 0 xpass, 0 unknown, 1 skipped"),
        "{}",
        r.stdout
    );
    let r = run(
        Some(cat.path()),
        "t.one",
        &declining(cat.path(), true),
        &out.path().join("bad"),
        &[],
    );
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert_eq!(r.case("t.one")["verdict"], "FAIL");
}

#[test]
fn an_over_long_line_is_one_contract_note() {
    // Python's start-up on a loaded 2-core machine can take seconds: the case's bound must not
    // be what this test measures.
    let cat = tiny_catalog(10_000, "x");
    let out = tempfile::tempdir().unwrap();
    let d = script(
        cat.path(),
        "long.py",
        "python3",
        &format!(
            r#"import sys
sys.stdin.readline()
sys.stdout.write({INIT_OK:?} + "\n")
sys.stdout.write("x" * (17 << 20) + "\n")
sys.stdout.flush()
for l in sys.stdin:
    if '"snapshot"' in l:
        sys.stdout.write('{{"type":"snapshot_ok","records":[]}}\n')
        sys.stdout.flush()
"#
        ),
    );
    let r = run(Some(cat.path()), "t.one", &d, out.path(), &[]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    let n = notes(&r.case("t.one"));
    assert_eq!(
        n.iter()
            .filter(|n| n.starts_with("contract: line longer than 16 MiB"))
            .count(),
        1,
        "{n:?}"
    );
    assert!(
        !n.iter().any(|n| n.contains("non-protocol stdout line")),
        "{n:?}"
    );
}

#[test]
fn the_repro_command_survives_a_quote_in_the_delegator_command() {
    let cat = tiny_catalog(2000, "x");
    let out = tempfile::tempdir().unwrap();
    let delegator = r#"sh -c "exit 1 # it's""#;
    let r = run(Some(cat.path()), "t.one", delegator, out.path(), &[]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    let repro = r.case("t.one")["repro"].as_str().unwrap().to_string();
    let dir = cat.path().display().to_string();
    assert!(repro.starts_with("a2a-harness run --case t.one --scenarios "));
    // Run the repro through a real shell, with printf in place of the harness.
    let o = std::process::Command::new("sh")
        .args(["-c", &repro.replacen("a2a-harness", "printf '%s\\n'", 1)])
        .output()
        .unwrap();
    let words: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(
        words,
        [
            "run",
            "--case",
            "t.one",
            "--scenarios",
            &dir,
            "--seed",
            "1",
            "--delegator",
            delegator
        ]
    );
}

#[test]
fn serve_takes_the_seed_of_a_run_and_help_names_real_cases() {
    use std::io::BufRead;
    let mut child = std::process::Command::new(common::harness())
        .current_dir(common::root())
        .args(["serve", "states.completed", "--seed", "5"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut serving = None;
    let until = Instant::now() + Duration::from_secs(15);
    while let Ok(line) = rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
        if line.starts_with("serving case") {
            serving = Some(line);
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    // The case's network seed is 11; 11 ^ 5 = 14.
    let serving = serving.expect("serve printed its banner");
    assert!(serving.contains("with network seed 14"), "{serving}");
    for (sub, want) in [("run", "'states.*'"), ("serve", "serve states.completed")] {
        let o = harness().args([sub, "--help"]).output().unwrap();
        let help = String::from_utf8_lossy(&o.stdout);
        assert!(help.contains(want), "{sub}: {help}");
        assert!(!help.contains("state."), "{sub}: {help}");
    }
}

#[test]
fn an_environment_prefix_in_the_delegator_command_reaches_the_delegator() {
    let out = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // A wrapper that only runs the delegator when the variable arrived.
    let wrapper = script(
        dir.path(),
        "wrapper",
        "sh",
        "[ \"$A2A_TEST_VAR\" = 'a b' ] || { echo \"A2A_TEST_VAR=$A2A_TEST_VAR\" >&2; exit 3; }\nexec \"$@\"",
    );
    let delegator = format!(
        "A2A_TEST_VAR='a b' {wrapper} {} drive",
        common::delegator().display()
    );
    let r = run(None, "states.completed", &delegator, out.path(), &[]);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("1 passed, 0 failed, 0 non-strict, 0 xfail, 0 xpass, 0 unknown, 0 skipped"),
        "{}",
        r.stdout
    );
}
