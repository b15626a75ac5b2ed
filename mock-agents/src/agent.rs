//! One mock agent: a real A2A 1.0 JSON-RPC server whose behaviour comes from its script.
//!
//! Well behaved, it is spec-conformant (card, every method, terminal-state rules, version
//! negotiation, push delivery); scripted, it injects the faults and violations of its rules.
//! Everything it receives and sends goes into the network's [`Journal`].

use crate::journal::{Event, Journal};
use crate::script::{
    AgentSpec, CancelBehaviour, Fault, Matcher, Mutation, ProtocolVersionSpec, Rule,
};
use crate::server::ConnControl;
use a2a_protocol::compat03::{self, ObjectKind, ProtocolVersion};
use a2a_protocol::{
    AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill, ErrorCode, Id,
    JsonRpcError, JsonRpcResponse, Message, PartContent, StreamResponse, Task,
    TaskPushNotificationConfig, TaskState, TaskStatus, Timestamp,
};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{Notify, mpsc, oneshot};

/// Shared by every agent of a network.
pub struct NetShared {
    /// The journal.
    pub journal: Journal,
    /// Base URL of every agent by name (known before the first request).
    pub urls: BTreeMap<String, String>,
    /// The network seed.
    pub seed: u64,
    /// Request numbers across the network.
    pub next_req: AtomicU64,
    /// HTTP client for sub-delegation and push.
    pub http: reqwest::Client,
}

/// What a stream sends next.
pub(crate) enum Outgoing {
    /// A typed event.
    Event(Arc<StreamResponse>),
    /// A raw `result` value.
    Raw(Value),
    /// Raw `data:` text.
    RawText(String),
    /// One huge event of this many bytes.
    Huge(usize),
    /// Close the stream.
    Close(&'static str),
}

/// A message that continues an interrupted task.
pub(crate) struct Continuation {
    pub message: Message,
    pub authorization: Option<String>,
    pub ack: oneshot::Sender<()>,
}

pub(crate) struct TaskInner {
    pub task: Task,
    pub subscribers: Vec<mpsc::Sender<Arc<Outgoing>>>,
    pub cont_tx: Option<mpsc::Sender<Continuation>>,
    pub waiting: bool,
    pub push: Vec<TaskPushNotificationConfig>,
    pub push_tx: Option<mpsc::Sender<Arc<StreamResponse>>>,
    pub mutations: Vec<Mutation>,
    pub on_cancel: CancelBehaviour,
    pub driver: Option<tokio::task::AbortHandle>,
    pub purged: bool,
    /// Set by a cancel: whatever the (aborted) driver still does is ignored.
    pub frozen: bool,
    /// The driver has run every step: no more events will come from it.
    pub driver_done: bool,
    pub x_deleg: Option<a2a_protocol::xdeleg::XDeleg>,
    pub ordinal: u64,
}

pub(crate) struct TaskEntry {
    pub inner: Mutex<TaskInner>,
    pub changed: Notify,
}

impl TaskEntry {
    pub fn lock(&self) -> MutexGuard<'_, TaskInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The state of one agent.
pub struct AgentState {
    /// The agent's script.
    pub spec: AgentSpec,
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    pub(crate) net: Arc<NetShared>,
    pub(crate) tasks: Mutex<HashMap<String, Arc<TaskEntry>>>,
    pub(crate) order: Mutex<Vec<String>>,
    pub(crate) dedup: Mutex<HashMap<String, String>>,
    pub(crate) rule_hits: Mutex<Vec<u32>>,
    pub(crate) sends: AtomicU32,
    pub(crate) ordinals: AtomicU64,
    pub(crate) blobs: Mutex<HashMap<String, (u64, u64, bool)>>,
}

/// Lock a mutex, recovering from poisoning (every critical section leaves the data consistent).
pub(crate) fn lock_map<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
use lock_map as lock;

/// The path of the JSON-RPC endpoint.
pub const RPC_PATH: &str = "/a2a";

impl AgentState {
    pub(crate) fn new(spec: AgentSpec, base_url: String, net: Arc<NetShared>) -> Self {
        let rules = spec.rules.len();
        AgentState {
            spec,
            base_url,
            net,
            tasks: Mutex::new(HashMap::new()),
            order: Mutex::new(Vec::new()),
            dedup: Mutex::new(HashMap::new()),
            rule_hits: Mutex::new(vec![0; rules]),
            sends: AtomicU32::new(0),
            ordinals: AtomicU64::new(0),
            blobs: Mutex::new(HashMap::new()),
        }
    }

