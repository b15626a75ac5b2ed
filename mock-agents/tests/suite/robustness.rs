//! Bad input and bounds: no request body can panic the server (property test), oversized bodies
//! are refused without being buffered, the journal is bounded, and the same seed gives the same
//! journal apart from timings.

use crate::common;

use a2a_mock_agents::{Event, Network, NetworkSpec};
use common::*;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::sync::OnceLock;

const METHODS: &[&str] = &[
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    "GetExtendedAgentCard",
    "message/send",
];

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,12}".prop_map(Value::String),
        prop::sample::select(vec![
            "TASK_STATE_COMPLETED",
            "ROLE_USER",
            "ROLE_AGENT",
            "1.0",
            "",
            "text",
            "taskId",
            "\u{0}",
            "-1",
        ])
        .prop_map(|s| Value::String(s.into())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let key = prop_oneof![
            prop::sample::select(vec![
                "message",
                "messageId",
                "role",
                "parts",
                "text",
                "raw",
                "url",
                "data",
                "taskId",
                "contextId",
                "id",
                "historyLength",
                "configuration",
                "returnImmediately",
                "metadata",
                "x-deleg",
                "pageSize",
                "pageToken",
                "status",
                "taskPushNotificationConfig",
                "authentication",
                "deadline",
                "depth",
                "chain",
                "budget_usd",
            ])
            .prop_map(str::to_string),
            ".{0,6}",
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(key, inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A JSON-RPC envelope around arbitrary params (sometimes broken itself).
fn rpc_body() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(METHODS),
        json_value(),
        json_value(),
        any::<u8>(),
    )
        .prop_map(|(method, params, id, shape)| match shape % 8 {
            0 => json!({"jsonrpc": "2.0", "id": id, "method": method}),
            1 => json!({"jsonrpc": "2.0", "id": id, "method": params, "params": id}),
            2 => json!([{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}]),
            3 => params,
            _ => json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        })
}

struct Shared {
    rt: tokio::runtime::Runtime,
    net: Network,
    url: String,
    http: reqwest::Client,
}

fn shared() -> &'static Shared {
    static S: OnceLock<Shared> = OnceLock::new();
    S.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let net = rt.block_on(start(
            r#"
            [journal]
            max_entries = 20000
            [[agent]]
            name = "target"
            max_body_bytes = 65536
            max_block_ms = 2000
            [[agent.rule]]
            when = { text_contains = "a" }
            steps = [{ do = "input_required", question = "?", timeout_ms = 2000 }, { do = "state", state = "TASK_STATE_COMPLETED" }]
            "#,
        ));
        let url = net.rpc_url("target").unwrap();
        Shared {
            rt,
            net,
            url,
            http: client(),
        }
    })
}

/// Post bytes; the server must answer with an HTTP response whose JSON-RPC body parses (or an
/// SSE stream that ends), never drop the connection.
fn exchange(body: Vec<u8>, version: bool) {
    let s = shared();
    s.rt.block_on(async {
        let mut rb = s.http.post(&s.url).body(body.clone());
        if version {
            rb = rb.header("A2A-Version", "1.0");
        }
        let r = rb
            .send()
            .await
            .unwrap_or_else(|e| panic!("no response to {:?}: {e}", String::from_utf8_lossy(&body)));
        let status = r.status().as_u16();
        let sse = r
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        if sse {
            let st = read_sse(r, 1 << 24).await;
            assert!(st.transport_error.is_none(), "{st:?}");
        } else {
            let text = r.text().await.expect("body");
            let v: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status} {text}: {e}"));
            assert!(v.get("result").is_some() || v.get("error").is_some(), "{v}");
        }
    });
}

fn run_property<S: Strategy>(strategy: S, cases: u32, test: impl Fn(S::Value))
where
    S::Value: std::fmt::Debug,
{
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    if let Err(e) = runner.run(&strategy, |v| {
        test(v);
        Ok(())
    }) {
        panic!("{e}");
    }
}

