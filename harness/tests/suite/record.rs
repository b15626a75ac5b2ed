//! The recording proxy (`a2a-harness record`, `a2a_harness_record::record`): the reference delegator
//! driven through it against mock networks (catalog cases over JSON-RPC, HTTP+JSON and gRPC)
//! gets the same result as a direct run, and the proxy's journal shows the same methods, states
//! and artifact bytes as the mock's own; streams pass through as they arrive; secrets never
//! reach disk; malformed upstreams are noted and the proxy keeps serving.

use crate::common;

use a2a_driver_contract::process::{DelegatorOutput, DelegatorProcess, init_message};
use a2a_driver_contract::{Delegate, InitOptions, ToDelegator};
use a2a_harness_record::record::{RecordOptions, Recorder, UpstreamSpec, interface_urls};
use a2a_mock_agents::{Entry, Event, MOCK_PEER_HEADER, Network, NetworkSpec};
use a2a_protocol::Binding;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Bound of every wait on the delegator or the network.
const WAIT: Duration = Duration::from_secs(60);

fn any_port() -> std::net::SocketAddr {
    std::net::SocketAddr::from(([127, 0, 0, 1], 0))
}

fn case(id: &str) -> a2a_harness_core::scenario::Scenario {
    a2a_harness_core::catalog::builtin_catalog()
        .expect("catalog")
        .into_iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("no case {id}"))
}

/// A recorder in front of every agent of `net`, writing under `out`.
async fn record(net: &Network, out: &Path) -> Recorder {
    let upstreams: Vec<UpstreamSpec> = net
        .names()
        .map(|n| UpstreamSpec {
            url: net.card_url(n).expect("card url"),
            listen: any_port(),
        })
        .collect();
    let mut opts = RecordOptions::new(out);
    opts.keep_in_memory = 100_000;
    Recorder::start(&upstreams, opts).await.expect("recorder")
}

/// Drive the reference delegator through `cards` with `delegations`; their `done` lines by id.
async fn drive(
    cards: &[String],
    store: &Path,
    delegations: &[Delegate],
) -> BTreeMap<String, Value> {
    let cmd = format!("{} drive", common::delegator().display());
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let mut p = DelegatorProcess::spawn(&cmd, stderr.clone()).expect("spawn delegator");
    let deadline = tokio::time::Instant::now() + WAIT;
    let options = InitOptions {
        seed: Some(1),
        poll_interval_ms: Some(50),
        retry_base_ms: Some(100),
        retry_cap_ms: Some(1000),
        deadline_margin_ms: Some(200),
        ..InitOptions::default()
    };
    let init = init_message(
        &store.display().to_string(),
        false,
        cards,
        Some("http://127.0.0.1:0"),
        "http://127.0.0.1:4100/",
        "Bearer delegator-own-token",
        options,
    );
    p.send(&init, deadline).await.expect("init");
    let mut done = BTreeMap::new();
    let mut inited = false;
    while done.len() < delegations.len() {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let line = p.recv(left).await;
        let v = match line {
            Some(DelegatorOutput::Message(v)) => v,
            Some(DelegatorOutput::Eof) | None => panic!(
                "delegator ended or timed out; stderr:\n{}",
                String::from_utf8_lossy(&stderr.lock().unwrap())
            ),
            Some(_) => continue,
        };
        match v["type"].as_str() {
            Some("init_ok") if !inited => {
                inited = true;
                for d in delegations {
                    p.send(&ToDelegator::Delegate(d.clone()), deadline)
                        .await
                        .expect("delegate");
                }
            }
            Some("done") => {
                done.insert(v["id"].as_str().unwrap_or_default().to_string(), v);
            }
            _ => {}
        }
    }
    p.finish(Duration::from_secs(10)).await;
    done
}

/// What a `done` says that must not depend on the path: state and artifacts' bytes.
fn outcome(done: &Value) -> Value {
    let arts: Vec<Value> = done["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| json!([a["artifact_id"], a["bytes"], a["sha256"], a["media_type"]]))
        .collect();
    json!({"state": done["state"], "artifacts": arts})
}

fn delegations_of(s: &a2a_harness_core::scenario::Scenario) -> Vec<Delegate> {
    s.delegations
        .iter()
        .map(|d| {
            let mut m = Delegate::new(&d.id, &d.capability, &d.text);
            m.artifact_spec.mime_types = d.mime_types.clone();
            m.artifact_spec.max_size_bytes = d.max_size_bytes;
            m.timeout_seconds = d.timeout_seconds;
            m
        })
        .collect()
}

/// The delegator's A2A calls, per agent, in order (the mock's own peer traffic left out).
fn methods(es: &[Entry]) -> Vec<(String, String)> {
    es.iter()
        .filter_map(|e| match &e.event {
            Event::Request {
                method: Some(m),
                headers,
                ..
            } if !headers.contains_key(MOCK_PEER_HEADER) => Some((e.agent.to_string(), m.clone())),
            _ => None,
        })
        .collect()
}

fn states(es: &[Entry]) -> Vec<(String, String, String)> {
    es.iter()
        .filter_map(|e| match &e.event {
            Event::TaskState { task_id, state } => {
                Some((e.agent.to_string(), task_id.clone(), state.clone()))
            }
            _ => None,
        })
        .collect()
}

fn artifacts(es: &[Entry]) -> Vec<(String, String, u64, String)> {
    es.iter()
        .filter_map(|e| match &e.event {
            Event::ArtifactSent {
                task_id,
                artifact_id,
                bytes,
                sha256,
                ..
            } => Some((task_id.clone(), artifact_id.clone(), *bytes, sha256.clone())),
            _ => None,
        })
        .collect()
}

fn read_journal(path: &Path) -> Vec<Entry> {
    std::fs::read_to_string(path)
        .expect("journal")
        .lines()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("journal line {}: {e}: {l}", i + 1))
        })
        .collect()
}

