//! Every fault (per rule and queued per method) and every wire mutation, driven by a real HTTP
//! client, asserting on what the client saw and on the journal.

use crate::common;

use a2a_mock_agents::{Event, Fault, MockAgent};
use a2a_protocol::{Method, TaskState};
use common::*;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const FAULTS: &str = r#"
    [[agent]]
    name = "f"
    [[agent.rule]]
    when = { text_contains = "drop-before" }
    times = 1
    fault = { kind = "drop_before" }
    [[agent.rule]]
    when = { text_contains = "drop-response" }
    times = 1
    fault = { kind = "drop_response" }
    steps = [{ do = "state", state = "TASK_STATE_WORKING" }, { do = "state", state = "TASK_STATE_COMPLETED" }]
    [[agent.rule]]
    when = { text_contains = "s500" }
    fault = { kind = "http_status", status = 500 }
    [[agent.rule]]
    when = { text_contains = "s503" }
    fault = { kind = "http_status", status = 503, retry_after_s = 2 }
    [[agent.rule]]
    when = { text_contains = "s429" }
    times = 1
    fault = { kind = "http_status", status = 429, retry_after_s = 1 }
    [[agent.rule]]
    when = { text_contains = "stall" }
    fault = { kind = "stall", ms = 300 }
    steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
    [[agent.rule]]
    when = { text_contains = "close-after" }
    fault = { kind = "close_after", events = 2 }
    steps = [
      { do = "state", state = "TASK_STATE_WORKING" },
      { do = "artifacts", count = 1, chunks = 3, chunk_bytes = 10 },
      { do = "state", state = "TASK_STATE_COMPLETED" },
    ]
    [[agent.rule]]
    when = { text_contains = "reset-after" }
    fault = { kind = "reset_after", events = 1 }
    steps = [
      { do = "state", state = "TASK_STATE_WORKING" },
      { do = "artifacts", count = 1, chunks = 3, chunk_bytes = 400 },
      { do = "state", state = "TASK_STATE_COMPLETED" },
    ]
    [[agent.rule]]
    when = { text_contains = "trickle" }
    fault = { kind = "trickle", bytes_per_sec = 2000 }
    steps = [{ do = "reply", text = "slowly, slowly, slowly, slowly, slowly, slowly" }]
    [[agent.rule]]
    steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
"#;

#[tokio::test]
async fn drop_before_closes_the_connection_and_nothing_happens() {
    let f = Fixture::toml(FAULTS, "f").await;
    let (url, j) = (&f.url, f.j());
    let r = post(
        &client(),
        url,
        &envelope("SendMessage", send_params("drop-before")),
        &[],
    )
    .await;
    assert!(r.is_err(), "no response: {r:?}");
    let reqs = reqs_with_text(j, "drop-before");
    assert_eq!(reqs.len(), 1, "not retried");
    assert!(has_fault(j, reqs[0], "drop_before"));
    assert!(dropped_in(j, reqs[0], "before_processing"));
    assert!(response_of(j, reqs[0]).is_none());
    assert!(tasks_created(j).is_empty(), "nothing was processed");
    // `times = 1`: the same request now goes through.
    let r = call(&client(), url, "SendMessage", send_params("drop-before")).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    f.shutdown().await;
}

#[tokio::test]
async fn drop_response_processes_the_send_but_the_caller_gets_nothing() {
    let f = Fixture::toml(FAULTS, "f").await;
    let (http, url, j) = (&f.http, &f.url, f.j());
    let params = send_params("drop-response");
    let r = post(http, url, &envelope("SendMessage", params.clone()), &[]).await;
    assert!(r.is_err(), "no response: {r:?}");
    let req = reqs_with_text(j, "drop-response")[0];
    assert!(has_fault(j, req, "drop_response"));
    assert!(dropped_in(j, req, "after_processing"));
    assert!(response_of(j, req).is_none(), "the response never left");
    // The task exists although the client never learned its id.
    let created = tasks_created(j);
    assert_eq!(created.len(), 1);
    let l = call(http, url, "ListTasks", json!({})).await;
    assert_eq!(l["tasks"][0]["id"], created[0].0.as_str());
    assert_eq!(l["tasks"][0]["status"]["state"], "TASK_STATE_COMPLETED");
    // Resending the same messageId (dedup on) resolves the indefinite outcome.
    let r = call(http, url, "SendMessage", params).await;
    assert_eq!(r["task"]["id"], created[0].0.as_str());
    assert!(tasks_created(j)[1].2, "journal shows the dedup hit");
    f.shutdown().await;
}

