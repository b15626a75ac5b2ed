//! The CI smoke test of the benchmark engine (`a2a-harness bench --quick`): byte-exact verdicts
//! and the output files, a corrupting delegator reported FAILED, a hanging one bounded by the
//! time limit, a malformed workload named by file:line:col. No timing assertions.

use a2a_benches::{BenchOptions, BenchReport, Workload, load_workloads, run_bench};
use std::path::{Path, PathBuf};

/// The workspace root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `target/<profile>/` of this test run.
fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .to_path_buf()
}

/// A binary of the workspace, built by `cargo test --workspace`.
fn bin(name: &str) -> PathBuf {
    let p = bin_dir().join(name);
    assert!(
        p.exists(),
        "{} is missing: run the tests with `cargo test --workspace --all-features` (scripts/test.sh) so it is built",
        p.display()
    );
    p
}

fn reference() -> String {
    format!("{} drive", bin("a2a-delegator").display())
}

fn quick(names: &[&str]) -> Vec<Workload> {
    let all = load_workloads(&root().join("benches/workloads")).expect("default workloads load");
    names
        .iter()
        .map(|n| {
            all.iter()
                .find(|w| w.name == *n)
                .unwrap_or_else(|| panic!("no workload {n}"))
                .quick()
        })
        .collect()
}

fn opts(workloads: Vec<Workload>, delegator: String, out: &Path) -> BenchOptions {
    BenchOptions {
        workloads,
        repeat: None,
        delegator,
        baselines: Vec::new(),
        out: out.to_path_buf(),
        quick: true,
        command: "smoke".into(),
        seed: 7,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_runs_verify_byte_exact_and_write_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let o = opts(
        quick(&["stream-64mib-raw", "parallel-64x4mib", "scale-1000"]),
        reference(),
        dir.path(),
    );
    let r = run_bench(&o, |_| {}).await.unwrap();
    for w in &r.results {
        assert_eq!(
            w.verdict, "ok",
            "{}: {:?}",
            w.workload.name, w.delegator.samples
        );
        assert!(
            w.ceiling.verified,
            "{}: {:?}",
            w.workload.name, w.ceiling.samples
        );
        let s = &w.delegator.samples[0];
        assert_eq!(s.completed, u64::from(w.workload.parallel));
        assert_eq!(s.bytes, w.workload.total_bytes(), "{}", w.workload.name);
        assert!(s.mb_s > 0.0);
    }
    assert!(r.all_verified());
    let text = std::fs::read_to_string(dir.path().join("bench.json")).unwrap();
    let back: BenchReport = serde_json::from_str(&text).unwrap();
    assert_eq!(back.schema_version, a2a_benches::SCHEMA_VERSION);
    assert_eq!(back.results.len(), 3);
    let md = std::fs::read_to_string(dir.path().join("bench.md")).unwrap();
    assert!(md.contains("| scale-1000 | ok |"), "{md}");
    let html = std::fs::read_to_string(dir.path().join("bench.html")).unwrap();
    assert!(html.contains("<svg"), "plots are inline SVG");
    // Comparing a run with itself flags nothing.
    let cmp = a2a_benches::report::compare(&back, &r);
    assert!(!cmp.contains("SLOWER") && !cmp.contains("VERDICT"), "{cmp}");
}

/// A delegator that reports a wrong sha256 for every artifact is FAILED: no throughput figure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupting_delegator_is_a_failed_run() {
    let dir = tempfile::tempdir().unwrap();
    // The reference delegator behind a filter that changes the first hex digit of each sha256.
    let cmd = format!(
        "sh -c '{} | sed -u \"s/\\\"sha256\\\":\\\"[0-9a-f]/\\\"sha256\\\":\\\"x/g\"'",
        reference()
    );
    let o = opts(quick(&["stream-64mib-text"]), cmd, dir.path());
    let r = run_bench(&o, |_| {}).await.unwrap();
    let w = &r.results[0];
    assert_eq!(w.verdict, "FAILED");
    assert!(!r.all_verified());
    let s = &w.delegator.samples[0];
    assert_eq!(s.mb_s, 0.0, "a failed run has no throughput figure");
    assert!(
        s.failures.iter().any(|f| f.contains("CORRUPTED")),
        "{:?}",
        s.failures
    );
    assert!(w.ceiling.verified, "the ceiling is unaffected");
}

