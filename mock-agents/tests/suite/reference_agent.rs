//! The reference agent (`examples/reference-agent.toml`) over real HTTP: every row of the TCK's
//! messageId-prefix table, at the card's interface URL with the trailing slash the TCK adds, plus
//! every other JSON-RPC method (get, list, cancel, subscribe, push-config CRUD and delivery, the
//! extended card). Each row prints what came back over the wire (`--nocapture` shows it).

use crate::common;

use a2a_mock_agents::{Network, NetworkSpec};
use axum::http::HeaderMap;
use common::*;
use serde_json::{Value, json};
use std::path::PathBuf;
use tokio::sync::mpsc;

async fn reference() -> (Network, String, reqwest::Client) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/reference-agent.toml");
    let spec = NetworkSpec::load(&path).expect("the reference agent loads");
    let net = Network::start(spec).await.expect("starts");
    let http = client();
    let card: Value = http
        .get(net.card_url("reference").unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["capabilities"]["streaming"], true);
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    assert_eq!(card["capabilities"]["extendedAgentCard"], true);
    // As the TCK does: the interface URL plus a trailing slash.
    let url = format!(
        "{}/",
        card["supportedInterfaces"][0]["url"].as_str().unwrap()
    );
    (net, url, http)
}

fn msg(id: &str, task_id: Option<&str>) -> Value {
    let mut m = json!({"messageId": id, "role": "ROLE_USER", "parts": [{"text": "Hello"}]});
    if let Some(t) = task_id {
        m["taskId"] = json!(t);
    }
    json!({"message": m})
}

fn show(row: &str, v: &Value) {
    eprintln!("{row}: {v}");
}

/// The task of a SendMessage result, with the checks every task answer passes.
fn task_of(r: &Value) -> Value {
    let t = r["task"].clone();
    assert!(t.is_object(), "a task: {r}");
    let d = a2a_protocol::conformance::conformance(a2a_protocol::conformance::ObjectType::Task, &t);
    assert!(d.is_empty(), "{d:?} in {t}");
    t
}

