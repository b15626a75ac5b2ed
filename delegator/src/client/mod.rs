//! The A2A JSON-RPC client: unary calls, SSE streams, and error classification.
//!
//! One `reqwest::Client` (no proxy, connect timeout) serves every agent. Every request carries
//! `A2A-Version` (`1.0`, or `0.3` for a 0.3 agent) and, only when the caller passes one, an
//! `Authorization` header; the delegator's own credential is never given to this client. A 0.3
//! agent is spoken to through [`a2a_protocol::compat03`]: params are translated with `to_v03`,
//! results back with `to_v1`, so the rest of the delegator only sees 1.0 objects.
//!
//! Responses are read with a size bound; task states this program does not know are rewritten to
//! `TASK_STATE_UNSPECIFIED` before decoding (so an unknown state is observed, not a decode error).
//! Every response and every stream event must echo the request's JSON-RPC `id`; one that does not,
//! and a stream event that is not a valid JSON-RPC response carrying a `StreamResponse`, is a
//! [`ClientError::AgentProtocol`] error: definite, never retried.

use a2a_protocol::compat03::{self, ObjectKind};
use a2a_protocol::jsonrpc::{Id, JsonRpcError, JsonRpcRequest, JsonRpcResponse};
use a2a_protocol::sse::{SseDecoder, SseEvent};
use a2a_protocol::version::{ProtocolVersion, VERSION_HEADER};
use a2a_protocol::{Method, StreamResponse, TaskState};
use serde_json::Value;
use std::collections::VecDeque;
use std::time::Duration;

/// The largest unary response body accepted.
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// Where and how to call an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The JSON-RPC URL.
    pub url: String,
    /// Protocol version (0.3 through the compat adapter).
    pub version: ProtocolVersion,
    /// Tenant to copy into every request, from the card's interface.
    pub tenant: Option<String>,
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
    /// A non-2xx HTTP status without a JSON-RPC error body.
    #[error("HTTP {status}{}", retry_after.map(|d| format!(" (Retry-After {}s)", d.as_secs())).unwrap_or_default())]
    Http {
        /// The status.
        status: u16,
        /// `Retry-After`, when given.
        retry_after: Option<Duration>,
    },
    /// A JSON-RPC error: a definite answer.
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
        }
    }

    /// Whether the agent broke the protocol (see [`ClientError::AgentProtocol`]).
    pub fn is_agent_protocol(&self) -> bool {
        matches!(self, ClientError::AgentProtocol(_))
    }

    /// The JSON-RPC code, for an RPC error.
    pub fn code(&self) -> Option<i64> {
        match self {
            ClientError::Rpc(e) => Some(e.code),
            _ => None,
        }
    }

    /// The HTTP status, for an HTTP error.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            ClientError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// `Retry-After`, for an HTTP error that carried one.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            ClientError::Http { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
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

/// The JSON-RPC client.
#[derive(Debug, Clone)]
pub struct RpcClient {
    http: reqwest::Client,
    max_event_bytes: usize,
}

/// What a unary call returns: the 1.0 `result` and any unknown state names that were replaced.
#[derive(Debug, Clone)]
pub struct CallResult {
    /// The result, in 1.0 form.
    pub result: Value,
    /// Raw state names rewritten to UNSPECIFIED.
    pub unknown_states: Vec<String>,
}

