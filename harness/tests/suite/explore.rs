//! `a2a-harness explore`: against the reference delegator it finds nothing; against planted
//! bugs it finds the rule each breaks and writes a shrunk scenario that fails that rule with
//! the bugged delegator (`run --scenarios FILE`) and passes with the reference one. Short:
//! fixed seeds, bounded runs and shrinks.

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A planted bug of the reference delegator (`--bug`), the family explore is aimed at, the
/// rule it breaks that the test hunts (`--shrink-rule`: its other consequences are reported
/// unshrunk) and the generated runs to explore.
struct Bug {
    name: &'static str,
    topic: &'static str,
    rule: &'static str,
    runs: u64,
}

const fn bug(name: &'static str, topic: &'static str, rule: &'static str, runs: u64) -> Bug {
    Bug {
        name,
        topic,
        rule,
        runs,
    }
}

/// Every planted bug of `a2a-delegator --bug` (`delegator/src/bugs.rs`): a row each, the
/// slow ones first (their runs wait out deadlines and restarts) so the others overlap them.
const BUGS: &[Bug] = &[
    bug("no-recovery", "rec", "DLG-REC-01", 4),
    bug("no-local-deadline", "limit", "DLG-LIMIT-03", 8),
    bug("misreport-sha256", "art", "DLG-ART-04", 8),
    bug("forward-own-credential", "auth", "DLG-AUTH-01", 8),
    bug("blocking-send", "send", "DLG-SEND-03", 12),
    bug("random-message-id-on-retry", "retry", "DLG-SEND-02", 8),
    bug("ignore-append", "art", "DLG-ART-02", 8),
    bug("keep-last-chunk-only", "art", "DLG-ART-02", 8),
    bug("no-limit-checks", "limit", "DLG-LIMIT-07", 8),
    bug("assume-task", "send", "DLG-SEND-05", 8),
    bug("guess-inputs", "input", "DLG-INPUT-03", 8),
    bug("message-terminal-task", "state", "DLG-STATE-05", 8),
    bug("ignore-unknown-state", "state", "DLG-STATE-04", 8),
    bug("no-input-cap", "input", "DLG-INPUT-04", 8),
    bug("persist-secrets", "auth", "DLG-SECRET-01", 8),
    bug("constant-poll-interval", "obs", "DLG-OBS-05", 12),
    // Seed 3 of the art topic sends a data: url, which the bug decodes and reports.
    bug("fetch-any-url", "art", "DLG-URL-01", 4),
];

/// Planted bugs this test does not explore, with the reason. `fixed-retry-backoff` (a constant
/// pause at the base) breaks DLG-RETRY-02, whose growth statistic a few load-stretched gaps can
/// satisfy: explored beside the rest of the suite on two cores, 18 runs of the retry topic
/// (three backoff_grows visits) missed it once in CI. The self-test catches it (its cases re-run
/// two at a time), and on a quiet machine `explore --delegator '… --bug fixed-retry-backoff'
/// --topic retry --runs 18 --seed 1` finds it.
const NOT_EXPLORED_HERE: &[(&str, &str)] = &[
    (
        "fixed-retry-backoff",
        "a timing statistic that the suite's load can hide; the self-test catches it",
    ),
    ("skip-card-signature", TRANSPORT_SECURITY),
    ("canonicalise-wrong", TRANSPORT_SECURITY),
    ("accept-any-certificate", TRANSPORT_SECURITY),
    ("https-downgrade", TRANSPORT_SECURITY),
    ("tls12-only", TRANSPORT_SECURITY),
];

/// Why the transport-security bugs are not explored here.
const TRANSPORT_SECURITY: &str = "explore finds it (`explore --topic route --runs 48 --seed 1` against it: 4 to 8 failing runs, found by its own DLG-SIGN or DLG-TLS rule), but this test's time is the suite's longest and the self-test catches it in the security.* cases";

/// Bugs explored at once (each runs two cases at a time). More buys little (8 at once: 191 s
/// instead of 207 s; the longest explorations set the time) and their start-up burst, 30-odd
/// processes, starved the SDK adapters' tests running beside them past their `init` bound.
const AT_ONCE: usize = 4;

fn reference() -> String {
    format!("{} drive", common::delegator().display())
}

fn bugged(bug: &str) -> String {
    format!("{} --bug {bug}", reference())
}

