//! The TypeScript example delegator (`examples/ts-delegator`, on the official `@a2a-js/sdk`) run
//! through the harness over the whole catalog: its verdicts must match its known-failing file
//! exactly (no FAIL, no XPASS, no UNKNOWN outside it), and every other case must pass.
//!
//! Needs node >= 20 and the built adapter: `bash scripts/setup-node.sh` (scripts/test.sh runs
//! it). Without them the test fails and says so; it never passes silently.

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn example_dir() -> PathBuf {
    common::root().join("examples").join("ts-delegator")
}

/// Fails with the set-up instruction when node or the built adapter is missing.
fn require_node_and_build() {
    let hint = "run `bash scripts/setup-node.sh` (it installs the adapter's pinned npm dependencies and builds dist/; it needs Node.js >= 20 and npm)";
    let node = Command::new("node").arg("--version").output();
    match node {
        Ok(o) if o.status.success() => {}
        _ => panic!("node is not installed or not on PATH: {hint}"),
    }
    let main = example_dir().join("dist").join("main.js");
    assert!(main.exists(), "{} is missing: {hint}", main.display());
    assert!(
        example_dir()
            .join("node_modules")
            .join("@a2a-js")
            .join("sdk")
            .exists(),
        "examples/ts-delegator/node_modules has no @a2a-js/sdk: {hint}"
    );
}

/// Case ids of the known-failing file (one per line, `#` comments).
fn known_failing(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

fn catalog_size() -> usize {
    let out = Command::new(common::harness())
        .current_dir(common::root())
        .arg("list")
        .output()
        .expect("run a2a-harness list");
    assert!(
        out.status.success(),
        "a2a-harness list failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // `list` prints one case per line: id, then its title.
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count()
}

#[test]
fn ts_example_verdicts_match_its_known_failing_file() {
    require_node_and_build();
    let known_file = example_dir().join("known-failing.txt");
    let known = known_failing(&known_file);
    let out_dir = std::env::temp_dir().join(format!("a2a-ts-example-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out_dir);

    let start = Instant::now();
    let out = Command::new(common::harness())
        .current_dir(common::root())
        .args([
            "run",
            "--delegator",
            "node examples/ts-delegator/dist/main.js",
            "--jobs",
            "4",
        ])
        .arg("--known-failing")
        .arg(&known_file)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("run a2a-harness");
    let wall = start.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        wall < Duration::from_secs(600),
        "the catalog run took {wall:?}"
    );
    assert!(
        out.status.success(),
        "a2a-harness run exited {:?}\n{stdout}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );

    let index: Value = serde_json::from_slice(
        &std::fs::read(out_dir.join("index.json")).expect("index.json written"),
    )
    .expect("index.json parses");
    let cases = index["cases"].as_array().expect("index.json has cases");
    let size = catalog_size();
    assert_eq!(cases.len(), size, "every catalog case ran");

    let mut passed = Vec::new();
    let mut listed = Vec::new();
    let mut wrong = Vec::new();
    for c in cases {
        let id = c["id"].as_str().expect("case id").to_string();
        let verdict = c["verdict"].as_str().expect("verdict").to_string();
        let is_known = known.contains(&id);
        match (verdict.as_str(), is_known) {
            ("PASS", false) => passed.push(id),
            ("XFAIL" | "UNSUPPORTED", true) => listed.push(id),
            _ => wrong.push(format!(
                "{id}: {verdict} (listed in known-failing.txt: {is_known})"
            )),
        }
    }
    assert!(
        wrong.is_empty(),
        "verdicts do not match known-failing.txt:\n{}\n{stdout}",
        wrong.join("\n")
    );
    for k in &known {
        assert!(
            listed.contains(k),
            "stale known-failing entry {k}: no such case ran"
        );
    }
    assert!(!passed.is_empty(), "no case passed");
    assert_eq!(
        passed.len(),
        size - known.len(),
        "passes = catalog size - known-failing entries"
    );
    println!(
        "ts example: {} passed of {size} ({} known failing)",
        passed.len(),
        known.len()
    );
    let _ = std::fs::remove_dir_all(&out_dir);
}