/// A delegator that answers init and then never finishes is bounded by the time limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_delegator_is_bounded_by_the_time_limit() {
    let dir = tempfile::tempdir().unwrap();
    let cmd = r#"sh -c 'read l; echo "{\"type\":\"init_ok\",\"name\":\"hang\",\"version\":\"0\",\"supports\":[]}"; exec sleep 600'"#;
    let mut w = quick(&["stream-64mib-text"]);
    w[0].time_limit_s = 10;
    let o = opts(w, cmd.into(), dir.path());
    let t0 = std::time::Instant::now();
    let r = run_bench(&o, |_| {}).await.unwrap();
    assert!(t0.elapsed().as_secs() < 120);
    let s = &r.results[0].delegator.samples[0];
    assert_eq!(r.results[0].verdict, "FAILED");
    assert!(
        s.failures
            .iter()
            .any(|f| f.contains("0 of 1 delegations done")),
        "{:?}",
        s.failures
    );
}

#[test]
fn a_malformed_workload_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("bad.toml");
    std::fs::write(
        &f,
        "name = \"bad\"\nartifact_bytes = \"1MiB\"\npart = \"jpeg\"\n",
    )
    .unwrap();
    let e = load_workloads(dir.path()).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!("{}:3:8: part: ", f.display())),
        "{e}"
    );
    // Through the CLI: exit 2 before anything runs.
    let harness = bin("a2a-harness");
    let out = std::process::Command::new(harness)
        .args(["bench", "--workloads"])
        .arg(&f)
        .args(["--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml:3:8: part:"), "{err}");
    assert!(!dir.path().join("out").exists(), "nothing ran");
}

#[test]
fn every_default_workload_loads() {
    let all = load_workloads(&root().join("benches/workloads")).unwrap();
    assert!(all.len() >= 5);
    assert!(all.iter().any(|w| w.heavy && w.parallel >= 10_000));
}

/// `node` (or `A2A_BENCH_NODE`) and the consumer script, with the SDK checked installed.
fn js_sdk_baseline() -> a2a_benches::Baseline {
    let node =
        std::env::var_os("A2A_BENCH_NODE").map_or_else(|| PathBuf::from("node"), PathBuf::from);
    let script = root().join("benches/js/sdk_consumer.mjs");
    let sdk = a2a_benches::baseline::check_js_sdk(&node, &script).unwrap_or_else(|e| {
        panic!("{e} (scripts/test.sh runs it; it needs Node.js >= 20 and npm)")
    });
    assert!(sdk.starts_with("@a2a-js/sdk "), "{sdk}");
    a2a_benches::Baseline::JsSdk { node, script }
}

