//! Bindings as script data: `bindings`, `advertised_bindings`, the network's `default_bindings`
//! and the builder's `bindings`, their validation, and the binding-neutral journal: the same
//! steps over JSON-RPC, HTTP+JSON and gRPC journal the same events but for the `binding` field.

use crate::common;
use a2a_mock_agents::{Entry, Event, MockAgent, Network, NetworkSpec};
use a2a_protocol::{Binding, Method};
use common::*;
use serde_json::{Value, json};

#[test]
fn binding_keys_are_validated_with_their_path() {
    let bad = [
        (
            r#"[[agent]]
name = "a"
bindings = []"#,
            "agent[0].bindings",
        ),
        (
            r#"[[agent]]
name = "a"
bindings = ["rest", "rest"]"#,
            "agent[0].bindings[1]",
        ),
        (
            r#"[[agent]]
name = "a"
protocol = "0.3"
advertised_bindings = ["grpc"]"#,
            "agent[0].advertised_bindings[0]",
        ),
        (
            r#"default_bindings = []
[[agent]]
name = "a""#,
            "default_bindings",
        ),
    ];
    for (text, path) in bad {
        let e = NetworkSpec::from_toml("b.toml", text)
            .expect_err(text)
            .to_string();
        assert!(e.contains("b.toml:") && e.contains(path), "{e}");
    }
    let e = NetworkSpec::from_toml("b.toml", "[[agent]]\nname = \"a\"\nbindings = [\"soap\"]")
        .expect_err("unknown binding")
        .to_string();
    assert!(e.contains("b.toml:3"), "{e}");
}

#[tokio::test]
async fn network_default_applies_to_agents_that_do_not_pin_theirs() {
    let spec = NetworkSpec::from_toml(
        "d.toml",
        r#"
        [[agent]]
        name = "free"
        [[agent]]
        name = "pinned"
        bindings = ["jsonrpc"]
        [[agent]]
        name = "old"
        protocol = "0.3"
    "#,
    )
    .unwrap()
    .with_default_bindings([Binding::Rest, Binding::Grpc]);
    let net = Network::start(spec).await.unwrap();
    assert_eq!(
        net.bindings("free").unwrap(),
        vec![Binding::Rest, Binding::Grpc]
    );
    assert_eq!(net.bindings("pinned").unwrap(), vec![Binding::JsonRpc]);
    assert_eq!(net.bindings("old").unwrap(), vec![Binding::JsonRpc]);
    let card: Value = client()
        .get(net.card_url("free").unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let bindings: Vec<&str> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["protocolBinding"].as_str().unwrap())
        .collect();
    assert_eq!(bindings, ["HTTP+JSON", "GRPC"]);
    assert_eq!(
        card.pointer("/supportedInterfaces/1/url"),
        Some(&json!(net.grpc_url("free").unwrap()))
    );
    assert!(!net.grpc_url("free").unwrap().contains("://"));
    // A REST-only agent has no JSON-RPC endpoint.
    let r = post(
        &client(),
        &net.rpc_url("free").unwrap(),
        &envelope("ListTasks", json!({})),
        &[],
    )
    .await
    .unwrap();
    assert_eq!(r.status(), 404);
    net.shutdown().await;
}

#[test]
fn builder_sets_bindings() {
    let spec = MockAgent::builder("a")
        .bindings([Binding::Grpc, Binding::JsonRpc])
        .advertised_bindings([Binding::Rest])
        .build();
    assert_eq!(spec.bindings, Some(vec![Binding::Grpc, Binding::JsonRpc]));
    assert_eq!(spec.advertised(None), vec![Binding::Rest]);
    assert_eq!(
        MockAgent::builder("b").build().served_bindings(None),
        vec![Binding::JsonRpc]
    );
}

const SCRIPT: &str = r#"
    seed = 3
    [[agent]]
    name = "a"
    bindings = ["jsonrpc", "rest", "grpc"]
    [[agent.rule]]
    when = { text_contains = "reply" }
    steps = [{ do = "reply", text = "hi" }]
    [[agent.rule]]
    steps = [{ do = "state", state = "TASK_STATE_WORKING" },
             { do = "artifacts", count = 1, chunks = 2, chunk_bytes = 16 },
             { do = "state", state = "TASK_STATE_COMPLETED" }]
"#;

