//! Test support shared by the Rust tests that talk to the official Python SDK agent
//! (`interop/sdk_agent.py`): `delegator/tests/suite/interop_sdk.rs` and
//! `harness/tests/suite/record_sdk.rs` include it with `#[path]`.
//!
//! Without `.venv` (or without grpcio in it) [`SdkAgent::start`] returns `None` after printing
//! why (the test then skips); with `CI` set it panics instead (run
//! `bash scripts/setup-python.sh`).

use serde_json::Value;
use std::path::Path;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// A running `interop/sdk_agent.py` (killed on drop).
pub struct SdkAgent {
    _child: tokio::process::Child,
    /// Its agent card URL (on 127.0.0.1, a port it chose).
    pub card_url: String,
}

/// Skip (locally) or fail (in CI) with `why`.
fn unavailable(why: &str) -> Option<SdkAgent> {
    if std::env::var_os("CI").is_some() {
        panic!("{why}: run `bash scripts/setup-python.sh` from the repository root");
    }
    eprintln!("SKIPPED: {why} (run `bash scripts/setup-python.sh`; in CI this fails)");
    None
}

impl SdkAgent {
    /// Start the SDK agent of the repository at `repo` with these arguments (such as
    /// `["--order", "rest,grpc,jsonrpc"]`) and wait (60 s at most) for the line giving its card.
    pub async fn start(repo: &Path, args: &[&str]) -> Option<SdkAgent> {
        let py = repo.join(".venv/bin/python");
        if !py.exists() {
            return unavailable(&format!("{} is missing", py.display()));
        }
        let mut child = tokio::process::Command::new(&py)
            .arg(repo.join("interop/sdk_agent.py"))
            .args(args)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn the SDK agent");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let first = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("the SDK agent printed nothing within 60 s");
        match first {
            Ok(Some(line)) => {
                let v: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("SDK agent line is not JSON ({e}): {line}"));
                let card_url = v["card_url"]
                    .as_str()
                    .unwrap_or_else(|| panic!("no card_url in {v}"))
                    .to_string();
                Some(SdkAgent {
                    _child: child,
                    card_url,
                })
            }
            _ => {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    use tokio::io::AsyncReadExt;
                    let _ =
                        tokio::time::timeout(Duration::from_secs(10), e.read_to_string(&mut err))
                            .await;
                }
                if err.contains("No module named 'grpc'") {
                    return unavailable("grpcio is not installed in .venv (a2a-sdk[grpc])");
                }
                panic!("the SDK agent did not start:\n{err}");
            }
        }
    }
}
