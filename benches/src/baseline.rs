//! The SDK baselines: a consumer built on an official A2A SDK client — the Python one
//! (`benches/python/sdk_consumer.py`, `a2a-sdk`) or the JavaScript one
//! (`benches/js/sdk_consumer.mjs`, `@a2a-js/sdk`) — reading and hashing the same responses from
//! a fresh network of the same spec and seed. Both speak one protocol (arguments
//! `CARD_URL N PREFIX stream|send`, one JSON line out) and report their own CPU time and peak
//! RSS; the mock's are measured here.

use crate::procfs;
use crate::run::RunSample;
use crate::source::{self, AGENT, Truth};
use crate::workload::{Delivery, Workload};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

#[derive(Deserialize)]
struct Output {
    reads: Vec<Read>,
    wall_s: f64,
    cpu_s: f64,
    maxrss_kib: u64,
}

#[derive(Deserialize)]
struct Read {
    message_id: String,
    #[serde(default)]
    artifacts: BTreeMap<String, Art>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    ended_s: f64,
    /// The wall clock (Unix seconds) when the read's send began.
    #[serde(default)]
    sent_unix_s: Option<f64>,
}

#[derive(Deserialize)]
struct Art {
    bytes: u64,
    sha256: String,
}

/// Run the Python consumer (`python script ...`) on the workload once.
pub async fn python_sdk(w: &Workload, seed: u64, python: &Path, script: &Path) -> RunSample {
    sdk_consumer(w, seed, python, script, "py", "Python").await
}

/// Run the JavaScript consumer (`node script ...`) on the workload once.
pub async fn js_sdk(w: &Workload, seed: u64, node: &Path, script: &Path) -> RunSample {
    sdk_consumer(w, seed, node, script, "js", "JavaScript").await
}