#[test]
fn no_request_body_can_break_the_server() {
    let s = shared();
    run_property((rpc_body(), any::<bool>()), 128, |(body, version)| {
        exchange(serde_json::to_vec(&body).unwrap(), version)
    });
    run_property(prop::collection::vec(any::<u8>(), 0..512), 64, |body| {
        exchange(body, true)
    });
    for b in [
        b"{".to_vec(),
        b"[]".to_vec(),
        b"null".to_vec(),
        vec![0xff; 64],
    ] {
        exchange(b, true);
    }
    // The server keeps answering afterwards.
    s.rt.block_on(async {
        let r = call(&s.http, &s.url, "SendMessage", send_params("zzz")).await;
        assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        assert!(!s.net.journal().is_empty());
    });
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_without_buffering_it() {
    let net = start("[[agent]]\nname = \"small\"\nmax_body_bytes = 1024\n").await;
    let http = client();
    let url = net.rpc_url("small").unwrap();
    let mut p = send_params(&"x".repeat(4096));
    p["message"]["messageId"] = json!("big");
    let r = post(&http, &url, &envelope("SendMessage", p), &[])
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    let v: Value = r.json().await.unwrap();
    assert_eq!(code(&v), Some(-32600));

    // 64 MiB announced and streamed lazily: refused after the first KiB, long before the end.
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = sent.clone();
    let chunks = futures::stream::iter(0..1024).map(move |_| {
        counter.fetch_add(65536, std::sync::atomic::Ordering::Relaxed);
        Ok::<_, std::io::Error>(vec![b' '; 65536])
    });
    let r = http
        .post(&url)
        .header("A2A-Version", "1.0")
        .header("Content-Length", (64u64 << 20).to_string())
        .body(reqwest::Body::wrap_stream(chunks))
        .send()
        .await;
    match r {
        Ok(r) => assert_eq!(r.status(), 413),
        Err(e) => assert!(!e.is_timeout(), "refused, not stalled: {e}"),
    }
    assert!(
        sent.load(std::sync::atomic::Ordering::Relaxed) < (16 << 20),
        "the server stopped reading early (only socket buffers filled up)"
    );
    let j = net.journal();
    let over = j
        .entries()
        .iter()
        .filter(|e| matches!(&e.event, Event::Response { status: 413, .. }))
        .count();
    assert_eq!(over, 2);
    assert!(tasks_created(j).is_empty());
    // And it keeps serving.
    let r = call(&http, &url, "SendMessage", send_params("small")).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    net.shutdown().await;
}

use futures::StreamExt;

const DETERMINISM: &str = r#"
    seed = 99
    [[agent]]
    name = "files"
    [[agent.rule]]
    when = { text_contains = "files" }
    steps = [
      { do = "state", state = "TASK_STATE_WORKING" },
      { do = "artifacts", count = 2, chunks = 3, chunk_bytes = 64 },
      { do = "artifacts", count = 1, chunks = 2, chunk_bytes = 48, content = "raw" },
      { do = "artifact_url", bytes = 1000 },
      { do = "data_artifact", data = { k = "v" } },
      { do = "state", state = "TASK_STATE_COMPLETED" },
    ]
    [[agent.rule]]
    when = { text_contains = "ask" }
    steps = [{ do = "input_required", question = "which?", expect = { text_contains = "yes" } }, { do = "state", state = "TASK_STATE_COMPLETED" }]
    [[agent]]
    name = "echo"
    [[agent.rule]]
    steps = [{ do = "reply", text = "hi" }]
"#;

/// Run a fixed conversation and return the journal with timings and ports normalised.
async fn run_once(seed: u64) -> Vec<Value> {
    let mut spec = NetworkSpec::from_toml("det.toml", DETERMINISM).unwrap();
    spec.seed = seed;
    let net = Network::start(spec).await.unwrap();
    let http = client();
    let files = net.rpc_url("files").unwrap();
    let echo = net.rpc_url("echo").unwrap();
    let fixed = |id: &str, text: &str| json!({"message": {"messageId": id, "role": "ROLE_USER", "parts": [{"text": text}]}});
    call_with_id(&http, &files, "r1", "SendMessage", fixed("m1", "files")).await;
    call_with_id(&http, &echo, "r2", "SendMessage", fixed("m2", "hello")).await;
    let t = call_with_id(&http, &files, "r3", "SendMessage", fixed("m3", "ask")).await;
    let tid = t["task"]["id"].as_str().unwrap().to_string();
    let mut a = fixed("m4", "no");
    a["message"]["taskId"] = json!(tid);
    call_with_id(&http, &files, "r4", "SendMessage", a).await;
    let mut a = fixed("m5", "yes");
    a["message"]["taskId"] = json!(tid);
    call_with_id(&http, &files, "r5", "SendMessage", a).await;
    call_with_id(&http, &files, "r6", "ListTasks", json!({})).await;
    let mut text = Vec::new();
    net.journal().write_jsonl(&mut text).unwrap();
    let ports: Vec<(String, String)> = net
        .names()
        .map(|n| (net.base_url(n).unwrap(), format!("http://{n}")))
        .collect();
    net.shutdown().await;
    let mut text = String::from_utf8(text).unwrap();
    for (from, to) in ports {
        text = text.replace(&from, &to);
    }
    text.lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            normalise(&mut v);
            v
        })
        .collect()
}

