//! The gRPC binding of the mock agents, driven by the protocol crate's generated tonic client
//! (and by raw HTTP/2 for what a well-behaved client cannot send): every RPC, A2A errors as
//! statuses with `ErrorInfo`, version metadata, malformed protobuf, wrong content type, unknown
//! RPCs, oversize messages, faults in their gRPC meaning, hostile streams, and the journal.

use crate::common;
use a2a_mock_agents::{Event, Fault, MockAgent, Network};
use a2a_protocol::grpc::pb;
use a2a_protocol::{Binding, Method};
use common::*;
use serde_json::{Value, json};
use tonic::Code;

const TASK_AGENT: &str = r#"
    seed = 7
    [[agent]]
    name = "a"
    bindings = ["grpc", "jsonrpc"]
    [[agent.extended_skill]]
    id = "secret"
    [[agent.rule]]
    when = { text_contains = "reply" }
    steps = [{ do = "reply", text = "hi" }]
    [[agent.rule]]
    when = { text_contains = "slow" }
    steps = [{ do = "state", state = "TASK_STATE_WORKING" }, { do = "gate", gate = "g" },
             { do = "state", state = "TASK_STATE_COMPLETED" }]
    [[agent.rule]]
    steps = [{ do = "state", state = "TASK_STATE_WORKING" },
             { do = "artifact", parts = [{ text = "abc" }] },
             { do = "state", state = "TASK_STATE_COMPLETED" }]
"#;

fn addr(net: &Network) -> String {
    net.grpc_url("a").expect("agent a")
}

/// An HTTP/2 (prior knowledge) client for raw gRPC requests.
fn h2() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .http2_prior_knowledge()
        .timeout(WAIT)
        .build()
        .expect("client")
}

/// A raw gRPC POST of `body` with this content type; the response.
async fn raw(net: &Network, rpc: &str, content_type: &str, body: Vec<u8>) -> reqwest::Response {
    h2().post(format!("http://{}/lf.a2a.v1.A2AService/{rpc}", addr(net)))
        .header("content-type", content_type)
        .header("te", "trailers")
        .header("a2a-version", "1.0")
        .body(body)
        .send()
        .await
        .expect("HTTP/2 request")
}

