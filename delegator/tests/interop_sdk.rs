//! The reference delegator against the official Python SDK (a2a-sdk 1.3.0) agent of
//! `interop/sdk_agent.py`, over HTTP+JSON and over gRPC (chosen with the `bindings` option from
//! a card listing all three bindings), streaming and polling: the task completes with the SDK's
//! text artifact.
//!
//! Without `.venv` (or without grpcio in it) these tests skip with a message; with `CI` set they
//! fail instead (run `bash scripts/setup-python.sh`).

mod support;

use a2a_delegator::engine::{EngineConfig, Options};
use a2a_delegator::store::DelegationState;
use a2a_protocol::Binding;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;
use support::EngineRun;
use tokio::io::AsyncBufReadExt;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Skip (locally) or fail (in CI) with `why`.
fn unavailable(why: &str) -> Option<SdkAgent> {
    if std::env::var_os("CI").is_some() {
        panic!("{why}: run `bash scripts/setup-python.sh` from the repository root");
    }
    eprintln!("SKIPPED: {why} (run `bash scripts/setup-python.sh`; in CI this fails)");
    None
}

/// A running `interop/sdk_agent.py` (killed on drop).
struct SdkAgent {
    _child: tokio::process::Child,
    card_url: String,
}

async fn sdk_agent() -> Option<SdkAgent> {
    let py = repo().join(".venv/bin/python");
    if !py.exists() {
        return unavailable(&format!("{} is missing", py.display()));
    }
    let mut child = tokio::process::Command::new(&py)
        .arg(repo().join("interop/sdk_agent.py"))
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
                    tokio::time::timeout(Duration::from_secs(10), e.read_to_string(&mut err)).await;
            }
            if err.contains("No module named 'grpc'") {
                return unavailable("grpcio is not installed in .venv (a2a-sdk[grpc])");
            }
            panic!("the SDK agent did not start:\n{err}");
        }
    }
}

async fn delegate_over(binding: Binding, streaming: bool) {
    let Some(agent) = sdk_agent().await else {
        return;
    };
    let options = Options {
        bindings: vec![binding],
        ..support::fast_options()
    };
    let mut h = EngineRun::start(|dir| {
        EngineConfig::new(dir, "http://127.0.0.1:1/delegator")
            .agents(vec![agent.card_url.clone()])
            .options(options)
    })
    .await;
    let agents = h.engine.agents().await;
    assert_eq!(agents.len(), 1, "card read: {:?}", h.engine.card_errors());
    assert_eq!(agents[0].endpoint.binding, binding);
    let mut r = support::request(&format!("sdk-{binding}-{streaming}"));
    r.artifact_spec.streaming_preferred = streaming;
    let o = h.run(r).await;
    assert_eq!(o.state, DelegationState::Completed, "{o:?}");
    assert_eq!(o.artifacts.len(), 1, "{o:?}");
    assert_eq!(
        o.artifacts[0].sha256,
        support::sha(b"sdk says: do the work")
    );
    assert_eq!(o.artifacts[0].media_type, "text/plain");
}

#[tokio::test]
async fn sdk_agent_over_rest_streaming() {
    delegate_over(Binding::Rest, true).await;
}

#[tokio::test]
async fn sdk_agent_over_rest_polling() {
    delegate_over(Binding::Rest, false).await;
}

#[tokio::test]
async fn sdk_agent_over_grpc_streaming() {
    delegate_over(Binding::Grpc, true).await;
}

#[tokio::test]
async fn sdk_agent_over_grpc_polling() {
    delegate_over(Binding::Grpc, false).await;
}

#[tokio::test]
async fn sdk_agent_in_card_order_is_called_over_grpc() {
    let Some(agent) = sdk_agent().await else {
        return;
    };
    let mut h = EngineRun::start(|dir| {
        EngineConfig::new(dir, "http://127.0.0.1:1/delegator")
            .agents(vec![agent.card_url.clone()])
            .options(support::fast_options())
    })
    .await;
    assert_eq!(h.engine.agents().await[0].endpoint.binding, Binding::Grpc);
    let o = h.run(support::request("sdk-card-order")).await;
    assert_eq!(o.state, DelegationState::Completed, "{o:?}");
}
