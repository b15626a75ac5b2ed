//! The streaming benchmark engine behind `a2a-harness bench`: workloads as data
//! ([`Workload`]), a mock source in process, the ceiling (a raw reader of the same responses
//! from the same source, run back to back with each delegator run), any delegator driven
//! through the driver contract, optional baselines, byte-exact verification against the
//! journal, and reports (`bench.json`, `bench.md`, `bench.html`).

pub mod baseline;
pub mod plot;
pub mod procfs;
pub mod report;
pub mod run;
pub mod source;
pub mod workload;

pub use report::{BenchReport, SCHEMA_VERSION, Side, Spread, WorkloadResult};
pub use workload::{ByteSize, Workload, WorkloadError, load_workloads};

use std::path::{Path, PathBuf};

/// A baseline run in the same session as the delegator under test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Baseline {
    /// The official Python SDK client (`a2a-sdk`) reading and hashing the same stream, run
    /// with this Python interpreter.
    PythonSdk {
        /// The interpreter (the interop venv's `python`).
        python: PathBuf,
        /// The consumer script (`benches/python/sdk_consumer.py`).
        script: PathBuf,
    },
    /// The official JavaScript SDK client (`@a2a-js/sdk`, as pinned by
    /// `examples/ts-delegator`) reading and hashing the same stream, run with this Node.js.
    JsSdk {
        /// The `node` executable.
        node: PathBuf,
        /// The consumer script (`benches/js/sdk_consumer.mjs`).
        script: PathBuf,
    },
    /// Another delegator command (normally the reference delegator).
    Reference(String),
}

impl Baseline {
    /// Its name in reports.
    pub fn name(&self) -> &'static str {
        match self {
            Baseline::PythonSdk { .. } => "python-sdk",
            Baseline::JsSdk { .. } => "js-sdk",
            Baseline::Reference(_) => "reference",
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// The workloads (already selected and, for `--quick`, shrunk).
    pub workloads: Vec<Workload>,
    /// Repetitions (overrides each workload's `repeat`).
    pub repeat: Option<u32>,
    /// The delegator command.
    pub delegator: String,
    /// Baselines.
    pub baselines: Vec<Baseline>,
    /// Output directory (`bench.json`, `bench.md`, `bench.html`; a `work/` scratch dir).
    pub out: PathBuf,
    /// `--quick` was given (recorded).
    pub quick: bool,
    /// The command line (recorded).
    pub command: String,
    /// Seed of the generated content.
    pub seed: u64,
}

/// The bench could not run or write its results.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A workload problem.
    #[error(transparent)]
    Workload(#[from] WorkloadError),
    /// Writing the results or the scratch dir failed.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// `bench.json` could not be serialised or an old one read.
    #[error("{path}: {message}")]
    Json {
        /// The path.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> BenchError + '_ {
    move |source| BenchError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Select workloads by name (`None`: every one not `heavy`, unless `heavy`).
pub fn select(
    all: Vec<Workload>,
    names: &[String],
    heavy: bool,
) -> Result<Vec<Workload>, WorkloadError> {
    if names.is_empty() {
        return Ok(all.into_iter().filter(|w| heavy || !w.heavy).collect());
    }
    let mut out = Vec::new();
    for n in names {
        match all.iter().find(|w| &w.name == n) {
            Some(w) => out.push(w.clone()),
            None => {
                return Err(WorkloadError::Selection(format!(
                    "no workload named {n:?} (known: {})",
                    all.iter()
                        .map(|w| w.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
    }
    Ok(out)
}

/// Run every workload (ceiling, delegator, baselines, paired per repetition), print each
/// result as it comes through `progress`, and write `bench.json`, `bench.md` and
/// `bench.html` into `opts.out`.
pub async fn run_bench(
    opts: &BenchOptions,
    mut progress: impl FnMut(&str),
) -> Result<BenchReport, BenchError> {
    std::fs::create_dir_all(&opts.out).map_err(io_err(&opts.out))?;
    run::fixed_mmap_threshold();
    let work = opts.out.join("work");
    std::fs::create_dir_all(&work).map_err(io_err(&work))?;
    let started_at = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let mut results = Vec::new();
    for w in &opts.workloads {
        let n = opts.repeat.unwrap_or(w.repeat).max(1);
        let (mut ceil, mut del) = (Vec::new(), Vec::new());
        let mut base: Vec<Vec<run::RunSample>> = vec![Vec::new(); opts.baselines.len()];
        for i in 0..n {
            progress(&format!(
                "{}: repetition {}/{n}: ceiling, delegator{}",
                w.name,
                i + 1,
                opts.baselines
                    .iter()
                    .map(|b| format!(", {}", b.name()))
                    .collect::<String>()
            ));
            let seed = opts.seed;
            ceil.push(run::ceiling(w, seed).await);
            del.push(run::delegator(w, seed, &opts.delegator, &work).await);
            for (k, b) in opts.baselines.iter().enumerate() {
                let s = match b {
                    Baseline::Reference(cmd) => run::delegator(w, seed, cmd, &work).await,
                    Baseline::PythonSdk { python, script } => {
                        baseline::python_sdk(w, seed, python, script).await
                    }
                    Baseline::JsSdk { node, script } => {
                        baseline::js_sdk(w, seed, node, script).await
                    }
                };
                base[k].push(s);
            }
        }
        let baselines = opts
            .baselines
            .iter()
            .zip(base)
            .map(|(b, s)| Side::new(b.name(), s))
            .collect();
        let r = WorkloadResult::new(w.clone(), ceil, del, baselines);
        progress(&format!(
            "{}: {} — delegator {:.1} MB/s, ceiling {:.1} MB/s, ratio {:.2}",
            w.name,
            r.verdict,
            r.delegator.figures.mb_s.median,
            r.ceiling.figures.mb_s.median,
            r.ratio_to_ceiling.median
        ));
        results.push(r);
    }
    let _ = std::fs::remove_dir_all(&work);
    let report = BenchReport {
        schema_version: SCHEMA_VERSION,
        started_at,
        command: opts.command.clone(),
        delegator: opts.delegator.clone(),
        quick: opts.quick,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
        results,
    };
    write_reports(&report, &opts.out)?;
    Ok(report)
}

/// Write `bench.json`, `bench.md` and `bench.html` into `dir`.
pub fn write_reports(r: &BenchReport, dir: &Path) -> Result<(), BenchError> {
    let json = dir.join("bench.json");
    let text = serde_json::to_string_pretty(r).map_err(|e| BenchError::Json {
        path: json.clone(),
        message: e.to_string(),
    })?;
    std::fs::write(&json, text).map_err(io_err(&json))?;
    let md = dir.join("bench.md");
    std::fs::write(&md, report::markdown(r)).map_err(io_err(&md))?;
    let html = dir.join("bench.html");
    std::fs::write(&html, report::html(r)).map_err(io_err(&html))?;
    Ok(())
}

/// Read an earlier `bench.json` (for `--compare`).
pub fn read_report(path: &Path) -> Result<BenchReport, BenchError> {
    let text = std::fs::read_to_string(path).map_err(io_err(path))?;
    let r: BenchReport = serde_json::from_str(&text).map_err(|e| BenchError::Json {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if r.schema_version != SCHEMA_VERSION {
        return Err(BenchError::Json {
            path: path.to_path_buf(),
            message: format!(
                "schema_version {} (this build reads {SCHEMA_VERSION})",
                r.schema_version
            ),
        });
    }
    Ok(r)
}
