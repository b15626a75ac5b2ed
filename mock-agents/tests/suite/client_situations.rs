//! Situations for client conformance (A2A 1.0): an agent that keeps no history, a push about
//! a task the client never created, ListTasks pages capped by the agent, timestamps in every
//! valid form, answers and events lacking REQUIRED fields, an out-of-band resume after
//! AUTH_REQUIRED and a second auth round with another credential. Per binding where the
//! binding has the notion.

use crate::common;

use a2a_mock_agents::{Event, EventKind, Fault, MockAgent, Step, TimestampStyle};
use a2a_protocol::conformance::{DeviationKind, ObjectType, conformance};
use a2a_protocol::{Method, TaskState, Timestamp};
use axum::http::HeaderMap;
use common::*;
use serde_json::{Value, json};
use tokio::sync::mpsc;

const ALL_BINDINGS: &str = r#"bindings = ["jsonrpc", "rest", "grpc"]"#;

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

/// The addresses of one agent on each binding: JSON-RPC URL, HTTP+JSON base URL, gRPC address.
fn urls(net: &a2a_mock_agents::Network, agent: &str) -> (String, String, String) {
    let base = net.base_url(agent).expect("agent");
    (
        format!("{base}/a2a"),
        format!("{base}/rest"),
        base.strip_prefix("http://").unwrap().to_string(),
    )
}

/// `GetTask` on one binding: the task as ProtoJSON.
async fn get_task(net: &a2a_mock_agents::Network, agent: &str, b: &str, params: Value) -> Value {
    let (rpc_url, rest_url, grpc) = urls(net, agent);
    let http = client();
    match b {
        "jsonrpc" => call(&http, &rpc_url, "GetTask", params).await,
        "rest" => rest_ok(&http, &rest_url, Method::GetTask, params).await,
        _ => grpc_unary(&grpc, Method::GetTask, params)
            .await
            .expect("GetTask over gRPC"),
    }
}

// ---------------------------------------------------------------------------------------------
// 1. keep_history = false

fn asking_agent(keep_history: bool) -> String {
    format!(
        r#"
        [[agent]]
        name = "a"
        {ALL_BINDINGS}
        keep_history = {keep_history}
        [[agent.rule]]
        steps = [
          {{ do = "state", state = "TASK_STATE_WORKING" }},
          {{ do = "input_required", question = "Which airport?" }},
          {{ do = "gate", gate = "finish" }},
          {{ do = "state", state = "TASK_STATE_COMPLETED", message = "Booked from SFO" }},
        ]
        "#
    )
}

/// What every Task the agent returns shows of history, for a task asked a question and then
/// answered: the send answer, the answer to the answer, GetTask (every binding, several
/// historyLengths), ListTasks, a subscription snapshot, a streamed send's snapshot.
async fn histories(keep_history: bool) -> Vec<(String, Option<usize>)> {
    let net = start(&asking_agent(keep_history)).await;
    let (rpc_url, rest_url, grpc) = urls(&net, "a");
    let http = client();
    let mut seen = Vec::new();
    let mut note = |what: &str, task: &Value| {
        seen.push((
            what.to_string(),
            task.get("history").and_then(Value::as_array).map(Vec::len),
        ));
    };
    let mut p = send_params("book a flight");
    p["configuration"] = json!({"historyLength": 10});
    let r = call(&http, &rpc_url, "SendMessage", p).await;
    let task = &r["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(
        task["status"]["message"]["parts"][0]["text"], "Which airport?",
        "the question is in the status message whatever the history"
    );
    note("send answer", task);
    let tid = task["id"].as_str().unwrap().to_string();
    let mut a = answer_params(&tid, "SFO");
    // The task goes on to a gate: do not wait for it to settle.
    a["configuration"] = json!({"historyLength": 10, "returnImmediately": true});
    let r = call(&http, &rpc_url, "SendMessage", a).await;
    note("answer's answer", &r["task"]);
    for b in ["jsonrpc", "rest", "grpc"] {
        for n in [None, Some(0), Some(1), Some(5)] {
            let mut params = json!({"id": tid});
            if let Some(n) = n {
                params["historyLength"] = json!(n);
            }
            note(
                &format!("GetTask {b} historyLength={n:?}"),
                &get_task(&net, "a", b, params).await,
            );
        }
    }
    let l = call(&http, &rpc_url, "ListTasks", json!({"historyLength": 5})).await;
    note("ListTasks jsonrpc", &l["tasks"][0]);
    let l = rest_ok(&http, &rest_url, Method::ListTasks, json!({})).await;
    note("ListTasks rest", &l["tasks"][0]);
    let l = grpc_unary(&grpc, Method::ListTasks, json!({"historyLength": 5}))
        .await
        .unwrap();
    note("ListTasks grpc", &l["tasks"][0]);
    // A subscription's snapshot, then the task completes and the stream ends.
    let sub = {
        let http = http.clone();
        let url = rpc_url.clone();
        let tid = tid.clone();
        tokio::spawn(
            async move { stream(&http, &url, "SubscribeToTask", json!({"id": tid})).await },
        )
    };
    wait_for(net.journal(), "the subscription", |es| {
        es.iter().any(|e| {
            matches!(&e.event, Event::SseEvent { data, .. } if data.pointer("/result/task").is_some())
        })
    })
    .await;
    net.open_gate("finish");
    let s = sub.await.unwrap();
    note("subscription snapshot", &s.results()[0]["task"]);
    let done = get_task(&net, "a", "jsonrpc", json!({"id": tid})).await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        done["status"]["message"]["parts"][0]["text"],
        "Booked from SFO"
    );
    let s = stream(
        &http,
        &rpc_url,
        "SendStreamingMessage",
        send_params("another"),
    )
    .await;
    note("streamed send snapshot", &s.results()[0]["task"]);
    net.shutdown().await;
    seen
}

