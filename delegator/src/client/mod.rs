//! The A2A client: unary calls and streams over the three bindings, fallback between an agent's
//! interfaces, and error classification.
//!
//! The rest of the delegator speaks one shape: params and results are the JSON-RPC `params` and
//! `result` objects (the ProtoJSON of the proto messages), errors are [`ClientError`]s whose
//! A2A errors are [`JsonRpcError`]s. [`RpcClient::call`] and [`RpcClient::stream`] branch on the
//! [`Endpoint::binding`] inside this module:
//!
//! - `jsonrpc`: JSON-RPC 2.0 over HTTP, SSE of JSON-RPC responses (also 0.3 agents, through
//!   [`a2a_protocol::compat03`]);
//! - `rest`: HTTP+JSON (an HTTP method and path per operation, SSE of bare `StreamResponse`s,
//!   AIP-193 error bodies normalized with [`a2a_protocol::rest::error_from_body`]);
//! - `grpc`: `lf.a2a.v1.A2AService` over HTTP/2 (the generated tonic client; ProtoJSON <-> prost
//!   with [`a2a_protocol::grpc::to_pb`] / [`a2a_protocol::grpc::from_pb`]).
//!
//! Every binding carries the same duties: `A2A-Version` (header or `a2a-version` metadata), the
//! interface's `tenant` (JSON-RPC `params.tenant`, the gRPC request's `tenant`, the HTTP+JSON
//! `/{tenant}` path prefix), the endpoint's activated extensions ([`EXTENSIONS_HEADER`], one
//! comma-separated line; gRPC one `a2a-extensions` entry), `Authorization` only when the caller
//! passes one (the delegator's own credential is never given to this client), the request body
//! as the engine built it (message ids, `x-deleg` metadata, push config). Connect errors, timeouts, 429 and 5xx (gRPC `UNAVAILABLE`,
//! `RESOURCE_EXHAUSTED`, `DEADLINE_EXCEEDED`) are transient; an A2A error is a definite answer.
//!
//! **Fallback.** An [`Endpoint`] lists the agent's other usable interfaces
//! ([`Endpoint::fallbacks`], same protocol version, in preference order). When an interface fails
//! at the transport level before any answer (connection refused, HTTP 404/405 without an A2A
//! `ErrorInfo`, HTTP 415, gRPC `UNIMPLEMENTED` without `ErrorInfo`), the same call is tried on
//! the next one, and the interface that answered is remembered for that agent. An A2A error is
//! an answer and never triggers a fallback. When every interface fails so, the call fails with
//! [`ClientError::Unserved`], naming each binding tried.
//!
//! Responses are read with a size bound; task states this program does not know are rewritten to
//! `TASK_STATE_UNSPECIFIED` before decoding (so an unknown state is observed, not a decode error).
//! Over JSON-RPC every response and every stream event must echo the request's `id`; one that
//! does not, and a stream event that is not a valid `StreamResponse`, is a
//! [`ClientError::AgentProtocol`] error: definite, never retried. A stream event lacking a
//! REQUIRED field is delivered with [`StreamItem::lacks`] naming it (the engine never applies
//! it), and a unary result can be checked with [`CallResult::task_lacks`] ([`required`]).

mod grpc;
mod jsonrpc;
pub mod required;
mod rest;

use a2a_protocol::artifact_chunk::SharedStreamResponse;
use a2a_protocol::jsonrpc::{Id, JsonRpcError};
use a2a_protocol::sse::{SseDecoder, SseEventBytes};
use a2a_protocol::version::ProtocolVersion;
use a2a_protocol::{Binding, ErrorCode, Method, StreamResponse, TaskState};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The service parameter (HTTP header) that activates extensions (§3.2.6).
pub const EXTENSIONS_HEADER: &str = "A2A-Extensions";

/// The largest unary response body accepted.
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// Where and how to call an agent: one interface of its card, and the others to fall back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The interface URL: the JSON-RPC endpoint, the HTTP+JSON base URL, or the gRPC authority
    /// (normalized to `http(s)://host:port`).
    pub url: String,
    /// Protocol version (0.3 through the compat adapter, JSON-RPC only).
    pub version: ProtocolVersion,
    /// Tenant to copy into every request, from the card's interface.
    pub tenant: Option<String>,
    /// The protocol binding of this interface.
    pub binding: Binding,
    /// The extensions activated on every request to this agent (`A2A-Extensions`, one
    /// comma-separated header line; gRPC: one `a2a-extensions` metadata entry): the extensions
    /// its card requires that this delegator supports.
    pub extensions: Vec<String>,
    /// The agent's other interfaces this client may use, in preference order (same version):
    /// tried, for the same call, when this one fails at the transport level before any answer.
    pub fallbacks: Vec<Endpoint>,
}

impl Endpoint {
    /// A JSON-RPC endpoint without fallbacks.
    pub fn jsonrpc(url: impl Into<String>, version: ProtocolVersion) -> Self {
        Endpoint {
            url: url.into(),
            version,
            tenant: None,
            binding: Binding::JsonRpc,
            extensions: Vec::new(),
            fallbacks: Vec::new(),
        }
    }

    /// This endpoint with `extensions` activated on it and on each of its fallbacks.
    pub fn with_extensions(mut self, extensions: Vec<String>) -> Self {
        for f in &mut self.fallbacks {
            f.extensions = extensions.clone();
        }
        self.extensions = extensions;
        self
    }

