//! Interop with the official Python SDK client (`a2a-sdk` 1.3.0 through `interop/sdk_client.py`):
//! send, stream, get, list, cancel and subscribe against a well-behaved mock agent; streamed
//! artifacts must reassemble to the journal's byte lengths and sha256; and every payload the
//! mock sent in the run must pass strict protobuf parsing (`interop/sdk_oracle.py check`).
//!
//! The same client also drives the reference agent (`examples/reference-agent.toml`) through the
//! TCK's messageId prefixes: send, stream, subscribe, get, list and cancel, with no error.
//!
//! The same client over HTTP+JSON and gRPC (`A2A_TRANSPORT=rest|grpc`) drives the reference
//! agent's other two interfaces: send, stream, get, cancel and subscribe, each request
//! journaled with its binding.
//!
//! The client also talks to an agent whose card carries a tenant and a patch version, on every
//! binding, and the SDK's oracle checks the cards of the front-door options (tenant, extensions,
//! security scheme, extended card).
//!
//! Needs the project's Python environment: `bash scripts/setup-python.sh`.

use crate::common;

use a2a_mock_agents::{Event, Journal, Network, NetworkSpec};
use common::*;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn python() -> PathBuf {
    let py = repo().join(".venv/bin/python");
    assert!(
        py.exists(),
        "{} is missing: run `bash scripts/setup-python.sh` (from the repository root) to create \
         the Python environment with the pinned a2a-sdk before running this test",
        py.display()
    );
    py
}

fn command(script: &str) -> Command {
    let mut c = Command::new(python());
    c.arg(repo().join("interop").join(script))
        .env("A2A_CLIENT_TIMEOUT", "15")
        .env("A2A_CLIENT_TOTAL_TIMEOUT", "40")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("ALL_PROXY")
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .env_remove("all_proxy")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    c
}

/// Run `sdk_client.py CARD_URL SCENARIO [ARG]`; its stdout lines as JSON.
async fn sdk(card: &str, scenario: &str, arg: Option<&str>) -> Vec<Value> {
    sdk_as(card, scenario, arg, None).await
}

/// [`sdk`] with messageIds `<prefix>-<8 hex>` (the TCK's convention).
async fn sdk_as(card: &str, scenario: &str, arg: Option<&str>, prefix: Option<&str>) -> Vec<Value> {
    sdk_over("jsonrpc", card, scenario, arg, prefix).await
}

/// [`sdk_as`] over a transport (`A2A_TRANSPORT`: `jsonrpc`, `rest`, `grpc`).
async fn sdk_over(
    transport: &str,
    card: &str,
    scenario: &str,
    arg: Option<&str>,
    prefix: Option<&str>,
) -> Vec<Value> {
    let mut c = command("sdk_client.py");
    c.arg(card)
        .arg(scenario)
        .args(arg)
        .env("A2A_TRANSPORT", transport);
    if let Some(p) = prefix {
        c.env("A2A_MESSAGE_ID_PREFIX", p);
    }
    let out = tokio::time::timeout(Duration::from_secs(60), c.output())
        .await
        .unwrap_or_else(|_| panic!("sdk_client.py {scenario} over {transport} timed out"))
        .expect("run sdk_client.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "sdk_client.py {scenario} over {transport} failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

/// `sdk_oracle.py check` over `[{"type", "json"}]`: one verdict per item.
async fn oracle_check(items: &[Value]) -> Vec<Value> {
    let mut c = command("sdk_oracle.py");
    c.arg("check").stdin(Stdio::piped());
    let mut child = c.spawn().expect("run sdk_oracle.py");
    let mut stdin = child.stdin.take().unwrap();
    let input = serde_json::to_vec(items).unwrap();
    let writer = tokio::spawn(async move {
        stdin.write_all(&input).await.unwrap();
    });
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("oracle finished")
        .unwrap();
    writer.await.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let verdicts: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(verdicts.len(), items.len());
    verdicts
}

/// The cards of the front-door options (a tenant, a patch version, extensions, a security
/// scheme, an extended card with another tenant) are strict, canonical ProtoJSON `AgentCard`s
/// for the official SDK: no unknown key, every REQUIRED field set, nothing the parser merely
/// tolerates.
#[tokio::test]
async fn the_front_door_cards_are_strict_protojson_for_the_sdk() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        bindings = ["jsonrpc", "rest", "grpc"]
        tenant = "acme"
        card_protocol_version = "1.0.3"
        security = { credential = "Bearer agent-cred-7" }
        extended_tenant = "premium"
        [[agent.extension]]
        uri = "https://example.com/ext/trace/v1"
        description = "trace ids"
        required = true
        [[agent.extension]]
        uri = "https://example.com/ext/optional/v1"
        [[agent.extended_skill]]
        id = "premium-booking"
        "#,
    )
    .await;
    let http = client();
    let public: Value = http
        .get(net.card_url("a").unwrap())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let extended = rpc_h(
        &http,
        &net.rpc_url("a").unwrap(),
        "GetExtendedAgentCard",
        json!({"tenant": "premium"}),
        &[
            ("Authorization", "Bearer agent-cred-7"),
            ("A2A-Extensions", "https://example.com/ext/trace/v1"),
        ],
    )
    .await["result"]
        .clone();
    assert!(extended.is_object(), "{extended}");
    let items = vec![
        json!({"type": "AgentCard", "json": public}),
        json!({"type": "AgentCard", "json": extended}),
    ];
    for (item, v) in items.iter().zip(oracle_check(&items).await) {
        assert_eq!(v["ok"], true, "rejected: {}\n{}", v["error"], item["json"]);
        assert_eq!(v["requiredViolations"], json!([]), "{}", item["json"]);
        assert_eq!(v["canonical"], item["json"], "not canonical");
    }
    net.shutdown().await;
}

