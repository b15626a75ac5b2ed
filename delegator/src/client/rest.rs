//! The HTTP+JSON (REST) binding: an HTTP method and path per operation
//! ([`a2a_protocol::rest::RestRequest`]), bodies that are the JSON-RPC `params` and `result`
//! objects, SSE of bare `StreamResponse`s, and AIP-193 error bodies normalized to JSON-RPC form
//! ([`a2a_protocol::rest::error_from_body`]) so the same handlers serve every binding.
//!
//! 429 and 5xx stay transient [`ClientError::Http`] (with `Retry-After`). A 404 or 405 without an
//! A2A `ErrorInfo` is the router's "no such operation" (`-32601`, a fallback trigger, like gRPC
//! `UNIMPLEMENTED`). `SubscribeToTask` is POSTed and, on 405, retried once with GET (the
//! specification and its proto disagree on the verb).

use super::{
    CallResult, ClientError, Endpoint, EventStream, MAX_RESPONSE_BYTES, RpcClient, SseFraming,
    classify, is_event_stream, read_limited, retry_after_of,
};
use a2a_protocol::artifact_chunk::{SharedStreamResponse, decode_stream_response};
use a2a_protocol::jsonrpc::JsonRpcError;
use a2a_protocol::rest::{self, HttpMethod, REST_CONTENT_TYPE, RestRequest};
use a2a_protocol::sse::{SseEvent, SseEventBytes};
use a2a_protocol::version::{ProtocolVersion, VERSION_HEADER};
use a2a_protocol::{ErrorCode, Method};
use reqwest::StatusCode;
use serde_json::Value;
use std::time::Duration;

const ACCEPT_JSON: &str = "application/a2a+json, application/json";

impl RpcClient {
    fn rest_build(
        &self,
        ep: &Endpoint,
        method: Method,
        mut params: Value,
        auth: Option<&str>,
        streaming: bool,
        verb: Option<HttpMethod>,
    ) -> Result<reqwest::RequestBuilder, ClientError> {
        if ep.version != ProtocolVersion::V1_0 {
            return Err(ClientError::NotAvailable(
                method.as_str(),
                "0.3 HTTP+JSON (only 0.3 JSON-RPC is adapted)",
            ));
        }
        if let (Some(t), Value::Object(m)) = (&ep.tenant, &mut params) {
            m.insert("tenant".into(), Value::String(t.clone()));
        }
        let req = RestRequest::new(method, &params)
            .map_err(|e| ClientError::Protocol(format!("HTTP+JSON request: {e}")))?;
        let url = rest::join_url(&ep.url, &req.path_and_query());
        let http_method = match verb.unwrap_or(req.http_method) {
            HttpMethod::Get => reqwest::Method::GET,
            HttpMethod::Post => reqwest::Method::POST,
            HttpMethod::Delete => reqwest::Method::DELETE,
        };
        let is_post = http_method == reqwest::Method::POST;
        let mut rb = self
            .http
            .request(http_method, url)
            .header(VERSION_HEADER, ep.version.header_value())
            .header(
                "Accept",
                if streaming {
                    "text/event-stream"
                } else {
                    ACCEPT_JSON
                },
            );
        if is_post {
            let body = req
                .body
                .unwrap_or_else(|| Value::Object(Default::default()));
            let bytes = serde_json::to_vec(&body)
                .map_err(|e| ClientError::Protocol(format!("HTTP+JSON body: {e}")))?;
            rb = rb.header("Content-Type", REST_CONTENT_TYPE).body(bytes);
        }
        if let Some(x) = ep.extensions_header() {
            rb = rb.header(super::EXTENSIONS_HEADER, x);
        }
        if let Some(a) = auth {
            rb = rb.header(reqwest::header::AUTHORIZATION, super::auth_header(a)?);
        }
        Ok(rb)
    }

