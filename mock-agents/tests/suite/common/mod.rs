//! Shared helpers for the mock-agent integration tests: a real HTTP client (reqwest, no proxy),
//! JSON-RPC and SSE calls, artifact reassembly and journal queries. Every wait is bounded.
#![allow(dead_code)]

use a2a_mock_agents::{AgentSpec, Entry, Event, Journal, MockAgent, Network, NetworkSpec};
use a2a_protocol::sse::{SseDecoder, SseError};
use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bound for any single wait in a test.
pub const WAIT: Duration = Duration::from_secs(10);

/// Start a network from TOML text.
pub async fn start(toml: &str) -> Network {
    let spec = NetworkSpec::from_toml("test.toml", toml).expect("valid test script");
    Network::start(spec).await.expect("network starts")
}

/// An HTTP client that never uses a proxy and bounds every request.
pub fn client() -> reqwest::Client {
    client_with_timeout(Duration::from_secs(20))
}

/// [`client`] with another bound.
pub fn client_with_timeout(t: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(t)
        .build()
        .expect("client")
}

/// Send `text` to `url` with a client that gives up after `ms`; the error it gets.
pub async fn send_impatiently(url: &str, text: &str, ms: u64) -> reqwest::Error {
    let impatient = client_with_timeout(Duration::from_millis(ms));
    post(
        &impatient,
        url,
        &envelope("SendMessage", send_params(text)),
        &[],
    )
    .await
    .expect_err("no answer in time")
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A fresh message id.
pub fn mid() -> String {
    format!("m-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed))
}

/// `SendMessageRequest` params with one text part.
pub fn send_params(text: &str) -> Value {
    json!({"message": {"messageId": mid(), "role": "ROLE_USER", "parts": [{"text": text}]}})
}

/// `SendMessageRequest` params continuing a task.
pub fn answer_params(task_id: &str, text: &str) -> Value {
    json!({"message": {"messageId": mid(), "role": "ROLE_USER", "taskId": task_id,
                       "parts": [{"text": text}]}})
}

/// A JSON-RPC request body.
pub fn envelope(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": format!("r-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed)),
           "method": method, "params": params})
}

/// POST a JSON-RPC body with `A2A-Version: 1.0` plus extra headers; the raw response.
pub async fn post(
    http: &reqwest::Client,
    url: &str,
    body: &Value,
    headers: &[(&str, &str)],
) -> reqwest::Result<reqwest::Response> {
    let mut rb = http
        .post(url)
        .header("A2A-Version", "1.0")
        .header("Content-Type", "application/json")
        .body(serde_json::to_vec(body).expect("json"));
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    rb.send().await
}

/// Call a unary method and return the whole JSON-RPC response.
pub async fn rpc(http: &reqwest::Client, url: &str, method: &str, params: Value) -> Value {
    rpc_h(http, url, method, params, &[]).await
}

/// [`rpc`] with extra headers.
pub async fn rpc_h(
    http: &reqwest::Client,
    url: &str,
    method: &str,
    params: Value,
    headers: &[(&str, &str)],
) -> Value {
    let r = post(http, url, &envelope(method, params), headers)
        .await
        .expect("request");
    assert_eq!(r.status(), 200, "HTTP status of {method}");
    r.json().await.expect("JSON body")
}

/// The `result` of a successful call (panics with the error otherwise).
pub async fn call(http: &reqwest::Client, url: &str, method: &str, params: Value) -> Value {
    let v = rpc(http, url, method, params).await;
    match v.get("result") {
        Some(r) => r.clone(),
        None => panic!("{method} failed: {v}"),
    }
}

/// [`call`] with a given JSON-RPC id.
pub async fn call_with_id(
    http: &reqwest::Client,
    url: &str,
    id: &str,
    method: &str,
    params: Value,
) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let v: Value = post(http, url, &body, &[])
        .await
        .expect("request")
        .json()
        .await
        .expect("JSON body");
    match v.get("result") {
        Some(r) => r.clone(),
        None => panic!("{method} failed: {v}"),
    }
}

/// The JSON-RPC error code of a response.
pub fn code(v: &Value) -> Option<i64> {
    v.pointer("/error/code").and_then(Value::as_i64)
}