fn harness(args: &[&str]) -> Output {
    Command::new(common::harness())
        .args(args)
        .output()
        .expect("a2a-harness runs")
}

fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn explore_against_the_reference_delegator_finds_nothing_and_writes_its_report() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("r");
    let o = harness(&[
        "explore",
        "--delegator",
        &reference(),
        "--runs",
        "10",
        "--seed",
        "11",
        "--jobs",
        "4",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("no findings"), "{stdout}");
    assert!(stdout.contains("10 runs"), "{stdout}");
    for f in [
        "index.json",
        "junit.xml",
        "summary.md",
        "index.html",
        "explore.json",
        "explore.md",
    ] {
        assert!(dir.join(f).is_file(), "{f} written");
    }
    let summary = read_json(&dir.join("explore.json"));
    assert_eq!(summary["runs"], 10);
    assert_eq!(summary["seed"], 11);
    assert_eq!(summary["findings"].as_array().unwrap().len(), 0);
    // Coverage: per rule PASS/FAIL/NON-STRICT counts, and some rule was evaluated.
    let cov = summary["coverage"].as_object().unwrap();
    assert!(
        cov.values().any(|c| c["pass"].as_u64() > Some(0)),
        "{cov:?}"
    );
    assert!(cov.values().all(|c| c["fail"] == 0), "{cov:?}");
    // Always-on rules are listed by every run.
    assert_eq!(cov["DLG-SEND-02"]["listed"], 10, "{cov:?}");
    let md = std::fs::read_to_string(dir.join("explore.md")).unwrap();
    assert!(
        md.contains("| rule | level | listed | judged |"),
        "per-rule table with levels: {md}"
    );
    assert!(md.contains("| DLG-SEND-02 | MUST | 10 |"), "{md}");
    // In ten runs some rule is never judged, and the table says why.
    assert!(
        md.contains("never judged") || md.contains("no run listed it"),
        "{md}"
    );
    let index = read_json(&dir.join("index.json"));
    assert_eq!(index["cases"].as_array().unwrap().len(), 10);
    assert!(!dir.join("found").exists());
}