#[tokio::test]
async fn http_status_faults_with_retry_after() {
    let f = Fixture::toml(FAULTS, "f").await;
    let (http, url, j) = (&f.http, &f.url, f.j());
    for (text, status, retry) in [
        ("s500", 500, None),
        ("s503", 503, Some("2")),
        ("s429", 429, Some("1")),
    ] {
        let r = post(http, url, &envelope("SendMessage", send_params(text)), &[])
            .await
            .unwrap();
        assert_eq!(r.status(), status);
        assert_eq!(
            r.headers().get("retry-after").map(|v| v.to_str().unwrap()),
            retry
        );
        let req = reqs_with_text(j, text)[0];
        assert_eq!(response_of(j, req).map(|r| r.0), Some(status));
        // The journal keeps the Retry-After it sent (from-journal writes it back).
        let journaled = events_of(j, req).into_iter().find_map(|e| match e {
            Event::Response { retry_after_s, .. } => Some(retry_after_s),
            _ => None,
        });
        assert_eq!(
            journaled,
            Some(retry.map(|s| s.parse::<u64>().unwrap())),
            "{text}"
        );
    }
    assert!(
        tasks_created(j).is_empty(),
        "an HTTP error processes nothing"
    );
    // The 429 rule applies once; the retry succeeds.
    let r = call(http, url, "SendMessage", send_params("s429")).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    f.shutdown().await;
}

/// An `http_status` answer ends its HTTP/1.1 connection (`Connection: close`); the journal
/// records `client_closed` once the client closed its side, not before (the `retry_backoff`
/// crash point).
#[tokio::test]
async fn http_status_closes_the_connection_and_journals_the_clients_close() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let f = Fixture::toml(FAULTS, "f").await;
    let j = f.j();
    let authority = f
        .url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let body = envelope("SendMessage", send_params("s503")).to_string();
    let mut sock = tokio::net::TcpStream::connect(&authority).await.unwrap();
    let head = format!(
        "POST / HTTP/1.1\r\nhost: {authority}\r\na2a-version: 1.0\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    sock.write_all(head.as_bytes()).await.unwrap();
    sock.write_all(body.as_bytes()).await.unwrap();
    // The server half-closes after the answer: read it to its end of stream (bounded).
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), sock.read_to_end(&mut answer))
        .await
        .expect("the agent ends the connection after its answer")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer).to_ascii_lowercase();
    assert!(answer.starts_with("http/1.1 503"), "{answer}");
    assert!(answer.contains("\r\nconnection: close\r\n"), "{answer}");
    let req = reqs_with_text(j, "s503")[0];
    let closed = |e: &[a2a_mock_agents::Entry]| {
        e.iter()
            .any(|e| matches!(e.event, Event::ClientClosed { req: r } if r == req))
    };
    // The client holds the connection open: nothing recorded yet.
    assert!(
        !j.with_entries(|e| closed(e)),
        "client_closed before the client closed"
    );
    drop(sock);
    wait_for(j, "client_closed", closed).await;
    f.shutdown().await;
}

#[tokio::test]
async fn stall_delays_processing() {
    let f = Fixture::toml(FAULTS, "f").await;
    let (url, j) = (&f.url, f.j());
    let started = Instant::now();
    let r = call(&client(), url, "SendMessage", send_params("stall")).await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    // A caller with a shorter timeout gives up.
    let e = send_impatiently(url, "stall", 100).await;
    assert!(e.is_timeout());
    assert!(has_fault(j, reqs_with_text(j, "stall")[0], "stall"));
    f.shutdown().await;
}

#[tokio::test]
async fn close_after_ends_a_stream_cleanly_after_k_events() {
    let f = Fixture::toml(FAULTS, "f").await;
    let (url, j) = (&f.url, f.j());
    let s = stream(
        &client(),
        url,
        "SendStreamingMessage",
        send_params("close-after"),
    )
    .await;
    assert_eq!(s.events.len(), 2);
    assert!(s.transport_error.is_none() && !s.ended_mid_event);
    let req = reqs_of(j, "SendStreamingMessage")[0];
    assert!(
        events_of(j, req).iter().any(
            |e| matches!(e, Event::StreamClosed { events: 2, reason, .. } if reason == "fault")
        )
    );
    // The task itself goes on.
    let tid = task_id_of(&s);
    wait_state(j, &tid, "TASK_STATE_COMPLETED").await;
    f.shutdown().await;
}

