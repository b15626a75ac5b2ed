//! The JSON-RPC binding: one POST endpoint, the method in the body, SSE of JSON-RPC responses.
//! A 0.3 agent is spoken to through [`a2a_protocol::compat03`]: params are translated with
//! `to_v03`, results back with `to_v1`.

use super::{
    CallResult, ClientError, Endpoint, EventStream, MAX_RESPONSE_BYTES, RpcClient, SseFraming,
    classify, is_event_stream, read_limited, retry_after_of,
};
use a2a_protocol::Method;
use a2a_protocol::artifact_chunk::{SharedStreamResponse, decode_jsonrpc_stream_response};
use a2a_protocol::compat03::{self, ObjectKind};
use a2a_protocol::jsonrpc::{Id, JsonRpcError, JsonRpcRequest, JsonRpcResponse};
use a2a_protocol::sse::{SseEvent, SseEventBytes};
use a2a_protocol::version::{ProtocolVersion, VERSION_HEADER};
use serde_json::Value;
use std::time::Duration;

impl RpcClient {
    fn jsonrpc_build(
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
        if let Some(x) = ep.extensions_header() {
            rb = rb.header(super::EXTENSIONS_HEADER, x);
        }
        if let Some(a) = auth {
            rb = rb.header(reqwest::header::AUTHORIZATION, super::auth_header(a)?);
        }
        Ok((rb, id))
    }

    /// A unary JSON-RPC call. `timeout` bounds the whole exchange.
    pub(super) async fn jsonrpc_call(
        &self,
        ep: &Endpoint,
        method: Method,
        params: Value,
        auth: Option<&str>,
        timeout: Duration,
    ) -> Result<CallResult, ClientError> {
        let (rb, id) = self.jsonrpc_build(ep, method, params, auth, false)?;
        let _permit = self.permit(&ep.url, method, timeout).await?;
        let resp = rb
            .timeout(timeout)
            .send()
            .await
            .map_err(|e| classify(&ep.url, e))?;
        let status = resp.status();
        let retry_after = retry_after_of(&resp);
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
        unwrap_response(ep.version, method, v, &id)
    }

    /// Open a JSON-RPC stream.
    pub(super) async fn jsonrpc_stream(
        &self,
        ep: &Endpoint,
        method: Method,
        params: Value,
        auth: Option<&str>,
        head_timeout: Duration,
    ) -> Result<EventStream, ClientError> {
        let (rb, id) = self.jsonrpc_build(ep, method, params, auth, true)?;
        let permit = self.permit(&ep.url, method, head_timeout).await?;
        let resp = tokio::time::timeout(head_timeout, rb.send())
            .await
            .map_err(|_| ClientError::Transport(format!("{method}: no response head in time")))?
            .map_err(|e| classify(&ep.url, e))?;
        let status = resp.status();
        let retry_after = retry_after_of(&resp);
        if !status.is_success() || !is_event_stream(&resp) {
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
            let r = unwrap_response(ep.version, method, v, &id)?;
            return Ok(EventStream::one(method, r.result, r.unknown_states));
        }
        Ok(EventStream::sse(
            method,
            resp,
            self.max_event_bytes,
            SseFraming::JsonRpc {
                version: ep.version,
                rpc_id: id,
            },
            permit,
        ))
    }
}

fn unwrap_response(
    version: ProtocolVersion,
    method: Method,
    v: Value,
    sent: &Id,
) -> Result<CallResult, ClientError> {
    let resp: JsonRpcResponse<Value> = serde_json::from_value(v)
        .map_err(|e| ClientError::Protocol(format!("{method} reply: {e}")))?;
    check_id(method, sent, &resp)?;
    let mut result = resp.payload.map_err(ClientError::Rpc)?;
    if version == ProtocolVersion::V0_3
        && let Some(kind) = ObjectKind::result_of(method.as_str())
    {
        result = compat03::to_v1(kind, &result)
            .map_err(|e| ClientError::Protocol(format!("0.3 {method} result: {e}")))?;
    }
    Ok(CallResult::of(result))
}

/// The `StreamResponse` (1.0 form) an SSE event of a JSON-RPC stream carries.
pub(super) fn event_value(
    method: Method,
    version: ProtocolVersion,
    rpc_id: &Id,
    ev: SseEvent,
) -> Result<Value, ClientError> {
    let v: Value = serde_json::from_str(&ev.data)
        .map_err(|e| ClientError::AgentProtocol(format!("SSE data is not JSON: {e}")))?;
    let resp: JsonRpcResponse<Value> = serde_json::from_value(v).map_err(|e| {
        ClientError::AgentProtocol(format!("SSE event is not a JSON-RPC response: {e}"))
    })?;
    check_id(method, rpc_id, &resp)?;
    let result = resp.payload.map_err(ClientError::Rpc)?;
    if version == ProtocolVersion::V0_3 {
        compat03::to_v1(ObjectKind::StreamResult, &result)
            .map_err(|e| ClientError::AgentProtocol(format!("0.3 stream event: {e}")))
    } else {
        Ok(result)
    }
}

/// The fast path of [`event_value`] plus decoding: the SSE payload of a 1.0 stream decoded once,
/// from its bytes straight into the typed envelope and event
/// ([`decode_jsonrpc_stream_response`]: an artifact chunk's text stays in the payload). `None`
/// when that typed decode fails (or for a 0.3 agent): the caller then takes the `Value` path,
/// which owns leniency (unknown task states) and the error messages. Id and error checks are the
/// same as on that path.
pub(super) fn event_typed(
    method: Method,
    version: ProtocolVersion,
    rpc_id: &Id,
    ev: &SseEventBytes,
) -> Option<Result<SharedStreamResponse, ClientError>> {
    if version != ProtocolVersion::V1_0 {
        return None;
    }
    let resp = decode_jsonrpc_stream_response(&ev.data).ok()?;
    Some(check_id(method, rpc_id, &resp).and_then(|()| resp.payload.map_err(ClientError::Rpc)))
}

/// A response must echo the request's id; an error about a request the agent could not read
/// may carry `null` (JSON-RPC 2.0 §5).
fn check_id<R>(method: Method, sent: &Id, resp: &JsonRpcResponse<R>) -> Result<(), ClientError> {
    if &resp.id == sent || (resp.id == Id::Null && resp.payload.is_err()) {
        return Ok(());
    }
    Err(ClientError::AgentProtocol(format!(
        "{method} response carries JSON-RPC id {}, the request's was {sent}",
        resp.id
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
}