fn grpc_status(r: &reqwest::Response) -> Option<i32> {
    r.headers()
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

#[tokio::test]
async fn every_rpc_works_over_grpc() {
    let net = start(TASK_AGENT).await;
    let a = addr(&net);
    let r = grpc_unary(&a, Method::SendMessage, send_params("reply"))
        .await
        .unwrap();
    assert_eq!(r.pointer("/message/parts/0/text"), Some(&json!("hi")));
    let r = grpc_unary(&a, Method::SendMessage, send_params("work"))
        .await
        .unwrap();
    assert_eq!(
        r.pointer("/task/status/state"),
        Some(&json!("TASK_STATE_COMPLETED"))
    );
    let tid = r
        .pointer("/task/id")
        .and_then(Value::as_str)
        .unwrap()
        .to_string();
    let t = grpc_unary(&a, Method::GetTask, json!({"id": tid}))
        .await
        .unwrap();
    assert_eq!(t["id"], json!(tid));
    assert_eq!(t.pointer("/artifacts/0/parts/0/text"), Some(&json!("abc")));
    let l = grpc_unary(
        &a,
        Method::ListTasks,
        json!({"status": "TASK_STATE_COMPLETED"}),
    )
    .await
    .unwrap();
    assert_eq!(l["tasks"].as_array().unwrap().len(), 1);
    let c = grpc_unary(
        &a,
        Method::CreateTaskPushNotificationConfig,
        json!({"taskId": tid, "id": "c1", "url": "http://127.0.0.1:9/hook"}),
    )
    .await
    .unwrap();
    assert_eq!(c["id"], "c1");
    let g = grpc_unary(
        &a,
        Method::GetTaskPushNotificationConfig,
        json!({"taskId": tid, "id": "c1"}),
    )
    .await
    .unwrap();
    assert_eq!(g["url"], "http://127.0.0.1:9/hook");
    let ls = grpc_unary(
        &a,
        Method::ListTaskPushNotificationConfigs,
        json!({"taskId": tid}),
    )
    .await
    .unwrap();
    assert_eq!(ls["configs"].as_array().unwrap().len(), 1);
    grpc_unary(
        &a,
        Method::DeleteTaskPushNotificationConfig,
        json!({"taskId": tid, "id": "c1"}),
    )
    .await
    .unwrap();
    let card = grpc_unary(&a, Method::GetExtendedAgentCard, json!({}))
        .await
        .unwrap();
    assert!(card.to_string().contains("secret"));
    // Streaming: one message per StreamResponse, then OK.
    let s = grpc_stream(&a, Method::SendStreamingMessage, send_params("work"))
        .await
        .unwrap();
    assert!(s.status.is_none(), "{s:?}");
    assert!(s.messages[0].get("task").is_some());
    assert_eq!(
        s.messages
            .last()
            .and_then(|e| e.pointer("/statusUpdate/status/state")),
        Some(&json!("TASK_STATE_COMPLETED"))
    );
    // Cancel and subscribe on a task held at a gate.
    let r = grpc_unary(
        &a,
        Method::SendMessage,
        json!({"message": {"messageId": mid(), "role": "ROLE_USER", "parts": [{"text": "slow"}]},
               "configuration": {"returnImmediately": true}}),
    )
    .await
    .unwrap();
    let slow = r
        .pointer("/task/id")
        .and_then(Value::as_str)
        .unwrap()
        .to_string();
    wait_state(net.journal(), &slow, "TASK_STATE_WORKING").await;
    let (a2, id2) = (a.clone(), slow.clone());
    let sub =
        tokio::spawn(
            async move { grpc_stream(&a2, Method::SubscribeToTask, json!({"id": id2})).await },
        );
    wait_for(net.journal(), "the subscription's first message", |es| {
        es.iter().any(|e| {
            matches!(&e.event, Event::SseEvent { index: 0, .. })
                && es.iter().any(|r| {
                    matches!(&r.event, Event::Request { method: Some(m), req, .. }
                        if m == "SubscribeToTask" && Some(*req) == e.event.req())
                })
        })
    })
    .await;
    let c = grpc_unary(&a, Method::CancelTask, json!({"id": slow}))
        .await
        .unwrap();
    assert_eq!(
        c.pointer("/status/state"),
        Some(&json!("TASK_STATE_CANCELED"))
    );
    let s = sub.await.unwrap().unwrap();
    assert!(s.status.is_none());
    assert_eq!(s.messages[0].pointer("/task/id"), Some(&json!(slow)));
    // The journal: binding grpc, A2A method names, ProtoJSON params.
    let reqs = net.journal().requests();
    assert!(reqs.iter().all(|r| r.binding == Binding::Grpc));
    for m in Method::ALL {
        assert!(
            reqs.iter().any(|r| r.method == m.as_str()),
            "{m:?} not journaled"
        );
    }
    let get = reqs.iter().find(|r| r.method == "GetTask").unwrap();
    assert_eq!(get.params, json!({"id": tid}));
    let (status, rpc_error, _) = response_of(net.journal(), get.req).unwrap();
    assert_eq!((status, rpc_error), (200, None));
    net.shutdown().await;
}

#[tokio::test]
async fn a2a_errors_are_statuses_with_error_info() {
    let net = start(TASK_AGENT).await;
    let a = addr(&net);
    let e = grpc_unary(&a, Method::GetTask, json!({"id": "nope"}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    assert_eq!(grpc_reason(&e).as_deref(), Some("TASK_NOT_FOUND"));
    let r = grpc_unary(&a, Method::SendMessage, send_params("work"))
        .await
        .unwrap();
    let tid = r.pointer("/task/id").and_then(Value::as_str).unwrap();
    let e = grpc_unary(&a, Method::CancelTask, json!({"id": tid}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    assert_eq!(grpc_reason(&e).as_deref(), Some("TASK_NOT_CANCELABLE"));
    // Validation: INVALID_ARGUMENT with a BadRequest detail.
    let e = grpc_unary(
        &a,
        Method::SendMessage,
        json!({"message": {"messageId": "m"}}),
    )
    .await
    .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    let f = a2a_protocol::grpc::status::failure_from_tonic(&e).unwrap();
    assert!(!f.details.is_empty());
    // Errors before a stream's first message: the status alone.
    let e = grpc_stream(&a, Method::SubscribeToTask, json!({"id": "nope"}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    let req = reqs_of(net.journal(), "GetTask")[0];
    let (status, rpc_error, _) = response_of(net.journal(), req).unwrap();
    assert_eq!((status, rpc_error), (404, Some(-32001)));
    net.shutdown().await;
}

#[tokio::test]
async fn version_metadata_is_required() {
    let net = start(TASK_AGENT).await;
    let mut c = grpc_client(&addr(&net)).await;
    let e = c
        .list_tasks(tonic::Request::new(pb::ListTasksRequest::default()))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::FailedPrecondition);
    assert_eq!(grpc_reason(&e).as_deref(), Some("VERSION_NOT_SUPPORTED"));
    net.shutdown().await;
}

#[tokio::test]
async fn bad_input_gets_grpc_answers_never_a_panic() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        bindings = ["grpc"]
        max_body_bytes = 2000
    "#,
    )
    .await;
    // Malformed protobuf in a well-formed frame: INVALID_ARGUMENT with details.
    let r = raw(
        &net,
        "SendMessage",
        "application/grpc",
        vec![0, 0, 0, 0, 3, 0xFF, 0xFF, 0xFF],
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(grpc_status(&r), Some(Code::InvalidArgument as i32));
    assert!(r.headers().contains_key("grpc-status-details-bin"));
    // A truncated frame.
    let r = raw(
        &net,
        "SendMessage",
        "application/grpc",
        vec![0, 0, 0, 0, 9, 1],
    )
    .await;
    assert_eq!(grpc_status(&r), Some(Code::InvalidArgument as i32));
    // No message at all.
    let r = raw(&net, "GetTask", "application/grpc+proto", Vec::new()).await;
    assert_eq!(grpc_status(&r), Some(Code::InvalidArgument as i32));
    // A compressed frame without grpc-encoding.
    let r = raw(&net, "GetTask", "application/grpc", vec![1, 0, 0, 0, 0]).await;
    assert_eq!(grpc_status(&r), Some(Code::Unimplemented as i32));
    // Wrong content type: HTTP 415.
    let r = raw(&net, "GetTask", "application/json", b"{}".to_vec()).await;
    assert_eq!(r.status(), 415);
    // Unknown RPC and unknown service: UNIMPLEMENTED.
    let r = raw(&net, "Frobnicate", "application/grpc", vec![0, 0, 0, 0, 0]).await;
    assert_eq!(grpc_status(&r), Some(Code::Unimplemented as i32));
    let r = h2()
        .post(format!("http://{}/a2a.v1.A2AService/GetTask", addr(&net)))
        .header("content-type", "application/grpc")
        .body(vec![0, 0, 0, 0, 0])
        .send()
        .await
        .unwrap();
    assert_eq!(grpc_status(&r), Some(Code::Unimplemented as i32));
    // Oversize: a message over the agent's body limit.
    let r = raw(
        &net,
        "SendMessage",
        "application/grpc",
        [vec![0, 0, 0, 0x10, 0], vec![0; 4096]].concat(),
    )
    .await;
    assert_eq!(grpc_status(&r), Some(Code::ResourceExhausted as i32));
    // The agent still serves.
    grpc_unary(&addr(&net), Method::ListTasks, json!({}))
        .await
        .unwrap();
    let bindings: Vec<Binding> = net
        .journal()
        .entries()
        .iter()
        .filter_map(|e| match &e.event {
            Event::Request { binding, .. } => Some(*binding),
            _ => None,
        })
        .collect();
    assert!(bindings.iter().all(|b| *b == Binding::Grpc), "{bindings:?}");
    net.shutdown().await;
}

#[tokio::test]
async fn an_unserved_grpc_binding_is_unimplemented() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        advertised_bindings = ["grpc", "jsonrpc"]
    "#,
    )
    .await;
    let e = grpc_unary(&addr(&net), Method::ListTasks, json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unimplemented);
    net.shutdown().await;
}

#[tokio::test]
async fn http_status_fault_is_the_mapped_grpc_code_with_retry_after() {
    let spec = MockAgent::network(
        1,
        vec![
            MockAgent::builder("a")
                .bindings([Binding::Grpc])
                .queue_fault(
                    Method::SendMessage,
                    Fault::HttpStatus {
                        status: 503,
                        retry_after_s: Some(3),
                    },
                    1,
                )
                .queue_fault(
                    Method::GetTask,
                    Fault::HttpStatus {
                        status: 429,
                        retry_after_s: None,
                    },
                    1,
                )
                .build(),
        ],
    );
    let net = start_spec(spec).await;
    let a = addr(&net);
    let e = grpc_unary(&a, Method::SendMessage, send_params("x"))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Unavailable);
    assert_eq!(
        e.metadata()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some("3")
    );
    let e = grpc_unary(&a, Method::GetTask, json!({"id": "t"}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted);
    grpc_unary(&a, Method::SendMessage, send_params("x"))
        .await
        .unwrap();
    let req = reqs_of(net.journal(), "SendMessage")[0];
    let grpc = net
        .journal()
        .entries()
        .into_iter()
        .find_map(|e| match e.event {
            Event::Response {
                req: r,
                status,
                grpc_status,
                ..
            } if r == req => Some((status, grpc_status)),
            _ => None,
        });
    assert_eq!(grpc, Some((503, Some(14))));
    net.shutdown().await;
}

#[tokio::test]
async fn rpc_error_garbage_drop_and_trickle_faults() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        bindings = ["grpc"]
        [[agent.queued_fault]]
        method = "GetTask"
        fault = { kind = "rpc_error", code = -32001 }
        [[agent.queued_fault]]
        method = "ListTasks"
        fault = { kind = "garbage_body" }
        [[agent.queued_fault]]
        method = "GetExtendedAgentCard"
        fault = { kind = "drop_before" }
        [[agent.rule]]
        fault = { kind = "trickle", bytes_per_sec = 2000 }
        steps = [{ do = "reply", text = "slowly" }]
    "#,
    )
    .await;
    let a = addr(&net);
    let e = grpc_unary(&a, Method::GetTask, json!({"id": "t"}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    assert_eq!(grpc_reason(&e).as_deref(), Some("TASK_NOT_FOUND"));
    // garbage_body: a frame that is not protobuf; tonic fails to decode it.
    let e = grpc_unary(&a, Method::ListTasks, json!({}))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::Internal, "{e:?}");
    // drop_before: the connection goes away.
    let e = grpc_unary(&a, Method::GetExtendedAgentCard, json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(e.code(), Code::Unavailable | Code::Unknown | Code::Internal),
        "{e:?}"
    );
    // trickle: the answer arrives whole, trailers last.
    let r = grpc_unary(&a, Method::SendMessage, send_params("x"))
        .await
        .unwrap();
    assert_eq!(r.pointer("/message/parts/0/text"), Some(&json!("slowly")));
    net.shutdown().await;
}

#[tokio::test]
async fn stream_faults_end_or_cut_grpc_streams() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        bindings = ["grpc"]
        [[agent.rule]]
        when = { text_contains = "close" }
        fault = { kind = "close_after", events = 1 }
        steps = [{ do = "state", state = "TASK_STATE_WORKING" },
                 { do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent.rule]]
        when = { text_contains = "reset" }
        fault = { kind = "reset_after", events = 1 }
        steps = [{ do = "state", state = "TASK_STATE_WORKING" },
                 { do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent.rule]]
        when = { text_contains = "trickle" }
        fault = { kind = "trickle", bytes_per_sec = 4000 }
        steps = [{ do = "state", state = "TASK_STATE_WORKING" },
                 { do = "state", state = "TASK_STATE_COMPLETED" }]
    "#,
    )
    .await;
    let a = addr(&net);
    // close_after: a premature clean end (OK after one message).
    let s = grpc_stream(&a, Method::SendStreamingMessage, send_params("close"))
        .await
        .unwrap();
    assert_eq!(s.messages.len(), 1);
    assert!(s.status.is_none(), "{s:?}");
    // reset_after: one message, then half a frame and a reset.
    let s = grpc_stream(&a, Method::SendStreamingMessage, send_params("reset"))
        .await
        .unwrap();
    assert_eq!(s.messages.len(), 1);
    assert!(s.status.is_some(), "{s:?}");
    // trickle: every message, OK.
    let s = grpc_stream(&a, Method::SendStreamingMessage, send_params("trickle"))
        .await
        .unwrap();
    assert!(s.status.is_none() && s.messages.len() >= 3, "{s:?}");
    net.shutdown().await;
}