/// One unary call over `binding`: the result, or the error in JSON-RPC form.
async fn unary(net: &Network, binding: Binding, method: Method, params: Value) -> Value {
    let http = client();
    match binding {
        Binding::JsonRpc => {
            let v = rpc(&http, &net.rpc_url("a").unwrap(), method.as_str(), params).await;
            v.get("result").cloned().unwrap_or(v)
        }
        Binding::Rest => {
            rest(&http, &net.rest_url("a").unwrap(), method, params)
                .await
                .1
        }
        Binding::Grpc => grpc_unary(&net.grpc_url("a").unwrap(), method, params)
            .await
            .unwrap_or_else(|e| json!({"grpcError": e.code() as i32})),
    }
}

/// Stream over `binding`: the `StreamResponse`s.
async fn streamed(net: &Network, binding: Binding, params: Value) -> Vec<Value> {
    let http = client();
    let s = match binding {
        Binding::JsonRpc => {
            stream(
                &http,
                &net.rpc_url("a").unwrap(),
                "SendStreamingMessage",
                params,
            )
            .await
        }
        Binding::Rest => {
            rest_stream(
                &http,
                &net.rest_url("a").unwrap(),
                Method::SendStreamingMessage,
                params,
            )
            .await
        }
        Binding::Grpc => {
            return grpc_stream(
                &net.grpc_url("a").unwrap(),
                Method::SendStreamingMessage,
                params,
            )
            .await
            .expect("stream")
            .messages;
        }
    };
    s.payloads()
}

/// Drop what legitimately differs between bindings and runs: timestamps, times, transport
/// details; JSON-RPC envelopes become `{"result"}`/`{"error"}`.
pub fn neutral_journal(entries: &[Entry]) -> Vec<Value> {
    entries
        .iter()
        .map(|e| {
            let mut ev = e.event.clone();
            if let Event::Request {
                binding,
                http_method,
                path,
                rpc_id,
                headers,
                envelope,
                ..
            } = &mut ev
            {
                *binding = Binding::JsonRpc;
                http_method.clear();
                path.clear();
                *rpc_id = None;
                headers.clear();
                *envelope = None;
            }
            let mut v = serde_json::to_value(&ev).unwrap();
            for key in ["body", "data"] {
                if let Some(body) = v.get_mut(key) {
                    if let Some(o) = body.as_object_mut() {
                        o.remove("jsonrpc");
                        o.remove("id");
                    }
                    scrub_ts(body);
                }
            }
            json!({"agent": e.agent, "event": v})
        })
        .collect()
}

fn scrub_ts(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.remove("timestamp");
            o.values_mut().for_each(scrub_ts);
        }
        Value::Array(a) => a.iter_mut().for_each(scrub_ts),
        _ => {}
    }
}

/// The same conversation on a fresh network over `binding`; its neutral journal.
async fn conversation(binding: Binding) -> Vec<Value> {
    let net = start(SCRIPT).await;
    let msg = |n: u32, text: &str| {
        json!({"message": {"messageId": format!("m-{n}"), "role": "ROLE_USER",
                           "parts": [{"text": text}]}})
    };
    let r = unary(&net, binding, Method::SendMessage, msg(1, "reply")).await;
    assert!(r.get("message").is_some(), "{r}");
    let r = unary(&net, binding, Method::SendMessage, msg(2, "work")).await;
    let tid = r
        .pointer("/task/id")
        .and_then(Value::as_str)
        .unwrap()
        .to_string();
    unary(&net, binding, Method::GetTask, json!({"id": tid})).await;
    unary(&net, binding, Method::GetTask, json!({"id": "missing"})).await;
    let events = streamed(&net, binding, msg(3, "stream")).await;
    assert!(events.len() >= 4);
    let entries = net.journal().entries();
    net.shutdown().await;
    assert!(
        entries.iter().all(|e| match &e.event {
            Event::Request { binding: b, .. } => *b == binding,
            _ => true,
        }),
        "every request journaled as {binding}"
    );
    neutral_journal(&entries)
        .into_iter()
        // Status of a failed call differs by design: HTTP 200 JSON-RPC, 404 HTTP+JSON.
        .map(|mut v| {
            if let Some(ev) = v.get_mut("event").and_then(Value::as_object_mut) {
                ev.remove("status");
            }
            v
        })
        .collect()
}

#[tokio::test]
async fn the_same_steps_journal_the_same_over_every_binding() {
    let a = conversation(Binding::JsonRpc).await;
    for binding in [Binding::Rest, Binding::Grpc] {
        let b = conversation(binding).await;
        assert_eq!(a.len(), b.len(), "{binding}");
        for (x, y) in a.iter().zip(&b) {
            // gRPC records its status; the rest is the same.
            let mut y = y.clone();
            if let Some(ev) = y.get_mut("event").and_then(Value::as_object_mut) {
                ev.remove("grpc_status");
            }
            assert_eq!(x, &y, "{binding}");
        }
    }
}