impl RpcClient {
    /// A client whose SSE events are limited to `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Result<Self, ClientError> {
        let http = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(Duration::from_secs(5))
            .pool_idle_timeout(Duration::from_secs(30))
            .build()
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        Ok(RpcClient {
            http,
            max_event_bytes,
        })
    }

    /// The underlying HTTP client (card and artifact fetches share it).
    pub fn http(&self) -> &reqwest::Client {
        &self.http
    }

    fn build(
        &self,
        ep: &Endpoint,
        method: Method,
        params: Value,
        auth: Option<&str>,
        streaming: bool,
    ) -> Result<(reqwest::RequestBuilder, Id), ClientError> {
        let name = method.name_in(ep.version).ok_or(ClientError::NotAvailable(
            method.as_str(),
            ep.version.as_str(),
        ))?;
        let mut params = match ep.version {
            ProtocolVersion::V1_0 => params,
            ProtocolVersion::V0_3 => match ObjectKind::params_of(method.as_str()) {
                Some(kind) => compat03::to_v03(kind, &params)
                    .map_err(|e| ClientError::Protocol(format!("0.3 adapter: {e}")))?,
                None => params,
            },
        };
        if let (Some(t), Value::Object(m)) = (&ep.tenant, &mut params) {
            m.insert("tenant".into(), Value::String(t.clone()));
        }
        let id = Id::String(uuid::Uuid::new_v4().to_string());
        let body = JsonRpcRequest::new(id.clone(), name, params);
        let mut rb = self
            .http
            .post(&ep.url)
            .header(VERSION_HEADER, ep.version.header_value())
            .header(
                "Accept",
                if streaming {
                    "text/event-stream"
                } else {
                    "application/json"
                },
            )
            .json(&body);
        if let Some(a) = auth {
            rb = rb.header("Authorization", a);
        }
        Ok((rb, id))
    }

    /// A unary call. `timeout` bounds the whole exchange.
    pub async fn call(
        &self,
        ep: &Endpoint,
        method: Method,
        params: Value,
        auth: Option<&str>,
        timeout: Duration,
    ) -> Result<CallResult, ClientError> {
        let (rb, id) = self.build(ep, method, params, auth, false)?;
        let resp = rb
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| classify(&ep.url, e))?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let body = read_limited(resp, MAX_RESPONSE_BYTES).await?;
        let parsed: Option<Value> = serde_json::from_slice(&body).ok();
        if !status.is_success() {
            // A JSON-RPC error body is a definite answer whatever the HTTP status.
            if let Some(v) = &parsed
                && let Some(err) = v.get("error")
                && let Ok(e) = serde_json::from_value::<JsonRpcError>(err.clone())
                && !(status.is_server_error() || status.as_u16() == 429)
            {
                return Err(ClientError::Rpc(e));
            }
            return Err(ClientError::Http {
                status: status.as_u16(),
                retry_after,
            });
        }
        let v = parsed.ok_or_else(|| {
            ClientError::Protocol(format!("{method} reply is not JSON ({} bytes)", body.len()))
        })?;
        self.unwrap_response(ep, method, v, &id)
    }

    fn unwrap_response(
        &self,
        ep: &Endpoint,
        method: Method,
        v: Value,
        sent: &Id,
    ) -> Result<CallResult, ClientError> {
        let resp: JsonRpcResponse<Value> = serde_json::from_value(v)
            .map_err(|e| ClientError::Protocol(format!("{method} reply: {e}")))?;
        check_id(method, sent, &resp)?;
        let mut result = resp.payload.map_err(ClientError::Rpc)?;
        if ep.version == ProtocolVersion::V0_3
            && let Some(kind) = ObjectKind::result_of(method.as_str())
        {
            result = compat03::to_v1(kind, &result)
                .map_err(|e| ClientError::Protocol(format!("0.3 {method} result: {e}")))?;
        }
        let unknown_states = sanitize_states(&mut result);
        Ok(CallResult {
            result,
            unknown_states,
        })
    }

    /// Open a stream (`SendStreamingMessage` or `SubscribeToTask`). A JSON reply instead of
    /// `text/event-stream` is handled: an error becomes `Err`, a result becomes a one-event
    /// stream. `connect_timeout` bounds the time to the response head only.
    pub async fn stream(
        &self,
        ep: &Endpoint,
        method: Method,
        params: Value,
        auth: Option<&str>,
        head_timeout: Duration,
    ) -> Result<EventStream, ClientError> {
        let (rb, id) = self.build(ep, method, params, auth, true)?;
        let resp = tokio::time::timeout(head_timeout, rb.send())
            .await
            .map_err(|_| ClientError::Transport(format!("{method}: no response head in time")))?
            .map_err(|e| classify(&ep.url, e))?;
        let status = resp.status();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_retry_after);
        let is_sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
        if !status.is_success() || !is_sse {
            let body = tokio::time::timeout(head_timeout, read_limited(resp, MAX_RESPONSE_BYTES))
                .await
                .map_err(|_| {
                    ClientError::Transport(format!("{method}: body not read in time"))
                })??;
            let parsed: Option<Value> = serde_json::from_slice(&body).ok();
            if !status.is_success()
                && (status.is_server_error()
                    || status.as_u16() == 429
                    || parsed.as_ref().and_then(|v| v.get("error")).is_none())
            {
                return Err(ClientError::Http {
                    status: status.as_u16(),
                    retry_after,
                });
            }
            let v = parsed.ok_or_else(|| {
                ClientError::Protocol(format!("{method} reply is neither SSE nor JSON"))
            })?;
            let r = self.unwrap_response(ep, method, v, &id)?;
            let mut pending = VecDeque::new();
            pending.push_back(Ok((r.result, r.unknown_states)));
            return Ok(EventStream {
                resp: None,
                decoder: SseDecoder::new(self.max_event_bytes),
                events: VecDeque::new(),
                pending,
                version: ep.version,
                method,
                rpc_id: id,
                done: false,
            });
        }
        Ok(EventStream {
            resp: Some(resp),
            decoder: SseDecoder::new(self.max_event_bytes),
            events: VecDeque::new(),
            pending: VecDeque::new(),
            version: ep.version,
            method,
            rpc_id: id,
            done: false,
        })
    }
}

