//! Every fault and every wire mutation, driven by a real HTTP client, asserting on what the
//! client saw and on the journal.

mod common;

use a2a_mock_agents::Event;
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

/// Requests whose JSON-RPC params carry this message text.
fn reqs_with_text(j: &a2a_mock_agents::Journal, text: &str) -> Vec<u64> {
    j.entries()
        .iter()
        .filter_map(|e| match &e.event {
            Event::Request { req, params, .. }
                if params
                    .pointer("/message/parts/0/text")
                    .and_then(Value::as_str)
                    == Some(text) =>
            {
                Some(*req)
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn drop_before_closes_the_connection_and_nothing_happens() {
    let net = start(FAULTS).await;
    let url = net.rpc_url("f").unwrap();
    let j = net.journal();
    let r = post(
        &client(),
        &url,
        &envelope("SendMessage", send_params("drop-before")),
        &[],
    )
    .await;
    assert!(r.is_err(), "no response: {r:?}");
    let reqs = reqs_with_text(j, "drop-before");
    assert_eq!(reqs.len(), 1, "not retried");
    let evs = events_of(j, reqs[0]);
    assert!(
        evs.iter()
            .any(|e| matches!(e, Event::Fault { kind, .. } if kind == "drop_before"))
    );
    assert!(evs.iter().any(
        |e| matches!(e, Event::ConnectionDropped { phase, .. } if phase == "before_processing")
    ));
    assert!(response_of(j, reqs[0]).is_none());
    assert!(tasks_created(j).is_empty(), "nothing was processed");
    // `times = 1`: the same request now goes through.
    let r = call(&client(), &url, "SendMessage", send_params("drop-before")).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    net.shutdown().await;
}

#[tokio::test]
async fn drop_response_processes_the_send_but_the_caller_gets_nothing() {
    let net = start(FAULTS).await;
    let url = net.rpc_url("f").unwrap();
    let j = net.journal();
    let http = client();
    let params = send_params("drop-response");
    let r = post(&http, &url, &envelope("SendMessage", params.clone()), &[]).await;
    assert!(r.is_err(), "no response: {r:?}");
    let req = reqs_with_text(j, "drop-response")[0];
    assert!(events_of(j, req).iter().any(
        |e| matches!(e, Event::ConnectionDropped { phase, .. } if phase == "after_processing")
    ));
    assert!(response_of(j, req).is_none(), "the response never left");
    // The task exists although the client never learned its id.
    let created = tasks_created(j);
    assert_eq!(created.len(), 1);
    let l = call(&http, &url, "ListTasks", json!({})).await;
    assert_eq!(l["tasks"][0]["id"], created[0].0.as_str());
    assert_eq!(l["tasks"][0]["status"]["state"], "TASK_STATE_COMPLETED");
    // Resending the same messageId (dedup on) resolves the indefinite outcome.
    let r = call(&http, &url, "SendMessage", params).await;
    assert_eq!(r["task"]["id"], created[0].0.as_str());
    assert!(tasks_created(j)[1].2, "journal shows the dedup hit");
    net.shutdown().await;
}

#[tokio::test]
async fn http_status_faults_with_retry_after() {
    let net = start(FAULTS).await;
    let url = net.rpc_url("f").unwrap();
    let j = net.journal();
    let http = client();
    for (text, status, retry) in [
        ("s500", 500, None),
        ("s503", 503, Some("2")),
        ("s429", 429, Some("1")),
    ] {
        let r = post(
            &http,
            &url,
            &envelope("SendMessage", send_params(text)),
            &[],
        )
        .await
        .unwrap();
        assert_eq!(r.status(), status);
        assert_eq!(
            r.headers().get("retry-after").map(|v| v.to_str().unwrap()),
            retry
        );
        let req = reqs_with_text(j, text)[0];
        assert_eq!(response_of(j, req).map(|r| r.0), Some(status));
    }
    assert!(
        tasks_created(j).is_empty(),
        "an HTTP error processes nothing"
    );
    // The 429 rule applies once; the retry succeeds.
    let r = call(&http, &url, "SendMessage", send_params("s429")).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    net.shutdown().await;
}

#[tokio::test]
async fn stall_delays_processing() {
    let net = start(FAULTS).await;
    let url = net.rpc_url("f").unwrap();
    let j = net.journal();
    let started = Instant::now();
    let r = call(&client(), &url, "SendMessage", send_params("stall")).await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    // A caller with a shorter timeout gives up.
    let impatient = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let e = post(
        &impatient,
        &url,
        &envelope("SendMessage", send_params("stall")),
        &[],
    )
    .await
    .unwrap_err();
    assert!(e.is_timeout());
    let req = reqs_with_text(j, "stall")[0];
    assert!(
        events_of(j, req)
            .iter()
            .any(|e| matches!(e, Event::Fault { kind, .. } if kind == "stall"))
    );
    net.shutdown().await;
}

#[tokio::test]
async fn close_after_ends_a_stream_cleanly_after_k_events() {
    let net = start(FAULTS).await;
    let url = net.rpc_url("f").unwrap();
    let j = net.journal();
    let s = stream(
        &client(),
        &url,
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
    let tid = s.results()[0]["task"]["id"].as_str().unwrap().to_string();
    wait_state(j, &tid, "TASK_STATE_COMPLETED").await;
    net.shutdown().await;
}

#[tokio::test]
async fn reset_after_cuts_the_connection_mid_event() {
    let net = start(FAULTS).await;
    let url = net.rpc_url("f").unwrap();
    let j = net.journal();
    let s = stream(
        &client(),
        &url,
        "SendStreamingMessage",
        send_params("reset-after"),
    )
    .await;
    assert_eq!(s.events.len(), 1, "one whole event before the reset");
    assert!(s.transport_error.is_some(), "the connection failed: {s:?}");
    assert!(s.ended_mid_event, "half an event arrived");
    let req = reqs_of(j, "SendStreamingMessage")[0];
    let evs = events_of(j, req);
    assert!(
        evs.iter()
            .any(|e| matches!(e, Event::Fault { kind, .. } if kind == "reset_after"))
    );
    assert!(
        evs.iter()
            .any(|e| matches!(e, Event::ConnectionDropped { phase, .. } if phase == "mid_event"))
    );
    net.shutdown().await;
}

#[tokio::test]
async fn trickle_sends_bytes_slowly_on_unary_and_streams() {
    let net = start(FAULTS).await;
    let url = net.rpc_url("f").unwrap();
    let j = net.journal();
    let http = client();
    let started = Instant::now();
    let mut r = post(
        &http,
        &url,
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

    let s = stream(&http, &url, "SendStreamingMessage", send_params("trickle")).await;
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
    net.shutdown().await;
}

#[tokio::test]
async fn mutations_break_the_wire_format_on_purpose() {
    let net = start(
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
    )
    .await;
    let http = client();
    let url = net.rpc_url("m").unwrap();
    let j = net.journal();

    // wrong_rpc_id, unary and streamed.
    let body = envelope("SendMessage", send_params("wrong-id"));
    let v: Value = post(&http, &url, &body, &[])
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(v["id"], "wrong-id-from-mock");
    assert_ne!(v["id"], body["id"]);
    let s = stream(&http, &url, "SendStreamingMessage", send_params("wrong-id")).await;
    assert!(s.events.iter().all(|e| e["id"] == "wrong-id-from-mock"));

    // legacy_fields: kind discriminators, final and index.
    let r = call(&http, &url, "SendMessage", send_params("legacy")).await;
    assert_eq!(r["task"]["kind"], "task");
    let tid = r["task"]["id"].as_str().unwrap().to_string();
    let t = call(&http, &url, "GetTask", json!({"id": tid})).await;
    assert_eq!(t["kind"], "task");
    let s = stream(&http, &url, "SendStreamingMessage", send_params("legacy")).await;
    let rs = s.results();
    assert_eq!(rs[0]["task"]["kind"], "task");
    assert_eq!(rs[1]["statusUpdate"]["kind"], "status-update");
    assert_eq!(rs[1]["statusUpdate"]["final"], false);
    assert_eq!(rs[2]["artifactUpdate"]["kind"], "artifact-update");
    assert_eq!(rs[3]["statusUpdate"]["final"], true);

    // lowercase_enums: 0.3 spellings.
    let r = call(&http, &url, "SendMessage", send_params("lower")).await;
    assert_eq!(r["task"]["status"]["state"], "completed");
    assert_eq!(r["task"]["history"][0]["role"], "user");

    // unknown_field: a key no proto has.
    let r = call(&http, &url, "SendMessage", send_params("extra")).await;
    assert_eq!(r["mockExtraField"], true);

    // The 1.0 conformance check sees every one of them in the journal.
    let d = deviations(j).join("\n");
    for needle in ["kind", "final", "completed", "mockExtraField"] {
        assert!(d.contains(needle), "{needle} not reported in:\n{d}");
    }
    net.shutdown().await;
}