/// `.venv/bin/python` (`scripts/setup-python.sh`, which scripts/test.sh runs), checked to
/// import the SDK client the consumer uses.
fn python_sdk_baseline() -> a2a_benches::Baseline {
    let python = root().join(".venv/bin/python");
    let hint = "run `bash scripts/setup-python.sh` (it creates .venv with the pinned a2a-sdk)";
    let probe = std::process::Command::new(&python)
        .args(["-c", "import a2a.client, httpx"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {hint}", python.display()));
    assert!(
        probe.status.success(),
        "{} cannot import a2a.client ({}): {hint}",
        python.display(),
        String::from_utf8_lossy(&probe.stderr).trim()
    );
    a2a_benches::Baseline::PythonSdk {
        python,
        script: root().join("benches/python/sdk_consumer.py"),
    }
}

/// An SDK baseline verifies byte-exact over both delivery modes the consumers speak (a stream;
/// a blocking send for poll) and the three part kinds, with parallel sends; it reports its own
/// CPU and peak RSS, and the report has its row.
async fn sdk_baseline_verifies_byte_exact(baseline: a2a_benches::Baseline) {
    let name = baseline.name();
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(
        quick(&[
            "stream-64mib-text",
            "stream-64mib-raw",
            "data-16mib",
            "poll-16mib-text",
            "parallel-64x4mib",
        ]),
        reference(),
        dir.path(),
    );
    o.baselines = vec![baseline];
    let r = run_bench(&o, |_| {}).await.unwrap();
    for w in &r.results {
        let b = &w.baselines[0];
        assert_eq!(b.name, name);
        assert!(b.verified, "{}: {:?}", w.workload.name, b.samples);
        let s = &b.samples[0];
        assert_eq!(
            s.completed,
            u64::from(w.workload.parallel),
            "{}",
            w.workload.name
        );
        assert_eq!(s.bytes, w.workload.total_bytes(), "{}", w.workload.name);
        assert!(
            s.mb_s > 0.0 && s.cpu_s > 0.0 && s.peak_rss_mib > 1.0,
            "{s:?}"
        );
        // Measured on the journal's clock from the consumer's sends: after the send, before
        // the read ended.
        assert!(
            s.ttfb_ms > 0.0 && s.ttfb_ms <= s.latency_p99_ms,
            "{}: TTFB {} ms, p99 {} ms",
            w.workload.name,
            s.ttfb_ms,
            s.latency_p99_ms
        );
        assert!(
            w.ratio_to_baselines.contains_key(name),
            "{}",
            w.workload.name
        );
    }
    let md = std::fs::read_to_string(dir.path().join("bench.md")).unwrap();
    assert!(md.contains("## Baselines"), "{md}");
    assert!(
        md.contains(&format!("| poll-16mib-text | {name} | ")),
        "{md}"
    );
    assert!(!md.contains("FAILED"), "{md}");
}

/// The js-sdk baseline: the official `@a2a-js/sdk` client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_js_sdk_baseline_verifies_byte_exact() {
    sdk_baseline_verifies_byte_exact(js_sdk_baseline()).await;
}

/// The python-sdk baseline: the official `a2a-sdk` client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_baseline_verifies_byte_exact() {
    sdk_baseline_verifies_byte_exact(python_sdk_baseline()).await;
}

/// A js-sdk consumer that flips one bit of one chunk before hashing it is not verified.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupting_js_consumer_is_not_verified() {
    let dir = tempfile::tempdir().unwrap();
    let a2a_benches::Baseline::JsSdk { node, script } = js_sdk_baseline() else {
        unreachable!()
    };
    // The real consumer, with sha256's update patched to flip a bit of the first chunk hashed.
    let broken = dir.path().join("broken_consumer.mjs");
    std::fs::write(
        &broken,
        format!(
            r#"import {{ createHash }} from "node:crypto";
import {{ pathToFileURL }} from "node:url";
const H = Object.getPrototypeOf(createHash("sha256"));
const update = H.update;
let done = false;
H.update = function (b, ...rest) {{
  if (!done && b.length >= 1024) {{
    done = true;
    b = Buffer.from(b);
    b[0] ^= 1;
  }}
  return update.call(this, b, ...rest);
}};
await import(pathToFileURL({script:?}).href);
"#,
            script = script.display().to_string()
        ),
    )
    .unwrap();
    let mut o = opts(quick(&["stream-64mib-text"]), reference(), dir.path());
    o.baselines = vec![a2a_benches::Baseline::JsSdk {
        node,
        script: broken,
    }];
    let r = run_bench(&o, |_| {}).await.unwrap();
    let w = &r.results[0];
    let b = &w.baselines[0];
    assert!(!b.verified, "{:?}", b.samples);
    let s = &b.samples[0];
    assert_eq!(s.mb_s, 0.0, "an unverified run has no throughput figure");
    assert!(
        s.failures
            .iter()
            .any(|f| f.contains("artifacts differ from the source's")),
        "{:?}",
        s.failures
    );
    assert!(
        w.ratio_to_baselines.is_empty(),
        "no ratio to an unverified baseline"
    );
    assert_eq!(w.verdict, "ok", "the delegator is unaffected");
}

/// A `node` that is not there is refused up front, naming the setup script.
#[test]
fn a_missing_node_is_a_clear_error() {
    let e = a2a_benches::baseline::check_js_sdk(
        Path::new("/nonexistent/node"),
        &root().join("benches/js/sdk_consumer.mjs"),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("/nonexistent/node") && e.contains("scripts/setup-node.sh"),
        "{e}"
    );
}