    /// The `A2A-Extensions` value: the activated extensions comma-separated (`None`: none).
    pub fn extensions_header(&self) -> Option<String> {
        (!self.extensions.is_empty()).then(|| self.extensions.join(","))
    }

    /// `binding url`, for messages and logs.
    pub fn label(&self) -> String {
        format!("{} {}", self.binding, self.url)
    }

    /// This interface and its fallbacks, in preference order (each without fallbacks).
    pub fn candidates(&self) -> Vec<Endpoint> {
        let mut first = self.clone();
        first.fallbacks = Vec::new();
        std::iter::once(first)
            .chain(self.fallbacks.iter().map(|f| {
                let mut f = f.clone();
                f.fallbacks = Vec::new();
                f
            }))
            .collect()
    }

    /// This endpoint with its plain-HTTP candidates left out (TLS required: §7.1), the first
    /// `https://` one first; an error naming the interfaces when none is `https://`.
    pub fn https_only(&self) -> Result<Endpoint, String> {
        let all = self.candidates();
        let (tls, plain): (Vec<Endpoint>, Vec<Endpoint>) =
            all.into_iter().partition(|e| e.url.starts_with("https://"));
        let mut it = tls.into_iter();
        let Some(mut first) = it.next() else {
            let urls: Vec<&str> = plain.iter().map(|e| e.url.as_str()).collect();
            return Err(format!(
                "no https interface (TLS is required: init.tls_roots); the card lists {}",
                urls.join(", ")
            ));
        };
        first.fallbacks = it.collect();
        Ok(first)
    }

    fn memory_key(&self) -> String {
        format!("{}|{}", self.binding, self.url)
    }
}

/// A call failed. [`ClientError::is_transient`] tells whether a retry may help.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    /// The connection could not be made: the request never reached the agent.
    #[error("connect to {url}: {message}")]
    Connect {
        /// The URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// The request may or may not have reached the agent (timeout, reset, body error).
    #[error("transport error (outcome unknown): {0}")]
    Transport(String),
    /// A non-2xx HTTP status without an A2A error body (or a 429/5xx, or the gRPC statuses
    /// `UNAVAILABLE` = 503, `RESOURCE_EXHAUSTED` = 429, `DEADLINE_EXCEEDED` = 504).
    #[error("HTTP {status}{}", retry_after.map(|d| format!(" (Retry-After {}s)", d.as_secs())).unwrap_or_default())]
    Http {
        /// The status.
        status: u16,
        /// `Retry-After`, when given.
        retry_after: Option<Duration>,
    },
    /// An A2A (or JSON-RPC) error: a definite answer, in JSON-RPC form whatever the binding.
    #[error("JSON-RPC error {0}")]
    Rpc(JsonRpcError),
    /// The agent's reply is not valid A2A (garbage, wrong shape, oversize).
    #[error("invalid response: {0}")]
    Protocol(String),
    /// The agent broke the protocol in a way a retry cannot mend: a response or stream event
    /// whose JSON-RPC `id` is not the request's, an SSE event that is not JSON, too large, or not
    /// a `StreamResponse`. The delegation fails visibly.
    #[error("agent protocol error: {0}")]
    AgentProtocol(String),
    /// The method does not exist for this agent's protocol version.
    #[error("{0} is not available for a {1} agent")]
    NotAvailable(&'static str, &'static str),
    /// No interface of the agent served the call: each failed at the transport level before any
    /// answer. Classified like the last failure, except that it is transient if any was.
    #[error("no advertised interface answered (tried {})", tried.join("; "))]
    Unserved {
        /// `binding url: error` of each interface tried, in order.
        tried: Vec<String>,
        /// The last failure.
        last: Box<ClientError>,
        /// Whether any of the failures was transient.
        any_transient: bool,
    },
}

impl ClientError {
    /// Connect errors, transport errors, 5xx, 408, 429 and invalid responses: worth a retry.
    pub fn is_transient(&self) -> bool {
        match self {
            ClientError::Connect { .. } | ClientError::Transport(_) | ClientError::Protocol(_) => {
                true
            }
            ClientError::Http { status, .. } => *status >= 500 || *status == 429 || *status == 408,
            ClientError::Rpc(_) | ClientError::NotAvailable(..) | ClientError::AgentProtocol(_) => {
                false
            }
            ClientError::Unserved { any_transient, .. } => *any_transient,
        }
    }

    /// Whether the agent broke the protocol (see [`ClientError::AgentProtocol`]).
    pub fn is_agent_protocol(&self) -> bool {
        match self {
            ClientError::AgentProtocol(_) => true,
            ClientError::Unserved { last, .. } => last.is_agent_protocol(),
            _ => false,
        }
    }

    /// The JSON-RPC code, for an RPC error.
    pub fn code(&self) -> Option<i64> {
        match self {
            ClientError::Rpc(e) => Some(e.code),
            ClientError::Unserved { last, .. } => last.code(),
            _ => None,
        }
    }