    /// The JSON-RPC URL.
    pub fn rpc_url(&self) -> String {
        format!("{}{}", self.base_url, RPC_PATH)
    }

    /// The identity used in `x-deleg` chains: the base URL with a trailing slash.
    pub fn identity(&self) -> String {
        format!("{}/", self.base_url)
    }

    pub(crate) fn journal(&self, event: Event) -> u64 {
        self.net.journal.record(&self.spec.name, event)
    }

    /// The agent card this agent serves (1.0 shape; a 0.3 agent translates it).
    pub fn card(&self) -> AgentCard {
        let modes = if self.spec.output_modes.is_empty() {
            vec![
                "text/plain".into(),
                "application/json".into(),
                "application/octet-stream".into(),
            ]
        } else {
            self.spec.output_modes.clone()
        };
        let skills = if self.spec.skills.is_empty() {
            vec![AgentSkill {
                id: "default".into(),
                name: "default".into(),
                description: "Scripted mock behaviour".into(),
                tags: vec!["mock".into()],
                ..Default::default()
            }]
        } else {
            self.spec
                .skills
                .iter()
                .map(|s| AgentSkill {
                    id: s.id.clone(),
                    name: s.id.clone(),
                    description: format!("Scripted mock skill {}", s.id),
                    tags: if s.tags.is_empty() {
                        vec!["mock".into()]
                    } else {
                        s.tags.clone()
                    },
                    output_modes: s.output_modes.clone(),
                    ..Default::default()
                })
                .collect()
        };
        AgentCard {
            name: self.spec.name.clone(),
            description: format!(
                "Deterministic mock A2A agent {:?} for conformance tests",
                self.spec.name
            ),
            supported_interfaces: vec![AgentInterface {
                url: self.rpc_url(),
                protocol_binding: a2a_protocol::BINDING_JSONRPC.into(),
                tenant: None,
                protocol_version: match self.spec.protocol {
                    ProtocolVersionSpec::V1_0 => "1.0".into(),
                    ProtocolVersionSpec::V0_3 => "0.3".into(),
                },
            }],
            provider: Some(AgentProvider {
                url: "https://example.invalid".into(),
                organization: "a2a-delegation-harness".into(),
            }),
            version: env!("CARGO_PKG_VERSION").into(),
            capabilities: AgentCapabilities {
                streaming: Some(self.spec.streaming),
                push_notifications: Some(self.spec.push_notifications),
                extended_agent_card: Some(false),
                ..Default::default()
            },
            default_input_modes: vec!["text/plain".into(), "application/json".into()],
            default_output_modes: modes,
            skills,
            ..Default::default()
        }
    }

    fn is_v03(&self) -> bool {
        self.spec.protocol == ProtocolVersionSpec::V0_3
    }

    pub(crate) fn task(&self, id: &str) -> Option<Arc<TaskEntry>> {
        lock(&self.tasks)
            .get(id)
            .cloned()
            .filter(|e| !e.lock().purged)
    }