#[tokio::test]
async fn an_agent_that_keeps_no_history_returns_no_history_anywhere() {
    let none = histories(false).await;
    for (what, n) in &none {
        assert_eq!(*n, None, "{what}: no history key at all");
    }
    // The same traffic to an agent that keeps history shows it where it was asked for.
    let kept = histories(true).await;
    let get = |what: &str| kept.iter().find(|(w, _)| w == what).unwrap().1;
    assert_eq!(get("send answer"), Some(1));
    assert_eq!(get("answer's answer"), Some(2));
    for b in ["jsonrpc", "rest", "grpc"] {
        assert_eq!(get(&format!("GetTask {b} historyLength=None")), Some(2));
        assert_eq!(get(&format!("GetTask {b} historyLength=Some(0)")), None);
        assert_eq!(get(&format!("GetTask {b} historyLength=Some(1)")), Some(1));
        assert_eq!(get(&format!("GetTask {b} historyLength=Some(5)")), Some(2));
        assert_eq!(get(&format!("ListTasks {b}")), Some(2));
    }
    assert_eq!(get("subscription snapshot"), Some(2));
    assert_eq!(get("streamed send snapshot"), Some(1));
}

// ---------------------------------------------------------------------------------------------
// 2. push_foreign

/// A task pushes WORKING, a status update about a foreign task, then COMPLETED: the foreign id.
async fn foreign_push_run(seed: u64) -> (String, String, Vec<(HeaderMap, Value)>, Vec<Value>) {
    let (hook, mut rx, server) = webhook().await;
    let net = start(&format!(
        r#"
        seed = {seed}
        [[agent]]
        name = "p"
        [[agent.rule]]
        steps = [
          {{ do = "state", state = "TASK_STATE_WORKING" }},
          {{ do = "push_foreign", state = "TASK_STATE_COMPLETED", message = "all done" }},
          {{ do = "state", state = "TASK_STATE_COMPLETED" }},
        ]
        "#
    ))
    .await;
    let http = client();
    let mut p = send_params("go");
    p["configuration"] = json!({"taskPushNotificationConfig": {"url": hook, "token": "tok-7",
        "authentication": {"scheme": "Bearer", "credentials": "hook-secret"}}});
    let r = call(&http, &net.rpc_url("p").unwrap(), "SendMessage", p).await;
    let tid = r["task"]["id"].as_str().unwrap().to_string();
    let ctx = r["task"]["contextId"].as_str().unwrap().to_string();
    let got = receive(&mut rx, 3).await;
    wait_for(net.journal(), "3 pushes", |es| {
        es.iter()
            .filter(|e| matches!(e.event, Event::Push { .. }))
            .count()
            == 3
    })
    .await;
    let pushes: Vec<Value> = net
        .journal()
        .entries()
        .iter()
        .filter(|e| matches!(e.event, Event::Push { .. }))
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    let created: Vec<String> = tasks_created(net.journal())
        .into_iter()
        .map(|(t, _, _)| t)
        .collect();
    assert_eq!(created, std::slice::from_ref(&tid));
    net.shutdown().await;
    server.abort();
    (tid, ctx, got, pushes)
}