    /// The HTTP status, for an HTTP error.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            ClientError::Http { status, .. } => Some(*status),
            ClientError::Unserved { last, .. } => last.http_status(),
            _ => None,
        }
    }

    /// `Retry-After`, for an HTTP error that carried one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ClientError::Http { retry_after, .. } => *retry_after,
            ClientError::Unserved { last, .. } => last.retry_after(),
            _ => None,
        }
    }

    /// Whether `binding` failed at the transport level before any answer, so that the same call
    /// may go to another interface: connection refused, HTTP 404/405 without an A2A error,
    /// HTTP 415, and, except over JSON-RPC (where -32601 is an answer), an unknown operation
    /// without `ErrorInfo` (gRPC `UNIMPLEMENTED`, an HTTP+JSON router's 404/405).
    pub fn is_unserved(&self, binding: Binding) -> bool {
        match self {
            ClientError::Connect { .. } => true,
            ClientError::Http { status, .. } => matches!(status, 404 | 405 | 415),
            ClientError::Rpc(e) => {
                binding != Binding::JsonRpc
                    && e.error_code() == ErrorCode::MethodNotFound
                    && e.error_info().is_none()
            }
            _ => false,
        }
    }
}

/// An `Authorization` value marked sensitive, so that no `Debug` of a request (a log line)
/// prints the credential.
fn auth_header(credential: &str) -> Result<reqwest::header::HeaderValue, ClientError> {
    let mut v = reqwest::header::HeaderValue::from_str(credential)
        .map_err(|_| ClientError::Transport("the credential is not a valid header value".into()))?;
    v.set_sensitive(true);
    Ok(v)
}

fn classify(url: &str, e: reqwest::Error) -> ClientError {
    if e.is_connect() {
        ClientError::Connect {
            url: url.to_string(),
            message: e.to_string(),
        }
    } else {
        ClientError::Transport(e.to_string())
    }
}

fn retry_after_of(resp: &reqwest::Response) -> Option<Duration> {
    resp.headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after)
}

fn is_event_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"))
}

/// Parse `Retry-After`: delta-seconds or an HTTP date.
pub fn parse_retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when =
        time::OffsetDateTime::parse(v, &time::format_description::well_known::Rfc2822).ok()?;
    let delta = when - time::OffsetDateTime::now_utc();
    Some(Duration::from_secs_f64(delta.as_seconds_f64().max(0.0)))
}

/// Rewrite every task state this program cannot parse to `TASK_STATE_UNSPECIFIED`, returning the
/// raw names replaced (so they can be logged and recorded).
pub fn sanitize_states(v: &mut Value) -> Vec<String> {
    let mut replaced = Vec::new();
    fn walk(v: &mut Value, replaced: &mut Vec<String>, depth: usize) {
        if depth > 64 {
            return;
        }
        match v {
            Value::Object(m) => {
                if let Some(Value::Object(status)) = m.get_mut("status")
                    && let Some(state) = status.get_mut("state")
                {
                    let ok = match &*state {
                        Value::String(s) => TaskState::parse_lenient(s).is_some(),
                        Value::Number(n) => n.as_i64().and_then(TaskState::from_number).is_some(),
                        Value::Null => true,
                        _ => false,
                    };
                    if !ok {
                        replaced.push(state.to_string());
                        *state = Value::String(TaskState::Unspecified.as_str().to_string());
                    }
                }
                for (k, child) in m.iter_mut() {
                    // Only descend where tasks and events live, not into metadata or data parts.
                    if matches!(
                        k.as_str(),
                        "task" | "statusUpdate" | "status_update" | "result" | "tasks"
                    ) {
                        walk(child, replaced, depth + 1);
                    }
                }
            }
            Value::Array(a) => {
                for child in a {
                    walk(child, replaced, depth + 1);
                }
            }
            _ => {}
        }
    }
    walk(v, &mut replaced, 0);
    replaced
}

/// The bindings this client speaks, in the specification's order.
pub const SUPPORTED_BINDINGS: &[Binding] = &[Binding::JsonRpc, Binding::Rest, Binding::Grpc];

/// The A2A client (every binding).
#[derive(Debug, Clone)]
pub struct RpcClient {
    http: reqwest::Client,
    max_event_bytes: usize,
    /// Per agent (key of its preferred interface): the interface that last answered after a
    /// fallback.
    working: Arc<Mutex<HashMap<String, String>>>,
    /// gRPC channels by interface URL (each multiplexes every call to that agent).
    channels: Arc<Mutex<HashMap<String, tonic::transport::Channel>>>,
    /// With trust roots (`init.tls_roots`): the gRPC channels' TLS connector.
    grpc_tls: Option<crate::tls::GrpcTlsConnector>,
    /// With trust roots: plain `http://` interfaces may still be used (planted bug only).
    tls_only: bool,
}

/// What a unary call returns: the 1.0 `result` and any unknown state names that were replaced.
#[derive(Debug, Clone)]
pub struct CallResult {
    /// The result, in 1.0 form.
    pub result: Value,
    /// Raw state names rewritten to UNSPECIFIED.
    pub unknown_states: Vec<String>,
    /// The binding that answered (after any fallback): gRPC results cannot tell an absent enum
    /// from its default (see [`required`]).
    pub binding: Binding,
}

impl CallResult {
    fn of(mut result: Value) -> Self {
        let unknown_states = sanitize_states(&mut result);
        CallResult {
            result,
            unknown_states,
            binding: Binding::JsonRpc,
        }
    }

