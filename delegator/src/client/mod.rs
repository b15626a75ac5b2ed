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

pub mod cap;
mod endpoint;
mod error;
mod grpc;
mod http;
mod jsonrpc;
pub mod required;
mod rest;
mod stream;
#[cfg(test)]
mod tests;

pub use endpoint::*;
pub use error::*;
pub use http::*;
pub use stream::*;

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
    /// HTTP requests in flight per agent ([`cap`]).
    cap: Arc<cap::ConnectionCap>,
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
            cap: Arc::new(cap::ConnectionCap::new(cap::DEFAULT_MAX_PER_AGENT)),
        })
    }

    /// The same client with at most `max` HTTP requests in flight to one agent at once
    /// ([`cap`]; the default is [`cap::DEFAULT_MAX_PER_AGENT`]).
    pub fn with_max_per_agent(mut self, max: usize) -> Self {
        self.cap = Arc::new(cap::ConnectionCap::new(max));
        self
    }

    /// HTTP requests in flight to `url`'s agent now.
    pub fn in_flight(&self, url: &str) -> usize {
        self.cap.in_flight(url)
    }

    /// A permit to send `method` to `url` ([`cap`]), waited for at most `wait`.
    async fn permit(
        &self,
        url: &str,
        method: Method,
        wait: Duration,
    ) -> Result<tokio::sync::OwnedSemaphorePermit, ClientError> {
        self.cap.acquire(url, wait).await.ok_or_else(|| {
            ClientError::Transport(format!(
                "{method}: none of the {} connections to {url} came free within {wait:?}",
                self.cap.max()
            ))
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