    /// A deterministic id from the network seed, this agent and a counter.
    pub(crate) fn make_id(&self, what: &str, n: u64) -> String {
        let s = crate::content::derive_seed(&[
            &self.net.seed.to_le_bytes(),
            self.spec.name.as_bytes(),
            what.as_bytes(),
            &n.to_le_bytes(),
        ]);
        let s2 = crate::content::derive_seed(&[&s.to_le_bytes(), b"hi"]);
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&s.to_le_bytes());
        b[8..].copy_from_slice(&s2.to_le_bytes());
        uuid::Builder::from_random_bytes(b).into_uuid().to_string()
    }
}

/// Build the router of an agent.
pub fn router(state: Arc<AgentState>) -> Router {
    Router::new()
        .route(a2a_protocol::AGENT_CARD_PATH, get(card_handler))
        .route(RPC_PATH, post(rpc_handler))
        .route("/", post(rpc_handler))
        .route("/blobs/{key}", get(crate::driver::blob_handler))
        .with_state(state)
}

async fn card_handler(State(st): State<Arc<AgentState>>, headers: HeaderMap) -> Response {
    let req = st.net.next_req.fetch_add(1, Ordering::Relaxed);
    st.journal(Event::Request {
        req,
        http_method: "GET".into(),
        path: a2a_protocol::AGENT_CARD_PATH.into(),
        method: None,
        rpc_id: None,
        params: Value::Null,
        headers: header_map(&headers),
    });
    let card = serde_json::to_value(st.card()).unwrap_or(Value::Null);
    let card = if st.is_v03() {
        compat03::to_v03(ObjectKind::AgentCard, &card).unwrap_or(card)
    } else {
        card
    };
    st.journal(Event::Response {
        req,
        status: 200,
        rpc_error: None,
        body: Value::Null,
    });
    (
        StatusCode::OK,
        [(header::CACHE_CONTROL, "max-age=60")],
        axum::Json(card),
    )
        .into_response()
}

pub(crate) fn header_map(h: &HeaderMap) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for (k, v) in h {
        let v = String::from_utf8_lossy(v.as_bytes()).into_owned();
        m.entry(k.as_str().to_ascii_lowercase())
            .and_modify(|e: &mut String| {
                e.push_str(", ");
                e.push_str(&v);
            })
            .or_insert(v);
    }
    m
}

/// The context of one JSON-RPC request.
pub(crate) struct Call {
    pub req: u64,
    pub id: Id,
    pub v03: bool,
    pub headers: HeaderMap,
    pub ctl: ConnControl,
    /// The response will be dropped (fault `drop_response`): do not journal it as sent.
    pub dropping: bool,
}

impl Call {
    pub fn error(
        &self,
        st: &AgentState,
        code: ErrorCode,
        msg: Option<&str>,
        meta: &[(&str, &str)],
    ) -> Response {
        let e = code.to_error(msg, meta);
        respond(st, self, Err(e), &[])
    }
}

/// Send a unary JSON-RPC response, applying mutations and recording it.
pub(crate) fn respond(
    st: &AgentState,
    call: &Call,
    payload: Result<Value, JsonRpcError>,
    mutations: &[Mutation],
) -> Response {
    let rpc_error = payload.as_ref().err().map(|e| e.code);
    let mut body = serde_json::to_value(JsonRpcResponse {
        id: call.id.clone(),
        payload,
    })
    .unwrap_or(Value::Null);
    crate::driver::mutate(&mut body, mutations);
    if !call.dropping {
        st.journal(Event::Response {
            req: call.req,
            status: 200,
            rpc_error,
            body: st.net.journal.summarise(&body),
        });
    }
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        bytes,
    )
        .into_response()
}