#[tokio::test]
async fn every_row_of_the_message_id_table_over_http() {
    let (net, url, http) = reference().await;

    // tck-complete-task
    let r = call(
        &http,
        &url,
        "SendMessage",
        msg("tck-complete-task-0a1b2c3d", None),
    )
    .await;
    show("tck-complete-task", &r);
    let t = task_of(&r);
    assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(t["status"]["message"]["role"], "ROLE_AGENT");
    assert_eq!(
        t["status"]["message"]["parts"],
        json!([{"text": "Hello from TCK"}])
    );

    // tck-input-required, kept open by a tck-input-required follow-up, completed by a
    // tck-complete-task follow-up.
    let r = call(
        &http,
        &url,
        "SendMessage",
        msg("tck-input-required-00000001", None),
    )
    .await;
    show("tck-input-required", &r);
    let t = task_of(&r);
    let tid = t["id"].as_str().unwrap().to_string();
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let r = call(
        &http,
        &url,
        "SendMessage",
        msg("tck-input-required-00000002", Some(&tid)),
    )
    .await;
    show("tck-input-required follow-up", &r);
    assert_eq!(task_of(&r)["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let r = call(
        &http,
        &url,
        "SendMessage",
        msg("tck-complete-task-00000003", Some(&tid)),
    )
    .await;
    show("tck-complete-task follow-up", &r);
    let t = task_of(&r);
    assert_eq!(t["id"], tid.as_str());
    assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        t["status"]["message"]["parts"],
        json!([{"text": "Hello from TCK"}])
    );
    assert_eq!(t["history"].as_array().unwrap().len(), 3);

    // tck-artifact-*
    for (prefix, part) in [
        (
            "tck-artifact-text",
            json!({"text": "Generated text content"}),
        ),
        (
            "tck-artifact-file",
            json!({"raw": "dGNr", "filename": "output.txt", "mediaType": "text/plain"}),
        ),
        (
            "tck-artifact-file-url",
            json!({"url": "https://example.com/output.txt", "filename": "output.txt",
                   "mediaType": "text/plain"}),
        ),
        (
            "tck-artifact-data",
            json!({"data": {"key": "value", "count": 42}}),
        ),
    ] {
        let r = call(
            &http,
            &url,
            "SendMessage",
            msg(&format!("{prefix}-0a1b2c3d"), None),
        )
        .await;
        show(prefix, &r);
        let t = task_of(&r);
        assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED", "{prefix}");
        assert_eq!(t["artifacts"].as_array().unwrap().len(), 1, "{prefix}");
        assert_eq!(t["artifacts"][0]["parts"], json!([part]), "{prefix}");
    }

    // tck-message-response
    let r = call(
        &http,
        &url,
        "SendMessage",
        msg("tck-message-response-0a1b2c3d", None),
    )
    .await;
    show("tck-message-response", &r);
    assert!(r.get("task").is_none());
    assert_eq!(r["message"]["role"], "ROLE_AGENT");
    assert_eq!(
        r["message"]["parts"],
        json!([{"text": "Direct message response"}])
    );

    // Streams.
    let kinds = |results: &[Value]| -> Vec<String> {
        results
            .iter()
            .map(|r| {
                if let Some(s) = r.pointer("/statusUpdate/status/state") {
                    format!("status:{}", s.as_str().unwrap_or_default())
                } else if let Some(a) = r.get("artifactUpdate") {
                    format!(
                        "artifact:{}{}{}",
                        a["artifact"]["parts"],
                        if a["append"] == true { " append" } else { "" },
                        if a["lastChunk"] == true { " last" } else { "" }
                    )
                } else if let Some(s) = r.pointer("/task/status/state") {
                    format!("task:{}", s.as_str().unwrap_or_default())
                } else {
                    format!("other:{r}")
                }
            })
            .collect()
    };
    let text = |t: &str| format!("artifact:{} last", json!([{"text": t}]));
    for (prefix, want) in [
        ("tck-stream-001", vec![text("Stream hello from TCK")]),
        ("tck-stream-003", vec![text("Stream task lifecycle")]),
        ("tck-stream-ordering-001", vec![text("Ordered output")]),
        ("tck-stream-002", vec![]),
        (
            "tck-stream-artifact-text",
            vec![text("Streamed text content")],
        ),
        (
            "tck-stream-artifact-file",
            vec![format!(
                "artifact:{} last",
                json!([{"raw": "dGNr", "filename": "output.txt", "mediaType": "text/plain"}])
            )],
        ),
        (
            "tck-stream-artifact-chunked",
            vec![
                format!("artifact:{}", json!([{"text": "chunk-1 "}])),
                format!("artifact:{} append last", json!([{"text": "chunk-2"}])),
            ],
        ),
    ] {
        let s = stream(
            &http,
            &url,
            "SendStreamingMessage",
            msg(&format!("{prefix}-0a1b2c3d"), None),
        )
        .await;
        assert!(s.content_type.starts_with("text/event-stream"), "{prefix}");
        assert!(
            s.transport_error.is_none() && !s.ended_mid_event,
            "{prefix}: {s:?}"
        );
        let got = kinds(&s.results());
        eprintln!("{prefix}: {got:?}");
        let mut expected = vec!["task:TASK_STATE_SUBMITTED".to_string()];
        if prefix != "tck-stream-002" {
            expected.push("status:TASK_STATE_WORKING".into());
        }
        expected.extend(want);
        expected.push("status:TASK_STATE_COMPLETED".into());
        assert_eq!(got, expected, "{prefix}");
    }

    // tck-reject-task
    let r = call(
        &http,
        &url,
        "SendMessage",
        msg("tck-reject-task-0a1b2c3d", None),
    )
    .await;
    show("tck-reject-task", &r);
    assert_eq!(task_of(&r)["status"]["state"], "TASK_STATE_REJECTED");

    // Anything else.
    let r = call(&http, &url, "SendMessage", msg("some-client-id-1", None)).await;
    show("anything else", &r);
    let t = task_of(&r);
    assert_eq!(t["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(t["status"]["message"]["role"], "ROLE_AGENT");
    assert_eq!(
        t["status"]["message"]["parts"],
        json!([{"text": "Task completed"}])
    );

    // A non-JSON content type (JSONRPC-SSE-002).
    let r = http
        .post(&url)
        .header("A2A-Version", "1.0")
        .header("Content-Type", "text/plain")
        .body(envelope("SendMessage", msg("tck-complete-task-x", None)).to_string())
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    show("text/plain body", &v);
    assert_eq!(code(&v), Some(-32005));
    net.shutdown().await;
}

#[tokio::test]
async fn get_list_cancel_subscribe_push_and_the_extended_card() {
    let (net, url, http) = reference().await;
    let open = |id: &str| msg(id, None);
    let r = call(
        &http,
        &url,
        "SendMessage",
        open("tck-input-required-aaaa0001"),
    )
    .await;
    let tid = r["task"]["id"].as_str().unwrap().to_string();

    // GetTask with historyLength.
    let t = call(
        &http,
        &url,
        "GetTask",
        json!({"id": tid, "historyLength": 1}),
    )
    .await;
    show("GetTask", &t);
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(t["history"].as_array().unwrap().len(), 1);
    let t = call(
        &http,
        &url,
        "GetTask",
        json!({"id": tid, "historyLength": 0}),
    )
    .await;
    assert!(t.get("history").is_none());

    // Push config CRUD and delivery.
    let (tx, mut rx) = mpsc::unbounded_channel::<(HeaderMap, Value)>();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let tx = tx.clone();
            async move {
                let _ = tx.send((
                    headers,
                    serde_json::from_slice(&body).unwrap_or(Value::Null),
                ));
                "ok"
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook = format!("http://{}/hook", l.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    let cfg = json!({"taskId": tid, "id": "cfg-1", "url": hook,
                     "authentication": {"scheme": "Bearer", "credentials": "secret"}});
    let c = call(&http, &url, "CreateTaskPushNotificationConfig", cfg.clone()).await;
    show("CreateTaskPushNotificationConfig", &c);
    assert_eq!(c, cfg);
    let g = call(
        &http,
        &url,
        "GetTaskPushNotificationConfig",
        json!({"taskId": tid, "id": "cfg-1"}),
    )
    .await;
    assert_eq!(g, cfg);
    let l = call(
        &http,
        &url,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": tid}),
    )
    .await;
    show("ListTaskPushNotificationConfigs", &l);
    assert_eq!(l["configs"], json!([cfg]));

    // SubscribeToTask while the task waits, then the follow-up completes it: the subscriber and
    // the webhook see the same events.
    let (h2, u2, t2) = (http.clone(), url.clone(), tid.clone());
    let sub =
        tokio::spawn(async move { stream(&h2, &u2, "SubscribeToTask", json!({"id": t2})).await });
    wait_for(net.journal(), "the subscription's snapshot", |es| {
        es.iter()
            .any(|e| matches!(&e.event, a2a_mock_agents::Event::SseEvent { index: 0, .. }))
    })
    .await;
    let r = call(
        &http,
        &url,
        "SendMessage",
        msg("tck-complete-task-aaaa0002", Some(&tid)),
    )
    .await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let s = sub.await.unwrap();
    let states = s.states();
    eprintln!("SubscribeToTask: {states:?}");
    assert_eq!(
        states,
        [
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED"
        ]
    );
    let mut pushed = Vec::new();
    while pushed
        .last()
        .and_then(|(_, v): &(HeaderMap, Value)| v.pointer("/statusUpdate/status/state"))
        != Some(&json!("TASK_STATE_COMPLETED"))
    {
        match tokio::time::timeout(WAIT, rx.recv()).await {
            Ok(Some(x)) => pushed.push(x),
            _ => panic!("push deliveries: {pushed:?}"),
        }
    }
    eprintln!("push deliveries: {}", pushed.len());
    assert!(
        pushed
            .iter()
            .all(|(h, _)| h["authorization"] == "Bearer secret")
    );
    let d = call(
        &http,
        &url,
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": tid, "id": "cfg-1"}),
    )
    .await;
    show("DeleteTaskPushNotificationConfig", &d);
    let v = rpc(
        &http,
        &url,
        "GetTaskPushNotificationConfig",
        json!({"taskId": tid, "id": "cfg-1"}),
    )
    .await;
    assert_eq!(code(&v), Some(-32001));
    server.abort();

    // A terminal task cannot be subscribed to or cancelled.
    let v = rpc(&http, &url, "SubscribeToTask", json!({"id": tid})).await;
    assert_eq!(code(&v), Some(-32004));
    let v = rpc(&http, &url, "CancelTask", json!({"id": tid})).await;
    assert_eq!(code(&v), Some(-32002));

    // CancelTask on an open task.
    let r = call(
        &http,
        &url,
        "SendMessage",
        open("tck-input-required-aaaa0003"),
    )
    .await;
    let open_id = r["task"]["id"].as_str().unwrap().to_string();
    let c = call(&http, &url, "CancelTask", json!({"id": open_id})).await;
    show("CancelTask", &c);
    assert_eq!(c["status"]["state"], "TASK_STATE_CANCELED");

    // ListTasks sees both.
    let l = call(&http, &url, "ListTasks", json!({})).await;
    show("ListTasks", &l);
    let ids: Vec<&str> = l["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert!(
        ids.contains(&tid.as_str()) && ids.contains(&open_id.as_str()),
        "{ids:?}"
    );
    assert_eq!(l["nextPageToken"], "");

    // The extended card.
    let e = call(&http, &url, "GetExtendedAgentCard", json!({})).await;
    let skills: Vec<&str> = e["skills"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    eprintln!("GetExtendedAgentCard skills: {skills:?}");
    assert_eq!(skills, ["reference", "reference-extended"]);
    net.shutdown().await;
}