/// Run `s` directly and through the proxy (on a second network of the same seed): the same
/// outcome, and a recording that agrees with the mock's journal.
async fn direct_and_recorded(s: &a2a_harness_core::scenario::Scenario, binding: Binding) {
    let tmp = tempfile::tempdir().expect("tmp");
    let delegations = delegations_of(s);

    let direct_net = Network::start(s.network.clone()).await.expect("network");
    let cards: Vec<String> = direct_net
        .names()
        .filter_map(|n| direct_net.card_url(n))
        .collect();
    let direct = drive(&cards, &tmp.path().join("direct"), &delegations).await;
    direct_net.shutdown().await;

    let net = Network::start(s.network.clone()).await.expect("network");
    let rec = record(&net, &tmp.path().join("rec")).await;
    let cards: Vec<String> = rec.agents().iter().map(|a| a.card_url()).collect();
    let proxied = drive(&cards, &tmp.path().join("proxied"), &delegations).await;
    let journal_path = rec.journal().path().to_path_buf();
    rec.shutdown().await;

    for (id, d) in &direct {
        assert_eq!(
            outcome(d),
            outcome(&proxied[id]),
            "case {} delegation {id}",
            s.id
        );
    }
    assert!(
        direct
            .values()
            .any(|d| !d["artifacts"].as_array().is_none_or(Vec::is_empty)),
        "case {}: the comparison needs a committed artifact: {direct:?}",
        s.id
    );
    let mock = net.journal().entries();
    net.shutdown().await;
    let recorded = read_journal(&journal_path);
    assert_eq!(methods(&recorded), methods(&mock), "case {}: methods", s.id);
    assert_eq!(states(&recorded), states(&mock), "case {}: states", s.id);
    // The calls went over the binding under test, through the proxy.
    let bindings: Vec<Binding> = recorded
        .iter()
        .filter_map(|e| match &e.event {
            Event::Request {
                binding,
                method: Some(_),
                ..
            } => Some(*binding),
            _ => None,
        })
        .collect();
    assert!(
        !bindings.is_empty() && bindings.iter().all(|b| *b == binding),
        "case {}: bindings {bindings:?}",
        s.id
    );
    let arts = artifacts(&recorded);
    assert!(!arts.is_empty(), "case {}: no artifact recorded", s.id);
    assert_eq!(arts, artifacts(&mock), "case {}: artifact bytes", s.id);
    // Every entry is of the mock's format and no note was needed for well-formed traffic.
    let notes: Vec<&Entry> = recorded
        .iter()
        .filter(|e| matches!(e.event, Event::Note { .. }))
        .collect();
    assert!(notes.is_empty(), "case {}: notes {notes:?}", s.id);
}