#[tokio::test]
async fn reset_after_cuts_the_connection_mid_event() {
    let f = Fixture::toml(FAULTS, "f").await;
    let (url, j) = (&f.url, f.j());
    let s = stream(
        &client(),
        url,
        "SendStreamingMessage",
        send_params("reset-after"),
    )
    .await;
    assert_eq!(s.events.len(), 1, "one whole event before the reset");
    assert!(s.transport_error.is_some(), "the connection failed: {s:?}");
    assert!(s.ended_mid_event, "half an event arrived");
    let req = reqs_of(j, "SendStreamingMessage")[0];
    assert!(has_fault(j, req, "reset_after"));
    assert!(dropped_in(j, req, "mid_event"));
    f.shutdown().await;
}

#[tokio::test]
async fn trickle_sends_bytes_slowly_on_unary_and_streams() {
    let f = Fixture::toml(FAULTS, "f").await;
    let (http, url, j) = (&f.http, &f.url, f.j());
    let started = Instant::now();
    let mut r = post(
        http,
        url,
        &envelope("SendMessage", send_params("trickle")),
        &[],
    )
    .await
    .unwrap();
    let mut body = Vec::new();
    let mut chunks = 0;
    while let Some(c) = r.chunk().await.unwrap() {
        chunks += 1;
        body.extend_from_slice(&c);
    }
    let v: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        v["result"]["message"]["parts"][0]["text"],
        "slowly, slowly, slowly, slowly, slowly, slowly"
    );
    // 2000 B/s = 100-byte slices 50 ms apart: the body needs ceil(len/100) slices.
    let slices = body.len().div_ceil(100) as u64;
    assert!(chunks >= 2, "{chunks} chunks for {} bytes", body.len());
    let min = Duration::from_millis(50 * (slices - 1));
    assert!(
        started.elapsed() >= min,
        "{:?} < {min:?}",
        started.elapsed()
    );

    let s = stream(http, url, "SendStreamingMessage", send_params("trickle")).await;
    assert_eq!(
        s.results()[0]["message"]["parts"][0]["text"],
        "slowly, slowly, slowly, slowly, slowly, slowly"
    );
    assert!(s.chunks >= 2);
    let traced = j
        .entries()
        .iter()
        .filter(|e| matches!(&e.event, Event::Fault { kind, .. } if kind == "trickle"))
        .count();
    assert_eq!(traced, 2);
    f.shutdown().await;
}

#[tokio::test]
async fn mutations_break_the_wire_format_on_purpose() {
    let f = Fixture::toml(
        r#"
        [[agent]]
        name = "m"
        [[agent.rule]]
        when = { text_contains = "wrong-id" }
        mutate = ["wrong_rpc_id"]
        steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent.rule]]
        when = { text_contains = "legacy" }
        mutate = ["legacy_fields"]
        steps = [{ do = "state", state = "TASK_STATE_WORKING" }, { do = "artifacts", text = "x" }, { do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent.rule]]
        when = { text_contains = "lower" }
        mutate = ["lowercase_enums"]
        steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent.rule]]
        when = { text_contains = "extra" }
        mutate = ["unknown_field"]
        steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
        "#,
        "m",
    )
    .await;
    let (http, url, j) = (&f.http, &f.url, f.j());

    // wrong_rpc_id, unary and streamed.
    let body = envelope("SendMessage", send_params("wrong-id"));
    let v: Value = post(http, url, &body, &[])
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["id"], "wrong-id-from-mock");
    assert_ne!(v["id"], body["id"]);
    let s = stream(http, url, "SendStreamingMessage", send_params("wrong-id")).await;
    assert!(s.events.iter().all(|e| e["id"] == "wrong-id-from-mock"));

    // legacy_fields: kind discriminators, final and index.
    let r = call(http, url, "SendMessage", send_params("legacy")).await;
    assert_eq!(r["task"]["kind"], "task");
    let tid = r["task"]["id"].as_str().unwrap().to_string();
    let t = call(http, url, "GetTask", json!({"id": tid})).await;
    assert_eq!(t["kind"], "task");
    let s = stream(http, url, "SendStreamingMessage", send_params("legacy")).await;
    let rs = s.results();
    assert_eq!(rs[0]["task"]["kind"], "task");
    assert_eq!(rs[1]["statusUpdate"]["kind"], "status-update");
    assert_eq!(rs[1]["statusUpdate"]["final"], false);
    assert_eq!(rs[2]["artifactUpdate"]["kind"], "artifact-update");
    assert_eq!(rs[3]["statusUpdate"]["final"], true);

    // lowercase_enums: 0.3 spellings.
    let r = call(http, url, "SendMessage", send_params("lower")).await;
    assert_eq!(r["task"]["status"]["state"], "completed");
    assert_eq!(r["task"]["history"][0]["role"], "user");

    // unknown_field: a key no proto has.
    let r = call(http, url, "SendMessage", send_params("extra")).await;
    assert_eq!(r["mockExtraField"], true);

    // The 1.0 conformance check sees every one of them in the journal.
    let d = deviations(j).join("\n");
    for needle in ["kind", "final", "completed", "mockExtraField"] {
        assert!(d.contains(needle), "{needle} not reported in:\n{d}");
    }
    f.shutdown().await;
}