async fn rpc_handler(
    State(st): State<Arc<AgentState>>,
    ctl: Option<Extension<ConnControl>>,
    request: Request,
) -> Response {
    let ctl = ctl.map(|Extension(c)| c).unwrap_or_default();
    let req = st.net.next_req.fetch_add(1, Ordering::Relaxed);
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    let path = parts.uri.path().to_string();
    let query_version = parts.uri.query().and_then(|q| {
        q.split('&')
            .find_map(|kv| kv.strip_prefix("A2A-Version=").map(str::to_string))
    });
    let bytes = match axum::body::to_bytes(body, st.spec.max_body_bytes).await {
        Ok(b) => b,
        Err(_) => {
            st.journal(Event::Request {
                req,
                http_method: "POST".into(),
                path,
                method: None,
                rpc_id: None,
                params: json!(format!("<body over {} bytes>", st.spec.max_body_bytes)),
                headers: header_map(&headers),
            });
            let e = ErrorCode::InvalidRequest.to_error(Some("request body too large"), &[]);
            let body = serde_json::to_vec(&JsonRpcResponse::<Value>::error(Id::Null, e))
                .unwrap_or_default();
            st.journal(Event::Response {
                req,
                status: 413,
                rpc_error: Some(-32600),
                body: Value::Null,
            });
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                [(header::CONTENT_TYPE, "application/json")],
                body,
            )
                .into_response();
        }
    };
    let parsed: Result<Value, _> = serde_json::from_slice(&bytes);
    let (method, rpc_id, params) = match &parsed {
        Ok(v) => (
            v.get("method").and_then(Value::as_str).map(str::to_string),
            v.get("id").cloned(),
            v.get("params")
                .map(|p| st.net.journal.summarise(p))
                .unwrap_or(Value::Null),
        ),
        Err(_) => (
            None,
            None,
            json!(String::from_utf8_lossy(&bytes[..bytes.len().min(1024)])),
        ),
    };
    st.journal(Event::Request {
        req,
        http_method: "POST".into(),
        path,
        method: method.clone(),
        rpc_id: rpc_id.clone(),
        params,
        headers: header_map(&headers),
    });
    let Ok(v) = parsed else {
        let call = Call {
            req,
            id: Id::Null,
            v03: st.is_v03(),
            headers,
            ctl,
            dropping: false,
        };
        return call.error(&st, ErrorCode::JsonParse, None, &[]);
    };
    let id: Id = v
        .get("id")
        .cloned()
        .and_then(|i| serde_json::from_value(i).ok())
        .unwrap_or(Id::Null);
    let call = Call {
        req,
        id,
        v03: st.is_v03(),
        headers,
        ctl,
        dropping: false,
    };
    if !v.is_object() || v.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return call.error(
            &st,
            ErrorCode::InvalidRequest,
            Some("not a JSON-RPC 2.0 request"),
            &[],
        );
    }
    let Some(method) = method else {
        return call.error(
            &st,
            ErrorCode::InvalidRequest,
            Some("method is missing"),
            &[],
        );
    };
    // Version negotiation (R03): a 1.0 agent serves only 1.0; a 0.3 agent speaks 0.3.
    let version_header = call
        .headers
        .get(a2a_protocol::VERSION_HEADER)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or(query_version);
    let mut params = v.get("params").cloned().unwrap_or(Value::Null);
    let method_v1: String = if st.is_v03() {
        let Some(m) = compat03::method_to_v1(&method) else {
            return call.error(
                &st,
                ErrorCode::MethodNotFound,
                Some(&format!("unknown 0.3 method {method:?}")),
                &[],
            );
        };
        if let Some(kind) = ObjectKind::params_of(&method) {
            match compat03::to_v1(kind, &params) {
                Ok(p) => params = p,
                Err(e) => {
                    return call.error(&st, ErrorCode::InvalidParams, Some(&e.to_string()), &[]);
                }
            }
        }
        m.to_string()
    } else {
        match compat03::negotiate(version_header.as_deref()) {
            Ok(ProtocolVersion::V1_0) => {}
            Ok(ProtocolVersion::V0_3) => {
                return call.error(
                    &st,
                    ErrorCode::VersionNotSupported,
                    Some("A2A-Version missing: 0.3 is not served, send A2A-Version: 1.0"),
                    &[("requested", "0.3")],
                );
            }
            Err(e) => {
                return call.error(
                    &st,
                    ErrorCode::VersionNotSupported,
                    Some(&e.to_string()),
                    &[("requested", &e.requested)],
                );
            }
        }
        method
    };
    crate::driver::dispatch(st, call, method_v1, params).await
}

/// Does the matcher accept this request?
pub(crate) fn matches(m: &Matcher, method: &str, params: &Value, round: u32) -> bool {
    let msg = params.get("message");
    let is_send = method == "SendMessage" || method == "SendStreamingMessage";
    match &m.method {
        Some(want) => {
            if want != method {
                return false;
            }
        }
        None => {
            if !is_send {
                return false;
            }
        }
    }
    // The task a request is about: the continued task of a send, else `id`/`taskId` of params.
    let task_id = if is_send {
        msg.and_then(|m| m.get("taskId")).and_then(Value::as_str)
    } else {
        params
            .get("taskId")
            .or_else(|| params.get("id"))
            .and_then(Value::as_str)
    };
    match (&m.task_id, task_id) {
        (Some(want), Some(got)) if want == got => {}
        (Some(_), _) => return false,
        (None, Some(_)) if is_send => return false,
        _ => {}
    }
    if let Some(r) = m.round
        && r != round
    {
        return false;
    }
    if let Some(skill) = &m.skill {
        let s = msg
            .and_then(|m| m.get("metadata"))
            .and_then(|md| md.get("skill"))
            .or_else(|| params.get("metadata").and_then(|md| md.get("skill")))
            .and_then(Value::as_str);
        if s != Some(skill.as_str()) {
            return false;
        }
    }
    if m.text_contains.is_some() || m.text_equals.is_some() || m.data.is_some() {
        let parsed: Option<Message> = msg.and_then(|m| serde_json::from_value(m.clone()).ok());
        let Some(parsed) = parsed else { return false };
        if !message_matches(m, &parsed) {
            return false;
        }
    }
    true
}

