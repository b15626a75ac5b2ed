//! The A2A 1.0 server surface of a mock agent: card, version negotiation, the 0.3 adapter,
//! GetTask/ListTasks, push configs and delivery, SubscribeToTask, terminal-state rules,
//! cancel behaviours and messageId deduplication.

use crate::common;

use a2a_mock_agents::{Event, MockAgent, Step};
use a2a_protocol::TaskState;
use axum::http::HeaderMap;
use common::*;
use serde_json::{Value, json};
use tokio::sync::mpsc;

#[tokio::test]
async fn card_describes_the_agent() {
    let net = start(
        r#"
        [[agent]]
        name = "flights"
        streaming = false
        push_notifications = true
        [[agent.skill]]
        id = "book-flight"
        tags = ["travel"]
        "#,
    )
    .await;
    let card: Value = client()
        .get(net.card_url("flights").unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["name"], "flights");
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        net.rpc_url("flights").unwrap()
    );
    assert_eq!(card["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    assert_eq!(card["supportedInterfaces"][0]["protocolVersion"], "1.0");
    assert_eq!(card["capabilities"]["streaming"], false);
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    assert_eq!(card["skills"][0]["id"], "book-flight");
    assert_eq!(card["skills"][0]["tags"], json!(["travel"]));
    let d = a2a_protocol::conformance::conformance(
        a2a_protocol::conformance::ObjectType::AgentCard,
        &card,
    );
    assert!(d.is_empty(), "{d:?}");
    assert!(net.journal().entries().iter().any(|e| matches!(&e.event,
        Event::Request { http_method, path, .. } if http_method == "GET" && path == "/.well-known/agent-card.json")));
    net.shutdown().await;
}

#[tokio::test]
async fn version_negotiation() {
    // A default agent built in Rust.
    let net = start_spec(MockAgent::network(1, vec![MockAgent::builder("a").build()])).await;
    let http = client();
    let url = net.rpc_url("a").unwrap();
    let body = envelope("GetTask", json!({"id": "nope"}));
    let send = |version: Option<&'static str>, url: String| {
        let http = http.clone();
        let body = body.clone();
        async move {
            let mut rb = http.post(url).json(&body);
            if let Some(v) = version {
                rb = rb.header("A2A-Version", v);
            }
            let v: Value = rb.send().await.unwrap().json().await.unwrap();
            v
        }
    };
    // Missing means 0.3, which a 1.0 agent does not serve.
    let v = send(None, url.clone()).await;
    assert_eq!(code(&v), Some(-32009));
    assert_eq!(v["error"]["data"][0]["reason"], "VERSION_NOT_SUPPORTED");
    for bad in ["2.0", "0.3", "1.1", "one"] {
        assert_eq!(
            code(&send(Some(bad), url.clone()).await),
            Some(-32009),
            "{bad}"
        );
    }
    // 1.0 (patch ignored) reaches the method: the task is unknown.
    for good in ["1.0", "1.0.3", "1"] {
        assert_eq!(
            code(&send(Some(good), url.clone()).await),
            Some(-32001),
            "{good}"
        );
    }
    // The version may come as a query parameter.
    assert_eq!(
        code(&send(None, format!("{url}?A2A-Version=1.0")).await),
        Some(-32001)
    );
    // 0.3 names and unknown methods are not 1.0 methods.
    for m in ["tasks/get", "NoSuchMethod"] {
        let v = rpc(&http, &url, m, json!({"id": "x"})).await;
        assert_eq!(code(&v), Some(-32601), "{m}");
    }
    // Envelope errors.
    let v: Value = post(
        &http,
        &url,
        &json!({"jsonrpc": "1.0", "id": 1, "method": "GetTask"}),
        &[],
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(code(&v), Some(-32600));
    assert_eq!(v["id"], 1);
    let r = http
        .post(&url)
        .header("A2A-Version", "1.0")
        .body("{not json")
        .send()
        .await
        .unwrap();
    let v: Value = r.json().await.unwrap();
    assert_eq!((code(&v), v["id"].clone()), (Some(-32700), Value::Null));
    net.shutdown().await;
}

#[tokio::test]
async fn a_0_3_agent_speaks_0_3_through_the_adapter() {
    let net = start(
        r#"
        [[agent]]
        name = "old"
        protocol = "0.3"
        [[agent.rule]]
        steps = [
          { do = "state", state = "TASK_STATE_WORKING" },
          { do = "artifacts", text = "legacy output" },
          { do = "state", state = "TASK_STATE_COMPLETED" },
        ]
        "#,
    )
    .await;
    let http = client();
    let url = net.rpc_url("old").unwrap();
    let card: Value = http
        .get(net.card_url("old").unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(card["protocolVersion"], "0.3");
    assert_eq!(card["url"], url.as_str());
    assert_eq!(card["preferredTransport"], "JSONRPC");
    assert!(card.get("supportedInterfaces").is_none());

    let msg = |text: &str| {
        json!({"message": {"kind": "message", "messageId": mid(), "role": "user",
                            "parts": [{"kind": "text", "text": text}]}})
    };
    // No A2A-Version header: a 0.3 client does not send one.
    let send = |method: &str, params: Value| {
        let body = envelope(method, params);
        let http = http.clone();
        let url = url.clone();
        async move { http.post(url).json(&body).send().await.unwrap() }
    };
    let v: Value = send("message/send", msg("hi")).await.json().await.unwrap();
    let t = &v["result"];
    assert_eq!(t["kind"], "task", "{v}");
    assert_eq!(t["status"]["state"], "completed");
    assert_eq!(t["artifacts"][0]["parts"][0]["kind"], "text");
    assert_eq!(t["artifacts"][0]["parts"][0]["text"], "legacy output");
    let tid = t["id"].as_str().unwrap().to_string();

    let v: Value = send("tasks/get", json!({"id": tid}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(v["result"]["kind"], "task");
    assert_eq!(v["result"]["history"][0]["role"], "user");
    let v: Value = send("tasks/cancel", json!({"id": tid}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(code(&v), Some(-32002));
    let v: Value = send("SendMessage", msg("1.0 name"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(code(&v), Some(-32601));

    let r = send("message/stream", msg("stream")).await;
    let s = read_sse(r, 1 << 20).await;
    let rs = s.results();
    let kinds: Vec<&str> = rs.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["task", "status-update", "artifact-update", "status-update"]
    );
    assert_eq!(rs[1]["final"], false);
    assert_eq!(rs[3]["final"], true);
    assert_eq!(rs[3]["status"]["state"], "completed");

    let v: Value = send(
        "tasks/pushNotificationConfig/set",
        json!({"taskId": tid, "pushNotificationConfig": {"id": "cfg", "url": "http://127.0.0.1:9/hook"}}),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(v["result"]["pushNotificationConfig"]["id"], "cfg", "{v}");
    assert_eq!(v["result"]["taskId"], tid.as_str());

    let methods: Vec<String> = net
        .journal()
        .entries()
        .iter()
        .filter_map(|e| match &e.event {
            Event::Request {
                method: Some(m), ..
            } => Some(m.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(methods[0], "message/send");
    assert!(methods.contains(&"tasks/get".to_string()));
    net.shutdown().await;
}

#[tokio::test]
async fn get_task_history_length() {
    let net = start_spec(MockAgent::network(
        1,
        vec![
            MockAgent::builder("a")
                .mount(
                    MockAgent::when()
                        .step(Step::input_required("more?"))
                        .state(TaskState::Completed),
                )
                .build(),
        ],
    ))
    .await;
    let http = client();
    let url = net.rpc_url("a").unwrap();
    let mut p = send_params("first");
    p["configuration"] = json!({"historyLength": 0});
    let r = call(&http, &url, "SendMessage", p).await;
    assert!(
        r["task"].get("history").is_none(),
        "historyLength 0 omits history"
    );
    let tid = r["task"]["id"].as_str().unwrap().to_string();
    call(&http, &url, "SendMessage", answer_params(&tid, "second")).await;

    let texts = |t: &Value| -> Vec<String> {
        t["history"]
            .as_array()
            .map(|h| {
                h.iter()
                    .map(|m| m["parts"][0]["text"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let t = call(&http, &url, "GetTask", json!({"id": tid})).await;
    assert_eq!(texts(&t), ["first", "second"]);
    assert_eq!(t["history"][0]["taskId"], tid.as_str());
    let t = call(
        &http,
        &url,
        "GetTask",
        json!({"id": tid, "historyLength": 1}),
    )
    .await;
    assert_eq!(texts(&t), ["second"]);
    let t = call(
        &http,
        &url,
        "GetTask",
        json!({"id": tid, "historyLength": 0}),
    )
    .await;
    assert!(t.get("history").is_none());
    let t = call(
        &http,
        &url,
        "GetTask",
        json!({"id": tid, "historyLength": 10}),
    )
    .await;
    assert_eq!(texts(&t).len(), 2);
    let v = rpc(
        &http,
        &url,
        "GetTask",
        json!({"id": tid, "historyLength": -1}),
    )
    .await;
    assert_eq!(code(&v), Some(-32602));
    let v = rpc(&http, &url, "GetTask", json!({"id": "unknown"})).await;
    assert_eq!(code(&v), Some(-32001));
    assert_eq!(v["error"]["data"][0]["reason"], "TASK_NOT_FOUND");
    net.shutdown().await;
}

#[tokio::test]
async fn list_tasks_filters_and_paginates() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        [[agent.rule]]
        when = { text_contains = "done" }
        steps = [{ do = "artifacts", text = "result" }, { do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent.rule]]
        when = { text_contains = "fail" }
        steps = [{ do = "state", state = "TASK_STATE_FAILED" }]
        [[agent.rule]]
        when = { text_contains = "ask" }
        steps = [{ do = "input_required", question = "?" }]
        "#,
    )
    .await;
    let http = client();
    let url = net.rpc_url("a").unwrap();
    for (ctx, text) in [
        ("ctx-a", "done"),
        ("ctx-a", "fail"),
        ("ctx-b", "done"),
        ("ctx-a", "done"),
        ("ctx-b", "ask"),
    ] {
        let mut p = send_params(text);
        p["message"]["contextId"] = json!(ctx);
        call(&http, &url, "SendMessage", p).await;
    }
    let list = |params: Value| call(&http, &url, "ListTasks", params);

    let all = list(json!({})).await;
    assert_eq!(all["totalSize"], 5);
    assert_eq!(all["pageSize"], 50);
    assert_eq!(all["nextPageToken"], "");
    let tasks = all["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 5);
    let stamps: Vec<&str> = tasks
        .iter()
        .map(|t| t["status"]["timestamp"].as_str().unwrap())
        .collect();
    assert!(
        stamps.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {stamps:?}"
    );
    assert!(
        tasks.iter().all(|t| t.get("artifacts").is_none()),
        "no artifacts unless asked"
    );

    assert_eq!(list(json!({"contextId": "ctx-a"})).await["totalSize"], 3);
    assert_eq!(
        list(json!({"status": "TASK_STATE_COMPLETED"})).await["totalSize"],
        3
    );
    assert_eq!(
        list(json!({"status": "TASK_STATE_FAILED"})).await["totalSize"],
        1
    );
    assert_eq!(
        list(json!({"status": "TASK_STATE_INPUT_REQUIRED"})).await["totalSize"],
        1
    );
    assert_eq!(
        list(json!({"status": "TASK_STATE_UNSPECIFIED"})).await["totalSize"],
        5,
        "unset filter"
    );
    assert_eq!(
        list(json!({"contextId": "ctx-a", "status": "TASK_STATE_COMPLETED"})).await["totalSize"],
        2
    );
    let with = list(json!({"includeArtifacts": true, "status": "TASK_STATE_COMPLETED"})).await;
    assert!(
        with["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["artifacts"][0]["parts"][0]["text"] == "result")
    );
    let no_history = list(json!({"historyLength": 0})).await;
    assert!(
        no_history["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t.get("history").is_none())
    );
    let newest = stamps[0];
    let after = list(json!({"statusTimestampAfter": newest})).await;
    let n = after["totalSize"].as_u64().unwrap();
    assert!((1..5).contains(&n), "{after}");

    // Cursor pagination: 2 + 2 + 1, the last token empty.
    let mut seen = Vec::new();
    let mut token = String::new();
    let mut pages = 0;
    loop {
        let page = list(json!({"pageSize": 2, "pageToken": token})).await;
        pages += 1;
        assert_eq!(page["totalSize"], 5);
        for t in page["tasks"].as_array().unwrap() {
            seen.push(t["id"].as_str().unwrap().to_string());
        }
        token = page["nextPageToken"].as_str().unwrap().to_string();
        if token.is_empty() {
            break;
        }
        assert!(pages < 5);
    }
    assert_eq!(pages, 3);
    let ids: Vec<String> = tasks
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(seen, ids, "pages cover every task once, in order");

    for bad in [
        json!({"pageSize": 0}),
        json!({"pageSize": 101}),
        json!({"pageToken": "garbage"}),
        json!({"historyLength": -2}),
    ] {
        assert_eq!(
            code(&rpc(&http, &url, "ListTasks", bad.clone()).await),
            Some(-32602),
            "{bad}"
        );
    }
    assert_eq!(deviations(net.journal()), Vec::<String>::new());
    net.shutdown().await;
}

/// A local webhook receiver: every POST goes to the channel as (headers, body).
async fn webhook() -> (
    String,
    mpsc::UnboundedReceiver<(HeaderMap, Value)>,
    tokio::task::JoinHandle<()>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: axum::body::Bytes| {
            let tx = tx.clone();
            async move {
                let v = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let _ = tx.send((headers, v));
                "ok"
            }
        }),
    );
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", l.local_addr().unwrap());
    let h = tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    (url, rx, h)
}

async fn receive(
    rx: &mut mpsc::UnboundedReceiver<(HeaderMap, Value)>,
    n: usize,
) -> Vec<(HeaderMap, Value)> {
    let mut out = Vec::new();
    while out.len() < n {
        match tokio::time::timeout(WAIT, rx.recv()).await {
            Ok(Some(x)) => out.push(x),
            _ => panic!("got {} of {n} push notifications", out.len()),
        }
    }
    out
}

#[tokio::test]
async fn push_notifications_are_delivered_with_credentials_and_duplicates() {
    let (hook, mut rx, server) = webhook().await;
    let net = start(
        r#"
        [[agent]]
        name = "p"
        push_duplicates = 1
        [[agent.rule]]
        steps = [
          { do = "state", state = "TASK_STATE_WORKING" },
          { do = "artifacts", text = "pushed" },
          { do = "state", state = "TASK_STATE_COMPLETED" },
        ]
        "#,
    )
    .await;
    let http = client();
    let mut p = send_params("go");
    p["configuration"] = json!({"taskPushNotificationConfig": {"url": hook, "token": "tok-1",
        "authentication": {"scheme": "Bearer", "credentials": "hook-secret"}}});
    let r = call(&http, &net.rpc_url("p").unwrap(), "SendMessage", p).await;
    let tid = r["task"]["id"].as_str().unwrap().to_string();
    // Three events (WORKING, the artifact, COMPLETED), each delivered twice.
    let got = receive(&mut rx, 6).await;
    for (h, _) in &got {
        assert_eq!(h["authorization"], "Bearer hook-secret");
        assert_eq!(h["x-a2a-notification-token"], "tok-1");
        assert_eq!(h["content-type"], "application/a2a+json");
    }
    let bodies: Vec<&Value> = got.iter().map(|(_, b)| b).collect();
    let keys: Vec<&str> = bodies
        .iter()
        .map(|b| b.as_object().unwrap().keys().next().unwrap().as_str())
        .collect();
    assert_eq!(
        keys,
        [
            "statusUpdate",
            "statusUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "statusUpdate",
            "statusUpdate"
        ]
    );
    assert_eq!(bodies[0], bodies[1], "a duplicate is the same body");
    assert_eq!(
        bodies[4]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert!(bodies.iter().all(|b| {
        b.pointer("/statusUpdate/taskId")
            .or(b.pointer("/artifactUpdate/taskId"))
            == Some(&json!(tid))
    }));
    for b in &bodies {
        let d = a2a_protocol::conformance::conformance(
            a2a_protocol::conformance::ObjectType::StreamResponse,
            b,
        );
        assert!(d.is_empty(), "{d:?}");
    }
    let j = net.journal();
    wait_for(j, "6 push entries", |es| {
        es.iter()
            .filter(|e| {
                matches!(
                    &e.event,
                    Event::Push {
                        status: Some(200),
                        ..
                    }
                )
            })
            .count()
            == 6
    })
    .await;
    net.shutdown().await;
    server.abort();
}

#[tokio::test]
async fn push_config_crud_and_delivery_to_a_config_created_later() {
    let (hook, mut rx, server) = webhook().await;
    let net = start(
        r#"
        [[agent]]
        name = "p"
        [[agent.rule]]
        steps = [{ do = "input_required", question = "go on?" }, { do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent]]
        name = "nopush"
        push_notifications = false
        "#,
    )
    .await;
    let http = client();
    let url = net.rpc_url("p").unwrap();
    let r = call(&http, &url, "SendMessage", send_params("start")).await;
    let tid = r["task"]["id"].as_str().unwrap().to_string();

    let c = call(
        &http,
        &url,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": tid, "id": "cfg-1", "url": hook,
        "authentication": {"scheme": "Bearer", "credentials": "one"}}),
    )
    .await;
    assert_eq!(
        c,
        json!({"taskId": tid, "id": "cfg-1", "url": hook, "authentication": {"scheme": "Bearer", "credentials": "one"}})
    );
    let c2 = call(
        &http,
        &url,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": tid, "url": hook,
        "authentication": {"scheme": "Bearer", "credentials": "two"}}),
    )
    .await;
    assert_eq!(
        c2["id"],
        tid.as_str(),
        "a missing id defaults to the task id"
    );
    let g = call(
        &http,
        &url,
        "GetTaskPushNotificationConfig",
        json!({"taskId": tid, "id": "cfg-1"}),
    )
    .await;
    assert_eq!(g, c);
    let l = call(
        &http,
        &url,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": tid}),
    )
    .await;
    assert_eq!(l["configs"].as_array().unwrap().len(), 2);
    let d = call(
        &http,
        &url,
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": tid, "id": "cfg-1"}),
    )
    .await;
    assert_eq!(d, json!({}));
    let d = call(
        &http,
        &url,
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": tid, "id": "cfg-1"}),
    )
    .await;
    assert_eq!(d, json!({}), "delete is idempotent");
    let v = rpc(
        &http,
        &url,
        "GetTaskPushNotificationConfig",
        json!({"taskId": tid, "id": "cfg-1"}),
    )
    .await;
    assert_eq!(code(&v), Some(-32001));
    let l = call(
        &http,
        &url,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": tid}),
    )
    .await;
    assert_eq!(l["configs"].as_array().unwrap().len(), 1);
    let v = rpc(
        &http,
        &url,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": "unknown", "url": hook}),
    )
    .await;
    assert_eq!(code(&v), Some(-32001));

    // A webhook that is not on loopback is never called (SSRF guard), only journaled.
    call(
        &http,
        &url,
        "CreateTaskPushNotificationConfig",
        json!({"taskId": tid, "id": "far", "url": "http://192.0.2.1/hook"}),
    )
    .await;

    // The remaining config gets the events caused by the answer.
    call(&http, &url, "SendMessage", answer_params(&tid, "yes")).await;
    let got = receive(&mut rx, 2).await;
    assert!(got.iter().all(|(h, _)| h["authorization"] == "Bearer two"));
    let states: Vec<&str> = got
        .iter()
        .map(|(_, b)| b["statusUpdate"]["status"]["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"]);
    wait_for(net.journal(), "refused pushes", |es| {
        es.iter()
            .filter(|e| {
                matches!(&e.event, Event::Push { url, status: None, error: Some(err), .. }
                if url == "http://192.0.2.1/hook" && err.contains("refused"))
            })
            .count()
            == 2
    })
    .await;

    // Push disabled: every push method answers -32003.
    let off = net.rpc_url("nopush").unwrap();
    for (m, p) in [
        (
            "CreateTaskPushNotificationConfig",
            json!({"taskId": "t", "url": hook}),
        ),
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": "t", "id": "c"}),
        ),
        ("ListTaskPushNotificationConfigs", json!({"taskId": "t"})),
        (
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": "t", "id": "c"}),
        ),
    ] {
        assert_eq!(code(&rpc(&http, &off, m, p).await), Some(-32003), "{m}");
    }
    assert_eq!(deviations(net.journal()), Vec::<String>::new());
    net.shutdown().await;
    server.abort();
}

#[tokio::test]
async fn subscribe_sends_the_task_first_then_live_events() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        [[agent.rule]]
        steps = [
          { do = "state", state = "TASK_STATE_WORKING" },
          { do = "input_required", question = "continue?" },
          { do = "artifacts", count = 1, chunks = 2, chunk_bytes = 32 },
          { do = "state", state = "TASK_STATE_COMPLETED" },
        ]
        [[agent]]
        name = "nostream"
        streaming = false
        "#,
    )
    .await;
    let http = client();
    let url = net.rpc_url("a").unwrap();
    let j = net.journal();
    let r = call(&http, &url, "SendMessage", send_params("start")).await;
    let tid = r["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");

    let reader = {
        let (http, url, tid) = (http.clone(), url.clone(), tid.clone());
        tokio::spawn(
            async move { stream(&http, &url, "SubscribeToTask", json!({"id": tid})).await },
        )
    };
    // Answer only once the snapshot went out, so the rest is live.
    wait_for(j, "subscription snapshot", |es| {
        let Some(req) = es.iter().find_map(|e| match &e.event {
            Event::Request {
                req,
                method: Some(m),
                ..
            } if m == "SubscribeToTask" => Some(*req),
            _ => None,
        }) else {
            return false;
        };
        es.iter()
            .any(|e| matches!(&e.event, Event::SseEvent { req: r, index: 0, .. } if *r == req))
    })
    .await;
    call(&http, &url, "SendMessage", answer_params(&tid, "yes")).await;
    let s = reader.await.unwrap();
    let rs = s.results();
    assert_eq!(rs[0]["task"]["id"], tid.as_str(), "first event is the Task");
    assert_eq!(
        s.states(),
        [
            "TASK_STATE_INPUT_REQUIRED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED"
        ]
    );
    assert_eq!(reassemble(&rs)["artifact-1"].len(), 64);
    assert!(s.transport_error.is_none());

    // Terminal, unknown, and streaming disabled.
    let v = rpc(&http, &url, "SubscribeToTask", json!({"id": tid})).await;
    assert_eq!(code(&v), Some(-32004));
    let v = rpc(&http, &url, "SubscribeToTask", json!({"id": "unknown"})).await;
    assert_eq!(code(&v), Some(-32001));
    let off = net.rpc_url("nostream").unwrap();
    assert_eq!(
        code(&rpc(&http, &off, "SubscribeToTask", json!({"id": "x"})).await),
        Some(-32004)
    );
    assert_eq!(
        code(&rpc(&http, &off, "SendStreamingMessage", send_params("x")).await),
        Some(-32004)
    );
    assert_eq!(deviations(j), Vec::<String>::new());
    net.shutdown().await;
}

#[tokio::test]
async fn terminal_tasks_and_cancel_behaviours() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        [[agent.rule]]
        when = { text_contains = "quick" }
        steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent.rule]]
        when = { text_contains = "race" }
        on_cancel = "complete_first"
        steps = [{ do = "state", state = "TASK_STATE_WORKING" }, { do = "wait", ms = 20000 }, { do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent.rule]]
        when = { text_contains = "stubborn" }
        on_cancel = "ignore"
        steps = [{ do = "state", state = "TASK_STATE_WORKING" }, { do = "input_required", question = "?" }, { do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent.rule]]
        when = { text_contains = "slow" }
        steps = [{ do = "state", state = "TASK_STATE_WORKING" }, { do = "wait", ms = 20000 }, { do = "state", state = "TASK_STATE_COMPLETED" }]
        "#,
    )
    .await;
    let http = client();
    let url = net.rpc_url("a").unwrap();
    let j = net.journal();
    let immediately = |text: &str| {
        let mut p = send_params(text);
        p["configuration"] = json!({"returnImmediately": true});
        p
    };

    // A message to a terminal task: -32004. CancelTask on it: -32002.
    let r = call(&http, &url, "SendMessage", send_params("quick")).await;
    let done = r["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        code(&rpc(&http, &url, "SendMessage", answer_params(&done, "more")).await),
        Some(-32004)
    );
    assert_eq!(
        code(&rpc(&http, &url, "CancelTask", json!({"id": done})).await),
        Some(-32002)
    );
    assert_eq!(
        code(&rpc(&http, &url, "CancelTask", json!({"id": "unknown"})).await),
        Some(-32001)
    );

    // Cancel a working task while a stream watches it.
    let r = call(&http, &url, "SendMessage", immediately("slow")).await;
    let slow = r["task"]["id"].as_str().unwrap().to_string();
    wait_state(j, &slow, "TASK_STATE_WORKING").await;
    let reader = {
        let (http, url, slow) = (http.clone(), url.clone(), slow.clone());
        tokio::spawn(
            async move { stream(&http, &url, "SubscribeToTask", json!({"id": slow})).await },
        )
    };
    wait_for(j, "subscribed", |es| {
        es.iter()
            .any(|e| matches!(&e.event, Event::SseEvent { index: 0, .. }))
    })
    .await;
    let t = call(&http, &url, "CancelTask", json!({"id": slow})).await;
    assert_eq!(t["status"]["state"], "TASK_STATE_CANCELED");
    let s = reader.await.unwrap();
    assert_eq!(s.states(), ["TASK_STATE_WORKING", "TASK_STATE_CANCELED"]);
    assert_eq!(
        code(&rpc(&http, &url, "CancelTask", json!({"id": slow})).await),
        Some(-32002)
    );
    assert_eq!(
        call(&http, &url, "GetTask", json!({"id": slow})).await["status"]["state"],
        "TASK_STATE_CANCELED"
    );

    // complete_first: the task wins the race; the cancel gets -32002.
    let r = call(&http, &url, "SendMessage", immediately("race")).await;
    let race = r["task"]["id"].as_str().unwrap().to_string();
    wait_state(j, &race, "TASK_STATE_WORKING").await;
    let v = rpc(&http, &url, "CancelTask", json!({"id": race})).await;
    assert_eq!(code(&v), Some(-32002));
    assert_eq!(
        call(&http, &url, "GetTask", json!({"id": race})).await["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(
        task_states(j, &race).last().unwrap(),
        "TASK_STATE_COMPLETED"
    );

    // ignore: the cancel is acknowledged but the task goes on.
    let r = call(&http, &url, "SendMessage", send_params("stubborn")).await;
    let stubborn = r["task"]["id"].as_str().unwrap().to_string();
    let t = call(&http, &url, "CancelTask", json!({"id": stubborn})).await;
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let r = call(&http, &url, "SendMessage", answer_params(&stubborn, "go")).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(!task_states(j, &stubborn).contains(&"TASK_STATE_CANCELED".to_string()));
    net.shutdown().await;
}

/// A cancel that lands while the task streams a flood of chunks: the stream always ends with
/// the CANCELED status event, and nothing of the task is recorded after it. Before, the aborted
/// driver could close the stream first (the abort lands at its next await, and it saw the
/// cancel's mark on its own) or record one more chunk after the final state; a determinism
/// check caught it about once in 50 runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_mid_flood_ends_the_stream_with_the_final_state() {
    let net = start(
        r#"
        [[agent]]
        name = "flood"
        [[agent.rule]]
        steps = [
          { do = "artifacts", count = 1, chunks = 4000, chunk_bytes = 1024 },
          { do = "state", state = "TASK_STATE_COMPLETED" },
        ]
        "#,
    )
    .await;
    let http = client();
    let url = net.rpc_url("flood").unwrap();
    let j = net.journal();
    for round in 0..20usize {
        let reader = {
            let (http, url) = (http.clone(), url.clone());
            let text = format!("flood {round}");
            tokio::spawn(async move {
                stream(&http, &url, "SendStreamingMessage", send_params(&text)).await
            })
        };
        wait_for(j, "the task", |es| {
            es.iter()
                .filter(|e| matches!(&e.event, Event::TaskCreated { .. }))
                .count()
                > round
        })
        .await;
        let tid = tasks_created(j)[round].0.clone();
        wait_for(j, "the flood under way", |es| {
            es.iter()
                .filter(
                    |e| matches!(&e.event, Event::ArtifactChunk { task_id, .. } if *task_id == tid),
                )
                .count()
                > 3
        })
        .await;
        let t = call(&http, &url, "CancelTask", json!({"id": tid})).await;
        assert_eq!(t["status"]["state"], "TASK_STATE_CANCELED", "round {round}");
        let s = reader.await.unwrap();
        assert_eq!(
            s.states().last().map(String::as_str),
            Some("TASK_STATE_CANCELED"),
            "round {round}: the stream ended without the final state"
        );
        let entries = j.entries();
        let canceled = entries
            .iter()
            .position(|e| matches!(&e.event, Event::TaskState { task_id, state } if *task_id == tid && state == "TASK_STATE_CANCELED"))
            .expect("canceled");
        let after: Vec<&Event> = entries[canceled..]
            .iter()
            .map(|e| &e.event)
            .filter(|e| matches!(e, Event::ArtifactChunk { task_id, .. } | Event::TaskState { task_id, .. } if *task_id == tid))
            .collect();
        assert_eq!(
            after.len(),
            1,
            "round {round}: recorded after CANCELED: {after:?}"
        );
    }
    net.shutdown().await;
}

#[tokio::test]
async fn message_id_dedup_on_and_off() {
    // Built with the Rust builder instead of TOML; with dedup on the resend matches no rule
    // again, with dedup off it is new work: `expect` checks both when the network stops.
    let spec = MockAgent::network(
        3,
        vec![
            MockAgent::builder("on")
                .mount(MockAgent::when().state(TaskState::Completed).expect(2))
                .build(),
            MockAgent::builder("off")
                .dedup(false)
                .mount(
                    MockAgent::when()
                        .step(Step::state(TaskState::Completed))
                        .expect(2),
                )
                .build(),
        ],
    );
    let net = start_spec(spec).await;
    let http = client();
    let j = net.journal();
    for agent in ["on", "off"] {
        let url = net.rpc_url(agent).unwrap();
        let p = send_params("same message");
        let a = call(&http, &url, "SendMessage", p.clone()).await;
        let b = call(&http, &url, "SendMessage", p.clone()).await;
        let (a, b) = (
            a["task"]["id"].as_str().unwrap(),
            b["task"]["id"].as_str().unwrap(),
        );
        let mid = p["message"]["messageId"].as_str().unwrap();
        let created: Vec<(String, bool)> = j
            .entries()
            .iter()
            .filter(|e| e.agent == agent)
            .filter_map(|e| match &e.event {
                Event::TaskCreated {
                    task_id,
                    message_id,
                    dedup,
                    ..
                } if message_id == mid => Some((task_id.clone(), *dedup)),
                _ => None,
            })
            .collect();
        if agent == "on" {
            assert_eq!(a, b, "the first task comes back");
            assert_eq!(created, [(a.to_string(), false), (a.to_string(), true)]);
        } else {
            assert_ne!(a, b, "a second task");
            assert_eq!(created, [(a.to_string(), false), (b.to_string(), false)]);
        }
    }
    net.shutdown().await;
}

#[tokio::test]
async fn a_follow_up_with_only_a_task_id_inherits_the_context_and_a_wrong_context_is_refused() {
    let f = Fixture::agents(vec![
        MockAgent::builder("a")
            .mount(
                MockAgent::when()
                    .step(Step::input_required("more?"))
                    .state(TaskState::Completed),
            )
            .build(),
    ])
    .await;
    let mut first = send_params("first");
    first["message"]["contextId"] = json!("ctx-given");
    let t = f.call("SendMessage", first).await;
    let tid = t["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(t["task"]["contextId"], "ctx-given");
    let mut wrong = answer_params(&tid, "x");
    wrong["message"]["contextId"] = json!("ctx-other");
    let v = f.rpc("SendMessage", wrong).await;
    assert_eq!(code(&v), Some(-32602), "{v}");
    // The refused message changed nothing.
    let t = f.call("GetTask", json!({"id": tid})).await;
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(t["history"].as_array().unwrap().len(), 1);
    // Only the task id: the message joins the task's context.
    let t = f.call("SendMessage", answer_params(&tid, "second")).await;
    assert_eq!(t["task"]["contextId"], "ctx-given");
    assert_eq!(t["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let t = f.call("GetTask", json!({"id": tid})).await;
    assert_eq!(t["history"][1]["contextId"], "ctx-given");
    assert_eq!(t["history"][1]["taskId"], tid.as_str());
    f.shutdown().await;
}

#[tokio::test]
async fn concurrent_subscribers_see_the_same_events_in_the_same_order() {
    let f = Fixture::agents(vec![
        MockAgent::builder("a")
            .mount(
                MockAgent::when()
                    .state(TaskState::Working)
                    .step(Step::gate("go"))
                    .step(Step::artifacts(3).chunks(4).chunk_bytes(16))
                    .step(Step::state(TaskState::Working).message("half way"))
                    .step(Step::artifacts(1).chunks(2))
                    .state(TaskState::Completed),
            )
            .build(),
    ])
    .await;
    let mut p = send_params("go");
    p["configuration"] = json!({"returnImmediately": true});
    let t = f.call("SendMessage", p).await;
    let tid = t["task"]["id"].as_str().unwrap().to_string();
    wait_state(f.j(), &tid, "TASK_STATE_WORKING").await;
    let (a, b) = (f.http.clone(), f.http.clone());
    let (ua, ub) = (f.url.clone(), f.url.clone());
    let (ta, tb) = (tid.clone(), tid.clone());
    let sa =
        tokio::spawn(async move { stream(&a, &ua, "SubscribeToTask", json!({"id": ta})).await });
    let sb =
        tokio::spawn(async move { stream(&b, &ub, "SubscribeToTask", json!({"id": tb})).await });
    // Both subscriptions sent their snapshot (so are registered) before the events start.
    wait_for(f.j(), "two subscriptions", |es| {
        es.iter()
            .filter(|e| matches!(&e.event, Event::SseEvent { index: 0, .. }))
            .count()
            == 2
    })
    .await;
    f.net.open_gate("go");
    let (sa, sb) = (sa.await.unwrap(), sb.await.unwrap());
    let (ra, rb) = (sa.results(), sb.results());
    assert_eq!(ra.len(), 1 + 12 + 1 + 2 + 1, "{ra:?}");
    assert_eq!(ra, rb);
    assert_eq!(
        ra.last().unwrap()["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    f.shutdown().await;
}