/// The official client honours the card's tenant and its patch version on every binding: a
/// correct client passes the mock's tenant check (and the journal shows the tenant it sent).
#[tokio::test]
async fn the_sdk_client_sends_the_cards_tenant_over_every_binding() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        bindings = ["jsonrpc", "rest", "grpc"]
        tenant = "acme"
        card_protocol_version = "1.0.3"
        [[agent.rule]]
        steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
        "#,
    )
    .await;
    let card = net.card_url("a").unwrap();
    for transport in ["jsonrpc", "rest", "grpc"] {
        let lines = sdk_over(transport, &card, "send", Some("hi"), None).await;
        assert!(
            lines
                .iter()
                .any(|l| l.pointer("/task/status/state") == Some(&json!("TASK_STATE_COMPLETED"))),
            "{transport}: {lines:?}"
        );
        let r = net.journal().requests().pop().expect("a request");
        assert_eq!(r.binding.to_string(), transport);
        assert_eq!(r.params["tenant"], "acme", "{transport}");
    }
    net.shutdown().await;
}

/// Check the streamed artifacts the SDK reassembled against the journal's truth.
fn assert_artifacts(j: &Journal, lines: &[Value], task_id: &str, expected: usize) {
    let summary = lines.last().expect("summary line");
    let arts = summary["artifacts"].as_object().expect("artifacts summary");
    assert!(summary.get("warnings").is_none(), "{summary}");
    assert_eq!(arts.len(), expected, "{summary}");
    let truth = artifacts_sent(j);
    for (id, a) in arts {
        let (bytes, sha) = truth
            .get(&(task_id.to_string(), id.clone()))
            .unwrap_or_else(|| panic!("no artifact_sent for {id}"));
        assert_eq!(a["bytes"].as_u64(), Some(*bytes), "{id}");
        assert_eq!(a["sha256"].as_str(), Some(sha.as_str()), "{id}");
    }
}