/// What a stream delivered.
#[derive(Debug, Default)]
pub struct Stream {
    /// The `Content-Type` of the response.
    pub content_type: String,
    /// Every decoded event's parsed data (`Value::String` when the data is not JSON).
    pub events: Vec<Value>,
    /// The raw data of every event.
    pub raw: Vec<String>,
    /// A transport error while reading the body (reset, ...).
    pub transport_error: Option<String>,
    /// An SSE decoding error (event too large, ...).
    pub sse_error: Option<SseError>,
    /// The body ended inside an event.
    pub ended_mid_event: bool,
    /// Body chunks received.
    pub chunks: usize,
}

impl Stream {
    /// The `result` of every JSON event.
    pub fn results(&self) -> Vec<Value> {
        self.events
            .iter()
            .filter_map(|e| e.get("result").cloned())
            .collect()
    }

    /// The states reported by task and status-update events, in order.
    pub fn states(&self) -> Vec<String> {
        self.results()
            .iter()
            .filter_map(|r| {
                r.pointer("/task/status/state")
                    .or_else(|| r.pointer("/statusUpdate/status/state"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect()
    }
}

/// Read a response body as SSE with `a2a_protocol::sse::SseDecoder`.
pub async fn read_sse(mut r: reqwest::Response, max_event_bytes: usize) -> Stream {
    let mut s = Stream {
        content_type: r
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string(),
        ..Default::default()
    };
    let mut dec = SseDecoder::new(max_event_bytes);
    let mut out = Vec::new();
    loop {
        match tokio::time::timeout(WAIT, r.chunk()).await {
            Err(_) => panic!("stream stalled for {WAIT:?}"),
            Ok(Ok(Some(bytes))) => {
                s.chunks += 1;
                if let Err(e) = dec.feed(&bytes, &mut out) {
                    s.sse_error = Some(e);
                    break;
                }
            }
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                s.transport_error = Some(format!("{e:?}"));
                break;
            }
        }
    }
    if s.sse_error.is_none() {
        s.ended_mid_event = dec.finish().unwrap_or(true);
    }
    for e in out {
        s.events
            .push(serde_json::from_str(&e.data).unwrap_or(Value::String(e.data.clone())));
        s.raw.push(e.data);
    }
    s
}

/// Call a streaming method and read the whole stream.
pub async fn stream(http: &reqwest::Client, url: &str, method: &str, params: Value) -> Stream {
    stream_h(http, url, method, params, &[]).await
}

/// [`stream`] with extra headers.
pub async fn stream_h(
    http: &reqwest::Client,
    url: &str,
    method: &str,
    params: Value,
    headers: &[(&str, &str)],
) -> Stream {
    let mut h = vec![("Accept", "text/event-stream")];
    h.extend_from_slice(headers);
    let r = post(http, url, &envelope(method, params), &h)
        .await
        .expect("request");
    assert_eq!(r.status(), 200);
    read_sse(r, SseDecoder::DEFAULT_MAX_EVENT_BYTES).await
}

/// The bytes a part contributes: UTF-8 text or decoded raw.
pub fn part_bytes(p: &Value) -> Vec<u8> {
    if let Some(t) = p.get("text").and_then(Value::as_str) {
        return t.as_bytes().to_vec();
    }
    if let Some(r) = p.get("raw").and_then(Value::as_str) {
        return base64::engine::general_purpose::STANDARD
            .decode(r)
            .expect("base64");
    }
    if let Some(d) = p.get("data") {
        return serde_json::to_vec(d).expect("json");
    }
    Vec::new()
}

/// Reassemble artifacts from stream results (`append` adds parts, otherwise replace).
pub fn reassemble(results: &[Value]) -> BTreeMap<String, Vec<u8>> {
    let mut arts: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for r in results {
        if let Some(u) = r.get("artifactUpdate") {
            let id = u
                .pointer("/artifact/artifactId")
                .and_then(Value::as_str)
                .expect("artifactId")
                .to_string();
            let mut bytes = Vec::new();
            for p in u
                .pointer("/artifact/parts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                bytes.extend(part_bytes(p));
            }
            if u.get("append").and_then(Value::as_bool) == Some(true) {
                arts.entry(id).or_default().extend(bytes);
            } else {
                arts.insert(id, bytes);
            }
        }
    }
    arts
}

/// Hex sha256.
pub fn sha256(b: &[u8]) -> String {
    Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// Wait until the journal satisfies `cond` (bounded by [`WAIT`]).
pub async fn wait_for(j: &Journal, what: &str, cond: impl FnMut(&[Entry]) -> bool) {
    if j.wait_for(WAIT, cond).await.is_err() {
        let dump: Vec<String> = j
            .entries()
            .iter()
            .map(|e| serde_json::to_string(e).unwrap_or_default())
            .collect();
        panic!(
            "timed out waiting for {what}; journal:\n{}",
            dump.join("\n")
        );
    }
}

/// Wait until a task reaches a state.
pub async fn wait_state(j: &Journal, task_id: &str, state: &str) {
    wait_for(j, &format!("{task_id} in {state}"), |es| {
        es.iter().any(|e| {
            matches!(&e.event, Event::TaskState { task_id: t, state: s } if t == task_id && s == state)
        })
    })
    .await;
}

/// The states a task went through, from the journal.
pub fn task_states(j: &Journal, task_id: &str) -> Vec<String> {
    j.entries()
        .iter()
        .filter_map(|e| match &e.event {
            Event::TaskState { task_id: t, state } if t == task_id => Some(state.clone()),
            _ => None,
        })
        .collect()
}

/// The request numbers of JSON-RPC requests with this method, in order.
pub fn reqs_of(j: &Journal, method: &str) -> Vec<u64> {
    j.requests()
        .into_iter()
        .filter(|r| r.method == method)
        .map(|r| r.req)
        .collect()
}

/// Every event tied to a request number.
pub fn events_of(j: &Journal, req: u64) -> Vec<Event> {
    j.entries()
        .into_iter()
        .filter(|e| e.event.req() == Some(req))
        .map(|e| e.event)
        .collect()
}

/// The journaled response of a request, if one was sent.
pub fn response_of(j: &Journal, req: u64) -> Option<(u16, Option<i64>, Value)> {
    events_of(j, req).into_iter().find_map(|e| match e {
        Event::Response {
            status,
            rpc_error,
            body,
            ..
        } => Some((status, rpc_error, body)),
        _ => None,
    })
}

/// `ArtifactSent` truth by (task, artifact).
pub fn artifacts_sent(j: &Journal) -> BTreeMap<(String, String), (u64, String)> {
    j.entries()
        .iter()
        .filter_map(|e| match &e.event {
            Event::ArtifactSent {
                task_id,
                artifact_id,
                bytes,
                sha256,
                ..
            } => Some((
                (task_id.clone(), artifact_id.clone()),
                (*bytes, sha256.clone()),
            )),
            _ => None,
        })
        .collect()
}

/// Tasks created (not deduplicated) in order: (task, message id).
pub fn tasks_created(j: &Journal) -> Vec<(String, String, bool)> {
    j.entries()
        .iter()
        .filter_map(|e| match &e.event {
            Event::TaskCreated {
                task_id,
                message_id,
                dedup,
                ..
            } => Some((task_id.clone(), message_id.clone(), *dedup)),
            _ => None,
        })
        .collect()
}

/// Every deviation from A2A 1.0 in what the network sent (unary responses and stream events),
/// checked with `a2a_protocol::conformance` by each request's method.
pub fn deviations(j: &Journal) -> Vec<String> {
    use a2a_protocol::conformance::{conformance_response, result_type};
    let entries = j.entries();
    let mut methods = BTreeMap::new();
    let mut out = Vec::new();
    for e in &entries {
        match &e.event {
            Event::Request {
                req,
                method: Some(m),
                ..
            } => {
                methods.insert(*req, m.clone());
            }
            Event::Response { req, body, .. } if body.is_object() => {
                let t = methods.get(req).and_then(|m| result_type(m));
                for d in conformance_response(t, body) {
                    out.push(format!("req {req} response: {d}"));
                }
            }
            Event::SseEvent { req, data, .. } if data.is_object() => {
                let t = methods.get(req).and_then(|m| result_type(m));
                for d in conformance_response(t, data) {
                    out.push(format!("req {req} event: {d}"));
                }
            }
            _ => {}
        }
    }
    out
}

/// The first task created on `agent` by a message with this text, from the journal.
pub fn x_deleg_of_request(e: &Entry) -> Option<Value> {
    match &e.event {
        Event::Request { params, .. } => params.pointer("/metadata/x-deleg").cloned(),
        _ => None,
    }
}

/// Start a network built in Rust (the builder).
pub async fn start_spec(spec: NetworkSpec) -> Network {
    spec.validate().expect("valid test spec");
    Network::start(spec).await.expect("network starts")
}

/// The opening of most tests: a started network, one agent's JSON-RPC URL and a client.
pub struct Fixture {
    /// The network.
    pub net: Network,
    /// The JSON-RPC URL of the agent under test.
    pub url: String,
    /// A client.
    pub http: reqwest::Client,
}

impl Fixture {
    /// A network from TOML text; `agent` is the agent under test.
    pub async fn toml(toml: &str, agent: &str) -> Fixture {
        Self::with(start(toml).await, agent)
    }

    /// A network of builder-made agents (seed 1); the first is the agent under test.
    pub async fn agents(agents: Vec<AgentSpec>) -> Fixture {
        let name = agents.first().map(|a| a.name.clone()).expect("an agent");
        Self::with(start_spec(MockAgent::network(1, agents)).await, &name)
    }

    fn with(net: Network, agent: &str) -> Fixture {
        let url = net.rpc_url(agent).expect("agent exists");
        Fixture {
            net,
            url,
            http: client(),
        }
    }

    /// The journal.
    pub fn j(&self) -> &Journal {
        self.net.journal()
    }

    /// [`call`] on the agent under test.
    pub async fn call(&self, method: &str, params: Value) -> Value {
        call(&self.http, &self.url, method, params).await
    }

    /// [`rpc`] on the agent under test.
    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        rpc(&self.http, &self.url, method, params).await
    }

    /// [`stream`] on the agent under test.
    pub async fn stream(&self, method: &str, params: Value) -> Stream {
        stream(&self.http, &self.url, method, params).await
    }

    /// POST a JSON-RPC request to the agent under test; the raw response or transport error.
    pub async fn post(&self, method: &str, params: Value) -> reqwest::Result<reqwest::Response> {
        post(&self.http, &self.url, &envelope(method, params), &[]).await
    }

    /// Stop the network (expectations are verified on the way).
    pub async fn shutdown(self) {
        self.net.shutdown().await;
    }
}

/// Requests whose JSON-RPC params carry this message text.
pub fn reqs_with_text(j: &Journal, text: &str) -> Vec<u64> {
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

/// Did the journal record a fault of this kind for this request?
pub fn has_fault(j: &Journal, req: u64, kind: &str) -> bool {
    events_of(j, req)
        .iter()
        .any(|e| matches!(e, Event::Fault { kind: k, .. } if k == kind))
}

/// Did the journal record this request's connection dropped in this phase?
pub fn dropped_in(j: &Journal, req: u64, phase: &str) -> bool {
    events_of(j, req)
        .iter()
        .any(|e| matches!(e, Event::ConnectionDropped { phase: p, .. } if p == phase))
}

/// The outcomes of the continuations of a task.
pub fn continued(j: &Journal, tid: &str) -> Vec<String> {
    j.entries()
        .iter()
        .filter_map(|e| match &e.event {
            Event::Continued {
                task_id, outcome, ..
            } if task_id == tid => Some(outcome.clone()),
            _ => None,
        })
        .collect()
}

/// Every `x-deleg` limit rejection: (agent, reason).
pub fn limit_rejections(j: &Journal) -> Vec<(String, String)> {
    j.entries()
        .iter()
        .filter_map(|e| match &e.event {
            Event::LimitRejected { reason, .. } => Some((e.agent.to_string(), reason.clone())),
            _ => None,
        })
        .collect()
}

/// The task id of a stream's first (snapshot) event.
pub fn task_id_of(s: &Stream) -> String {
    s.results()[0]["task"]["id"]
        .as_str()
        .expect("a task snapshot first")
        .to_string()
}

/// When (journal microseconds) a task reached a state.
pub fn state_at(j: &Journal, tid: &str, state: &str) -> u64 {
    j.entries()
        .iter()
        .find(|e| matches!(&e.event, Event::TaskState { task_id, state: s } if task_id == tid && s == state))
        .map(|e| e.at_us)
        .unwrap_or_else(|| panic!("task {tid} never reached {state}"))
}

/// An HTTP+JSON request for `method` with JSON-RPC-shaped `params`, built by the protocol
/// crate's [`a2a_protocol::rest::RestRequest`] against the base `url` (`…/rest`).
pub fn rest_request(
    http: &reqwest::Client,
    url: &str,
    method: a2a_protocol::Method,
    params: &Value,
) -> reqwest::RequestBuilder {
    let req = a2a_protocol::rest::RestRequest::new(method, params).expect("routable params");
    let full = a2a_protocol::rest::join_url(url, &req.path_and_query());
    let m = reqwest::Method::from_bytes(req.http_method.as_str().as_bytes()).expect("method");
    let mut rb = http.request(m, full).header("A2A-Version", "1.0");
    if let Some(b) = req.body {
        rb = rb
            .header("Content-Type", a2a_protocol::rest::REST_CONTENT_TYPE)
            .body(serde_json::to_vec(&b).expect("json"));
    }
    rb
}

/// Call an HTTP+JSON operation: its HTTP status and JSON body (`Value::Null` if not JSON).
pub async fn rest(
    http: &reqwest::Client,
    url: &str,
    method: a2a_protocol::Method,
    params: Value,
) -> (u16, Value) {
    let r = rest_request(http, url, method, &params)
        .send()
        .await
        .expect("request");
    let status = r.status().as_u16();
    let bytes = r.bytes().await.expect("body");
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

/// The body of a successful HTTP+JSON call (panics with the error otherwise).
pub async fn rest_ok(
    http: &reqwest::Client,
    url: &str,
    method: a2a_protocol::Method,
    params: Value,
) -> Value {
    let (status, body) = rest(http, url, method, params).await;
    assert_eq!(status, 200, "{method:?} failed: {body}");
    body
}

/// Call a streaming HTTP+JSON operation and read the whole stream (events are bare
/// `StreamResponse`s; [`Stream::payloads`] reads them like JSON-RPC results).
pub async fn rest_stream(
    http: &reqwest::Client,
    url: &str,
    method: a2a_protocol::Method,
    params: Value,
) -> Stream {
    let r = rest_request(http, url, method, &params)
        .header("Accept", "text/event-stream")
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 200);
    read_sse(r, SseDecoder::DEFAULT_MAX_EVENT_BYTES).await
}

impl Stream {
    /// Every event's `StreamResponse`: the JSON-RPC `result`, or the bare event (HTTP+JSON).
    pub fn payloads(&self) -> Vec<Value> {
        self.events
            .iter()
            .map(|e| e.get("result").cloned().unwrap_or_else(|| e.clone()))
            .collect()
    }
}

/// The `ErrorInfo.reason` of an HTTP+JSON error body.
pub fn rest_reason(body: &Value) -> Option<String> {
    body.pointer("/error/details")?
        .as_array()?
        .iter()
        .find_map(|d| d.get("reason").and_then(Value::as_str))
        .map(str::to_string)
}

/// A tonic client of the generated `A2aServiceClient` for a gRPC address (`127.0.0.1:PORT`).
pub async fn grpc_client(
    addr: &str,
) -> a2a_protocol::grpc::pb::a2a_service_client::A2aServiceClient<tonic::transport::Channel> {
    let channel = tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("endpoint")
        .connect()
        .await
        .expect("gRPC connect");
    a2a_protocol::grpc::pb::a2a_service_client::A2aServiceClient::new(channel)
        .max_decoding_message_size(64 << 20)
}

/// A request with `a2a-version: 1.0` metadata.
pub fn versioned<T>(m: T) -> tonic::Request<T> {
    let mut r = tonic::Request::new(m);
    r.metadata_mut().insert(
        "a2a-version",
        tonic::metadata::MetadataValue::from_static("1.0"),
    );
    r
}

/// Call a unary RPC with JSON-RPC-shaped (ProtoJSON) `params`; the ProtoJSON result.
pub async fn grpc_unary(
    addr: &str,
    method: a2a_protocol::Method,
    params: Value,
) -> Result<Value, tonic::Status> {
    use a2a_protocol::Method as M;
    use a2a_protocol::grpc::{from_pb, pb, to_pb};
    let mut c = grpc_client(addr).await;
    macro_rules! call {
        ($f:ident, $t:ty) => {{
            let req: $t = to_pb(&params).expect("params convert to protobuf");
            let resp = c.$f(versioned(req)).await?.into_inner();
            Ok(from_pb(&resp).expect("ProtoJSON"))
        }};
    }
    match method {
        M::SendMessage => call!(send_message, pb::SendMessageRequest),
        M::GetTask => call!(get_task, pb::GetTaskRequest),
        M::ListTasks => call!(list_tasks, pb::ListTasksRequest),
        M::CancelTask => call!(cancel_task, pb::CancelTaskRequest),
        M::CreateTaskPushNotificationConfig => call!(
            create_task_push_notification_config,
            pb::TaskPushNotificationConfig
        ),
        M::GetTaskPushNotificationConfig => call!(
            get_task_push_notification_config,
            pb::GetTaskPushNotificationConfigRequest
        ),
        M::ListTaskPushNotificationConfigs => call!(
            list_task_push_notification_configs,
            pb::ListTaskPushNotificationConfigsRequest
        ),
        M::DeleteTaskPushNotificationConfig => {
            let req: pb::DeleteTaskPushNotificationConfigRequest =
                to_pb(&params).expect("params convert to protobuf");
            c.delete_task_push_notification_config(versioned(req))
                .await?;
            Ok(json!({}))
        }
        M::GetExtendedAgentCard => {
            call!(get_extended_agent_card, pb::GetExtendedAgentCardRequest)
        }
        M::SendStreamingMessage | M::SubscribeToTask => panic!("use grpc_stream"),
    }
}

/// What a gRPC stream delivered: the ProtoJSON of every message, then its end.
#[derive(Debug)]
pub struct GrpcStream {
    /// The messages.
    pub messages: Vec<Value>,
    /// `None` after `OK`, else the failing status.
    pub status: Option<tonic::Status>,
}

/// Call a streaming RPC (`SendStreamingMessage`, `SubscribeToTask`) and read it to its end.
pub async fn grpc_stream(
    addr: &str,
    method: a2a_protocol::Method,
    params: Value,
) -> Result<GrpcStream, tonic::Status> {
    use a2a_protocol::grpc::{from_pb, pb, to_pb};
    let mut c = grpc_client(addr).await;
    let mut s = match method {
        a2a_protocol::Method::SendStreamingMessage => {
            let req: pb::SendMessageRequest = to_pb(&params).expect("params");
            c.send_streaming_message(versioned(req)).await?.into_inner()
        }
        a2a_protocol::Method::SubscribeToTask => {
            let req: pb::SubscribeToTaskRequest = to_pb(&params).expect("params");
            c.subscribe_to_task(versioned(req)).await?.into_inner()
        }
        other => panic!("{other:?} is not a streaming RPC"),
    };
    let mut messages = Vec::new();
    loop {
        match tokio::time::timeout(WAIT, s.message()).await {
            Err(_) => panic!("gRPC stream stalled for {WAIT:?}"),
            Ok(Ok(Some(m))) => messages.push(from_pb(&m).expect("ProtoJSON")),
            Ok(Ok(None)) => {
                return Ok(GrpcStream {
                    messages,
                    status: None,
                });
            }
            Ok(Err(status)) => {
                return Ok(GrpcStream {
                    messages,
                    status: Some(status),
                });
            }
        }
    }
}

/// The `ErrorInfo.reason` of a gRPC status's details.
pub fn grpc_reason(status: &tonic::Status) -> Option<String> {
    a2a_protocol::grpc::status::failure_from_tonic(status)
        .ok()
        .and_then(|f| f.error_info.map(|i| i.reason))
}
