//! The per-agent connection cap (`max_requests_per_agent`, `client::cap`): a stream holds its
//! agent's permit until it ends, a request past the cap waits for one (bounded by its own
//! timeout), and delegations past the cap all complete, never more of them on the wire at once.

use crate::support;

use a2a_delegator::client::{ClientError, Endpoint, RpcClient};
use a2a_delegator::engine::{EngineConfig, Options};
use a2a_delegator::store::{DelegationState, DelegationStore};
use a2a_mock_agents::{Event, Network, Step};
use a2a_protocol::version::ProtocolVersion;
use a2a_protocol::{Binding, Method, TaskState};
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;
use support::{EngineRun, agent, card, chunk, scripted};

const T: Duration = Duration::from_secs(5);

fn send_params(message_id: &str) -> serde_json::Value {
    json!({"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "x"}]}})
}

/// An agent whose tasks stream `Working`, wait at gate `g`, then one chunk and `Completed`.
async fn gated_agent() -> Network {
    scripted(
        agent("a").streaming(true),
        vec![
            Step::state(TaskState::Working).into(),
            Step::gate("g"),
            chunk("out", "done", false, true),
            Step::state(TaskState::Completed).into(),
        ],
    )
    .await
}

/// Start an engine routing to `net`'s agent `a` with these options.
async fn engine(net: &Network, o: Options) -> EngineRun {
    EngineRun::start(|dir| {
        EngineConfig::new(dir, "http://127.0.0.1:1/delegator")
            .agents(vec![card(net, "a")])
            .options(o)
    })
    .await
}

/// Wait for the outcome of every delegation in `ids` (in any order); each must complete.
async fn all_complete(h: &mut EngineRun, ids: &[String]) {
    let mut ended = Vec::new();
    while ended.len() < ids.len() {
        if let a2a_delegator::engine::Event::Done(d) = h.next().await {
            assert_eq!(d.state, DelegationState::Completed, "{d:?}");
            ended.push(d.id);
        }
    }
}

/// The most `SendStreamingMessage` requests to `agent` open at once in the journal: from the
/// request to the end of its stream.
fn most_streams_open_at_once(net: &Network, agent: &str) -> usize {
    net.journal().with_entries(|entries| {
        let mut streams: HashMap<u64, bool> = HashMap::new();
        let (mut open, mut most) = (0usize, 0usize);
        for e in entries.iter().filter(|e| e.agent == agent) {
            match &e.event {
                Event::Request {
                    req,
                    method: Some(m),
                    ..
                } if m == "SendStreamingMessage" => {
                    streams.insert(*req, true);
                    open += 1;
                    most = most.max(open);
                }
                Event::StreamClosed { req, .. } if streams.remove(req).is_some() => open -= 1,
                _ => {}
            }
        }
        most
    })
}

#[tokio::test]
async fn a_stream_holds_its_agents_permit_until_it_is_dropped() {
    let net = gated_agent().await;
    let url = net.rpc_url("a").unwrap();
    let ep = Endpoint {
        url: url.clone(),
        version: ProtocolVersion::V1_0,
        tenant: None,
        binding: Binding::JsonRpc,
        extensions: Vec::new(),
        fallbacks: Vec::new(),
    };
    let client = RpcClient::new(1024 * 1024, None)
        .unwrap()
        .with_max_per_agent(1);
    let mut first = client
        .stream(
            &ep,
            Method::SendStreamingMessage,
            send_params("m1"),
            None,
            T,
        )
        .await
        .unwrap();
    assert!(first.next().await.is_some(), "the first stream delivers");
    assert_eq!(client.in_flight(&url), 1);
    // The only connection is taken: a second request waits for it, and gives up at its timeout.
    let waited = client
        .call(
            &ep,
            Method::GetTask,
            json!({"id": "t"}),
            None,
            Duration::from_millis(200),
        )
        .await;
    match waited {
        Err(ClientError::Transport(m)) => assert!(m.contains("none of the 1 connections"), "{m}"),
        other => panic!("expected a wait for the connection, got {other:?}"),
    }
    // Nothing reached the agent meanwhile; once the stream is gone the request goes out.
    assert!(support::requests(&net, "a", "GetTask").is_empty());
    drop(first);
    assert_eq!(client.in_flight(&url), 0);
    let answered = client
        .call(&ep, Method::GetTask, json!({"id": "t"}), None, T)
        .await;
    assert!(
        !matches!(answered, Err(ClientError::Transport(_))),
        "{answered:?}"
    );
    assert_eq!(support::requests(&net, "a", "GetTask").len(), 1);
}

#[tokio::test]
async fn delegations_past_the_cap_all_complete_with_at_most_the_cap_on_the_wire() {
    let net = gated_agent().await;
    let o = Options {
        max_requests_per_agent: 2,
        // Streams are read to their end (the permit goes back after the agent closed them).
        terminal_grace_ms: 5_000,
        ..support::fast_options()
    };
    let mut h = engine(&net, o).await;
    let ids: Vec<String> = (0..5).map(|i| format!("d{i}")).collect();
    for id in &ids {
        h.engine.delegate(support::request(id)).await.unwrap();
    }
    // Two streams reach the gate; the other three wait for a connection.
    support::wait_count(&net, "a", "SendStreamingMessage", 2).await;
    net.open_gate("g");
    all_complete(&mut h, &ids).await;
    assert_eq!(
        support::requests(&net, "a", "SendStreamingMessage").len(),
        5
    );
    assert_eq!(most_streams_open_at_once(&net, "a"), 2);
}

#[tokio::test]
async fn waiting_for_a_connection_past_the_request_timeout_spends_no_attempt() {
    // Each task takes 600 ms on the agent's clock; one connection; requests time out at 200 ms.
    let net = scripted(
        agent("a").streaming(true),
        vec![
            Step::state(TaskState::Working).into(),
            Step::wait(Duration::from_millis(600)),
            chunk("out", "done", false, true),
            Step::state(TaskState::Completed).into(),
        ],
    )
    .await;
    let o = Options {
        max_requests_per_agent: 1,
        request_timeout_ms: 200,
        terminal_grace_ms: 5_000,
        ..support::fast_options()
    };
    let mut h = engine(&net, o).await;
    let ids = vec!["first".to_string(), "queued".to_string()];
    for id in &ids {
        h.engine.delegate(support::request(id)).await.unwrap();
    }
    all_complete(&mut h, &ids).await;
    // The queued delegation waited its turn (over 600 ms): no failed attempt, no error.
    for id in &ids {
        let rec = h.store().get(id).unwrap().unwrap();
        assert_eq!(rec.attempts, 1, "{id}: {:?}", rec.errors);
        assert!(rec.errors.is_empty(), "{id}: {:?}", rec.errors);
    }
    assert_eq!(most_streams_open_at_once(&net, "a"), 1);
}