    /// A unary HTTP+JSON call. `timeout` bounds the whole exchange.
    pub(super) async fn rest_call(
        &self,
        ep: &Endpoint,
        method: Method,
        params: Value,
        auth: Option<&str>,
        timeout: Duration,
    ) -> Result<CallResult, ClientError> {
        let rb = self.rest_build(ep, method, params, auth, false, None)?;
        let _permit = self.permit(&ep.url, method, timeout).await?;
        let resp = rb
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| classify(&ep.url, e))?;
        let status = resp.status();
        let retry_after = retry_after_of(&resp);
        let body = read_limited(resp, MAX_RESPONSE_BYTES).await?;
        if !status.is_success() {
            return Err(error_of(status, retry_after, &body));
        }
        if body.iter().all(u8::is_ascii_whitespace) {
            // An empty 200 (a Delete answered without `{}`): the empty object.
            return Ok(CallResult::of(Value::Object(Default::default())));
        }
        let v: Value = serde_json::from_slice(&body).map_err(|_| {
            ClientError::Protocol(format!("{method} reply is not JSON ({} bytes)", body.len()))
        })?;
        if !v.is_object() {
            return Err(ClientError::Protocol(format!(
                "{method} reply is not a JSON object"
            )));
        }
        Ok(CallResult::of(v))
    }

    /// Open an HTTP+JSON stream (SSE of bare `StreamResponse`s).
    pub(super) async fn rest_stream(
        &self,
        ep: &Endpoint,
        method: Method,
        params: Value,
        auth: Option<&str>,
        head_timeout: Duration,
    ) -> Result<EventStream, ClientError> {
        let send = |verb: Option<HttpMethod>| {
            let rb = self.rest_build(ep, method, params.clone(), auth, true, verb);
            async move {
                let rb = rb?;
                tokio::time::timeout(head_timeout, rb.send())
                    .await
                    .map_err(|_| {
                        ClientError::Transport(format!("{method}: no response head in time"))
                    })?
                    .map_err(|e| classify(&ep.url, e))
            }
        };
        let permit = self.permit(&ep.url, method, head_timeout).await?;
        let mut resp = send(None).await?;
        if method == Method::SubscribeToTask && resp.status() == StatusCode::METHOD_NOT_ALLOWED {
            tracing::debug!("{} answered 405 to POST :subscribe; trying GET", ep.url);
            resp = send(Some(HttpMethod::Get)).await?;
        }
        let status = resp.status();
        let retry_after = retry_after_of(&resp);
        if !status.is_success() || !is_event_stream(&resp) {
            let body = tokio::time::timeout(head_timeout, read_limited(resp, MAX_RESPONSE_BYTES))
                .await
                .map_err(|_| {
                    ClientError::Transport(format!("{method}: body not read in time"))
                })??;
            if !status.is_success() {
                return Err(error_of(status, retry_after, &body));
            }
            // A JSON reply instead of SSE: one StreamResponse (or an error body).
            let v: Value = serde_json::from_slice(&body).map_err(|_| {
                ClientError::Protocol(format!("{method} reply is neither SSE nor JSON"))
            })?;
            if let Some(e) = v.get("error").and_then(|_| rest::error_from_body(500, &v)) {
                return Err(ClientError::Rpc(e));
            }
            return Ok(EventStream::one(method, v, Vec::new()));
        }
        Ok(EventStream::sse(
            method,
            resp,
            self.max_event_bytes,
            SseFraming::Rest,
            permit,
        ))
    }
}

/// The error a non-2xx HTTP+JSON response stands for.
fn error_of(status: StatusCode, retry_after: Option<Duration>, body: &[u8]) -> ClientError {
    let code = status.as_u16();
    if status.is_server_error() || code == 429 {
        return ClientError::Http {
            status: code,
            retry_after,
        };
    }
    let parsed: Option<Value> = serde_json::from_slice(body).ok();
    let err = parsed.as_ref().and_then(|v| rest::error_from_body(code, v));
    let routed = |e: &Option<JsonRpcError>| e.as_ref().is_some_and(|e| e.error_info().is_some());
    if matches!(code, 404 | 405) && !routed(&err) {
        // No A2A ErrorInfo: the router does not know the operation.
        let detail = err.map(|e| e.message).unwrap_or_default();
        return ClientError::Rpc(JsonRpcError {
            code: ErrorCode::MethodNotFound.code(),
            message: format!("HTTP {code} without an A2A error: no such operation {detail}")
                .trim_end()
                .to_string(),
            data: None,
        });
    }
    match err {
        Some(e) if code != 415 => ClientError::Rpc(e),
        _ => ClientError::Http {
            status: code,
            retry_after,
        },
    }
}