#[test]
fn explore_usage_errors_exit_2_before_anything_runs() {
    let out = tempfile::tempdir().unwrap();
    let d = out.path().to_str().unwrap();
    let o = harness(&[
        "explore",
        "--delegator",
        "/nonexistent/delegator",
        "--out",
        d,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    for (args, says) in [
        (vec!["--topic", "nope"], "unknown topic"),
        (vec!["--time", "5x"], "no duration"),
        (vec!["--runs", "0"], "--runs"),
        (vec!["--confirm", "0"], "--confirm"),
        (vec!["--shrink-time", "soon"], "no duration"),
        (vec!["--shrink-rule", "DLG-NOPE-1"], "matches no rule"),
    ] {
        let reference = reference();
        let mut all = vec!["explore", "--delegator", reference.as_str()];
        all.extend(args.iter().copied());
        all.extend(["--out", d]);
        let o = harness(&all);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(says),
            "{all:?}: {}",
            text(&o)
        );
        assert!(
            !Path::new(d).join("index.json").exists(),
            "{all:?} ran nothing"
        );
    }
}

/// Explore one planted bug, then check its shrunk file with `run --scenarios FILE`.
fn explore_bug(b: &Bug, work: &Path) -> Result<(), String> {
    let bug = b.name;
    let dir = work.join(bug);
    let explore = [
        "explore",
        "--delegator",
        &bugged(bug),
        "--baseline",
        &reference(),
        "--runs",
        &b.runs.to_string(),
        "--seed",
        "1",
        "--topic",
        b.topic,
        "--jobs",
        "2",
        "--confirm",
        "2",
        "--shrink-runs",
        "30",
        "--shrink-time",
        "20s",
        "--shrink-rule",
        b.rule,
        "--out",
        dir.to_str().unwrap(),
    ];
    let o = harness(&explore);
    if o.status.code() != Some(1) {
        return Err(format!("{bug}: explore should exit 1\n{}", text(&o)));
    }
    let summary = read_json(&dir.join("explore.json"));
    let found = summary["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == b.rule)
        .ok_or_else(|| format!("{bug}: no finding for {}\n{}", b.rule, text(&o)))?
        .clone();
    let rule = b.rule;
    // Found within two minutes of exploring.
    if found["first_after_ms"]
        .as_u64()
        .is_none_or(|ms| ms > 120_000)
    {
        return Err(format!("{bug}: not found within 2 minutes: {found}"));
    }
    // A history invariant is judged by `run` with `--invariants` (the repro says so).
    let invariants: &[&str] = if rule.starts_with("HIST-") {
        &["--invariants"]
    } else {
        &[]
    };
    let file: PathBuf = dir.join(
        found["file"]
            .as_str()
            .ok_or_else(|| format!("{bug}: no file: {found}"))?,
    );
    let seed = found["seed"].as_u64().unwrap().to_string();
    let repro = found["repro"].as_str().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    if !stdout.contains(repro) {
        return Err(format!("{bug}: the repro line is printed\n{stdout}"));
    }
    let header = std::fs::read_to_string(&file).unwrap();
    for needle in [
        format!("# rule: {rule}"),
        format!("# seed: {seed}"),
        "# size: ".to_string(),
        "# found by: a2a-harness explore".to_string(),
    ] {
        if !header.contains(&needle) {
            return Err(format!("{bug}: header lacks {needle:?}\n{header}"));
        }
    }
    if found["shrunk_size"].as_u64() > found["original_size"].as_u64() {
        return Err(format!("{bug}: grew: {found}"));
    }
    // The found file run with `run --scenarios FILE` (what the repro line does).
    let run_file = |delegator: &str, out: &Path| {
        let file = file.to_str().unwrap();
        let out = out.to_str().unwrap();
        let args = [
            "run",
            "--no-builtin",
            "--scenarios",
            file,
            "--seed",
            &seed,
            "--delegator",
            delegator,
            "--out",
            out,
        ];
        harness(&[&args[..], invariants].concat())
    };
    // (a) the bugged delegator fails the same rule.
    let again = dir.join("again");
    let o = run_file(&bugged(bug), &again);
    let index = read_json(&again.join("index.json"));
    let failed: Vec<Value> = index["cases"][0]["failed_rules"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if o.status.code() == Some(2) || !failed.iter().any(|r| r["id"] == rule) {
        return Err(format!(
            "{bug}: the shrunk file does not fail {rule}: {failed:?}\n{}",
            text(&o)
        ));
    }
    // (b) the reference delegator passes it.
    let o = run_file(&reference(), &dir.join("clean"));
    if o.status.code() != Some(0) {
        return Err(format!(
            "{bug}: the reference delegator fails the shrunk file\n{}\n{header}",
            text(&o)
        ));
    }
    Ok(())
}

#[test]
fn explore_finds_each_planted_bug_and_its_shrunk_file_reproduces_it() {
    let work = tempfile::tempdir().unwrap();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let problems: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..AT_ONCE)
            .map(|_| {
                let (work, next) = (work.path(), &next);
                s.spawn(move || {
                    let mut problems = Vec::new();
                    while let Some(b) =
                        BUGS.get(next.fetch_add(1, std::sync::atomic::Ordering::SeqCst))
                    {
                        if let Err(e) = explore_bug(b, work) {
                            problems.push(e);
                        }
                    }
                    problems
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|h| h.join().expect("no panic"))
            .collect()
    });
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Every planted bug the delegator knows has a row, and every row is a planted bug.
#[test]
fn every_planted_bug_has_a_row() {
    let o = Command::new(common::delegator())
        .args(["drive", "--bug", "no-such-bug"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("a2a-delegator runs");
    let err = String::from_utf8_lossy(&o.stderr);
    let known: Vec<&str> = err
        .split("(known: ")
        .nth(1)
        .and_then(|t| t.split(')').next())
        .unwrap_or_else(|| panic!("the bugs are listed: {err}"))
        .split(", ")
        .collect();
    let rows: Vec<&str> = BUGS
        .iter()
        .map(|b| b.name)
        .chain(NOT_EXPLORED_HERE.iter().map(|(name, why)| {
            assert!(!why.is_empty(), "{name}: a reason");
            *name
        }))
        .collect();
    let mut sorted = (known.clone(), rows.clone());
    sorted.0.sort_unstable();
    sorted.1.sort_unstable();
    assert_eq!(sorted.0, sorted.1, "planted bugs vs rows");
}
