//! `a2a-harness bench`: everything is checked (workloads, delegator, baselines, the old
//! report) before anything runs; then [`a2a_benches::run_bench`], its table (and the
//! comparison with an earlier report) on stdout.

use super::{check_delegator, default_delegator};
use a2a_driver_contract::HarnessExitCode;
use std::path::{Path, PathBuf};

/// A baseline run in the same session as the delegator benchmarked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchBaseline {
    /// The official Python SDK client (from the interop venv).
    PythonSdk,
    /// The official JavaScript SDK client (`@a2a-js/sdk`, installed by `scripts/setup-node.sh`).
    JsSdk,
    /// The reference delegator.
    Reference,
}

/// What `bench` was asked for (its command-line options).
#[derive(Debug, Clone)]
pub struct BenchSettings {
    /// A workload file or a directory of them.
    pub workloads: PathBuf,
    /// Only these workloads by name (empty: every one not marked heavy).
    pub workload: Vec<String>,
    /// Include heavy workloads.
    pub heavy: bool,
    /// Shrink every workload ([`a2a_benches::Workload::quick`]).
    pub quick: bool,
    /// Repetitions per workload (`None`: each workload's own).
    pub repeat: Option<u32>,
    /// The delegator command; `None`: the reference delegator ([`default_delegator`]).
    pub delegator: Option<String>,
    /// Baselines run in the same session.
    pub baseline: Vec<BenchBaseline>,
    /// The Python interpreter for [`BenchBaseline::PythonSdk`].
    pub python: PathBuf,
    /// The Node.js executable for [`BenchBaseline::JsSdk`].
    pub node: PathBuf,
    /// The output directory (`None`: `reports/bench-<timestamp>`).
    pub out: Option<PathBuf>,
    /// An earlier `bench.json` to compare with.
    pub compare: Option<PathBuf>,
    /// Seed of the generated artifact content.
    pub seed: u64,
    /// The command line, as written into the report.
    pub command: String,
}

/// `bench`: the selected workloads through the delegator and the baselines, the reports
/// (`bench.json`, `bench.md`, `bench.html`) and the table; exit 1 when a run failed
/// verification.
pub fn bench(a: BenchSettings) -> anyhow::Result<HarnessExitCode> {
    let all = a2a_benches::load_workloads(&a.workloads)?;
    let mut selected = a2a_benches::select(all, &a.workload, a.heavy)?;
    if selected.is_empty() {
        anyhow::bail!("no workloads in {}", a.workloads.display());
    }
    if a.quick {
        selected = selected.iter().map(a2a_benches::Workload::quick).collect();
    }
    if a.repeat == Some(0) {
        anyhow::bail!("--repeat must be at least 1");
    }
    let reference = default_delegator();
    let delegator = match a.delegator {
        Some(d) => d,
        None => reference
            .as_ref()
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .clone(),
    };
    check_delegator(&delegator)?;
    let mut baselines = Vec::new();
    let mut seen = Vec::new();
    for b in &a.baseline {
        // Each baseline once: a name is a key of the report's ratios.
        if seen.contains(b) {
            continue;
        }
        seen.push(*b);
        baselines.push(match b {
            BenchBaseline::Reference => {
                let reference = reference.as_ref().map_err(|e| anyhow::anyhow!("{e}"))?;
                check_delegator(reference)?;
                a2a_benches::Baseline::Reference(reference.clone())
            }
            BenchBaseline::PythonSdk => {
                let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../benches/python/sdk_consumer.py");
                let script = if script.exists() {
                    script
                } else {
                    PathBuf::from("benches/python/sdk_consumer.py")
                };
                anyhow::ensure!(
                    a.python.exists(),
                    "--baseline python-sdk: no Python interpreter at {} (set --python or A2A_BENCH_PYTHON; the interop venv: scripts/test.sh builds .venv)",
                    a.python.display()
                );
                anyhow::ensure!(script.exists(), "--baseline python-sdk: {} is missing", script.display());
                a2a_benches::Baseline::PythonSdk {
                    python: a.python.clone(),
                    script,
                }
            }
            BenchBaseline::JsSdk => {
                let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../benches/js/sdk_consumer.mjs");
                let script = if script.exists() {
                    script
                } else {
                    PathBuf::from("benches/js/sdk_consumer.mjs")
                };
                let sdk = a2a_benches::baseline::check_js_sdk(&a.node, &script)?;
                eprintln!("bench: js-sdk baseline: {sdk} ({})", a.node.display());
                a2a_benches::Baseline::JsSdk {
                    node: a.node.clone(),
                    script,
                }
            }
        });
    }
    let old = a
        .compare
        .as_deref()
        .map(a2a_benches::read_report)
        .transpose()?;
    let out = a.out.unwrap_or_else(|| {
        let ts = time::OffsetDateTime::now_utc();
        PathBuf::from(format!(
            "reports/bench-{:04}{:02}{:02}-{:02}{:02}{:02}",
            ts.year(),
            u8::from(ts.month()),
            ts.day(),
            ts.hour(),
            ts.minute(),
            ts.second()
        ))
    });
    let opts = a2a_benches::BenchOptions {
        workloads: selected,
        repeat: a.repeat,
        delegator,
        baselines,
        out: out.clone(),
        quick: a.quick,
        command: a.command,
        seed: a.seed,
    };
    let rt = tokio::runtime::Runtime::new()?;
    let report = rt.block_on(a2a_benches::run_bench(&opts, |m| eprintln!("bench: {m}")))?;
    println!("{}", a2a_benches::report::table(&report));
    let baselines = a2a_benches::report::baseline_table(&report);
    if !baselines.is_empty() {
        println!("baselines:\n{baselines}");
    }
    if let Some(old) = old {
        println!(
            "compared with {}:",
            a.compare
                .as_deref()
                .map(Path::display)
                .map(|d| d.to_string())
                .unwrap_or_default()
        );
        println!("{}", a2a_benches::report::compare(&old, &report));
    }
    println!(
        "reports: {}/bench.json, bench.md, bench.html",
        out.display()
    );
    Ok(if report.all_verified() {
        HarnessExitCode::Success
    } else {
        HarnessExitCode::Failure
    })
}