/// The fast path of [`event_value`] plus decoding: a bare `StreamResponse` decoded once from the
/// SSE payload's text (no `Value`). `None` for an `event: error` event or when the typed decode
/// fails: the caller then takes the `Value` path (unknown states, error bodies, messages).
pub(super) fn event_typed(ev: &SseEventBytes) -> Option<Result<SharedStreamResponse, ClientError>> {
    if ev.event.as_deref() == Some("error") {
        return None;
    }
    decode_stream_response(&ev.data).ok().map(Ok)
}

/// The `StreamResponse` an SSE event of an HTTP+JSON stream carries; `event: error` is an error
/// (the Python SDK's form of a failure after the stream started).
pub(super) fn event_value(ev: SseEvent) -> Result<Value, ClientError> {
    let v: Value = serde_json::from_str(&ev.data)
        .map_err(|e| ClientError::AgentProtocol(format!("SSE data is not JSON: {e}")))?;
    if ev.event.as_deref() == Some("error") {
        let status = v
            .pointer("/error/code")
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok())
            .filter(|c| (400..600).contains(c))
            .unwrap_or(500);
        return match rest::error_from_body(status, &v) {
            Some(e) => Err(ClientError::Rpc(e)),
            None => Err(ClientError::AgentProtocol(format!(
                "SSE error event without an error body: {}",
                ev.data.chars().take(200).collect::<String>()
            ))),
        };
    }
    if !v.is_object() {
        return Err(ClientError::AgentProtocol(
            "SSE data is not a StreamResponse object".into(),
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(status: u16, body: Value) -> ClientError {
        error_of(
            StatusCode::from_u16(status).unwrap(),
            None,
            body.to_string().as_bytes(),
        )
    }

    #[test]
    fn error_bodies_map_to_the_json_rpc_handlers() {
        let (s, body) = rest::error_body(&ErrorCode::TaskNotFound.to_error(None, &[]));
        let e = err(s, body);
        assert_eq!(e.code(), Some(ErrorCode::TaskNotFound.code()));
        assert!(!e.is_unserved(a2a_protocol::Binding::Rest));
        // A router 404 (no ErrorInfo) is an unknown operation, and a fallback trigger.
        let e = err(404, json!({"detail": "Not Found"}));
        assert_eq!(e.code(), Some(-32601));
        assert!(e.is_unserved(a2a_protocol::Binding::Rest));
        let e = err(
            405,
            json!({"error": {"code": 405, "status": "UNIMPLEMENTED", "message": "x"}}),
        );
        assert!(e.is_unserved(a2a_protocol::Binding::Rest));
        assert!(err(415, json!({})).is_unserved(a2a_protocol::Binding::Rest));
        // 429 and 5xx stay transient HTTP errors.
        assert!(err(503, json!({})).is_transient());
        assert_eq!(err(429, json!({})).http_status(), Some(429));
        let (s, body) = rest::error_body(&ErrorCode::TaskNotCancelable.to_error(None, &[]));
        assert_eq!(
            err(s, body).code(),
            Some(ErrorCode::TaskNotCancelable.code())
        );
        assert_eq!(err(401, json!(null)).http_status(), Some(401));
    }

    #[test]
    fn sse_error_events_are_errors() {
        let (_, body) = rest::error_body(&ErrorCode::TaskNotFound.to_error(None, &[]));
        let ev = SseEvent {
            event: Some("error".into()),
            data: body.to_string(),
            id: None,
            retry: None,
        };
        let e = event_value(ev).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::TaskNotFound.code()));
        let ok = SseEvent {
            event: None,
            data: r#"{"task":{"id":"t"}}"#.into(),
            id: None,
            retry: None,
        };
        assert!(event_value(ok).is_ok());
    }
}
