//! The reference delegator against the official Python SDK (a2a-sdk 1.3.0) agent of
//! `interop/sdk_agent.py`, over HTTP+JSON and over gRPC (chosen with the `bindings` option from
//! a card listing all three bindings), streaming and polling: the task completes with the SDK's
//! text artifact.
//!
//! Without `.venv` (or without grpcio in it) these tests skip with a message; with `CI` set they
//! fail instead (run `bash scripts/setup-python.sh`).

#[path = "../../../interop/sdk_agent.rs"]
mod sdk_agent;
use crate::support;

use a2a_delegator::engine::{EngineConfig, Options};
use a2a_delegator::store::DelegationState;
use a2a_protocol::Binding;
use sdk_agent::SdkAgent;
use std::path::PathBuf;
use support::EngineRun;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The SDK agent of this repository, its card in its default binding order.
async fn sdk_agent() -> Option<SdkAgent> {
    SdkAgent::start(&repo(), &[]).await
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