/// Replace every `timestamp` string by its instant in Unix nanoseconds.
fn instants(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match x.as_str() {
                    Some(t) if k == "timestamp" => {
                        let at = time::OffsetDateTime::parse(
                            t,
                            &time::format_description::well_known::Rfc3339,
                        )
                        .unwrap_or_else(|e| panic!("{t}: {e}"));
                        *x = json!(at.unix_timestamp_nanos().to_string());
                    }
                    _ => instants(x),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(instants),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_works_against_a_well_behaved_mock() {
    let _ = python();
    let net = start(
        r#"
        seed = 5
        [journal]
        max_string_bytes = 10000000
        [[agent]]
        name = "sdk"
        [[agent.skill]]
        id = "files"
        [[agent.rule]]
        when = { text_contains = "stream" }
        steps = [
          { do = "state", state = "TASK_STATE_WORKING" },
          { do = "artifacts", count = 2, chunks = 3, chunk_bytes = 3000, interleave = true },
          { do = "artifacts", count = 1, chunks = 2, chunk_bytes = 4096, content = "raw", media_type = "application/octet-stream" },
          { do = "state", state = "TASK_STATE_COMPLETED", message = "done" },
        ]
        # The answer comes after four SDK processes (get, list, cancel, subscribe) have run: on
        # a loaded machine that took longer than the step's default 30 s wait.
        [[agent.rule]]
        when = { text_contains = "hold" }
        steps = [
          { do = "state", state = "TASK_STATE_WORKING" },
          { do = "input_required", question = "Go on?", timeout_ms = 180000 },
          { do = "artifacts", count = 1, chunks = 4, chunk_bytes = 1500 },
          { do = "state", state = "TASK_STATE_COMPLETED" },
        ]
        [[agent.rule]]
        steps = [
          { do = "state", state = "TASK_STATE_WORKING" },
          { do = "artifacts", text = "hello from the mock" },
          { do = "state", state = "TASK_STATE_COMPLETED" },
        ]
        "#,
    )
    .await;
    let card = net.card_url("sdk").unwrap();
    let url = net.rpc_url("sdk").unwrap();
    let j = net.journal();
    let http = client();

    // send and stream, concurrently.
    let (sent, streamed) = tokio::join!(
        sdk(&card, "send", Some("hello")),
        sdk(&card, "stream", Some("stream files"))
    );
    assert_eq!(sent.len(), 1);
    let task = &sent[0]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        task["artifacts"][0]["parts"][0]["text"],
        "hello from the mock"
    );
    let sent_id = task["id"].as_str().unwrap().to_string();

    let stream_id = streamed[0]["task"]["id"]
        .as_str()
        .expect("first event is the task")
        .to_string();
    let last_state = streamed
        .iter()
        .rev()
        .find_map(|l| l.pointer("/statusUpdate/status/state"))
        .unwrap();
    assert_eq!(last_state, "TASK_STATE_COMPLETED");
    assert_artifacts(j, &streamed, &stream_id, 3);

    // Two tasks waiting for input: one to cancel, one to subscribe to.
    let hold = |_: ()| call(&http, &url, "SendMessage", send_params("hold"));
    let (a, b) = tokio::join!(hold(()), hold(()));
    let (cancel_id, sub_id) = (
        a["task"]["id"].as_str().unwrap().to_string(),
        b["task"]["id"].as_str().unwrap().to_string(),
    );
    assert_eq!(b["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");

    let subscriber = {
        let card = card.clone();
        let sub_id = sub_id.clone();
        tokio::spawn(async move { sdk(&card, "subscribe", Some(&sub_id)).await })
    };
    let (got, listed, canceled) = tokio::join!(
        sdk(&card, "get", Some(&sent_id)),
        sdk(&card, "list", None),
        sdk(&card, "cancel", Some(&cancel_id)),
    );
    assert_eq!(got[0]["id"], sent_id.as_str());
    assert_eq!(got[0]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(listed[0]["totalSize"], 4);
    assert_eq!(listed[0]["tasks"].as_array().unwrap().len(), 4);
    assert_eq!(canceled[0]["id"], cancel_id.as_str());
    assert_eq!(canceled[0]["status"]["state"], "TASK_STATE_CANCELED");

    // Answer the subscribed task once the SDK holds its stream; it then streams the rest.
    wait_for(j, "the SDK subscribed", |es| {
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
    let r = call(&http, &url, "SendMessage", answer_params(&sub_id, "yes")).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let subscribed = tokio::time::timeout(Duration::from_secs(60), subscriber)
        .await
        .expect("subscribe finished")
        .unwrap();
    assert_eq!(
        subscribed[0]["task"]["id"],
        sub_id.as_str(),
        "first event is the Task"
    );
    assert_eq!(
        subscribed[0]["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    assert_artifacts(j, &subscribed, &sub_id, 1);

    // Every payload the mock sent in this run, checked by strict protobuf parsing.
    let checked = oracle_checks_every_payload(j, &http, &card).await;
    // The card, 7 unary results, 11 events of the stream and 7 of the subscription.
    assert_eq!(checked, 26, "payloads checked");
    net.shutdown().await;
}

/// Check every payload the mock sent (the card, unary results, stream events) with the SDK's
/// strict protobuf parser: each must parse, break no REQUIRED rule and already be canonical.
/// How many were checked.
async fn oracle_checks_every_payload(j: &Journal, http: &reqwest::Client, card: &str) -> usize {
    let card_json: Value = http.get(card).send().await.unwrap().json().await.unwrap();
    let mut items = vec![json!({"type": "AgentCard", "json": card_json})];
    let mut methods = std::collections::BTreeMap::new();
    for e in j.entries() {
        match e.event {
            Event::Request {
                req,
                method: Some(m),
                ..
            } => {
                methods.insert(req, m);
            }
            Event::Response { req, body, .. } => {
                let Some(result) = body.get("result") else {
                    continue;
                };
                let t = match methods.get(&req).map(String::as_str) {
                    Some("SendMessage") => "SendMessageResponse",
                    Some("GetTask" | "CancelTask") => "Task",
                    Some("ListTasks") => "ListTasksResponse",
                    other => panic!("unexpected method {other:?}"),
                };
                items.push(json!({"type": t, "json": result}));
            }
            Event::SseEvent { data, .. } => {
                items.push(json!({"type": "StreamResponse", "json": data["result"]}));
            }
            _ => {}
        }
    }
    let kinds: std::collections::BTreeSet<&str> =
        items.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "AgentCard",
            "ListTasksResponse",
            "SendMessageResponse",
            "StreamResponse",
            "Task"
        ]
        .into_iter()
        .collect()
    );
    let verdicts = oracle_check(&items).await;
    for (item, v) in items.iter().zip(&verdicts) {
        assert_eq!(
            v["ok"], true,
            "{} rejected: {}\n{}",
            item["type"], v["error"], item["json"]
        );
        // proto3 cannot tell "" from unset: the last page's nextPageToken, which the spec
        // requires to be present and empty (R46), is the one REQUIRED field it flags.
        let last_page = item["type"] == "ListTasksResponse" && item["json"]["nextPageToken"] == "";
        let violations: Vec<&Value> = v["requiredViolations"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| !(last_page && x["field"] == "next_page_token"))
            .collect();
        assert!(
            violations.is_empty(),
            "{}: {violations:?} in {}",
            item["type"],
            item["json"]
        );
        // Nothing the parser tolerates either (snake_case, integer enums, ...): what the mock
        // sent is already canonical, except fields the spec wants present at their default
        // (ListTasksResponse.nextPageToken = "").
        let mut sent = item["json"].clone();
        if item["type"] == "ListTasksResponse" && sent["nextPageToken"] == "" {
            sent.as_object_mut().unwrap().remove("nextPageToken");
        }
        // Timestamps compare as instants: protobuf prints a whole second without the ".000"
        // that the mock always sends (millisecond precision, §5.6.1).
        let mut canonical = v["canonical"].clone();
        instants(&mut sent);
        instants(&mut canonical);
        assert_eq!(
            canonical, sent,
            "{} differs from its canonical form",
            item["type"]
        );
    }
    verdicts.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_works_against_the_reference_agent() {
    let _ = python();
    let mut spec = NetworkSpec::load(&repo().join("mock-agents/examples/reference-agent.toml"))
        .expect("the reference agent loads");
    // Whole payloads in the journal, for the oracle.
    spec.journal.max_string_bytes = 10_000_000;
    let net = Network::start(spec).await.expect("starts");
    let card = net.card_url("reference").unwrap();
    let url = net.rpc_url("reference").unwrap();
    let j = net.journal();
    let http = client();

    let (done, direct, data) = tokio::join!(
        sdk_as(&card, "send", None, Some("tck-complete-task")),
        sdk_as(&card, "send", None, Some("tck-message-response")),
        sdk_as(&card, "send", None, Some("tck-artifact-data")),
    );
    assert_eq!(done[0]["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(
        done[0]["task"]["status"]["message"]["parts"][0]["text"],
        "Hello from TCK"
    );
    assert_eq!(direct[0]["message"]["role"], "ROLE_AGENT");
    assert_eq!(
        direct[0]["message"]["parts"][0]["text"],
        "Direct message response"
    );
    // (protobuf's Value holds numbers as doubles: the SDK prints 42.0.)
    let d = &data[0]["task"]["artifacts"][0]["parts"][0]["data"];
    assert_eq!(
        (d["key"].as_str(), d["count"].as_f64()),
        (Some("value"), Some(42.0)),
        "{d}"
    );
    let done_id = done[0]["task"]["id"].as_str().unwrap().to_string();

    let (chunked, lifecycle) = tokio::join!(
        sdk_as(&card, "stream", None, Some("tck-stream-artifact-chunked")),
        sdk_as(&card, "stream", None, Some("tck-stream-003")),
    );
    let summary = &chunked.last().unwrap()["artifacts"];
    let (_, art) = summary
        .as_object()
        .and_then(|o| o.iter().next())
        .expect("one artifact");
    assert_eq!(art["bytes"], "chunk-1 chunk-2".len(), "{summary}");
    assert_eq!(art["parts"], 2);
    let states: Vec<&Value> = lifecycle
        .iter()
        .filter_map(|l| l.pointer("/statusUpdate/status/state"))
        .collect();
    assert_eq!(
        states,
        [&json!("TASK_STATE_WORKING"), &json!("TASK_STATE_COMPLETED")]
    );

    // Two input-required tasks: the SDK cancels one and subscribes to the other.
    let (a, b) = tokio::join!(
        sdk_as(&card, "send", None, Some("tck-input-required")),
        sdk_as(&card, "send", None, Some("tck-input-required")),
    );
    let (cancel_id, sub_id) = (
        a[0]["task"]["id"].as_str().unwrap().to_string(),
        b[0]["task"]["id"].as_str().unwrap().to_string(),
    );
    assert_eq!(b[0]["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let subscriber = {
        let (card, sub_id) = (card.clone(), sub_id.clone());
        tokio::spawn(async move { sdk(&card, "subscribe", Some(&sub_id)).await })
    };
    let (got, listed, canceled) = tokio::join!(
        sdk(&card, "get", Some(&done_id)),
        sdk(&card, "list", None),
        sdk(&card, "cancel", Some(&cancel_id)),
    );
    assert_eq!(got[0]["status"]["state"], "TASK_STATE_COMPLETED");
    // complete, data, two streams, two input-required (the direct message made no task).
    assert_eq!(listed[0]["tasks"].as_array().unwrap().len(), 6);
    assert_eq!(canceled[0]["status"]["state"], "TASK_STATE_CANCELED");
    wait_for(j, "the SDK subscribed", |es| {
        es.iter().any(|e| {
            matches!(&e.event, Event::SseEvent { index: 0, data, .. }
                if data.pointer("/result/task/id") == Some(&json!(sub_id)))
        })
    })
    .await;
    let follow_up = json!({"message": {"messageId": "tck-complete-task-0000ffff",
        "role": "ROLE_USER", "taskId": sub_id, "parts": [{"text": "done"}]}});
    let r = call(&http, &url, "SendMessage", follow_up).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let subscribed = tokio::time::timeout(Duration::from_secs(60), subscriber)
        .await
        .expect("subscribe finished")
        .unwrap();
    let states: Vec<&Value> = subscribed
        .iter()
        .filter_map(|l| {
            l.pointer("/task/status/state")
                .or_else(|| l.pointer("/statusUpdate/status/state"))
        })
        .collect();
    assert_eq!(
        states,
        [
            &json!("TASK_STATE_INPUT_REQUIRED"),
            &json!("TASK_STATE_WORKING"),
            &json!("TASK_STATE_COMPLETED")
        ]
    );
    oracle_checks_every_payload(j, &http, &card).await;
    net.shutdown().await;
}

/// The SDK client over one transport against the reference agent: send, stream, get, cancel,
/// subscribe; every request it made is journaled with that binding.
async fn sdk_over_binding(transport: &'static str, binding: a2a_protocol::Binding) {
    let _ = python();
    let spec = NetworkSpec::load(&repo().join("mock-agents/examples/reference-agent.toml"))
        .expect("the reference agent loads");
    let net = Network::start(spec).await.expect("starts");
    let card = net.card_url("reference").unwrap();
    let url = net.rpc_url("reference").unwrap();
    let j = net.journal();
    let sdk = |scenario: &'static str, arg: Option<String>, prefix: Option<&'static str>| {
        let card = card.clone();
        async move { sdk_over(transport, &card, scenario, arg.as_deref(), prefix).await }
    };
    let (done, streamed) = tokio::join!(
        sdk("send", None, Some("tck-complete-task")),
        sdk("stream", None, Some("tck-stream-003")),
    );
    assert_eq!(done[0]["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let states: Vec<&Value> = streamed
        .iter()
        .filter_map(|l| l.pointer("/statusUpdate/status/state"))
        .collect();
    assert_eq!(
        states,
        [&json!("TASK_STATE_WORKING"), &json!("TASK_STATE_COMPLETED")],
        "{transport}"
    );
    let done_id = done[0]["task"]["id"].as_str().unwrap().to_string();
    let (a, b) = tokio::join!(
        sdk("send", None, Some("tck-input-required")),
        sdk("send", None, Some("tck-input-required")),
    );
    let (cancel_id, sub_id) = (
        a[0]["task"]["id"].as_str().unwrap().to_string(),
        b[0]["task"]["id"].as_str().unwrap().to_string(),
    );
    let subscriber = tokio::spawn(sdk("subscribe", Some(sub_id.clone()), None));
    let (got, canceled) = tokio::join!(
        sdk("get", Some(done_id), None),
        sdk("cancel", Some(cancel_id), None),
    );
    assert_eq!(got[0]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(canceled[0]["status"]["state"], "TASK_STATE_CANCELED");
    wait_for(j, "the SDK subscribed", |es| {
        es.iter().any(|e| {
            matches!(&e.event, Event::SseEvent { index: 0, data, .. }
                if data.pointer("/result/task/id") == Some(&json!(sub_id)))
        })
    })
    .await;
    let follow_up = json!({"message": {"messageId": "tck-complete-task-0000ffff",
        "role": "ROLE_USER", "taskId": sub_id, "parts": [{"text": "done"}]}});
    let r = call(&client(), &url, "SendMessage", follow_up).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let subscribed = tokio::time::timeout(Duration::from_secs(60), subscriber)
        .await
        .expect("subscribe finished")
        .unwrap();
    let last = subscribed.iter().rev().find_map(|l| {
        l.pointer("/task/status/state")
            .or_else(|| l.pointer("/statusUpdate/status/state"))
    });
    assert_eq!(last, Some(&json!("TASK_STATE_COMPLETED")), "{transport}");
    // Every A2A call but the JSON-RPC follow-up went over the binding.
    let methods: Vec<(String, a2a_protocol::Binding)> = j
        .requests()
        .into_iter()
        .map(|r| (r.method, r.binding))
        .collect();
    for m in [
        "SendMessage",
        "SendStreamingMessage",
        "GetTask",
        "CancelTask",
        "SubscribeToTask",
    ] {
        assert!(
            methods.iter().any(|(x, b)| x == m && *b == binding),
            "{m} over {binding}: {methods:?}"
        );
    }
    assert_eq!(
        methods
            .iter()
            .filter(|(_, b)| *b == a2a_protocol::Binding::JsonRpc)
            .count(),
        1
    );
    net.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_over_rest_against_the_reference_agent() {
    sdk_over_binding("rest", a2a_protocol::Binding::Rest).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_client_over_grpc_against_the_reference_agent() {
    sdk_over_binding("grpc", a2a_protocol::Binding::Grpc).await;
}