/// Run `s` directly and through the proxy: the same outcome for every delegation; the
/// recording and the proxied network's own journal.
async fn same_outcome(s: &a2a_harness_core::scenario::Scenario) -> (Vec<Entry>, Vec<Entry>) {
    let tmp = tempfile::tempdir().expect("tmp");
    let delegations = delegations_of(s);
    let direct_net = Network::start(s.network.clone()).await.expect("network");
    let cards: Vec<String> = direct_net
        .names()
        .filter_map(|n| direct_net.card_url(n))
        .collect();
    let direct = drive(&cards, &tmp.path().join("direct"), &delegations).await;
    direct_net.shutdown().await;
    let net = Network::start(s.network.clone()).await.expect("network");
    let rec = record(&net, &tmp.path().join("rec")).await;
    let cards: Vec<String> = rec.agents().iter().map(|a| a.card_url()).collect();
    let proxied = drive(&cards, &tmp.path().join("proxied"), &delegations).await;
    let path = rec.journal().path().to_path_buf();
    rec.shutdown().await;
    let mock = net.journal().entries();
    net.shutdown().await;
    for (id, d) in &direct {
        assert_eq!(
            outcome(d),
            outcome(&proxied[id]),
            "case {} delegation {id}",
            s.id
        );
    }
    (read_journal(&path), mock)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_and_errors_reach_the_delegator_as_they_would_directly() {
    let dropped = |es: &[Entry], phase: &str| {
        es.iter()
            .any(|e| matches!(&e.event, Event::ConnectionDropped { phase: p, .. } if p == phase))
    };
    let (es, _) = same_outcome(&case("observation.stream-reset")).await;
    assert!(dropped(&es, "mid_event"));
    let (es, _) = same_outcome(&case("retries.connection-dropped")).await;
    assert!(dropped(&es, "before_response"));
    let (es, _) = same_outcome(&case("retries.429-retry-after")).await;
    assert!(
        es.iter().any(|e| matches!(
            e.event,
            Event::Response {
                status: 429,
                retry_after_s: Some(1),
                ..
            }
        )),
        "the recorder journals the 429 and its Retry-After"
    );
    let (es, _) = same_outcome(&case("hostile.invalid-json-event")).await;
    assert!(
        es.iter()
            .any(|e| matches!(&e.event, Event::Note { text, .. } if text.contains("is not JSON")))
    );
    let (es, _) = same_outcome(&case("errors.task-not-found")).await;
    assert!(es.iter().any(|e| matches!(
        e.event,
        Event::Response {
            rpc_error: Some(-32001),
            ..
        }
    )));
    // Polling: no stream, the artifact's truth comes from the final task.
    let (es, mock) = same_outcome(&case("artifacts.polling")).await;
    assert!(!artifacts(&es).is_empty());
    assert_eq!(artifacts(&es), artifacts(&mock));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jsonrpc_case_through_the_proxy_matches_a_direct_run_and_the_mock_journal() {
    direct_and_recorded(&case("artifacts.raw-bytes"), Binding::JsonRpc).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_json_and_grpc_cases_through_the_proxy_match_too() {
    for binding in [Binding::Rest, Binding::Grpc] {
        let mut s = case("artifacts.interleaved-chunks");
        s.network.default_bindings = Some(vec![binding]);
        direct_and_recorded(&s, binding).await;
    }
    direct_and_recorded(&case("bindings.grpc-only"), Binding::Grpc).await;
}

fn spec(toml: &str) -> NetworkSpec {
    NetworkSpec::from_toml("test.toml", toml).expect("network spec")
}

/// Read SSE `data:` payloads from a response until `until` holds for one, bounded.
async fn read_events_until(
    body: &mut (impl futures::Stream<Item = reqwest::Result<bytes::Bytes>> + Unpin),
    buf: &mut String,
    until: impl Fn(&str) -> bool,
) -> bool {
    use futures::StreamExt;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if buf.split("\n\n").any(&until) {
            return true;
        }
        match tokio::time::timeout_at(deadline, body.next()).await {
            Ok(Some(Ok(chunk))) => buf.push_str(&String::from_utf8_lossy(&chunk)),
            _ => return false,
        }
    }
}

fn stream_request(text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {
        "message": {"messageId": format!("m-{text}"), "role": "ROLE_USER", "parts": [{"text": text}]},
        "configuration": {"acceptedOutputModes": ["*/*"]}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_stream_reaches_the_client_event_by_event() {
    let net = Network::start(spec(
        r#"
[[agent]]
name = "slow"
[[agent.rule]]
steps = [
  { do = "state", state = "TASK_STATE_WORKING" },
  { do = "gate", gate = "release", timeout_ms = 30000 },
  { do = "state", state = "TASK_STATE_COMPLETED" },
]
"#,
    ))
    .await
    .expect("network");
    let tmp = tempfile::tempdir().expect("tmp");
    let rec = record(&net, tmp.path()).await;
    let url = format!("http://{}/a2a", rec.agents()[0].listen);
    let resp = reqwest::Client::new()
        .post(&url)
        .header("A2A-Version", "1.0")
        .json(&stream_request("go"))
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), 200);
    let mut body = Box::pin(resp.bytes_stream());
    let mut buf = String::new();
    // WORKING arrives while the agent is held at the gate: nothing waits for the stream's end.
    assert!(
        read_events_until(&mut body, &mut buf, |e| e.contains("TASK_STATE_WORKING")).await,
        "WORKING did not pass through before the stall ended: {buf}"
    );
    assert!(!buf.contains("TASK_STATE_COMPLETED"));
    assert!(
        rec.journal()
            .wait_for(WAIT, |es| es.iter().any(|e| matches!(&e.event,
                Event::TaskState { state, .. } if state == "TASK_STATE_WORKING")))
            .await
    );
    net.open_gate("release");
    assert!(
        read_events_until(&mut body, &mut buf, |e| e.contains("TASK_STATE_COMPLETED")).await,
        "{buf}"
    );
    assert!(
        rec.journal()
            .wait_for(WAIT, |es| es.iter().any(|e| matches!(&e.event,
                Event::StreamClosed { reason, .. } if reason == "terminal")))
            .await
    );
    rec.shutdown().await;
    net.shutdown().await;
}

/// A webhook receiver: every POST's headers and body.
async fn webhook() -> (
    String,
    tokio::sync::mpsc::Receiver<(hyper::HeaderMap, Vec<u8>)>,
) {
    use hyper_util::rt::TokioIo;
    let l = tokio::net::TcpListener::bind(any_port())
        .await
        .expect("bind");
    let addr = l.local_addr().expect("addr");
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        while let Ok((s, _)) = l.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(
                    move |req: hyper::Request<hyper::body::Incoming>| {
                        let tx = tx.clone();
                        async move {
                            use http_body_util_free::collect;
                            let (parts, body) = req.into_parts();
                            let b = collect(body).await;
                            let _ = tx.send((parts.headers, b)).await;
                            Ok::<_, std::convert::Infallible>(hyper::Response::new(String::new()))
                        }
                    },
                );
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(s), svc)
                    .await;
            });
        }
    });
    (format!("http://{addr}/hook/d1"), rx)
}