/// A response must echo the request's id; an error about a request the agent could not read
/// may carry `null` (JSON-RPC 2.0 §5).
fn check_id(method: Method, sent: &Id, resp: &JsonRpcResponse<Value>) -> Result<(), ClientError> {
    if &resp.id == sent || (resp.id == Id::Null && resp.payload.is_err()) {
        return Ok(());
    }
    Err(ClientError::AgentProtocol(format!(
        "{method} response carries JSON-RPC id {}, the request's was {sent}",
        resp.id
    )))
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
    /// The event.
    pub event: StreamResponse,
    /// Raw state names rewritten to UNSPECIFIED.
    pub unknown_states: Vec<String>,
}

/// An open SSE stream of [`StreamResponse`] events.
#[derive(Debug)]
pub struct EventStream {
    resp: Option<reqwest::Response>,
    decoder: SseDecoder,
    events: VecDeque<SseEvent>,
    pending: VecDeque<Result<(Value, Vec<String>), ClientError>>,
    version: ProtocolVersion,
    method: Method,
    rpc_id: Id,
    done: bool,
}

impl EventStream {
    /// The next event; `None` when the server closed the stream. An error ends the stream.
    pub async fn next(&mut self) -> Option<Result<StreamItem, ClientError>> {
        loop {
            if let Some(p) = self.pending.pop_front() {
                return Some(p.and_then(|(v, unknown)| self.decode_result(v, unknown)));
            }
            if let Some(ev) = self.events.pop_front() {
                return Some(self.decode_event(ev));
            }
            if self.done {
                return None;
            }
            let Some(resp) = self.resp.as_mut() else {
                self.done = true;
                return None;
            };
            match resp.chunk().await {
                Ok(Some(bytes)) => {
                    let mut out = Vec::new();
                    let r = self.decoder.feed(&bytes, &mut out);
                    self.events.extend(out);
                    if let Err(e) = r {
                        self.done = true;
                        self.pending
                            .push_back(Err(ClientError::AgentProtocol(format!("SSE: {e}"))));
                    }
                }
                Ok(None) => {
                    self.done = true;
                    if let Err(e) = self.decoder.finish() {
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

    fn decode_event(&self, ev: SseEvent) -> Result<StreamItem, ClientError> {
        let v: Value = serde_json::from_str(&ev.data)
            .map_err(|e| ClientError::AgentProtocol(format!("SSE data is not JSON: {e}")))?;
        let resp: JsonRpcResponse<Value> = serde_json::from_value(v).map_err(|e| {
            ClientError::AgentProtocol(format!("SSE event is not a JSON-RPC response: {e}"))
        })?;
        check_id(self.method, &self.rpc_id, &resp)?;
        let result = resp.payload.map_err(ClientError::Rpc)?;
        let result = if self.version == ProtocolVersion::V0_3 {
            compat03::to_v1(ObjectKind::StreamResult, &result)
                .map_err(|e| ClientError::AgentProtocol(format!("0.3 stream event: {e}")))?
        } else {
            result
        };
        self.decode_result(result, Vec::new())
    }

    fn decode_result(
        &self,
        mut v: Value,
        mut unknown: Vec<String>,
    ) -> Result<StreamItem, ClientError> {
        unknown.extend(sanitize_states(&mut v));
        let event = a2a_protocol::codec::decode_value::<StreamResponse>(&v)
            .map_err(|e| ClientError::AgentProtocol(format!("{} event: {e}", self.method)))?;
        Ok(StreamItem {
            event,
            unknown_states: unknown,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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

    fn resp(id: Id, ok: bool) -> JsonRpcResponse<Value> {
        if ok {
            JsonRpcResponse::success(id, json!({}))
        } else {
            JsonRpcResponse::error(id, a2a_protocol::ErrorCode::Internal.to_error(None, &[]))
        }
    }

    #[test]
    fn responses_must_echo_the_request_id() {
        let sent = Id::from("r-1");
        assert!(check_id(Method::GetTask, &sent, &resp(Id::from("r-1"), true)).is_ok());
        assert!(check_id(Method::GetTask, &sent, &resp(Id::from("r-1"), false)).is_ok());
        // An error about a request the agent could not read may carry null.
        assert!(check_id(Method::GetTask, &sent, &resp(Id::Null, false)).is_ok());
        for bad in [
            resp(Id::from("wrong"), true),
            resp(Id::from("wrong"), false),
            resp(Id::Null, true),
            resp(Id::from(1), true),
        ] {
            let e = check_id(Method::GetTask, &sent, &bad).unwrap_err();
            assert!(e.is_agent_protocol(), "{e}");
            assert!(!e.is_transient());
            assert!(e.to_string().contains("JSON-RPC id"), "{e}");
        }
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