#[tokio::test]
async fn a_push_about_a_foreign_task_reaches_the_webhook_with_the_genuine_credentials() {
    let (tid, ctx, got, pushes) = foreign_push_run(3).await;
    // In order: WORKING (ours), the foreign one, COMPLETED (ours).
    let ids: Vec<&str> = got
        .iter()
        .map(|(_, b)| b["statusUpdate"]["taskId"].as_str().unwrap())
        .collect();
    assert_eq!(ids[0], tid);
    assert_eq!(ids[2], tid);
    let foreign = &got[1].1["statusUpdate"];
    let fid = foreign["taskId"].as_str().unwrap();
    assert_ne!(fid, tid);
    assert_ne!(foreign["contextId"].as_str().unwrap(), ctx);
    assert_eq!(foreign["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(foreign["status"]["message"]["parts"][0]["text"], "all done");
    assert_eq!(foreign["status"]["message"]["taskId"], fid);
    assert!(
        conformance(ObjectType::StreamResponse, &got[1].1).is_empty(),
        "a well-formed push, but for another task"
    );
    // Exactly the genuine pushes' headers.
    for (h, _) in &got {
        assert_eq!(h["authorization"], "Bearer hook-secret");
        assert_eq!(h["x-a2a-notification-token"], "tok-7");
        assert_eq!(h["content-type"], "application/a2a+json");
    }
    // The journal tells it apart: its push entry names the foreign task, no task_created does.
    let journaled: Vec<&str> = pushes
        .iter()
        .map(|p| p["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(journaled, [tid.as_str(), fid, tid.as_str()]);
    assert!(pushes.iter().all(|p| p["status"] == 200));
    // The foreign ids come from the seed: the same run gives the same ids, another seed others.
    let (_, _, again, _) = foreign_push_run(3).await;
    assert_eq!(again[1].1["statusUpdate"]["taskId"], fid);
    let (_, _, other, _) = foreign_push_run(4).await;
    assert_ne!(other[1].1["statusUpdate"]["taskId"], fid);
}

#[tokio::test]
async fn a_foreign_push_without_a_webhook_sends_nothing() {
    let f = Fixture::agents(vec![
        MockAgent::builder("p")
            .mount(
                MockAgent::when()
                    .step(Step::push_foreign(TaskState::Completed))
                    .state(TaskState::Completed),
            )
            .build(),
    ])
    .await;
    let r = f.call("SendMessage", send_params("go")).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(
        !f.j()
            .entries()
            .iter()
            .any(|e| matches!(e.event, Event::Push { .. }))
    );
    f.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// 3. ListTasks paging

/// Every task id, following `nextPageToken` from the first page, with `list` calling one binding.
async fn all_pages<F, Fut>(list: F, page_size: Option<i32>) -> (Vec<String>, Vec<Value>)
where
    F: Fn(Value) -> Fut,
    Fut: std::future::Future<Output = Value>,
{
    let mut ids = Vec::new();
    let mut pages = Vec::new();
    let mut token = String::new();
    for _ in 0..10 {
        let mut params = json!({});
        if let Some(n) = page_size {
            params["pageSize"] = json!(n);
        }
        if !token.is_empty() {
            params["pageToken"] = json!(token);
        }
        let page = list(params).await;
        for t in page["tasks"].as_array().into_iter().flatten() {
            ids.push(t["id"].as_str().unwrap().to_string());
        }
        // proto3 cannot tell "" from unset: a gRPC last page may show no token at all.
        token = page
            .get("nextPageToken")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        pages.push(page);
        if token.is_empty() {
            return (ids, pages);
        }
    }
    panic!("more than 10 pages")
}

#[tokio::test]
async fn list_tasks_pages_are_capped_by_the_agent_on_every_binding() {
    let net = start(&format!(
        r#"
        [[agent]]
        name = "a"
        {ALL_BINDINGS}
        list_page_size_max = 2
        [[agent]]
        name = "free"
        {ALL_BINDINGS}
        "#
    ))
    .await;
    let http = client();
    let mut created = Vec::new();
    for agent in ["a", "free"] {
        let (rpc_url, _, _) = urls(&net, agent);
        for i in 0..5 {
            let r = call(
                &http,
                &rpc_url,
                "SendMessage",
                send_params(&format!("t{i}")),
            )
            .await;
            if agent == "a" {
                created.push(r["task"]["id"].as_str().unwrap().to_string());
            }
        }
    }
    let (rpc_url, rest_url, grpc) = urls(&net, "a");
    let newest_first: Vec<String> = {
        // Status timestamps can tie (milliseconds): the order is by timestamp, then the later
        // created first, which for these one-by-one tasks is the reverse creation order.
        let mut v = created.clone();
        v.reverse();
        v
    };
    let (ids, pages) = all_pages(
        |p| {
            let (h, u) = (http.clone(), rpc_url.clone());
            async move { call(&h, &u, "ListTasks", p).await }
        },
        None,
    )
    .await;
    assert_eq!(ids, newest_first, "jsonrpc");
    assert_eq!(pages.len(), 3);
    for (i, p) in pages.iter().enumerate() {
        assert_eq!(p["totalSize"], 5);
        assert_eq!(p["pageSize"], 2, "the page size used");
        let token = p["nextPageToken"].as_str().unwrap();
        if i < 2 {
            assert!(
                token.starts_with("+/+/") && token.ends_with("=="),
                "a token that must be percent-encoded in a query: {token}"
            );
        } else {
            assert_eq!(token, "", "always present, empty on the last page");
        }
    }
    let (ids, pages) = all_pages(
        |p| {
            let (h, u) = (http.clone(), rest_url.clone());
            async move { rest_ok(&h, &u, Method::ListTasks, p).await }
        },
        Some(50),
    )
    .await;
    assert_eq!(ids, newest_first, "rest");
    assert_eq!(pages.len(), 3);
    let (ids, pages) = all_pages(
        |p| {
            let g = grpc.clone();
            async move { grpc_unary(&g, Method::ListTasks, p).await.unwrap() }
        },
        Some(100),
    )
    .await;
    assert_eq!(ids, newest_first, "grpc");
    assert_eq!(pages.len(), 3);
    assert!(
        pages
            .iter()
            .all(|p| p["pageSize"] == 2 && p["totalSize"] == 5)
    );
    // A smaller page than the cap is served as asked.
    let (ids, pages) = all_pages(
        |p| {
            let (h, u) = (http.clone(), rpc_url.clone());
            async move { call(&h, &u, "ListTasks", p).await }
        },
        Some(1),
    )
    .await;
    assert_eq!((ids.len(), pages.len()), (5, 5));
    // Without the cap the whole list is one page.
    let (free_rpc, _, _) = urls(&net, "free");
    let all = call(&http, &free_rpc, "ListTasks", json!({})).await;
    assert_eq!(all["tasks"].as_array().unwrap().len(), 5);
    assert_eq!(
        (&all["pageSize"], &all["nextPageToken"]),
        (&json!(50), &json!(""))
    );
    // Every answer conforms (HTTP+JSON and gRPC answers are journaled without the JSON-RPC
    // envelope, which the helper expects).
    let d: Vec<String> = deviations(net.journal())
        .into_iter()
        .filter(|d| !d.contains("[R01]"))
        .collect();
    assert_eq!(d, Vec::<String>::new());
    net.shutdown().await;
}

#[tokio::test]
async fn invalid_page_tokens_are_invalid_params_on_every_binding() {
    let net = start(&format!(
        r#"
        [[agent]]
        name = "a"
        {ALL_BINDINGS}
        list_page_size_max = 1
        "#
    ))
    .await;
    let (rpc_url, rest_url, grpc) = urls(&net, "a");
    let http = client();
    for i in 0..2 {
        call(
            &http,
            &rpc_url,
            "SendMessage",
            send_params(&format!("t{i}")),
        )
        .await;
    }
    let first = call(&http, &rpc_url, "ListTasks", json!({})).await;
    let token = first["nextPageToken"].as_str().unwrap().to_string();
    for bad in ["garbage", "offset-1", token.replace('+', " ").as_str()] {
        let v = rpc(&http, &rpc_url, "ListTasks", json!({"pageToken": bad})).await;
        assert_eq!(code(&v), Some(-32602), "jsonrpc {bad:?}");
        let (status, body) = rest(
            &http,
            &rest_url,
            Method::ListTasks,
            json!({"pageToken": bad}),
        )
        .await;
        assert_eq!(status, 400, "rest {bad:?}: {body}");
        let e = grpc_unary(&grpc, Method::ListTasks, json!({"pageToken": bad}))
            .await
            .expect_err("gRPC refuses");
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "grpc {bad:?}");
    }
    // The token sent in a query without percent-encoding: its `+` arrive as spaces.
    let r = http
        .get(format!("{rest_url}/tasks?pageToken={token}"))
        .header("A2A-Version", "1.0")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    // Encoded, it works.
    let (status, page) = rest(
        &http,
        &rest_url,
        Method::ListTasks,
        json!({"pageToken": token}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(page["tasks"].as_array().unwrap().len(), 1);
    assert_ne!(page["tasks"][0]["id"], first["tasks"][0]["id"]);
    net.shutdown().await;
}

#[tokio::test]
async fn a_task_that_changes_between_pages_shifts_no_other() {
    let f = Fixture::agents(vec![
        MockAgent::builder("a")
            .list_page_size_max(2)
            .mount(
                MockAgent::when()
                    .text_contains("hold")
                    .state(TaskState::Working)
                    .step(Step::gate("go"))
                    .state(TaskState::Completed),
            )
            .mount(MockAgent::when().state(TaskState::Completed))
            .build(),
    ])
    .await;
    // Oldest first: held (WORKING), then three completed ones.
    let held = f
        .call("SendMessage", {
            let mut p = send_params("hold");
            p["configuration"] = json!({"returnImmediately": true});
            p
        })
        .await["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    wait_state(f.j(), &held, "TASK_STATE_WORKING").await;
    for i in 0..3 {
        f.call("SendMessage", send_params(&format!("t{i}"))).await;
    }
    let first = f.call("ListTasks", json!({})).await;
    let token = first["nextPageToken"].as_str().unwrap().to_string();
    let mut seen: Vec<String> = first["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    assert!(!seen.contains(&held));
    // The held task completes: it is now the newest, before the cursor.
    f.net.open_gate("go");
    wait_state(f.j(), &held, "TASK_STATE_COMPLETED").await;
    let second = f.call("ListTasks", json!({"pageToken": token})).await;
    for t in second["tasks"].as_array().unwrap() {
        seen.push(t["id"].as_str().unwrap().to_string());
    }
    // The one completed task not yet listed is on the second page, nothing twice. The held
    // task's new status is newer than the cursor unless it fell in the same millisecond as the
    // cursor's task (statuses are stamped in milliseconds; ties go to the later created, which
    // the held task is not): then it is listed once, on the second page. Either way no task
    // that kept its status shifts.
    let others = seen.iter().filter(|id| **id != held).count();
    assert_eq!(others, 3, "{seen:?}");
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), seen.len(), "a task listed twice: {seen:?}");
    f.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// 4. timestamp_style

/// The form of an RFC 3339 timestamp: fractional digits and whether it ends in `Z`.
fn form(ts: &str) -> (usize, bool) {
    let z = ts.ends_with('Z');
    let body = ts.trim_end_matches('Z');
    let body = if z { body } else { &body[..body.len() - 6] };
    let digits = body.split_once('.').map_or(0, |(_, f)| f.len());
    (digits, z)
}

fn status_timestamps(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            if let Some(ts) = o
                .get("status")
                .and_then(|s| s.get("timestamp"))
                .and_then(Value::as_str)
            {
                out.push(ts.to_string());
            }
            o.values().for_each(|x| status_timestamps(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| status_timestamps(x, out)),
        _ => {}
    }
}

#[tokio::test]
async fn each_timestamp_style_writes_its_form_on_the_json_bindings() {
    let styles = [
        ("millis", (3, true)),
        ("seconds", (0, true)),
        ("micros", (6, true)),
        ("nanos", (9, true)),
        ("offset", (3, false)),
    ];
    for (style, want) in styles {
        let (hook, mut rx, server) = webhook().await;
        let net = start(&format!(
            r#"
            [[agent]]
            name = "a"
            {ALL_BINDINGS}
            timestamp_style = "{style}"
            "#
        ))
        .await;
        let (rpc_url, rest_url, _) = urls(&net, "a");
        let http = client();
        let mut p = send_params("go");
        p["configuration"] = json!({"taskPushNotificationConfig": {"url": hook}});
        let sent = call(&http, &rpc_url, "SendMessage", p).await;
        let tid = sent["task"]["id"].as_str().unwrap().to_string();
        let s = stream(&http, &rpc_url, "SendStreamingMessage", send_params("go")).await;
        let rs = rest_stream(
            &http,
            &rest_url,
            Method::SendStreamingMessage,
            send_params("go"),
        )
        .await;
        let mut written = Vec::new();
        status_timestamps(&sent, &mut written);
        for e in s.results().iter().chain(rs.payloads().iter()) {
            status_timestamps(e, &mut written);
        }
        let got = get_task(&net, "a", "jsonrpc", json!({"id": tid})).await;
        status_timestamps(&got, &mut written);
        let rest_got = get_task(&net, "a", "rest", json!({"id": tid})).await;
        status_timestamps(&rest_got, &mut written);
        status_timestamps(
            &call(&http, &rpc_url, "ListTasks", json!({})).await,
            &mut written,
        );
        // Pushes: WORKING, the artifact, COMPLETED.
        for (_, b) in receive(&mut rx, 3).await {
            status_timestamps(&b, &mut written);
        }
        assert!(written.len() >= 12, "{style}: {written:?}");
        for ts in &written {
            assert_eq!(form(ts), want, "{style}: {ts}");
            Timestamp::parse(ts).expect("valid RFC 3339");
        }
        // One instant, whatever the form: GetTask on each binding (gRPC in its binary form).
        let grpc_got = get_task(&net, "a", "grpc", json!({"id": tid})).await;
        let instant = |v: &Value| {
            Timestamp::parse(v["status"]["timestamp"].as_str().unwrap())
                .unwrap()
                .0
        };
        assert_eq!(instant(&got), instant(&rest_got), "{style}");
        assert_eq!(instant(&got), instant(&grpc_got), "{style}");
        assert!(
            form(grpc_got["status"]["timestamp"].as_str().unwrap()).1,
            "gRPC's Timestamp is binary: no offset survives"
        );
        // The journal records what was sent.
        let (_, _, body) = response_of(net.journal(), reqs_of(net.journal(), "GetTask")[0])
            .expect("GetTask answered");
        assert_eq!(
            body.pointer("/result/status/timestamp"),
            got.pointer("/status/timestamp")
        );
        net.shutdown().await;
        server.abort();
    }
}

#[tokio::test]
async fn rotate_cycles_through_every_form_event_by_event() {
    let f = Fixture::agents(vec![
        MockAgent::builder("a")
            .timestamp_style(TimestampStyle::Rotate)
            .mount(
                MockAgent::when()
                    .state(TaskState::Working)
                    .state(TaskState::Working)
                    .state(TaskState::Working)
                    .state(TaskState::Working)
                    .state(TaskState::Completed),
            )
            .build(),
    ])
    .await;
    let s = f.stream("SendStreamingMessage", send_params("go")).await;
    let mut written = Vec::new();
    for e in s.results() {
        status_timestamps(&e, &mut written);
    }
    // The snapshot and five status updates.
    assert_eq!(written.len(), 6, "{written:?}");
    let forms: Vec<(usize, bool)> = written.iter().map(|t| form(t)).collect();
    let cycle = [(3, true), (0, true), (6, true), (9, true), (3, false)];
    let start = cycle.iter().position(|c| *c == forms[0]).unwrap();
    for (i, f) in forms.iter().enumerate() {
        assert_eq!(*f, cycle[(start + i) % 5], "{written:?}");
    }
    // Whole seconds, so no form drops a fraction.
    for t in &written {
        assert_eq!(Timestamp::parse(t).unwrap().0.nanosecond(), 0, "{t}");
    }
    f.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// 5. malformed_event and omit_fields

/// Every (event, omitted field) a `malformed_event` step supports.
const MALFORMED: [(&str, &str); 12] = [
    ("status_update", "taskId"),
    ("status_update", "contextId"),
    ("status_update", "status"),
    ("status_update", "status.state"),
    ("artifact_update", "taskId"),
    ("artifact_update", "contextId"),
    ("artifact_update", "artifact"),
    ("artifact_update", "artifact.artifactId"),
    ("artifact_update", "artifact.parts"),
    ("task", "id"),
    ("task", "status"),
    ("task", "status.state"),
];

fn member(event: &str) -> &'static str {
    match event {
        "status_update" => "statusUpdate",
        "artifact_update" => "artifactUpdate",
        _ => "task",
    }
}

fn malformed_script() -> String {
    let mut steps = vec![r#"{ do = "state", state = "TASK_STATE_WORKING" }"#.to_string()];
    for (event, omit) in MALFORMED {
        steps.push(format!(
            r#"{{ do = "malformed_event", event = "{event}", omit = "{omit}" }}"#
        ));
    }
    steps.push(r#"{ do = "artifacts", text = "the real result" }"#.into());
    steps.push(r#"{ do = "state", state = "TASK_STATE_COMPLETED" }"#.into());
    format!(
        r#"
        [[agent]]
        name = "a"
        {ALL_BINDINGS}
        [[agent.rule]]
        steps = [{}]
        "#,
        steps.join(",\n")
    )
}

/// The malformed events among a stream's `StreamResponse`s: exactly the scripted ones, each
/// lacking its field and otherwise conformant.
fn check_malformed(events: &[Value], binding: &str) {
    // The snapshot, WORKING, the 12 malformed ones, the artifact, COMPLETED.
    assert_eq!(events.len(), 16, "{binding}: {events:#?}");
    for (i, (event, omit)) in MALFORMED.iter().enumerate() {
        let ev = &events[2 + i];
        let m = member(event);
        let inner = ev
            .get(m)
            .unwrap_or_else(|| panic!("{binding}: {m} in {ev}"));
        let pointer = format!("/{}", omit.replace('.', "/"));
        let missing = inner.pointer(&pointer).is_none()
            // proto3: a string or enum field absent on the wire is its default.
            || (binding == "grpc" && matches!(inner.pointer(&pointer), Some(v) if v == "" || v == "TASK_STATE_UNSPECIFIED"));
        assert!(missing, "{binding}: {event} still has {omit}: {ev}");
        let d = conformance(ObjectType::StreamResponse, ev);
        if binding != "grpc" {
            assert_eq!(d.len(), 1, "{binding} {event}/{omit}: {d:?}");
            assert_eq!(d[0].kind, DeviationKind::MissingRequired, "{d:?}");
        }
    }
    let good = [&events[0], &events[1], &events[14], &events[15]];
    for ev in good {
        assert!(
            conformance(ObjectType::StreamResponse, ev).is_empty(),
            "{ev}"
        );
    }
    assert_eq!(
        events[14]["artifactUpdate"]["artifact"]["parts"][0]["text"],
        "the real result"
    );
}

#[tokio::test]
async fn malformed_events_reach_streams_on_every_binding_and_are_marked_in_the_journal() {
    let net = start(&malformed_script()).await;
    let (rpc_url, rest_url, grpc) = urls(&net, "a");
    let http = client();
    let s = stream(&http, &rpc_url, "SendStreamingMessage", send_params("go")).await;
    check_malformed(&s.results(), "jsonrpc");
    let tid = task_id_of(&s);
    let rs = rest_stream(
        &http,
        &rest_url,
        Method::SendStreamingMessage,
        send_params("go"),
    )
    .await;
    check_malformed(&rs.payloads(), "rest");
    let gs = grpc_stream(&grpc, Method::SendStreamingMessage, send_params("go"))
        .await
        .unwrap();
    assert!(gs.status.is_none(), "{:?}", gs.status);
    check_malformed(&gs.messages, "grpc");
    // The task itself never had the malformed artifacts.
    let t = get_task(&net, "a", "jsonrpc", json!({"id": tid})).await;
    let ids: Vec<&str> = t["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["artifactId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["artifact-1"]);
    // The journal: before each malformed sse_event, a fault naming what it lacks; the event
    // as recorded lacks it too.
    let j = net.journal();
    for req in reqs_of(j, "SendStreamingMessage") {
        let evs = events_of(j, req);
        let mut marked = 0;
        for (i, e) in evs.iter().enumerate() {
            let Event::Fault { kind, .. } = e else {
                continue;
            };
            let pointer = kind
                .strip_prefix("omit_fields:")
                .expect("an omit_fields fault");
            let Some(Event::SseEvent { data, .. }) = evs.get(i + 1) else {
                panic!("the fault is followed by its event: {evs:?}")
            };
            assert!(data.pointer(pointer).is_none(), "{pointer} in {data}");
            let (event, omit) = MALFORMED[marked];
            assert_eq!(
                pointer,
                format!("/result/{}/{}", member(event), omit.replace('.', "/"))
            );
            marked += 1;
        }
        assert_eq!(marked, MALFORMED.len(), "req {req}");
    }
    assert!(
        !j.entries().iter().any(|e| matches!(
            &e.event,
            Event::ArtifactChunk { artifact_id, .. } if artifact_id.starts_with("artifact-malformed")
        )),
        "no artifact_chunk for a malformed event"
    );
    net.shutdown().await;
}

#[tokio::test]
async fn malformed_event_builder_and_validation() {
    let spec = MockAgent::network(
        1,
        vec![
            MockAgent::builder("a")
                .mount(
                    MockAgent::when()
                        .step(Step::malformed_event("artifact.artifactId"))
                        .step(Step::malformed_event_of(
                            EventKind::ArtifactUpdate,
                            "taskId",
                        ))
                        .step(Step::malformed_event("id")),
                )
                .build(),
        ],
    );
    spec.validate().unwrap();
    let text = toml::to_string(&spec).unwrap();
    assert!(text.contains(r#"omit = "artifact.artifactId""#), "{text}");
    for (bad, field) in [
        (r#"{ do = "malformed_event", omit = "name" }"#, "omit"),
        (
            r#"{ do = "malformed_event", event = "task", omit = "contextId" }"#,
            "omit",
        ),
        (
            r#"{ do = "malformed_event", event = "status_update", omit = "artifact.parts" }"#,
            "omit",
        ),
        (
            r#"{ do = "push_foreign", state = "TASK_STATE_DONE" }"#,
            "state",
        ),
        (
            r#"{ do = "auth_required", credential = "c", timeout_ms = 100, resume_after_ms = 100 }"#,
            "resume_after_ms",
        ),
    ] {
        let e = a2a_mock_agents::NetworkSpec::from_toml(
            "v.toml",
            &format!("[[agent]]\nname = \"a\"\n[[agent.rule]]\nsteps = [{bad}]\n"),
        )
        .expect_err(bad)
        .to_string();
        assert!(e.contains(&format!("steps[0].{field}")), "{bad}: {e}");
    }
    for (bad, why) in [
        (
            r#"fault = { kind = "omit_fields", pointers = [] }"#,
            "pointers",
        ),
        (
            r#"fault = { kind = "omit_fields", pointers = ["/task/id"] }"#,
            "/result/",
        ),
        (
            r#"fault = { kind = "omit_fields", pointers = ["/result/"] }"#,
            "/result/",
        ),
    ] {
        let e = a2a_mock_agents::NetworkSpec::from_toml(
            "v.toml",
            &format!("[[agent]]\nname = \"a\"\n[[agent.rule]]\n{bad}\n"),
        )
        .expect_err(bad)
        .to_string();
        assert!(
            e.contains("fault.pointers") && e.contains(why),
            "{bad}: {e}"
        );
    }
    let e = a2a_mock_agents::NetworkSpec::from_toml(
        "v.toml",
        "[[agent]]\nname = \"a\"\nlist_page_size_max = 0\n",
    )
    .expect_err("zero cap")
    .to_string();
    assert!(e.contains("list_page_size_max"), "{e}");
}

#[tokio::test]
async fn omit_fields_removes_pointers_from_unary_answers_on_every_binding() {
    let net = start(&format!(
        r#"
        [[agent]]
        name = "a"
        {ALL_BINDINGS}
        [[agent.rule]]
        when = {{ method = "GetTask" }}
        fault = {{ kind = "omit_fields", pointers = ["/result/status", "/result/nothing"] }}
        [[agent.rule]]
        when = {{ text_contains = "no id" }}
        fault = {{ kind = "omit_fields", pointers = ["/result/task/id"] }}
        steps = [{{ do = "state", state = "TASK_STATE_COMPLETED" }}]
        "#
    ))
    .await;
    let (rpc_url, rest_url, grpc) = urls(&net, "a");
    let http = client();
    let good = call(&http, &rpc_url, "SendMessage", send_params("hello")).await;
    let tid = good["task"]["id"].as_str().unwrap().to_string();
    assert!(good["task"]["status"].is_object());
    for b in ["jsonrpc", "rest", "grpc"] {
        let t = get_task(&net, "a", b, json!({"id": tid})).await;
        assert_eq!(t["id"], tid.as_str(), "{b}: the rest is intact");
        assert!(t.get("status").is_none(), "{b}: {t}");
    }
    // SendMessage without the task id: the task exists all the same.
    let r = call(&http, &rpc_url, "SendMessage", send_params("no id")).await;
    assert!(r["task"].get("id").is_none(), "{r}");
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let body = rest_ok(&http, &rest_url, Method::SendMessage, send_params("no id")).await;
    assert!(body["task"].get("id").is_none(), "{body}");
    let g = grpc_unary(&grpc, Method::SendMessage, send_params("no id"))
        .await
        .unwrap();
    assert!(g["task"].get("id").is_none_or(|v| v == ""), "{g}");
    assert_eq!(tasks_created(net.journal()).len(), 4);
    // The journal: a fault naming what was removed, then the response lacking it.
    let j = net.journal();
    for req in reqs_of(j, "GetTask")
        .into_iter()
        .chain(reqs_of(j, "SendMessage").into_iter().skip(1))
    {
        let evs = events_of(j, req);
        let kinds: Vec<&str> = evs
            .iter()
            .filter_map(|e| match e {
                Event::Fault { kind, .. } => Some(kind.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(kinds.len(), 1, "req {req}: {evs:?}");
        let pointer = kinds[0].strip_prefix("omit_fields:").unwrap();
        assert!(
            ["/result/status", "/result/task/id"].contains(&pointer),
            "{pointer}"
        );
        let (_, _, body) = response_of(j, req).unwrap();
        assert!(body.pointer(pointer).is_none(), "{body}");
        assert!(body.get("result").is_some());
    }
    net.shutdown().await;
}

#[tokio::test]
async fn omit_fields_on_a_stream_strips_the_first_event_that_has_the_field() {
    let f = Fixture::agents(vec![
        MockAgent::builder("a")
            .mount(
                MockAgent::when()
                    .fault(Fault::omit_fields(["/result/statusUpdate/taskId"]))
                    .state(TaskState::Working)
                    .state(TaskState::Completed),
            )
            .build(),
    ])
    .await;
    let s = f.stream("SendStreamingMessage", send_params("go")).await;
    let r = s.results();
    assert_eq!(r.len(), 3);
    assert!(
        r[0]["task"]["id"].is_string(),
        "the snapshot has no statusUpdate"
    );
    assert!(r[1]["statusUpdate"].get("taskId").is_none(), "{}", r[1]);
    assert!(r[2]["statusUpdate"]["taskId"].is_string(), "once only");
    let req = reqs_of(f.j(), "SendStreamingMessage")[0];
    assert!(has_fault(
        f.j(),
        req,
        "omit_fields:/result/statusUpdate/taskId"
    ));
    f.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// 6. auth_required resume_after_ms

#[tokio::test]
async fn auth_required_resumes_out_of_band_and_only_subscribers_see_it() {
    let net = start(&format!(
        r#"
        [[agent]]
        name = "a"
        {ALL_BINDINGS}
        [[agent.rule]]
        steps = [
          {{ do = "state", state = "TASK_STATE_WORKING" }},
          {{ do = "auth_required", credential = "Bearer scoped-1", message = "Grant access in the portal", resume_after_ms = 300 }},
          {{ do = "gate", gate = "resumed" }},
          {{ do = "artifacts", text = "the report" }},
          {{ do = "state", state = "TASK_STATE_COMPLETED" }},
        ]
        "#
    ))
    .await;
    let (rpc_url, _, grpc) = urls(&net, "a");
    let http = client();
    // The client's stream ends at AUTH_REQUIRED (close_stream_on_interrupt).
    let s = stream(&http, &rpc_url, "SendStreamingMessage", send_params("go")).await;
    assert_eq!(
        s.states().last().map(String::as_str),
        Some("TASK_STATE_AUTH_REQUIRED")
    );
    let tid = task_id_of(&s);
    // Nobody sends anything: the task resumes by itself.
    wait_for(net.journal(), "the out-of-band resume", |es| {
        es.iter().any(|e| {
            matches!(&e.event, Event::Continued { task_id, outcome, message_id }
                if *task_id == tid && outcome == "out_of_band" && message_id.is_empty())
        })
    })
    .await;
    wait_state(net.journal(), &tid, "TASK_STATE_WORKING").await;
    let states = task_states(net.journal(), &tid);
    assert_eq!(
        states,
        [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_AUTH_REQUIRED",
            "TASK_STATE_WORKING"
        ]
    );
    assert_eq!(continued(net.journal(), &tid), ["out_of_band"]);
    // A subscriber (here over gRPC) sees the rest.
    let sub = {
        let (g, t) = (grpc.clone(), tid.clone());
        tokio::spawn(
            async move { grpc_stream(&g, Method::SubscribeToTask, json!({"id": t})).await },
        )
    };
    // Its snapshot (WORKING: the send's own snapshot was SUBMITTED) went out.
    wait_for(net.journal(), "the subscription", |es| {
        es.iter().any(|e| {
            matches!(&e.event, Event::SseEvent { data, .. }
                if data.pointer("/result/task/status/state") == Some(&json!("TASK_STATE_WORKING")))
        })
    })
    .await;
    net.open_gate("resumed");
    let g = sub.await.unwrap().unwrap();
    assert_eq!(
        g.messages[0]["task"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    assert_eq!(
        g.messages.last().unwrap()["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    net.shutdown().await;
}

#[tokio::test]
async fn the_right_credential_before_the_resume_is_accepted_and_wrong_ones_do_not_stop_it() {
    let f = Fixture::agents(vec![
        MockAgent::builder("a")
            .mount(
                MockAgent::when()
                    .text_contains("early")
                    .step(Step::auth_required_resuming(
                        "Bearer c-1",
                        std::time::Duration::from_secs(20),
                    ))
                    .state(TaskState::Completed),
            )
            .mount(
                MockAgent::when()
                    .step(Step::auth_required_resuming(
                        "Bearer c-1",
                        std::time::Duration::from_secs(2),
                    ))
                    .state(TaskState::Completed),
            )
            .build(),
    ])
    .await;
    let r = f.call("SendMessage", send_params("early")).await;
    let tid = r["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_AUTH_REQUIRED");
    let v = rpc_h(
        &f.http,
        &f.url,
        "SendMessage",
        answer_params(&tid, "here"),
        &[("Authorization", "Bearer c-1")],
    )
    .await;
    assert_eq!(
        v["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(continued(f.j(), &tid), ["accepted"]);

    let r = f.call("SendMessage", send_params("late")).await;
    let tid = r["task"]["id"].as_str().unwrap().to_string();
    let v = rpc_h(
        &f.http,
        &f.url,
        "SendMessage",
        answer_params(&tid, "this?"),
        &[("Authorization", "Bearer wrong")],
    )
    .await;
    assert_eq!(
        v["result"]["task"]["status"]["state"],
        "TASK_STATE_AUTH_REQUIRED"
    );
    wait_state(f.j(), &tid, "TASK_STATE_COMPLETED").await;
    assert_eq!(continued(f.j(), &tid), ["wrong_credential", "out_of_band"]);
    f.shutdown().await;
}

// ---------------------------------------------------------------------------------------------
// 7. a second auth round with another credential

#[tokio::test]
async fn a_second_auth_round_refuses_the_first_rounds_credential() {
    let f = Fixture::toml(
        r#"
        [[agent]]
        name = "a"
        [[agent.rule]]
        steps = [
          { do = "auth_required", credential = "Bearer read-1", message = "Grant read access" },
          { do = "auth_required", credential = "Bearer write-2", message = "Now grant write access" },
          { do = "state", state = "TASK_STATE_COMPLETED" },
        ]
        "#,
        "a",
    )
    .await;
    let r = f.call("SendMessage", send_params("go")).await;
    let tid = r["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        r["task"]["status"]["message"]["parts"][0]["text"],
        "Grant read access"
    );
    let send = |cred: &'static str| {
        let (http, url, tid) = (f.http.clone(), f.url.clone(), tid.clone());
        async move {
            rpc_h(
                &http,
                &url,
                "SendMessage",
                answer_params(&tid, "ok"),
                &[("Authorization", cred)],
            )
            .await["result"]["task"]["status"]
                .clone()
        }
    };
    let s = send("Bearer read-1").await;
    assert_eq!(s["state"], "TASK_STATE_AUTH_REQUIRED");
    assert_eq!(s["message"]["parts"][0]["text"], "Now grant write access");
    // The first round's credential does not authorise the second.
    let s = send("Bearer read-1").await;
    assert_eq!(s["state"], "TASK_STATE_AUTH_REQUIRED");
    assert_eq!(s["message"]["parts"][0]["text"], "Now grant write access");
    let s = send("Bearer write-2").await;
    assert_eq!(s["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        continued(f.j(), &tid),
        ["accepted", "wrong_credential", "accepted"]
    );
    f.shutdown().await;
}