#[tokio::test]
async fn rpc_error_and_garbage_body_answer_without_processing() {
    let f = Fixture::toml(
        r#"
        [[agent]]
        name = "broken"
        [[agent.rule]]
        when = { text_contains = "internal" }
        times = 1
        fault = { kind = "rpc_error", code = -32603, message = "injected" }
        [[agent.rule]]
        when = { text_contains = "garbage" }
        fault = { kind = "garbage_body" }
        [[agent.rule]]
        when = { method = "GetTask" }
        fault = { kind = "garbage_body", body = "{not json" }
        [[agent.rule]]
        steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
        "#,
        "broken",
    )
    .await;
    let j = f.j();
    let v = f.rpc("SendMessage", send_params("internal")).await;
    assert_eq!(code(&v), Some(-32603));
    assert_eq!(v["error"]["message"], "injected");
    let req = reqs_with_text(j, "internal")[0];
    assert!(has_fault(j, req, "rpc_error_-32603"));
    assert_eq!(response_of(j, req).map(|r| r.1), Some(Some(-32603)));
    assert!(
        tasks_created(j).is_empty(),
        "an injected error processes nothing"
    );
    // `times = 1`: the retry is processed.
    let r = f.call("SendMessage", send_params("internal")).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");

    for (method, params, want) in [
        ("SendMessage", send_params("garbage"), "<<garbage>>"),
        ("GetTask", json!({"id": "any"}), "{not json"),
    ] {
        let r = f.post(method, params).await.unwrap();
        assert_eq!(r.status(), 200);
        let body = r.text().await.unwrap();
        assert_eq!(body, want);
        assert!(serde_json::from_str::<Value>(&body).is_err(), "{method}");
        let req = *reqs_of(j, method).last().unwrap();
        assert!(has_fault(j, req, "garbage_body"));
        assert_eq!(response_of(j, req).map(|r| r.2), Some(json!(want)));
    }
    assert_eq!(tasks_created(j).len(), 1);
    f.shutdown().await;
}

#[tokio::test]
async fn queued_faults_hit_the_next_calls_of_their_method_then_the_agent_behaves() {
    // From TOML: two 503s then one JSON-RPC error for SendMessage; the rule's `times` and the
    // round numbers only see the calls that were processed.
    let f = Fixture::toml(
        r#"
        [[agent]]
        name = "recovering"
        [[agent.queued_fault]]
        method = "SendMessage"
        times = 2
        fault = { kind = "http_status", status = 503, retry_after_s = 1 }
        [[agent.queued_fault]]
        method = "SendMessage"
        fault = { kind = "rpc_error", code = -32603 }
        [[agent.rule]]
        when = { round = 1 }
        times = 1
        steps = [{ do = "state", state = "TASK_STATE_COMPLETED", message = "first round" }]
        [[agent.rule]]
        steps = [{ do = "state", state = "TASK_STATE_FAILED" }]
        "#,
        "recovering",
    )
    .await;
    let j = f.j();
    let params = send_params("book");
    for want in [503, 503] {
        let r = f.post("SendMessage", params.clone()).await.unwrap();
        assert_eq!(r.status(), want);
        assert_eq!(r.headers()["retry-after"], "1");
    }
    // GetTask is not affected by SendMessage's queue.
    assert_eq!(
        code(&f.rpc("GetTask", json!({"id": "x"})).await),
        Some(-32001)
    );
    assert_eq!(
        code(&f.rpc("SendMessage", params.clone()).await),
        Some(-32603)
    );
    let r = f.call("SendMessage", params).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        r["task"]["status"]["message"]["parts"][0]["text"],
        "first round"
    );
    let sends = reqs_of(j, "SendMessage");
    assert_eq!(sends.len(), 4);
    assert!(has_fault(j, sends[0], "http_status_503"));
    assert!(has_fault(j, sends[1], "http_status_503"));
    assert!(has_fault(j, sends[2], "rpc_error_-32603"));
    assert!(
        events_of(j, sends[3])
            .iter()
            .all(|e| !matches!(e, Event::Fault { .. }))
    );
    assert_eq!(tasks_created(j).len(), 1);
    f.shutdown().await;
}