#[tokio::test]
async fn hostile_streams_over_grpc() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        bindings = ["grpc"]
        [[agent.rule]]
        when = { text_contains = "other" }
        steps = [{ do = "state", state = "TASK_STATE_WORKING" },
                 { do = "raw_event", result = { statusUpdate = { taskId = "someone-else", contextId = "c", status = { state = "TASK_STATE_COMPLETED" } } } },
                 { do = "unknown_state", state = "TASK_STATE_PAUSED" },
                 { do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent.rule]]
        when = { text_contains = "garbage" }
        steps = [{ do = "state", state = "TASK_STATE_WORKING" },
                 { do = "raw_sse", data = "{not protobuf" },
                 { do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent.rule]]
        when = { text_contains = "huge" }
        steps = [{ do = "state", state = "TASK_STATE_WORKING" },
                 { do = "huge_event", bytes = 5000000 },
                 { do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent.rule]]
        when = { text_contains = "endless" }
        steps = [{ do = "state", state = "TASK_STATE_WORKING" },
                 { do = "gate", gate = "never", timeout_ms = 600000 }]
    "#,
    )
    .await;
    let a = addr(&net);
    // Wrong task ids and an unknown enum number arrive as messages.
    let s = grpc_stream(&a, Method::SendStreamingMessage, send_params("other"))
        .await
        .unwrap();
    assert!(s.status.is_none(), "{s:?}");
    assert!(
        s.messages
            .iter()
            .any(|m| m.pointer("/statusUpdate/taskId") == Some(&json!("someone-else")))
    );
    assert!(
        s.messages
            .iter()
            .any(|m| m.pointer("/statusUpdate/status/state") == Some(&json!(99))),
        "{:?}",
        s.messages
    );
    // Garbage: the client fails to decode the frame.
    let s = grpc_stream(&a, Method::SendStreamingMessage, send_params("garbage"))
        .await
        .unwrap();
    assert_eq!(s.status.as_ref().map(|s| s.code()), Some(Code::Internal));
    // Oversize: over tonic's default 4 MiB limit.
    let mut c = a2a_protocol::grpc::pb::a2a_service_client::A2aServiceClient::new(
        tonic::transport::Endpoint::from_shared(format!("http://{a}"))
            .unwrap()
            .connect()
            .await
            .unwrap(),
    );
    let req: pb::SendMessageRequest = a2a_protocol::grpc::to_pb(&send_params("huge")).unwrap();
    let mut st = c
        .send_streaming_message(versioned(req))
        .await
        .unwrap()
        .into_inner();
    let mut outcome = None;
    for _ in 0..5 {
        match st.message().await {
            Ok(Some(_)) => continue,
            Ok(None) => break,
            Err(e) => {
                outcome = Some(e.code());
                break;
            }
        }
    }
    assert_eq!(outcome, Some(Code::OutOfRange));
    // Endless: the stream stays open; the client gives up, the agent journals it gone.
    let mut c = grpc_client(&a).await;
    let req: pb::SendMessageRequest = a2a_protocol::grpc::to_pb(&send_params("endless")).unwrap();
    let mut st = c
        .send_streaming_message(versioned(req))
        .await
        .unwrap()
        .into_inner();
    let mut n = 0;
    while n < 2 {
        st.message().await.unwrap().unwrap();
        n += 1;
    }
    let more = tokio::time::timeout(std::time::Duration::from_millis(300), st.message()).await;
    assert!(more.is_err(), "the stream goes on, silent");
    drop(st);
    wait_for(
        net.journal(),
        "the endless stream closed by the client",
        |es| {
            es.iter().any(|e| {
            matches!(&e.event, Event::StreamClosed { reason, .. } if reason == "client_gone")
        })
        },
    )
    .await;
    net.shutdown().await;
}
