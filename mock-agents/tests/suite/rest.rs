//! The HTTP+JSON (REST) binding of the mock agents: every method, the card's interfaces, the
//! binding's errors (unknown path, wrong method, bad JSON, version, oversize, unserved), faults
//! in their HTTP meaning, hostile streams, and the journal's binding field.

use crate::common;
use a2a_mock_agents::{Event, Fault, MockAgent, Network};
use a2a_protocol::{Binding, Method};
use common::*;
use serde_json::{Value, json};

const TASK_AGENT: &str = r#"
    seed = 7
    [[agent]]
    name = "a"
    bindings = ["rest", "jsonrpc"]
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

fn rest_url(net: &Network) -> String {
    net.rest_url("a").expect("agent a")
}

#[tokio::test]
async fn card_lists_each_served_binding_in_order() {
    let net = start(TASK_AGENT).await;
    let http = client();
    let card: Value = http
        .get(net.card_url("a").unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ifaces = card["supportedInterfaces"].as_array().unwrap();
    assert_eq!(ifaces.len(), 2);
    assert_eq!(ifaces[0]["protocolBinding"], "HTTP+JSON");
    assert_eq!(ifaces[0]["url"], json!(rest_url(&net)));
    assert_eq!(ifaces[1]["protocolBinding"], "JSONRPC");
    assert_eq!(ifaces[1]["url"], json!(net.rpc_url("a").unwrap()));
    assert!(rest_url(&net).ends_with("/rest"));
    net.shutdown().await;
}

#[tokio::test]
async fn every_method_works_over_rest() {
    let net = start(TASK_AGENT).await;
    let http = client();
    let url = rest_url(&net);
    // SendMessage: a direct reply, then a task.
    let r = rest_ok(&http, &url, Method::SendMessage, send_params("reply")).await;
    assert_eq!(r.pointer("/message/parts/0/text"), Some(&json!("hi")));
    let r = rest_ok(&http, &url, Method::SendMessage, send_params("work")).await;
    assert_eq!(
        r.pointer("/task/status/state"),
        Some(&json!("TASK_STATE_COMPLETED"))
    );
    let tid = r
        .pointer("/task/id")
        .and_then(Value::as_str)
        .unwrap()
        .to_string();
    // GetTask with historyLength in the query.
    let t = rest_ok(
        &http,
        &url,
        Method::GetTask,
        json!({"id": tid, "historyLength": 0}),
    )
    .await;
    assert_eq!(t["id"], json!(tid));
    assert_eq!(t.get("history").map(|h| h.as_array().map(Vec::len)), None);
    // ListTasks with a status filter.
    let l = rest_ok(
        &http,
        &url,
        Method::ListTasks,
        json!({"status": "TASK_STATE_COMPLETED", "pageSize": 10}),
    )
    .await;
    assert_eq!(l["tasks"].as_array().unwrap().len(), 1);
    // Push configs: create, get, list, delete.
    let c = rest_ok(
        &http,
        &url,
        Method::CreateTaskPushNotificationConfig,
        json!({"taskId": tid, "id": "c1", "url": "http://127.0.0.1:9/hook"}),
    )
    .await;
    assert_eq!(c["id"], "c1");
    let g = rest_ok(
        &http,
        &url,
        Method::GetTaskPushNotificationConfig,
        json!({"taskId": tid, "id": "c1"}),
    )
    .await;
    assert_eq!(g["url"], "http://127.0.0.1:9/hook");
    let ls = rest_ok(
        &http,
        &url,
        Method::ListTaskPushNotificationConfigs,
        json!({"taskId": tid}),
    )
    .await;
    assert_eq!(ls["configs"].as_array().unwrap().len(), 1);
    let d = rest_ok(
        &http,
        &url,
        Method::DeleteTaskPushNotificationConfig,
        json!({"taskId": tid, "id": "c1"}),
    )
    .await;
    assert_eq!(d, json!({}));
    // Extended card.
    let card = rest_ok(&http, &url, Method::GetExtendedAgentCard, json!({})).await;
    assert!(card.to_string().contains("secret"));
    // Streaming: bare StreamResponses, no JSON-RPC envelope.
    let s = rest_stream(
        &http,
        &url,
        Method::SendStreamingMessage,
        send_params("work"),
    )
    .await;
    assert!(s.content_type.starts_with("text/event-stream"));
    assert!(s.events.iter().all(|e| e.get("jsonrpc").is_none()));
    let first = &s.events[0];
    assert!(first.get("task").is_some(), "{first}");
    assert_eq!(
        s.events
            .last()
            .and_then(|e| e.pointer("/statusUpdate/status/state")),
        Some(&json!("TASK_STATE_COMPLETED"))
    );
    // Cancel and subscribe on a task held at a gate.
    let r = rest_ok(
        &http,
        &url,
        Method::SendMessage,
        json!({"message": {"messageId": mid(), "role": "ROLE_USER", "parts": [{"text": "slow"}]},
               "configuration": {"returnImmediately": true}}),
    )
    .await;
    let slow = r
        .pointer("/task/id")
        .and_then(Value::as_str)
        .unwrap()
        .to_string();
    wait_state(net.journal(), &slow, "TASK_STATE_WORKING").await;
    let sub_http = http.clone();
    let sub_url = url.clone();
    let sub_id = slow.clone();
    let sub = tokio::spawn(async move {
        rest_stream(
            &sub_http,
            &sub_url,
            Method::SubscribeToTask,
            json!({"id": sub_id}),
        )
        .await
    });
    wait_for(net.journal(), "the subscription", |es| {
        es.iter().any(|e| {
            matches!(&e.event, Event::SseEvent { index: 0, .. })
                && es.iter().any(|r| {
                    matches!(&r.event, Event::Request { method: Some(m), req, .. }
                        if m == "SubscribeToTask" && Some(*req) == e.event.req())
                })
        })
    })
    .await;
    let c = rest_ok(&http, &url, Method::CancelTask, json!({"id": slow})).await;
    assert_eq!(
        c.pointer("/status/state"),
        Some(&json!("TASK_STATE_CANCELED"))
    );
    let s = sub.await.unwrap();
    assert_eq!(s.events[0].pointer("/task/id"), Some(&json!(slow)));
    assert_eq!(
        s.events
            .last()
            .and_then(|e| e.pointer("/statusUpdate/status/state")),
        Some(&json!("TASK_STATE_CANCELED"))
    );
    // The journal names the binding and the A2A method of each request.
    let reqs = net.journal().requests();
    assert!(reqs.iter().all(|r| r.binding == Binding::Rest));
    for m in Method::ALL {
        assert!(
            reqs.iter().any(|r| r.method == m.as_str()),
            "{m:?} not journaled"
        );
    }
    let get = reqs.iter().find(|r| r.method == "GetTask").unwrap();
    assert_eq!(get.params, json!({"id": tid, "historyLength": 0}));
    net.shutdown().await;
}

#[tokio::test]
async fn a2a_errors_carry_status_and_error_info() {
    let net = start(TASK_AGENT).await;
    let http = client();
    let url = rest_url(&net);
    let (status, body) = rest(&http, &url, Method::GetTask, json!({"id": "nope"})).await;
    assert_eq!(status, 404);
    assert_eq!(body.pointer("/error/code"), Some(&json!(404)));
    assert_eq!(body.pointer("/error/status"), Some(&json!("NOT_FOUND")));
    assert_eq!(rest_reason(&body).as_deref(), Some("TASK_NOT_FOUND"));
    let r = rest_ok(&http, &url, Method::SendMessage, send_params("work")).await;
    let tid = r.pointer("/task/id").and_then(Value::as_str).unwrap();
    let (status, body) = rest(&http, &url, Method::CancelTask, json!({"id": tid})).await;
    assert_eq!(status, 400);
    assert_eq!(rest_reason(&body).as_deref(), Some("TASK_NOT_CANCELABLE"));
    // The journal records the A2A error as its JSON-RPC code, binding-neutral.
    let req = reqs_of(net.journal(), "GetTask")[0];
    let (status, rpc_error, body) = response_of(net.journal(), req).unwrap();
    assert_eq!((status, rpc_error), (404, Some(-32001)));
    assert!(body.get("error").is_some());
    net.shutdown().await;
}

#[tokio::test]
async fn routing_errors_get_the_binding_answers() {
    let net = start(TASK_AGENT).await;
    let http = client();
    let url = rest_url(&net);
    // Unknown path: 404 with an error body, no ErrorInfo.
    let r = http
        .get(format!("{url}/v1/tasks/a/b/c"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body.pointer("/error/code"), Some(&json!(404)));
    assert_eq!(rest_reason(&body), None);
    // Wrong method: 405 with Allow.
    let r = http
        .put(format!("{url}/tasks/t1"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);
    assert_eq!(r.headers()["allow"], "GET");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body.pointer("/error/code"), Some(&json!(405)));
    // Bad JSON: 400.
    let r = http
        .post(format!("{url}/message:send"))
        .header("A2A-Version", "1.0")
        .header("Content-Type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body.pointer("/error/status"),
        Some(&json!("INVALID_ARGUMENT"))
    );
    // A body that is not JSON by its Content-Type: CONTENT_TYPE_NOT_SUPPORTED.
    let r = http
        .post(format!("{url}/message:send"))
        .header("A2A-Version", "1.0")
        .header("Content-Type", "text/plain")
        .body("hello")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        rest_reason(&body).as_deref(),
        Some("CONTENT_TYPE_NOT_SUPPORTED")
    );
    // A bad query value: 400 INVALID_ARGUMENT.
    let r = http
        .get(format!("{url}/tasks?pageSize=ten"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    net.shutdown().await;
}

#[tokio::test]
async fn version_comes_from_header_or_query() {
    let net = start(TASK_AGENT).await;
    let http = client();
    let url = rest_url(&net);
    let r = http.get(format!("{url}/tasks")).send().await.unwrap();
    assert_eq!(r.status(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(rest_reason(&body).as_deref(), Some("VERSION_NOT_SUPPORTED"));
    let r = http
        .get(format!("{url}/tasks"))
        .header("A2A-Version", "2.0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let r = http
        .get(format!("{url}/tasks?A2A-Version=1.0"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    net.shutdown().await;
}

#[tokio::test]
async fn tenant_prefix_routes_and_reaches_the_params() {
    let net = start(TASK_AGENT).await;
    let http = client();
    let url = rest_url(&net);
    let mut p = send_params("reply");
    p["tenant"] = json!("acme");
    let r = rest_ok(&http, &url, Method::SendMessage, p).await;
    assert!(r.get("message").is_some());
    let req = net.journal().requests().pop().unwrap();
    assert_eq!(req.params["tenant"], "acme");
    net.shutdown().await;
}

#[tokio::test]
async fn oversize_body_is_413_with_an_error_body() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        bindings = ["rest"]
        max_body_bytes = 1000
    "#,
    )
    .await;
    let http = client();
    let big = "x".repeat(5000);
    let (status, body) = rest(
        &http,
        &rest_url(&net),
        Method::SendMessage,
        send_params(&big),
    )
    .await;
    assert_eq!(status, 413);
    assert_eq!(body.pointer("/error/code"), Some(&json!(413)));
    net.shutdown().await;
}

#[tokio::test]
async fn an_unserved_binding_answers_404_and_jsonrpc_stays_put() {
    // Advertised but not served: the card lists HTTP+JSON, the agent fails on it.
    let net = start(
        r#"
        [[agent]]
        name = "a"
        advertised_bindings = ["rest", "jsonrpc"]
    "#,
    )
    .await;
    let http = client();
    let card: Value = http
        .get(net.card_url("a").unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        card.pointer("/supportedInterfaces/0/protocolBinding"),
        Some(&json!("HTTP+JSON"))
    );
    let (status, body) = rest(&http, &rest_url(&net), Method::ListTasks, json!({})).await;
    assert_eq!(status, 404, "{body}");
    assert!(body.pointer("/error/message").is_some());
    // The served binding is untouched.
    let v = call(&http, &net.rpc_url("a").unwrap(), "ListTasks", json!({})).await;
    assert!(v.get("tasks").is_some());
    net.shutdown().await;
}

#[tokio::test]
async fn http_status_fault_keeps_status_retry_after_and_an_error_body() {
    let spec = MockAgent::network(
        1,
        vec![
            MockAgent::builder("a")
                .bindings([Binding::Rest])
                .queue_fault(
                    Method::SendMessage,
                    Fault::HttpStatus {
                        status: 503,
                        retry_after_s: Some(2),
                    },
                    1,
                )
                .build(),
        ],
    );
    let net = start_spec(spec).await;
    let http = client();
    let url = rest_url(&net);
    let r = rest_request(&http, &url, Method::SendMessage, &send_params("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 503);
    assert_eq!(r.headers()["retry-after"], "2");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body.pointer("/error/status"), Some(&json!("UNAVAILABLE")));
    // Next call is served.
    rest_ok(&http, &url, Method::SendMessage, send_params("x")).await;
    net.shutdown().await;
}

#[tokio::test]
async fn rpc_error_and_garbage_faults_in_rest_form() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        bindings = ["rest"]
        [[agent.queued_fault]]
        method = "GetTask"
        fault = { kind = "rpc_error", code = -32001 }
        [[agent.queued_fault]]
        method = "ListTasks"
        fault = { kind = "garbage_body" }
    "#,
    )
    .await;
    let http = client();
    let url = rest_url(&net);
    let (status, body) = rest(&http, &url, Method::GetTask, json!({"id": "t"})).await;
    assert_eq!(status, 404);
    assert_eq!(rest_reason(&body).as_deref(), Some("TASK_NOT_FOUND"));
    let r = rest_request(&http, &url, Method::ListTasks, &json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert!(serde_json::from_slice::<Value>(&r.bytes().await.unwrap()).is_err());
    net.shutdown().await;
}

#[tokio::test]
async fn drop_before_resets_the_connection() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        bindings = ["rest"]
        [[agent.queued_fault]]
        method = "SendMessage"
        fault = { kind = "drop_before" }
    "#,
    )
    .await;
    let http = client();
    let e = rest_request(
        &http,
        &rest_url(&net),
        Method::SendMessage,
        &send_params("x"),
    )
    .send()
    .await
    .expect_err("connection dropped");
    assert!(!e.is_timeout(), "{e:?}");
    net.shutdown().await;
}

#[tokio::test]
async fn stream_faults_cut_rest_streams() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        bindings = ["rest"]
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
    "#,
    )
    .await;
    let http = client();
    let url = rest_url(&net);
    let s = rest_stream(
        &http,
        &url,
        Method::SendStreamingMessage,
        send_params("close"),
    )
    .await;
    assert_eq!(s.events.len(), 1);
    assert!(s.transport_error.is_none() && !s.ended_mid_event);
    let s = rest_stream(
        &http,
        &url,
        Method::SendStreamingMessage,
        send_params("reset"),
    )
    .await;
    assert_eq!(s.events.len(), 1);
    assert!(s.transport_error.is_some() || s.ended_mid_event, "{s:?}");
    net.shutdown().await;
}

#[tokio::test]
async fn hostile_streams_over_rest() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        bindings = ["rest"]
        [[agent.rule]]
        when = { text_contains = "garbage" }
        steps = [{ do = "state", state = "TASK_STATE_WORKING" },
                 { do = "raw_sse", data = "{not json" },
                 { do = "raw_event", result = { statusUpdate = { taskId = "someone-else", contextId = "c", status = { state = "TASK_STATE_COMPLETED" } } } },
                 { do = "unknown_state", state = "TASK_STATE_PAUSED" },
                 { do = "huge_event", bytes = 100000 },
                 { do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent.rule]]
        when = { text_contains = "mutate" }
        mutate = ["unknown_field", "wrong_rpc_id"]
        steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
    "#,
    )
    .await;
    let http = client();
    let url = rest_url(&net);
    let r = rest_request(
        &http,
        &url,
        Method::SendStreamingMessage,
        &send_params("garbage"),
    )
    .send()
    .await
    .unwrap();
    let s = read_sse(r, 1 << 20).await;
    assert!(s.raw.iter().any(|d| d == "{not json"), "{s:?}");
    assert!(
        s.events
            .iter()
            .any(|e| e.pointer("/statusUpdate/taskId") == Some(&json!("someone-else")))
    );
    assert!(
        s.events
            .iter()
            .any(|e| e.pointer("/statusUpdate/status/state") == Some(&json!("TASK_STATE_PAUSED")))
    );
    assert!(s.raw.iter().any(|d| d.len() == 100000));
    assert!(s.events.iter().all(|e| e.get("jsonrpc").is_none()));
    // Result-level mutations apply; the envelope-only wrong id has no HTTP+JSON meaning.
    let r = rest_ok(&http, &url, Method::SendMessage, send_params("mutate")).await;
    assert_eq!(r["mockExtraField"], true, "{r}");
    assert!(r.get("id").is_none());
    net.shutdown().await;
}