/// Collecting a body without another crate.
mod http_body_util_free {
    use hyper::body::Body;
    pub async fn collect(mut b: hyper::body::Incoming) -> Vec<u8> {
        let mut out = Vec::new();
        while let Some(Ok(f)) =
            std::future::poll_fn(|cx| std::pin::Pin::new(&mut b).poll_frame(cx)).await
        {
            if let Some(d) = f.data_ref() {
                out.extend_from_slice(d);
            }
        }
        out
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_reach_disk_and_push_notifications_are_relayed() {
    let net = Network::start(spec(
        r#"
[[agent]]
name = "pusher"
[[agent.rule]]
steps = [
  { do = "state", state = "TASK_STATE_WORKING" },
  { do = "artifacts", count = 1, chunks = 2, chunk_bytes = 6000 },
  { do = "state", state = "TASK_STATE_COMPLETED" },
]
"#,
    ))
    .await
    .expect("network");
    let tmp = tempfile::tempdir().expect("tmp");
    let upstreams = vec![UpstreamSpec {
        url: net.base_url("pusher").expect("url"),
        listen: any_port(),
    }];
    let mut opts = RecordOptions::new(tmp.path());
    opts.keep_in_memory = 10_000;
    opts.redact = vec!["/metadata/ssn".parse().expect("pointer")];
    // Artifact content is kept whole up to this bound; the 6,000-byte part is over it.
    opts.max_artifact_bytes = 5000;
    let rec = Recorder::start(&upstreams, opts).await.expect("recorder");
    let (hook, mut pushes) = webhook().await;
    let url = format!("http://{}/a2a", rec.agents()[0].listen);
    let send = json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {
        "message": {"messageId": "m-push", "role": "ROLE_USER", "parts": [{"text": "push it"}],
                    "metadata": {"ssn": "SECRET-SSN-5"}},
        "configuration": {"acceptedOutputModes": ["*/*"], "returnImmediately": true,
            "taskPushNotificationConfig": {"url": hook, "token": "SECRET-TOKEN-4"}}}});
    let resp = reqwest::Client::new()
        .post(&url)
        .header("A2A-Version", "1.0")
        .header("Authorization", "Bearer SECRET-BEARER-1")
        .header("Cookie", "session=SECRET-COOKIE-2")
        .header("X-API-Key", "SECRET-KEY-3")
        .json(&send)
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), 200);
    let answer: Value = resp.json().await.expect("answer");
    let task_id = answer
        .pointer("/result/task/id")
        .and_then(Value::as_str)
        .expect("a task")
        .to_string();
    // The notifications reach the delegator's own webhook, token intact, until COMPLETED.
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut completed = false;
    while !completed {
        let (headers, body) = tokio::time::timeout_at(deadline, pushes.recv())
            .await
            .expect("a push notification in time")
            .expect("webhook open");
        assert_eq!(
            headers
                .get("x-a2a-notification-token")
                .and_then(|v| v.to_str().ok()),
            Some("SECRET-TOKEN-4")
        );
        completed = String::from_utf8_lossy(&body).contains("TASK_STATE_COMPLETED");
    }
    // The mock was given the relay, not the delegator's URL.
    let mock_params = net.journal().requests()[0].params.clone();
    let given = mock_params
        .pointer("/configuration/taskPushNotificationConfig/url")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    assert!(
        given.contains(a2a_harness_record::record::PUSH_PREFIX),
        "{given}"
    );
    assert!(
        rec.journal()
            .wait_for(WAIT, |es| es.iter().any(|e| matches!(&e.event,
                Event::Push { url, status: Some(200), .. } if *url == hook)))
            .await,
        "{:?}",
        rec.journal().recent()
    );
    // The final task, read back: its 6000-byte parts are recorded summarised.
    let get = json!({"jsonrpc": "2.0", "id": 8, "method": "GetTask", "params": {"id": task_id}});
    let r = reqwest::Client::new()
        .post(&url)
        .header("A2A-Version", "1.0")
        .json(&get)
        .send()
        .await
        .expect("get");
    assert_eq!(r.status(), 200);
    let got: Value = r.json().await.expect("task");
    assert_eq!(
        got["result"]["artifacts"][0]["parts"][0]["text"]
            .as_str()
            .map(str::len),
        Some(6000)
    );
    rec.shutdown().await;
    net.shutdown().await;
    // Not one byte of any secret under --out; the redacted request is still recorded.
    let mut seen = 0;
    for e in std::fs::read_dir(tmp.path()).expect("out dir") {
        let bytes = std::fs::read(e.expect("entry").path()).expect("read");
        let text = String::from_utf8_lossy(&bytes);
        for secret in [
            "SECRET-BEARER-1",
            "SECRET-COOKIE-2",
            "SECRET-KEY-3",
            "SECRET-TOKEN-4",
            "SECRET-SSN-5",
            "SECRET",
        ] {
            assert!(!text.contains(secret), "{secret} written to disk");
        }
        seen += 1;
    }
    assert_eq!(seen, 1, "one journal file");
    let recorded = read_journal(&tmp.path().join(a2a_harness_record::record::JOURNAL_FILE));
    let req = recorded
        .iter()
        .find_map(|e| e.event.clone().into_request())
        .expect("the send is recorded");
    assert_eq!(req.0["authorization"], "Bearer <redacted>");
    assert_eq!(req.0["x-api-key"], "<redacted>");
    assert_eq!(
        req.1
            .pointer("/configuration/taskPushNotificationConfig/url"),
        Some(&json!(hook))
    );
    // Artifact parts over the inline limit and the artifact bound: length + sha256 + first
    // bytes.
    assert!(
        recorded.iter().any(|e| serde_json::to_string(e)
            .unwrap_or_default()
            .contains("<6000 bytes, sha256 ")),
        "no summarised part"
    );
}