#[tokio::test]
async fn faults_queued_while_running_and_from_the_builder_apply_in_order() {
    let f = Fixture::agents(vec![
        MockAgent::builder("a")
            .queue_fault(Method::SendMessage, Fault::GarbageBody { body: None }, 1)
            .mount(MockAgent::when().state(TaskState::Completed).expect(2))
            .build(),
    ])
    .await;
    let j = f.j();
    let r = f.post("SendMessage", send_params("x")).await.unwrap();
    assert_eq!(r.text().await.unwrap(), "<<garbage>>");
    // Queued now: the next GetTask loses its response, the next send is dropped before
    // processing, and a second fault for SendMessage waits behind the first.
    let net = &f.net;
    net.queue_fault("a", Method::GetTask, Fault::DropResponse, 1)
        .unwrap();
    net.queue_fault("a", Method::SendMessage, Fault::DropBefore, 1)
        .unwrap();
    net.queue_fault(
        "a",
        Method::SendMessage,
        Fault::HttpStatus {
            status: 500,
            retry_after_s: None,
        },
        1,
    )
    .unwrap();
    assert!(matches!(
        net.queue_fault("nobody", Method::GetTask, Fault::DropBefore, 1),
        Err(a2a_mock_agents::NetworkError::UnknownAgent(a)) if a == "nobody"
    ));
    let params = send_params("y");
    assert!(f.post("SendMessage", params.clone()).await.is_err());
    assert!(dropped_in(
        j,
        *reqs_of(j, "SendMessage").last().unwrap(),
        "before_processing"
    ));
    assert_eq!(
        f.post("SendMessage", params.clone())
            .await
            .unwrap()
            .status(),
        500
    );
    let r = f.call("SendMessage", params).await;
    let tid = r["task"]["id"].as_str().unwrap().to_string();
    assert!(f.post("GetTask", json!({"id": tid})).await.is_err());
    let get = reqs_of(j, "GetTask")[0];
    assert!(dropped_in(j, get, "after_processing") && response_of(j, get).is_none());
    assert_eq!(
        f.call("GetTask", json!({"id": tid})).await["id"],
        tid.as_str()
    );
    // The rule saw only the processed send... and `expect(2)` says two: the drop verifies.
    assert_eq!(tasks_created(j).len(), 1);
    let e = f.net.verify().unwrap_err();
    assert_eq!(e.rules[0].matched, 1);
    let report = e.to_string();
    assert!(
        report.contains("FAIL agent \"a\" rule[0] every new send: expected 2, matched 1"),
        "{report}"
    );
    f.net.finish().await.unwrap_err();
}

#[tokio::test]
async fn stall_response_processes_then_holds_the_answer() {
    let f = Fixture::agents(vec![
        MockAgent::builder("slow-reply")
            .queue_fault(Method::SendMessage, Fault::StallResponse { ms: 400 }, 2)
            .build(),
    ])
    .await;
    let j = f.j();
    // A caller that gives up first sees no answer, yet the task exists.
    let e = send_impatiently(&f.url, "a", 100).await;
    assert!(e.is_timeout());
    assert_eq!(tasks_created(j).len(), 1, "processed before the hold");
    let first = reqs_of(j, "SendMessage")[0];
    assert!(has_fault(j, first, "stall_response"));
    // A patient caller gets the real answer, late.
    let started = Instant::now();
    let r = f.call("SendMessage", send_params("b")).await;
    assert!(started.elapsed() >= Duration::from_millis(400));
    assert!(r["task"]["id"].is_string());
    // Used up: the third call gets no fault.
    f.call("SendMessage", send_params("c")).await;
    let third = reqs_of(j, "SendMessage")[2];
    assert!(!has_fault(j, third, "stall_response"));
    assert_eq!(j.requests().len(), 3);
    assert!(j.requests().iter().all(|r| r.agent == "slow-reply"
        && r.method == "SendMessage"
        && r.header("a2a-version") == Some("1.0")));
    f.shutdown().await;
}