    /// The REQUIRED fields the result, read as a `Task`, lacks (see [`required::task`]).
    pub fn task_lacks(&self) -> Vec<String> {
        required::task(&self.result, self.binding != Binding::Grpc)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl RpcClient {
    /// A client whose SSE events are limited to `max_event_bytes`; with `trust`, every call
    /// goes over TLS verified with it ([`crate::tls`]) and plain HTTP is refused.
    pub fn new(
        max_event_bytes: usize,
        trust: Option<&crate::tls::Trust>,
    ) -> Result<Self, ClientError> {
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(Duration::from_secs(5))
            .pool_idle_timeout(Duration::from_secs(30));
        let mut grpc_tls = None;
        let mut tls_only = false;
        if let Some(t) = trust {
            let tls_error = |e: crate::tls::TlsError| ClientError::Transport(e.to_string());
            builder = builder
                .tls_backend_preconfigured(t.client_config(&[b"http/1.1"]).map_err(tls_error)?)
                .https_only(!t.allows_plain_http());
            grpc_tls = Some(crate::tls::GrpcTlsConnector::new(t).map_err(tls_error)?);
            tls_only = !t.allows_plain_http();
        }
        let http = builder
            .build()
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        Ok(RpcClient {
            http,
            max_event_bytes,
            working: Arc::new(Mutex::new(HashMap::new())),
            channels: Arc::new(Mutex::new(HashMap::new())),
            grpc_tls,
            tls_only,
        })
    }

    /// True when this client was given trust roots and uses `https://` interfaces only.
    pub fn tls_only(&self) -> bool {
        self.tls_only
    }

    /// The underlying HTTP client (card and artifact fetches share it).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The interface calls to `ep` go to first: the one that answered after the last fallback,
    /// else `ep` itself (without its fallbacks).
    pub fn in_use(&self, ep: &Endpoint) -> Endpoint {
        self.ordered(ep).swap_remove(0)
    }

    /// `ep`'s candidates, the remembered working one first.
    fn ordered(&self, ep: &Endpoint) -> Vec<Endpoint> {
        let mut c = ep.candidates();
        let remembered = lock(&self.working).get(&ep.memory_key()).cloned();
        if let Some(k) = remembered
            && let Some(i) = c.iter().position(|x| x.memory_key() == k)
        {
            let w = c.remove(i);
            c.insert(0, w);
        }
        c
    }

    fn remember(&self, ep: &Endpoint, used: &Endpoint) {
        let key = ep.memory_key();
        let used_key = used.memory_key();
        let mut w = lock(&self.working);
        let before = w.get(&key).cloned().unwrap_or_else(|| key.clone());
        if before != used_key {
            tracing::info!(
                agent = %ep.label(),
                "calls now go to {} (it answered after a fallback)",
                used.label()
            );
            w.insert(key, used_key);
        }
    }

    /// Try `op` on each candidate of `ep` until one does not fail as unserved.
    async fn with_fallback<T, F, Fut>(
        &self,
        ep: &Endpoint,
        method: Method,
        op: F,
    ) -> Result<T, ClientError>
    where
        F: Fn(Endpoint) -> Fut,
        Fut: std::future::Future<Output = Result<T, ClientError>>,
    {
        let candidates = self.ordered(ep);
        let several = candidates.len() > 1;
        let mut tried = Vec::new();
        let mut any_transient = false;
        let mut last = None;
        for c in candidates {
            let label = c.label();
            let binding = c.binding;
            match op(c.clone()).await {
                Err(e) if several && e.is_unserved(binding) => {
                    tracing::warn!(agent = %ep.label(), "{method} over {label} unserved: {e}");
                    tried.push(format!("{label}: {e}"));
                    any_transient |= e.is_transient();
                    last = Some(e);
                }
                r => {
                    if matches!(r, Ok(_) | Err(ClientError::Rpc(_))) {
                        self.remember(ep, &c);
                    }
                    return r;
                }
            }
        }
        let last = last.unwrap_or_else(|| ClientError::Transport("no interface to call".into()));
        Err(ClientError::Unserved {
            tried,
            last: Box::new(last),
            any_transient,
        })
    }

    /// A unary call. `timeout` bounds each attempt.
    pub async fn call(
        &self,
        ep: &Endpoint,
        method: Method,
        params: Value,
        auth: Option<&str>,
        timeout: Duration,
    ) -> Result<CallResult, ClientError> {
        self.with_fallback(ep, method, |c| {
            let params = params.clone();
            async move {
                let r = match c.binding {
                    Binding::JsonRpc => self.jsonrpc_call(&c, method, params, auth, timeout).await,
                    Binding::Rest => self.rest_call(&c, method, params, auth, timeout).await,
                    Binding::Grpc => self.grpc_call(&c, method, params, auth, timeout).await,
                };
                r.map(|mut r| {
                    r.binding = c.binding;
                    r
                })
            }
        })
        .await
    }

    /// Open a stream (`SendStreamingMessage` or `SubscribeToTask`). A JSON reply instead of
    /// `text/event-stream` is handled: an error becomes `Err`, a result becomes a one-event
    /// stream. `head_timeout` bounds the time to the response head only.
    pub async fn stream(
        &self,
        ep: &Endpoint,
        method: Method,
        params: Value,
        auth: Option<&str>,
        head_timeout: Duration,
    ) -> Result<EventStream, ClientError> {
        self.with_fallback(ep, method, |c| {
            let params = params.clone();
            async move {
                match c.binding {
                    Binding::JsonRpc => {
                        self.jsonrpc_stream(&c, method, params, auth, head_timeout)
                            .await
                    }
                    Binding::Rest => {
                        self.rest_stream(&c, method, params, auth, head_timeout)
                            .await
                    }
                    Binding::Grpc => {
                        self.grpc_stream(&c, method, params, auth, head_timeout)
                            .await
                    }
                }
            }
        })
        .await
    }
}

async fn read_limited(mut resp: reqwest::Response, limit: usize) -> Result<Vec<u8>, ClientError> {
    let mut out = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| ClientError::Transport(e.to_string()))?
    {
        if out.len() + chunk.len() > limit {
            return Err(ClientError::Protocol(format!(
                "response body exceeds {limit} bytes"
            )));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// One event read from a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamItem {
    /// The event; an artifact update's inline bytes shared with the received payload (see
    /// [`a2a_protocol::artifact_chunk`]).
    pub event: SharedStreamResponse,
    /// Raw state names rewritten to UNSPECIFIED.
    pub unknown_states: Vec<String>,
    /// The REQUIRED fields the event lacks ([`required::stream_response`]): such an event is
    /// never taken as a result.
    pub lacks: Vec<String>,
}

/// How the `data:` of an SSE event is framed.
#[derive(Debug)]
enum SseFraming {
    /// A JSON-RPC response around the `StreamResponse`; its id must be the request's.
    JsonRpc {
        version: ProtocolVersion,
        rpc_id: Id,
    },
    /// A bare `StreamResponse`; `event: error` carries an HTTP+JSON error body.
    Rest,
}

/// Where a stream's events come from.
#[derive(Debug)]
enum Source {
    /// Nothing more (a one-event stream made of a JSON reply).
    Empty,
    /// An SSE response body.
    Sse(Box<SseSource>),
    /// A server-streaming gRPC call (dropping it cancels the call).
    Grpc {
        url: String,
        stream: Box<tonic::Streaming<a2a_protocol::grpc::pb::StreamResponse>>,
    },
}

/// An SSE response body being decoded.
#[derive(Debug)]
struct SseSource {
    resp: reqwest::Response,
    decoder: SseDecoder,
    events: VecDeque<SseEventBytes>,
    framing: SseFraming,
}

/// An open stream of [`StreamResponse`] events, whatever the binding. Dropping it ends the call.
#[derive(Debug)]
pub struct EventStream {
    source: Source,
    pending: VecDeque<Result<(Value, Vec<String>), ClientError>>,
    method: Method,
    done: bool,
}

impl EventStream {
    fn one(method: Method, result: Value, unknown: Vec<String>) -> Self {
        let mut pending = VecDeque::new();
        pending.push_back(Ok((result, unknown)));
        EventStream {
            source: Source::Empty,
            pending,
            method,
            done: false,
        }
    }

    fn sse(
        method: Method,
        resp: reqwest::Response,
        max_event_bytes: usize,
        framing: SseFraming,
    ) -> Self {
        EventStream {
            source: Source::Sse(Box::new(SseSource {
                resp,
                decoder: SseDecoder::new(max_event_bytes),
                events: VecDeque::new(),
                framing,
            })),
            pending: VecDeque::new(),
            method,
            done: false,
        }
    }

    fn grpc(
        method: Method,
        url: String,
        stream: tonic::Streaming<a2a_protocol::grpc::pb::StreamResponse>,
    ) -> Self {
        EventStream {
            source: Source::Grpc {
                url,
                stream: Box::new(stream),
            },
            pending: VecDeque::new(),
            method,
            done: false,
        }
    }

    /// The next event; `None` when the server closed the stream. An error ends the stream.
    pub async fn next(&mut self) -> Option<Result<StreamItem, ClientError>> {
        loop {
            if let Some(p) = self.pending.pop_front() {
                return Some(p.and_then(|(v, unknown)| self.decode_result(v, unknown, true)));
            }
            if let Source::Sse(sse) = &mut self.source
                && let Some(ev) = sse.events.pop_front()
            {
                // Fast path: the payload decoded once, from its bytes straight into the typed
                // envelope and event (no `Value`), an artifact chunk's text parts left in the
                // payload buffer (`a2a_protocol::artifact_chunk`: the chunk bytes are copied at
                // most once, by the SSE decoder when an event spans two reads). It is taken only
                // when that decode succeeds, which implies every task state in it is known;
                // anything else (an unknown state, a wrong shape, a 0.3 agent, an SSE error
                // event) goes through the `Value` path below, which rewrites unknown states to
                // UNSPECIFIED, records them, and produces the same errors as before. No
                // conformance check runs on either path (the delegator never ran one on
                // events; the harness checks what the agents send).
                let typed = match &sse.framing {
                    SseFraming::JsonRpc { version, rpc_id } => {
                        jsonrpc::event_typed(self.method, *version, rpc_id, &ev)
                    }
                    SseFraming::Rest => rest::event_typed(&ev),
                };
                // An event that may lack a REQUIRED field (an empty id, no parts, a state that
                // may be absent) leaves the fast path too: the `Value` path names what it lacks
                // (`required`). Complete events are never decoded twice.
                match typed {
                    Some(Ok(event)) if !required::suspicious(&event) => {
                        return Some(Ok(StreamItem {
                            event,
                            unknown_states: Vec::new(),
                            lacks: Vec::new(),
                        }));
                    }
                    Some(Err(e)) => return Some(Err(e)),
                    Some(Ok(_)) | None => {}
                }
                let ev = ev.into_event();
                let v = match &sse.framing {
                    SseFraming::JsonRpc { version, rpc_id } => {
                        jsonrpc::event_value(self.method, *version, rpc_id, ev)
                    }
                    SseFraming::Rest => rest::event_value(ev),
                };
                return Some(v.and_then(|v| self.decode_result(v, Vec::new(), true)));
            }
            if self.done {
                return None;
            }
            let sse = match &mut self.source {
                Source::Sse(sse) => sse,
                Source::Grpc { url, stream } => {
                    return match stream.message().await {
                        // Fast path: a plain artifact chunk moved from prost into the typed
                        // event; anything else through ProtoJSON and the `Value` path.
                        Ok(Some(m)) => Some(match grpc::stream_typed(m) {
                            Ok(event) => {
                                let event: SharedStreamResponse = event.into();
                                let lacks = match &event {
                                    SharedStreamResponse::ArtifactChunk(c) => required::chunk(c),
                                    SharedStreamResponse::Other(_) => Vec::new(),
                                };
                                Ok(StreamItem {
                                    event,
                                    unknown_states: Vec::new(),
                                    lacks,
                                })
                            }
                            // Proto3 cannot tell an absent state from UNSPECIFIED.
                            Err(m) => grpc::stream_value(&m)
                                .and_then(|v| self.decode_result(v, Vec::new(), false)),
                        }),
                        Ok(None) => {
                            self.done = true;
                            None
                        }
                        Err(s) => {
                            self.done = true;
                            Some(Err(grpc::stream_status_error(url, &s)))
                        }
                    };
                }
                Source::Empty => {
                    self.done = true;
                    return None;
                }
            };
            match sse.resp.chunk().await {
                Ok(Some(bytes)) => {
                    let mut out = Vec::new();
                    let r = sse.decoder.feed_bytes(&bytes, &mut out);
                    sse.events.extend(out);
                    if let Err(e) = r {
                        self.done = true;
                        self.pending
                            .push_back(Err(ClientError::AgentProtocol(format!("SSE: {e}"))));
                    }
                }
                Ok(None) => {
                    self.done = true;
                    if let Err(e) = sse.decoder.finish() {
                        self.pending
                            .push_back(Err(ClientError::AgentProtocol(format!("SSE: {e}"))));
                    }
                }
                Err(e) => {
                    self.done = true;
                    self.pending
                        .push_back(Err(ClientError::Transport(format!("stream dropped: {e}"))));
                }
            }
        }
    }

    /// Decode one event's value; `state_presence`: whether an absent `status.state` can be told
    /// from UNSPECIFIED (the JSON bindings).
    fn decode_result(
        &self,
        mut v: Value,
        mut unknown: Vec<String>,
        state_presence: bool,
    ) -> Result<StreamItem, ClientError> {
        let lacks = required::stream_response(&v, state_presence);
        unknown.extend(sanitize_states(&mut v));
        let event = a2a_protocol::codec::decode_value::<StreamResponse>(&v)
            .map_err(|e| ClientError::AgentProtocol(format!("{} event: {e}", self.method)))?;
        Ok(StreamItem {
            event: event.into(),
            unknown_states: unknown,
            lacks,
        })
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use a2a_protocol::sse::SseEvent;
    use serde_json::json;

    /// The event of `data` as the SSE decoder's shared-bytes path gives it.
    fn shared(ev: &SseEvent) -> SseEventBytes {
        SseEventBytes {
            event: ev.event.clone(),
            data: bytes::Bytes::from(ev.data.clone()),
            id: ev.id.clone(),
            retry: ev.retry,
        }
    }

    #[test]
    fn unknown_states_become_unspecified() {
        let mut v = json!({"task": {"id": "t", "status": {"state": "TASK_STATE_PAUSED"},
            "metadata": {"status": {"state": "keep-me"}}}});
        let r = sanitize_states(&mut v);
        assert_eq!(r, vec!["\"TASK_STATE_PAUSED\"".to_string()]);
        assert_eq!(v["task"]["status"]["state"], "TASK_STATE_UNSPECIFIED");
        assert_eq!(v["task"]["metadata"]["status"]["state"], "keep-me");
        let mut ok = json!({"statusUpdate": {"status": {"state": "working"}}});
        assert!(sanitize_states(&mut ok).is_empty());
        let mut num = json!({"id": "t", "status": {"state": 42}});
        assert_eq!(sanitize_states(&mut num).len(), 1);
    }

    /// The `Value` path (the fallback, and the only path before the typed one existed).
    fn value_path(ev: SseEvent, rest_framing: bool, id: &Id) -> Result<StreamItem, String> {
        let v = if rest_framing {
            rest::event_value(ev)
        } else {
            jsonrpc::event_value(Method::SendStreamingMessage, ProtocolVersion::V1_0, id, ev)
        };
        let mut v = v.map_err(|e| e.to_string())?;
        let unknown_states = sanitize_states(&mut v);
        let event =
            a2a_protocol::codec::decode_value::<StreamResponse>(&v).map_err(|e| e.to_string())?;
        Ok(StreamItem {
            event: event.into(),
            unknown_states,
            lacks: Vec::new(),
        })
    }

    /// What [`EventStream::next`] yields for one SSE payload: the typed path when it decodes,
    /// else the `Value` path.
    fn both_paths(
        result: Value,
    ) -> (
        Option<Result<StreamItem, String>>,
        Result<StreamItem, String>,
    ) {
        let id = Id::from("r-1");
        let env = json!({"jsonrpc": "2.0", "id": "r-1", "result": result.clone()});
        let ev = |data: String| SseEvent {
            event: None,
            data,
            id: None,
            retry: None,
        };
        // JSON-RPC framing.
        let typed = jsonrpc::event_typed(
            Method::SendStreamingMessage,
            ProtocolVersion::V1_0,
            &id,
            &shared(&ev(env.to_string())),
        )
        .map(|r| {
            r.map(|event| StreamItem {
                event,
                unknown_states: Vec::new(),
                lacks: Vec::new(),
            })
            .map_err(|e| e.to_string())
        });
        let old = value_path(ev(env.to_string()), false, &id);
        // REST framing agrees with JSON-RPC framing.
        let typed_rest = rest::event_typed(&shared(&ev(result.to_string()))).map(|r| {
            r.map(|event| StreamItem {
                event,
                unknown_states: Vec::new(),
                lacks: Vec::new(),
            })
            .map_err(|e| e.to_string())
        });
        let old_rest = value_path(ev(result.to_string()), true, &id);
        assert_eq!(typed, typed_rest);
        // Error messages differ between framings; outcomes do not.
        assert_eq!(old.as_ref().ok(), old_rest.as_ref().ok());
        assert_eq!(old.is_ok(), old_rest.is_ok());
        (typed, old)
    }

    #[test]
    fn typed_fast_path_matches_the_value_path() {
        use base64::Engine;
        let bytes: Vec<u8> = (0..=255u8).cycle().take(3001).collect();
        let std_pad = base64::engine::general_purpose::STANDARD.encode(&bytes);
        let std_nopad = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes);
        let url_pad = base64::engine::general_purpose::URL_SAFE.encode(&bytes);
        let url_nopad = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes);
        assert!(url_nopad.contains(['-', '_']));
        let text = "plain \"quoted\" \\ back\nslash, unicode \u{e9}\u{1F600}, ".repeat(500);
        let art = |parts: Value, append: bool, last: bool, id: &str| {
            json!({"artifactUpdate": {"taskId": "t-1", "contextId": "c-1", "append": append,
                "lastChunk": last, "artifact": {"artifactId": id, "name": "out", "parts": parts}}})
        };
        let good = vec![
            art(json!([{"text": text}]), false, false, "a1"),
            art(
                json!([{"text": "x", "mediaType": "text/markdown"}]),
                true,
                true,
                "a1",
            ),
            art(json!([{"raw": std_pad}]), true, false, "a2"),
            art(json!([{"raw": std_nopad}]), true, false, "a2"),
            art(json!([{"raw": url_pad}]), true, false, "a3"),
            art(json!([{"raw": url_nopad}, {"raw": ""}]), true, true, "a3"),
            art(
                json!([{"data": {"k": [1, 2.5, "s", null, {"n": true}]}}]),
                false,
                true,
                "a4",
            ),
            art(
                json!([{"url": "http://example.invalid/x"}]),
                false,
                true,
                "a5",
            ),
            json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1",
                "status": {"state": "TASK_STATE_WORKING"}}}),
            json!({"task": {"id": "t-1", "contextId": "c-1",
                "status": {"state": "TASK_STATE_COMPLETED"},
                "artifacts": [{"artifactId": "a1", "parts": [{"raw": url_nopad}]}]}}),
            json!({"message": {"messageId": "m", "role": "ROLE_AGENT",
                "parts": [{"text": "hi"}]}}),
        ];
        for r in good {
            let (typed, old) = both_paths(r.clone());
            let typed = typed.unwrap_or_else(|| panic!("no fast path for {r}"));
            assert_eq!(typed, old, "{r}");
            assert!(old.is_ok(), "{r}: {old:?}");
        }
        // Raw parts decode to the same bytes whatever the alphabet and padding.
        for b64 in [&std_pad, &std_nopad, &url_pad, &url_nopad] {
            let (typed, _) = both_paths(art(json!([{"raw": b64}]), false, true, "a"));
            let Some(Ok(StreamItem {
                event: SharedStreamResponse::ArtifactChunk(u),
                ..
            })) = typed
            else {
                panic!("not decoded: {b64}");
            };
            assert_eq!(u.parts[0].content.inline_bytes().unwrap().as_ref(), bytes);
        }
        // Unknown states and bad shapes leave the fast path; the Value path records the states
        // and reports the errors, as before.
        let fallback = vec![
            json!({"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_PAUSED"}}}),
            json!({"task": {"id": "t-1", "status": {"state": 42}}}),
            art(json!([{"raw": "not base64!"}]), false, true, "a"),
            json!({"nothing": {}}),
            json!([1, 2]),
        ];
        for r in fallback {
            let (typed, old) = both_paths(r.clone());
            assert!(typed.is_none(), "{r}: {typed:?}");
            if r.pointer("/statusUpdate/status/state").is_some()
                || r.pointer("/task/status/state").is_some()
            {
                let item = old.unwrap_or_else(|e| panic!("{r}: {e}"));
                assert_eq!(item.unknown_states.len(), 1, "{r}");
            } else {
                assert!(old.is_err(), "{r}");
            }
        }
    }

    #[test]
    fn grpc_fast_path_matches_the_protojson_path() {
        use a2a_protocol::grpc::pb;
        let part = |c: pb::part::Content, media: &str, file: &str| pb::Part {
            metadata: None,
            filename: file.into(),
            media_type: media.into(),
            content: Some(c),
        };
        let frame =
            |name: &str, parts: Vec<pb::Part>, append: bool, last: bool| pb::StreamResponse {
                payload: Some(pb::stream_response::Payload::ArtifactUpdate(
                    pb::TaskArtifactUpdateEvent {
                        task_id: "t-1".into(),
                        context_id: "".into(),
                        artifact: Some(pb::Artifact {
                            artifact_id: "a1".into(),
                            name: name.into(),
                            description: "".into(),
                            parts,
                            metadata: None,
                            extensions: vec!["urn:x".into()],
                        }),
                        append,
                        last_chunk: last,
                        metadata: None,
                    },
                )),
            };
        let bytes: Vec<u8> = (0..=255u8).cycle().take(70_001).collect();
        let frames = [
            frame(
                "out",
                vec![
                    part(pb::part::Content::Text("héllo \"x\"\n".repeat(999)), "", ""),
                    part(
                        pb::part::Content::Raw(bytes.clone()),
                        "application/x",
                        "f.bin",
                    ),
                    part(pb::part::Content::Raw(Vec::new()), "", ""),
                    part(pb::part::Content::Url("http://h/x".into()), "", ""),
                ],
                true,
                false,
            ),
            frame("", vec![], false, true),
        ];
        for m in frames {
            let mut v = grpc::stream_value(&m).unwrap();
            assert!(sanitize_states(&mut v).is_empty());
            let old = a2a_protocol::codec::decode_value::<StreamResponse>(&v).unwrap();
            let typed = grpc::stream_typed(m).unwrap_or_else(|_| panic!("no fast path"));
            assert_eq!(typed, old);
        }
        // Data parts, metadata and other events take the ProtoJSON path.
        let status = pb::StreamResponse {
            payload: Some(pb::stream_response::Payload::StatusUpdate(
                pb::TaskStatusUpdateEvent::default(),
            )),
        };
        assert!(grpc::stream_typed(status).is_err());
        let mut meta = frame("x", vec![], false, false);
        if let Some(pb::stream_response::Payload::ArtifactUpdate(u)) = &mut meta.payload {
            u.metadata = Some(Default::default());
        }
        assert!(grpc::stream_typed(meta).is_err());
    }

    #[test]
    fn typed_fast_path_keeps_the_id_and_error_checks() {
        let id = Id::from("r-1");
        let ev = |v: Value| SseEventBytes {
            event: None,
            data: v.to_string().into(),
            id: None,
            retry: None,
        };
        let ok =
            json!({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_WORKING"}}});
        let wrong = ev(json!({"jsonrpc": "2.0", "id": "other", "result": ok}));
        let r = jsonrpc::event_typed(
            Method::SendStreamingMessage,
            ProtocolVersion::V1_0,
            &id,
            &wrong,
        )
        .unwrap_or_else(|| panic!("fast path"));
        assert!(r.unwrap_err().is_agent_protocol());
        let err = ev(json!({"jsonrpc": "2.0", "id": "r-1",
            "error": {"code": -32001, "message": "Task not found"}}));
        let r = jsonrpc::event_typed(
            Method::SendStreamingMessage,
            ProtocolVersion::V1_0,
            &id,
            &err,
        )
        .unwrap_or_else(|| panic!("fast path"));
        assert_eq!(r.unwrap_err().code(), Some(-32001));
        // 0.3 agents always take the Value path (the compat adapter).
        let v03 = ev(json!({"jsonrpc": "2.0", "id": "r-1", "result": ok}));
        assert!(
            jsonrpc::event_typed(
                Method::SendStreamingMessage,
                ProtocolVersion::V0_3,
                &id,
                &v03
            )
            .is_none()
        );
    }

    #[test]
    fn transient_classification() {
        let h = |s| ClientError::Http {
            status: s,
            retry_after: None,
        };
        assert!(h(503).is_transient());
        assert!(h(429).is_transient());
        assert!(!h(401).is_transient());
        assert!(!h(404).is_transient());
        assert!(ClientError::Transport("x".into()).is_transient());
        assert!(
            ClientError::Connect {
                url: "u".into(),
                message: "m".into()
            }
            .is_transient()
        );
        let rpc = ClientError::Rpc(a2a_protocol::ErrorCode::Internal.to_error(None, &[]));
        assert!(!rpc.is_transient());
        assert_eq!(rpc.code(), Some(-32603));
    }

    #[test]
    fn retry_after_forms() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon"), None);
    }
}