/// Headers and params of a request entry.
trait IntoRequest {
    fn into_request(self) -> Option<(BTreeMap<String, String>, Value)>;
}

impl IntoRequest for Event {
    fn into_request(self) -> Option<(BTreeMap<String, String>, Value)> {
        match self {
            Event::Request {
                method: Some(_),
                headers,
                params,
                ..
            } => Some((*headers, *params)),
            _ => None,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_upstreams_are_noted_and_the_proxy_keeps_serving() {
    let net = Network::start(spec(
        r#"
[[agent]]
name = "garbage"
[[agent.rule]]
fault = { kind = "garbage_body", body = "<<not json>>" }
steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]

[[agent]]
name = "dropper"
[[agent.rule]]
fault = { kind = "drop_response" }
steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]

[[agent]]
name = "refuser"
bindings = ["grpc"]
[[agent.rule]]
fault = { kind = "rpc_error", code = -32001 }
steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]

[[agent]]
name = "resetter"
[[agent.rule]]
fault = { kind = "reset_after", events = 1 }
steps = [
  { do = "state", state = "TASK_STATE_WORKING" },
  { do = "state", state = "TASK_STATE_COMPLETED" },
]
"#,
    ))
    .await
    .expect("network");
    // An upstream that is down: a port nobody listens on any more.
    let closed = {
        let l = std::net::TcpListener::bind(any_port()).expect("bind");
        l.local_addr().expect("addr")
    };
    let tmp = tempfile::tempdir().expect("tmp");
    let mut upstreams: Vec<UpstreamSpec> = ["garbage", "resetter", "dropper", "refuser"]
        .iter()
        .map(|n| UpstreamSpec {
            url: net.base_url(n).expect("url"),
            listen: any_port(),
        })
        .collect();
    upstreams.push(UpstreamSpec {
        url: format!("http://{closed}"),
        listen: any_port(),
    });
    let mut opts = RecordOptions::new(tmp.path());
    opts.keep_in_memory = 10_000;
    let rec = Recorder::start(&upstreams, opts).await.expect("recorder");
    let [garbage, resetter, dropper, refuser, down] =
        [0, 1, 2, 3, 4].map(|i| rec.agents()[i].listen);
    let client = reqwest::Client::new();
    let note_about = |req_text: &'static str| {
        move |es: &[Entry]| {
            es.iter()
                .any(|e| matches!(&e.event, Event::Note { text, .. } if text.contains(req_text)))
        }
    };

    // A garbage body is forwarded as it came, and noted.
    let r = client
        .post(format!("http://{garbage}/a2a"))
        .header("A2A-Version", "1.0")
        .json(&stream_request("x").as_object().map(|o| {
            let mut o = o.clone();
            o.insert("method".into(), json!("SendMessage"));
            Value::Object(o)
        }))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.expect("body"), "<<not json>>");
    assert!(rec.journal().wait_for(WAIT, note_about("not JSON")).await);

    // A stream reset mid-event: the first event passes, then the client's stream fails too.
    let r = client
        .post(format!("http://{resetter}/a2a"))
        .header("A2A-Version", "1.0")
        .json(&stream_request("y"))
        .send()
        .await
        .expect("send");
    let mut body = Box::pin(r.bytes_stream());
    let mut buf = String::new();
    assert!(
        read_events_until(&mut body, &mut buf, |e| e.contains("TASK_STATE_SUBMITTED")
            || e.contains("TASK_STATE_WORKING"))
        .await
    );
    assert!(!read_events_until(&mut body, &mut buf, |e| e.contains("TASK_STATE_COMPLETED")).await);
    assert!(
        rec.journal()
            .wait_for(WAIT, note_about("upstream body failed"))
            .await
    );
    assert!(
        rec.journal()
            .wait_for(WAIT, |es| es.iter().any(|e| matches!(&e.event,
                Event::ConnectionDropped { phase, .. } if phase == "mid_event")))
            .await
    );

    // An upstream that is down: 502 and a note.
    let r = client
        .post(format!("http://{down}/a2a"))
        .json(&stream_request("z"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 502);
    assert!(
        rec.journal()
            .wait_for(WAIT, note_about("upstream unreachable"))
            .await
    );

    // Garbage from the delegator side is forwarded and noted too.
    let r = client
        .post(format!("http://{garbage}/a2a"))
        .header("content-type", "application/json")
        .body("{broken")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), 200);
    assert!(
        rec.journal()
            .wait_for(WAIT, note_about("request body is not JSON"))
            .await
    );

    // An upstream that drops the connection instead of answering: so does the proxy.
    let r = client
        .post(format!("http://{dropper}/a2a"))
        .header("A2A-Version", "1.0")
        .json(&stream_request("d").as_object().map(|o| {
            let mut o = o.clone();
            o.insert("method".into(), json!("SendMessage"));
            Value::Object(o)
        }))
        .send()
        .await;
    assert!(r.is_err(), "{r:?}");
    assert!(
        rec.journal()
            .wait_for(WAIT, |es| {
                es.iter().any(|e| {
                    matches!(&e.event,
                Event::ConnectionDropped { phase, .. } if phase == "before_response")
                })
            })
            .await
    );

    // A gRPC trailers-only error (no body at all) is recorded as the agent's answer.
    let msg = a2a_protocol::grpc::encode_from_json(
        a2a_protocol::grpc::Rpc::SendMessage.request_type(),
        &json!({"message": {"messageId": "g1", "role": "ROLE_USER", "parts": [{"text": "g"}]}}),
    )
    .expect("encode");
    let mut frame = vec![0u8];
    frame.extend_from_slice(&(msg.len() as u32).to_be_bytes());
    frame.extend_from_slice(&msg);
    let r = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .expect("h2")
        .post(format!(
            "http://{refuser}{}",
            a2a_protocol::grpc::Rpc::SendMessage.path()
        ))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("a2a-version", "1.0")
        .body(frame)
        .send()
        .await
        .expect("gRPC call");
    assert_eq!(
        r.headers().get("grpc-status").and_then(|v| v.to_str().ok()),
        Some("5")
    );
    assert!(
        rec.journal()
            .wait_for(WAIT, |es| es.iter().any(|e| matches!(
                &e.event,
                Event::Response {
                    grpc_status: Some(5),
                    rpc_error: Some(-32001),
                    ..
                }
            )))
            .await,
        "{:?}",
        rec.journal().recent()
    );

    // Every proxy still serves.
    for p in [garbage, resetter, dropper, refuser] {
        let card: Value = client
            .get(format!("http://{p}/.well-known/agent-card.json"))
            .send()
            .await
            .expect("card")
            .json()
            .await
            .expect("card json");
        let u = card["supportedInterfaces"][0]["url"]
            .as_str()
            .unwrap_or_default();
        // A gRPC interface's URL is the bare `host:port`.
        assert!(
            u.starts_with(&format!("http://{p}/")) || u == p.to_string(),
            "{u}"
        );
    }
    assert_eq!(
        client
            .get(format!("http://{down}/.well-known/agent-card.json"))
            .send()
            .await
            .expect("card")
            .status(),
        502
    );
    rec.shutdown().await;
    net.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_0_3_agent_through_the_proxy_matches_too() {
    direct_and_recorded(&case("compat.v03-agent"), Binding::JsonRpc).await;
}

