//! `run --check-determinism` and `journal diff`: the whole catalog is deterministic with the
//! reference delegator; a delegator that behaves differently from one run to the next is
//! reported as a nondeterminism finding naming the first difference; `journal diff` on equal,
//! different and bad input.

use crate::common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(common::harness())
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("a2a-harness runs")
}

fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).expect("readable")).expect("JSON")
}

/// The reference delegator command.
fn reference() -> String {
    format!("{} drive", common::delegator().display())
}

#[test]
fn the_whole_catalog_is_deterministic_with_the_reference_delegator() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("report");
    let o = run(&[
        "run",
        "--check-determinism",
        "--seed",
        "11",
        "--delegator",
        &reference(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    let index = read_json(&dir.join("index.json"));
    let cases = index["cases"].as_array().expect("cases").clone();
    let failed: Vec<String> = cases
        .iter()
        .filter(|c| c["verdict"] != "PASS")
        .map(|c| {
            let id = c["id"].as_str().unwrap_or_default();
            let notes = read_json(&dir.join("cases").join(format!("{id}.json")))["notes"].clone();
            format!("{id}: {} {notes}", c["verdict"])
        })
        .collect();
    assert!(failed.is_empty(), "{failed:#?}\n{}", text(&o));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // Every case has its determinism result, right after it.
    let ids: Vec<&str> = cases.iter().filter_map(|c| c["id"].as_str()).collect();
    let checked = ids.iter().filter(|i| i.ends_with("#determinism")).count();
    assert!(
        checked >= 80,
        "{checked} determinism results of {}",
        ids.len()
    );
    assert_eq!(checked * 2, ids.len(), "{ids:?}");
    for pair in ids.chunks(2) {
        assert_eq!(format!("{}#determinism", pair[0]), pair[1], "{ids:?}");
    }
}

#[test]
fn a_delegator_that_changes_between_runs_is_a_nondeterminism_finding() {
    let dir = tempfile::tempdir().unwrap();
    // The first run is the reference delegator; every later one omits `returnImmediately`
    // (a planted bug): the same seed, a different delegator.
    let wrapper = dir.path().join("flaky-delegator.sh");
    let count = dir.path().join("runs");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nn=$(cat '{c}' 2>/dev/null || echo 0)\necho $((n + 1)) > '{c}'\nif [ \"$n\" = 0 ]; then exec '{d}' drive; else exec '{d}' drive --bug blocking-send; fi\n",
            c = count.display(),
            d = common::delegator().display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let report = dir.path().join("report");
    let o = run(&[
        "run",
        "--check-determinism",
        "--case",
        "states.slow-progress",
        "--jobs",
        "1",
        "--delegator",
        wrapper.to_str().unwrap(),
        "--out",
        report.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&count).unwrap().trim(), "2");
    let det = read_json(
        &report
            .join("cases")
            .join("states.slow-progress#determinism.json"),
    );
    assert_eq!(det["verdict"], "FAIL");
    let notes: Vec<&str> = det["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let all = notes.join("\n");
    assert!(all.contains("nondeterminism"), "{all}");
    assert!(
        all.contains("rule DLG-SEND-03: PASS in the first run, NON-STRICT in the second"),
        "{all}"
    );
    // The journal note names the first difference: the send's configuration.
    assert!(all.contains("first difference at line"), "{all}");
    assert!(
        all.contains("they differ at params.configuration.returnImmediately"),
        "{all}"
    );
    // The second run's journal is kept: `journal diff` shows the same difference.
    let first = report.join("cases").join("states.slow-progress.json");
    let second = report
        .join("cases")
        .join("states.slow-progress#determinism.json");
    let o = run(&[
        "journal",
        "diff",
        first.to_str().unwrap(),
        second.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("params.configuration.returnImmediately"),
        "{}",
        text(&o)
    );
}

/// One case run with `seed` into `dir` (a report directory).
fn report_of(case: &str, seed: &str, dir: &Path) {
    let o = run(&[
        "run",
        "--case",
        case,
        "--seed",
        seed,
        "--delegator",
        &reference(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
}

/// `journal diff A B [--case C]`: its exit code, stdout and stderr.
fn journal_diff(a: &Path, b: &Path, case: Option<&str>) -> (Option<i32>, String, String) {
    let mut args = vec!["journal", "diff", a.to_str().unwrap(), b.to_str().unwrap()];
    if let Some(c) = case {
        args.extend(["--case", c]);
    }
    let o = run(&args);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn journal_diff_says_equal_different_or_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    // Two runs with one seed (another seed makes other artifact bytes: a real difference).
    report_of("states.completed", "1", &a);
    report_of("states.completed", "1", &b);
    report_of("states.failed", "1", &c);

    // Two runs of one case: identical modulo ids, ports and timing (report dirs with --case).
    let (code, out, err) = journal_diff(&a, &b, Some("states.completed"));
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        out.contains("identical modulo ids, ports and timing"),
        "{out}{err}"
    );

    // A JSON-lines journal (as `serve --journal` writes) against a case result file.
    let case_a = a.join("cases").join("states.completed.json");
    let lines = dir.path().join("a.jsonl");
    let entries = read_json(&case_a)["journal"].as_array().unwrap().clone();
    assert!(!entries.is_empty());
    let jsonl: String = entries.iter().map(|e| format!("{e}\n")).collect();
    std::fs::write(&lines, &jsonl).unwrap();
    let case_b = b.join("cases").join("states.completed.json");
    let (code, out, err) = journal_diff(&lines, &case_b, None);
    assert_eq!(code, Some(0), "{out}{err}");

    // Another case: different, with the first difference and the entries before it.
    let case_c = c.join("cases").join("states.failed.json");
    let (code, out, err) = journal_diff(&case_a, &case_c, None);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("first difference at line"), "{out}");
    assert!(out.contains("  A: [agent "), "{out}");
    assert!(out.contains("  B: [agent "), "{out}");
    assert!(out.contains("before it, the same in both"), "{out}");

    // --agent-behaviour: a recorder's note is no behaviour of the agent; the full comparison
    // sees it and says the agents' behaviour is the same; another case's task life is a
    // difference.
    let noted = dir.path().join("noted.jsonl");
    let note = serde_json::json!({"seq": entries.len() + 1, "at_us": 1, "agent": entries[0]["agent"],
        "event": "note", "text": "the card's interfaces at 127.0.0.1:1 are proxied at 127.0.0.1:2"});
    std::fs::write(&noted, format!("{jsonl}{note}\n")).unwrap();
    let (code, out, err) = journal_diff(&noted, &case_b, None);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains("no difference in agent behaviour, though"),
        "{out}"
    );
    let o = run(&[
        "journal",
        "diff",
        "--agent-behaviour",
        noted.to_str().unwrap(),
        case_b.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("no difference in agent behaviour ("),
        "{}",
        text(&o)
    );
    let o = run(&[
        "journal",
        "diff",
        "--agent-behaviour",
        case_a.to_str().unwrap(),
        case_c.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(
        said.contains("the agents' behaviour differs") && said.contains("task life"),
        "{said}"
    );
    let (_, out, _) = journal_diff(&case_a, &case_c, None);
    assert!(out.contains("the agents' behaviour differs too"), "{out}");

    // Bad input (exit 2, named on stderr): a broken line by file and line; a directory needs
    // --case; a missing file; an unknown case; a JSON file that is no journal.
    let broken = dir.path().join("broken.jsonl");
    let first_line = jsonl.lines().next().unwrap();
    std::fs::write(&broken, format!("{first_line}\n{{\"seq\": \"x\"}}\n")).unwrap();
    let missing = dir.path().join("missing.jsonl");
    let not_journal = dir.path().join("other.json");
    std::fs::write(&not_journal, "{\"tool\": 1}").unwrap();
    for (x, y, case, says) in [
        (
            &broken,
            &lines,
            None,
            format!("{}:2: not a journal entry", broken.display()),
        ),
        (&a, &lines, None, "--case".to_string()),
        (&missing, &lines, None, missing.display().to_string()),
        (
            &a,
            &b,
            Some("no.such-case"),
            "no result for case \"no.such-case\"".to_string(),
        ),
        (&not_journal, &lines, None, "neither a journal".to_string()),
    ] {
        let (code, out, err) = journal_diff(x, y, case);
        assert_eq!(code, Some(2), "{says}: {out}{err}");
        assert!(err.contains(&says), "{says}: {err}");
    }

    // --help says what is ignored and the exit codes.
    let o = run(&["journal", "diff", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(help.contains("Ignored: entry sequence numbers"), "{help}");
    assert!(help.contains("EXIT CODES: 0 identical"), "{help}");
    assert!(
        help.contains("AGENT BEHAVIOUR (--agent-behaviour): Only what"),
        "{help}"
    );
}