/// Does a message satisfy the text and data parts of a matcher?
pub(crate) fn message_matches(m: &Matcher, msg: &Message) -> bool {
    let text = msg.text();
    if let Some(t) = &m.text_contains
        && !text.contains(t.as_str())
    {
        return false;
    }
    if let Some(t) = &m.text_equals
        && text.trim() != t.trim()
    {
        return false;
    }
    if let Some(data) = &m.data {
        for (ptr, want) in data {
            let found = msg.parts.iter().any(|p| match &p.content {
                PartContent::Data(d) => d.pointer(ptr) == Some(want),
                _ => false,
            });
            if !found {
                return false;
            }
        }
    }
    true
}

/// Find the rule for a request and count the hit.
pub(crate) fn select_rule(
    st: &AgentState,
    method: &str,
    params: &Value,
    round: u32,
) -> Option<(usize, Rule)> {
    let mut hits = lock(&st.rule_hits);
    for (i, r) in st.spec.rules.iter().enumerate() {
        if let Some(t) = r.times
            && hits[i] >= t
        {
            continue;
        }
        if matches(&r.when, method, params, round) {
            hits[i] += 1;
            return Some((i, r.clone()));
        }
    }
    None
}

/// Apply a fault that acts before processing. Returns a response when the request is done.
pub(crate) async fn pre_fault(
    st: &AgentState,
    call: &Call,
    fault: Option<&Fault>,
) -> Option<Response> {
    match fault? {
        Fault::DropBefore => {
            st.journal(Event::Fault {
                req: call.req,
                kind: "drop_before".into(),
            });
            st.journal(Event::ConnectionDropped {
                req: call.req,
                phase: "before_processing".into(),
            });
            call.ctl.abort();
            Some(hang().await)
        }
        Fault::HttpStatus {
            status,
            retry_after_s,
        } => {
            st.journal(Event::Fault {
                req: call.req,
                kind: format!("http_status_{status}"),
            });
            st.journal(Event::Response {
                req: call.req,
                status: *status,
                rpc_error: None,
                body: Value::Null,
            });
            let code = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut resp = (code, format!("injected HTTP {status}")).into_response();
            if let Some(s) = retry_after_s
                && let Ok(v) = header::HeaderValue::from_str(&s.to_string())
            {
                resp.headers_mut().insert(header::RETRY_AFTER, v);
            }
            Some(resp)
        }
        Fault::Stall { ms } => {
            st.journal(Event::Fault {
                req: call.req,
                kind: "stall".into(),
            });
            tokio::time::sleep(Duration::from_millis(*ms)).await;
            None
        }
        _ => None,
    }
}

/// Wait while the connection is dropped under this handler (which cancels this future). Bounded:
/// if nothing drops the connection (a router served without [`crate::server::serve`]), answer
/// 500 after a while instead of hanging forever.
pub(crate) async fn hang() -> Response {
    tokio::time::sleep(Duration::from_secs(30)).await;
    StatusCode::INTERNAL_SERVER_ERROR.into_response()
}

/// Wrap a body so it is sent at `bytes_per_sec`.
pub(crate) fn trickle(bytes: Vec<u8>, bytes_per_sec: u64) -> Body {
    let slice = (bytes_per_sec / 20).max(1) as usize;
    let stream = futures::stream::unfold((bytes, 0usize), move |(b, off)| async move {
        if off >= b.len() {
            return None;
        }
        if off > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let end = (off + slice).min(b.len());
        let chunk = Bytes::copy_from_slice(&b[off..end]);
        Some((Ok::<_, std::io::Error>(chunk), (b, end)))
    });
    Body::from_stream(stream)
}

/// A task's status, stamped now.
pub(crate) fn status(
    state: TaskState,
    text: Option<&str>,
    task: &Task,
    msg_id: String,
) -> TaskStatus {
    TaskStatus {
        state,
        message: text.map(|t| Message {
            context_id: Some(task.context_id.clone()),
            task_id: Some(task.id.clone()),
            ..Message::agent_text(msg_id, t)
        }),
        timestamp: Some(Timestamp::now()),
    }
}