/// One raw gRPC call (HTTP/2 prior knowledge) through `addr`; the answer as ProtoJSON.
async fn grpc_call(addr: &str, rpc: a2a_protocol::grpc::Rpc, params: Value) -> Value {
    let msg = a2a_protocol::grpc::encode_from_json(rpc.request_type(), &params).expect("encode");
    let mut body = vec![0u8];
    body.extend_from_slice(&(msg.len() as u32).to_be_bytes());
    body.extend_from_slice(&msg);
    let r = reqwest::Client::builder()
        .http2_prior_knowledge()
        .timeout(WAIT)
        .build()
        .expect("client")
        .post(format!("http://{addr}{}", rpc.path()))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("a2a-version", "1.0")
        .body(body)
        .send()
        .await
        .expect("gRPC call");
    assert_eq!(r.status(), 200);
    let bytes = r.bytes().await.expect("body");
    assert!(
        bytes.len() >= 5,
        "{rpc:?}: no message (grpc-status in trailers)"
    );
    let t = rpc.response_type().expect("a response type");
    a2a_protocol::grpc::decode_to_json(t, &bytes[5..]).expect("decode")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_push_configs_and_the_extended_card_are_rewritten_for_the_delegator() {
    use a2a_protocol::grpc::Rpc;
    let net = Network::start(spec(
        r#"
[[agent]]
name = "a"
bindings = ["grpc"]
[[agent.skill]]
id = "work"
[[agent.extended_skill]]
id = "secret-skill"
[[agent.rule]]
steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
"#,
    ))
    .await
    .expect("network");
    let tmp = tempfile::tempdir().expect("tmp");
    let rec = record(&net, tmp.path()).await;
    let proxy = rec.agents()[0].listen.to_string();
    let hook = "http://127.0.0.1:9/hook/d1";
    let sent = grpc_call(
        &proxy,
        Rpc::SendMessage,
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "go"}]}}),
    )
    .await;
    let tid = sent
        .pointer("/task/id")
        .and_then(Value::as_str)
        .expect("task")
        .to_string();
    let created = grpc_call(
        &proxy,
        Rpc::CreateTaskPushNotificationConfig,
        json!({"taskId": tid, "id": "c1", "url": hook, "token": "SECRET-GRPC-TOKEN"}),
    )
    .await;
    assert_eq!(created["url"], hook);
    let got = grpc_call(
        &proxy,
        Rpc::GetTaskPushNotificationConfig,
        json!({"taskId": tid, "id": "c1"}),
    )
    .await;
    assert_eq!(got["url"], hook);
    let listed = grpc_call(
        &proxy,
        Rpc::ListTaskPushNotificationConfigs,
        json!({"taskId": tid}),
    )
    .await;
    assert_eq!(listed["configs"][0]["url"], hook);
    // The agent holds the relay.
    let at_agent = net
        .journal()
        .requests()
        .into_iter()
        .find(|r| r.method == "CreateTaskPushNotificationConfig")
        .expect("create reached the agent");
    assert!(
        at_agent.params["url"]
            .as_str()
            .is_some_and(|u| u.starts_with(&format!(
                "http://{proxy}{}",
                a2a_harness_record::record::PUSH_PREFIX
            ))),
        "{:?}",
        at_agent.params
    );
    let card = grpc_call(&proxy, Rpc::GetExtendedAgentCard, json!({})).await;
    assert_eq!(card["supportedInterfaces"][0]["url"], json!(proxy));
    assert!(card.to_string().contains("secret-skill"));
    let path = rec.journal().path().to_path_buf();
    rec.shutdown().await;
    net.shutdown().await;
    let text = std::fs::read_to_string(&path).expect("journal");
    assert!(!text.contains("SECRET-GRPC-TOKEN"));
    let recorded = read_journal(&path);
    let create = recorded
        .iter()
        .find_map(|e| match &e.event {
            Event::Request {
                method: Some(m),
                params,
                binding: Binding::Grpc,
                ..
            } if m == "CreateTaskPushNotificationConfig" => Some(params.clone()),
            _ => None,
        })
        .expect("create recorded");
    assert_eq!(create["url"], hook);
    assert_eq!(create["token"], "<redacted>");
    assert!(
        !recorded
            .iter()
            .any(|e| matches!(e.event, Event::Note { .. })),
        "{recorded:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_record_command_prints_its_card_urls_and_stops_on_sigterm() {
    use tokio::io::AsyncBufReadExt;
    let net = Network::start(spec("[[agent]]\nname = \"cli-agent\"\n"))
        .await
        .expect("network");
    let tmp = tempfile::tempdir().expect("tmp");
    let mut child = tokio::process::Command::new(common::harness())
        .args(["record", "--upstream"])
        .arg(net.base_url("cli-agent").expect("url"))
        .arg("--out")
        .arg(tmp.path())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().expect("stdout")).lines();
    let first = tokio::time::timeout(WAIT, lines.next_line())
        .await
        .expect("a line in time")
        .expect("read")
        .expect("a first line");
    let fields: Vec<&str> = first.split('\t').collect();
    assert_eq!(fields[0], "cli-agent", "{first}");
    let card: Value = reqwest::get(fields[1])
        .await
        .expect("card")
        .json()
        .await
        .expect("json");
    assert_eq!(card["name"], "cli-agent");
    let pid = nix::unistd::Pid::from_raw(child.id().expect("pid") as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = tokio::time::timeout(WAIT, child.wait())
        .await
        .expect("exit in time")
        .expect("wait");
    assert!(status.success(), "{status:?}");
    let mut rest = Vec::new();
    while let Ok(Some(l)) = lines.next_line().await {
        rest.push(l);
    }
    assert!(
        rest.last().is_some_and(|l| l.starts_with("2 entries in ")),
        "{rest:?}"
    );
    let recorded = read_journal(&tmp.path().join(a2a_harness_record::record::JOURNAL_FILE));
    assert!(
        matches!(&recorded[0].event, Event::Request { path, .. } if path == "/.well-known/agent-card.json")
    );
    net.shutdown().await;
}