/// Run an SDK consumer (`program script CARD_URL N PREFIX stream|send`) once and verify what it
/// reports against the journal: every read byte-exact, or the run is not verified.
async fn sdk_consumer(
    w: &Workload,
    seed: u64,
    program: &Path,
    script: &Path,
    tag: &str,
    language: &str,
) -> RunSample {
    let mut s = RunSample::default();
    let net = match a2a_mock_agents::Network::start(source::network_spec(w, seed)).await {
        Ok(n) => n,
        Err(e) => {
            s.failures
                .push(format!("the mock network did not start: {e}"));
            return s;
        }
    };
    // The journal's clock (`at_us`) on the wall clock the consumer reports its sends in.
    let journal_start_unix = unix_now_s() - net.journal().elapsed().as_secs_f64();
    let card = net.card_url(AGENT).unwrap_or_default();
    let prefix = format!("bench-{tag}-{seed:x}-{}", std::process::id());
    let mode = if w.delivery == Delivery::Stream {
        "stream"
    } else {
        "send"
    };
    let sampler = procfs::Sampler::start(None, crate::run::SAMPLE_EVERY);
    let mock0 = procfs::self_cpu_seconds();
    let mut cmd = tokio::process::Command::new(program);
    cmd.arg(script)
        .arg(&card)
        .arg(w.parallel.to_string())
        .arg(&prefix)
        .arg(mode)
        .kill_on_drop(true);
    let out = tokio::time::timeout(Duration::from_secs(w.time_limit_s), cmd.output()).await;
    s.mock_cpu_s = procfs::self_cpu_seconds() - mock0;
    let seen = sampler.finish();
    s.mock_peak_rss_mib = seen.mock_peak_rss_kib as f64 / 1024.0;
    s.mock_peak_fds = seen.mock_peak_fds;
    let dropped = net.journal().dropped();
    let truth = net.journal().with_entries(|e| Truth::of(e, dropped));
    net.shutdown().await;
    let out = match out {
        Err(_) => {
            s.failures
                .push(format!("not done within {} s", w.time_limit_s));
            return s;
        }
        Ok(Err(e)) => {
            s.failures.push(format!("{}: {e}", program.display()));
            return s;
        }
        Ok(Ok(o)) => o,
    };
    let parsed: Output = match serde_json::from_slice(&out.stdout) {
        Ok(p) => p,
        Err(e) => {
            let err = String::from_utf8_lossy(&out.stderr);
            s.failures.push(format!(
                "the {language} consumer's output is not its JSON ({e}; {}); stderr: {}",
                out.status,
                err.lines().rev().take(3).collect::<Vec<_>>().join(" | ")
            ));
            return s;
        }
    };
    s.wall_s = parsed.wall_s;
    s.cpu_s = parsed.cpu_s;
    s.peak_rss_mib = parsed.maxrss_kib as f64 / 1024.0;
    let (mut lat, mut ttfb) = (Vec::new(), Vec::new());
    for r in &parsed.reads {
        if let Some(e) = &r.error {
            s.failures.push(format!("{}: {e}", r.message_id));
            continue;
        }
        let Some(t) = truth
            .by_message
            .get(&r.message_id)
            .and_then(|id| truth.tasks.get(id))
        else {
            s.failures
                .push(format!("{}: no task in the journal", r.message_id));
            continue;
        };
        let exact = t.artifacts.len() == w.artifacts as usize
            && t.artifacts.iter().all(|(id, (b, sha))| {
                r.artifacts
                    .get(id)
                    .is_some_and(|a| a.bytes == *b && a.sha256 == *sha)
            });
        if !exact {
            s.failures.push(format!(
                "{}: artifacts differ from the source's",
                r.message_id
            ));
            continue;
        }
        s.completed += 1;
        s.bytes += t.artifacts.values().map(|(b, _)| b).sum::<u64>();
        s.events += t.chunks;
        lat.push(r.ended_s * 1000.0);
        // As for the delegator: from the send to the source's first chunk out.
        if let (Some(sent), Some(first_us)) = (r.sent_unix_s, t.first_chunk_us) {
            let first = journal_start_unix + first_us as f64 / 1e6;
            ttfb.push(((first - sent) * 1000.0).max(0.0));
        }
    }
    s.verified = s.failures.is_empty() && s.completed == u64::from(w.parallel);
    s.finish_rates(&mut lat, &mut ttfb);
    s
}

/// Seconds since the Unix epoch, now.
fn unix_now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Why an SDK baseline cannot run (checked before anything runs).
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// The Node.js executable could not be started.
    #[error(
        "--baseline js-sdk: cannot run {node}: {error} (install Node.js >= 20 and npm, then run `bash scripts/setup-node.sh`; or set --node / A2A_BENCH_NODE)"
    )]
    Node {
        /// The executable tried.
        node: std::path::PathBuf,
        /// Why it did not start (in the message, not a separate source: said once).
        error: std::io::Error,
    },
    /// The consumer script is not there.
    #[error("--baseline js-sdk: {0} is missing")]
    Script(std::path::PathBuf),
    /// Node ran but the SDK did not load.
    #[error("--baseline js-sdk: @a2a-js/sdk is not usable: {0}")]
    Sdk(String),
}

/// Check that `node script --check` loads `@a2a-js/sdk`; its answer (`@a2a-js/sdk VERSION`).
pub fn check_js_sdk(node: &Path, script: &Path) -> Result<String, BaselineError> {
    if !script.is_file() {
        return Err(BaselineError::Script(script.to_path_buf()));
    }
    let out = std::process::Command::new(node)
        .arg(script)
        .arg("--check")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|error| BaselineError::Node {
            node: node.to_path_buf(),
            error,
        })?;
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && said.starts_with("@a2a-js/sdk ") {
        return Ok(said);
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let why = err
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no output")
        .trim()
        .to_string();
    let hint = if why.contains("setup-node.sh") {
        ""
    } else {
        " (run `bash scripts/setup-node.sh`)"
    };
    Err(BaselineError::Sdk(format!(
        "{} {}: {why}{hint}",
        node.display(),
        out.status
    )))
}