/// Drop what is a timing: `at_us`, RFC 3339 timestamps, and the pool-dependent request headers.
fn normalise(v: &mut Value) {
    match v {
        Value::Object(o) => {
            o.remove("at_us");
            if let Some(h) = o.get_mut("headers").and_then(Value::as_object_mut) {
                h.retain(|k, _| k == "a2a-version" || k == "authorization" || k == "content-type");
            }
            for (k, x) in o.iter_mut() {
                if k == "timestamp" {
                    *x = json!("<time>");
                } else {
                    normalise(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(normalise),
        _ => {}
    }
}

#[tokio::test]
async fn the_same_seed_gives_the_same_journal() {
    let a = run_once(99).await;
    let b = run_once(99).await;
    assert!(a.len() > 30);
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y);
    }
    // A different seed changes ids and content.
    let c = run_once(100).await;
    let sent = |j: &[Value]| -> Vec<String> {
        j.iter()
            .filter(|e| e["event"] == "artifact_sent")
            .map(|e| e["sha256"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(sent(&a).len(), 5);
    assert_ne!(sent(&a), sent(&c));
}

#[tokio::test]
async fn the_journal_is_bounded() {
    let net = start(
        r#"
        [journal]
        max_entries = 10
        max_string_bytes = 32
        [[agent]]
        name = "a"
        [[agent.rule]]
        steps = [{ do = "reply", text = "ok" }]
        "#,
    )
    .await;
    let http = client();
    let url = net.rpc_url("a").unwrap();
    let long = "y".repeat(100);
    call(&http, &url, "SendMessage", send_params(&long)).await;
    for _ in 0..10 {
        call(&http, &url, "SendMessage", send_params("short")).await;
    }
    let j = net.journal();
    assert_eq!(j.len(), 10);
    assert_eq!(j.dropped(), 12, "22 entries recorded, 10 kept");
    let entries = j.entries();
    assert_eq!(entries.last().unwrap().seq, 10);
    let Event::Request { params, .. } = &entries[0].event else {
        panic!("{:?}", entries[0]);
    };
    let summary = params["message"]["parts"][0]["text"].as_str().unwrap();
    assert_eq!(
        summary,
        format!("<100 bytes, sha256 {}>", sha256(long.as_bytes()))
    );
    let mut out = Vec::new();
    j.write_jsonl(&mut out).unwrap();
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 10);
    net.shutdown().await;
}