#[test]
fn bad_record_arguments_are_usage_errors_naming_the_value() {
    for (args, says) in [
        (
            vec!["--upstream", "https://127.0.0.1:1"],
            "--upstream \"https://127.0.0.1:1\"",
        ),
        (
            vec!["--upstream", "http://127.0.0.1:1/a2a"],
            "give the upstream's origin",
        ),
        (
            vec![
                "--upstream",
                "http://127.0.0.1:1",
                "--listen",
                "127.0.0.1:0",
                "--listen",
                "127.0.0.1:0",
            ],
            "2 --listen addresses for 1 --upstream",
        ),
        (
            vec!["--upstream", "http://127.0.0.1:1", "--redact", "ssn"],
            "--redact",
        ),
    ] {
        let tmp = tempfile::tempdir().expect("tmp");
        let out = std::process::Command::new(common::harness())
            .arg("record")
            .args(&args)
            .arg("--out")
            .arg(tmp.path())
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// GET `url`, its body as JSON.
async fn get_json(url: &str) -> Value {
    reqwest::get(url)
        .await
        .expect("GET")
        .json()
        .await
        .expect("a JSON body")
}

/// A card origin that serves only `card` (for any request, one per connection), in the
/// background; its `host:port`.
async fn card_only_origin(card: Value) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let l = tokio::net::TcpListener::bind(any_port())
        .await
        .expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    let body = card.to_string();
    tokio::spawn(async move {
        // Bounded: the test fetches the card a few times at most.
        for _ in 0..16 {
            let Ok((mut s, _)) = l.accept().await else {
                return;
            };
            let mut buf = [0u8; 4096];
            let _ = tokio::time::timeout(WAIT, s.read(&mut buf)).await;
            let answer = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(answer.as_bytes()).await;
        }
    });
    addr
}

/// Issue 26, item 4: a card whose interfaces span several origins (here the card at one origin,
/// the JSON-RPC interface at another, as the official SDKs serve gRPC on a port of its own) gets
/// one listen address per origin; the card served points at them, and a call to the other
/// origin is forwarded and journaled under the agent's one name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_origin_of_a_card_gets_a_listen_address_and_is_journaled_under_the_agent() {
    let net = Network::start(spec("[[agent]]\nname = \"worker\"\n"))
        .await
        .expect("network");
    let mut card = get_json(&net.card_url("worker").expect("card url")).await;
    card["name"] = json!("split");
    let card_origin = card_only_origin(card).await;
    let worker_origin = net
        .base_url("worker")
        .expect("url")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    assert_ne!(card_origin, worker_origin);

    let tmp = tempfile::tempdir().expect("tmp");
    let mut opts = RecordOptions::new(tmp.path());
    opts.keep_in_memory = 1000;
    let upstream = UpstreamSpec {
        url: format!("http://{card_origin}"),
        listen: any_port(),
    };
    let rec = Recorder::start(&[upstream], opts).await.expect("recorder");
    let agent = rec.agents()[0].clone();
    assert_eq!(agent.name, "split");
    assert_eq!(agent.origins.len(), 1, "{agent:?}");
    let (origin, listen) = &agent.origins[0];
    assert_eq!(origin, &worker_origin);
    assert_ne!(listen, &agent.listen);

    // The card as served: every interface at the worker's origin now at its listen address.
    let served = get_json(&agent.card_url()).await;
    let urls = interface_urls(&served);
    assert!(
        !urls.is_empty() && urls.iter().all(|u| u.contains(&listen.to_string())),
        "{urls:?}"
    );
    let jsonrpc = served["supportedInterfaces"]
        .as_array()
        .expect("interfaces")
        .iter()
        .find(|i| i["protocolBinding"] == "JSONRPC")
        .and_then(|i| i["url"].as_str())
        .expect("a JSON-RPC interface")
        .to_string();
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m-split", "role": "ROLE_USER", "parts": [{"text": "work"}]}}});
    let answer: Value = reqwest::Client::new()
        .post(&jsonrpc)
        .header("A2A-Version", "1.0")
        .json(&send)
        .send()
        .await
        .expect("send through the second listen address")
        .json()
        .await
        .expect("json");
    assert!(answer.get("result").is_some(), "{answer}");
    let journaled = rec
        .journal()
        .wait_for(WAIT, |es| {
            es.iter().any(|e| {
                e.agent.as_str() == "split"
                    && matches!(&e.event, Event::Request { method: Some(m), .. } if m == "SendMessage")
            }) && es
                .iter()
                .any(|e| matches!(&e.event, Event::TaskCreated { .. }))
        })
        .await;
    assert!(
        journaled,
        "the send to the other origin is journaled under the agent"
    );
    rec.shutdown().await;
    net.shutdown().await;
}

/// An interface at another `--upstream`'s origin points at that upstream's proxy (and is
/// journaled under that agent), not at a listen address of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interface_at_another_upstreams_origin_points_at_its_proxy() {
    let net = Network::start(spec("[[agent]]\nname = \"worker\"\n"))
        .await
        .expect("network");
    let mut card = get_json(&net.card_url("worker").expect("card url")).await;
    card["name"] = json!("front");
    let card_origin = card_only_origin(card).await;
    let tmp = tempfile::tempdir().expect("tmp");
    let upstreams = [
        UpstreamSpec {
            url: format!("http://{card_origin}"),
            listen: any_port(),
        },
        UpstreamSpec {
            url: net.base_url("worker").expect("url"),
            listen: any_port(),
        },
    ];
    let rec = Recorder::start(&upstreams, RecordOptions::new(tmp.path()))
        .await
        .expect("recorder");
    let (front, worker) = (rec.agents()[0].clone(), rec.agents()[1].clone());
    assert!(front.origins.is_empty(), "{front:?}");
    let served = get_json(&front.card_url()).await;
    let urls = interface_urls(&served);
    assert!(
        !urls.is_empty() && urls.iter().all(|u| u.contains(&worker.listen.to_string())),
        "{urls:?} should point at {}",
        worker.listen
    );
    rec.shutdown().await;
    net.shutdown().await;
}
