//! The HTTP+JSON (REST) binding: one handler under [`REST_PATH`] routes each request with
//! [`a2a_protocol::rest::route`] (tenant prefix included) to the A2A method and JSON-RPC-shaped
//! params, checks the version, then hands the call to the one dispatcher
//! ([`crate::methods::dispatch`]). Rendering is the other edge: [`respond`] turns the JSON-RPC
//! envelope the dispatcher produced (mutations already applied) into a bare body or an AIP-193
//! error body with its HTTP status.

use crate::agent::AgentState;
use crate::journal::Event;
use crate::rpc::{Call, header_map};
use crate::server::ConnControl;
use a2a_protocol::compat03::{self, ProtocolVersion};
use a2a_protocol::rest::{REST_CONTENT_TYPE, RestError, error_body, route};
use a2a_protocol::{Binding, ErrorCode, Id, JsonRpcError};
use axum::Extension;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The base path of the HTTP+JSON interface (its card `url` is `http://127.0.0.1:PORT/rest`).
pub const REST_PATH: &str = "/rest";

/// The envelope as journaled for a binding without one: `{"result": …}` or `{"error": …}`
/// (the JSON-RPC `jsonrpc` and `id` members dropped), so checkers read every binding alike.
pub(crate) fn neutral(envelope: &Value) -> Value {
    match envelope {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| k.as_str() != "jsonrpc" && k.as_str() != "id")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The error a JSON-RPC envelope carries, if it is an error response.
pub(crate) fn envelope_error(envelope: &Value) -> Option<JsonRpcError> {
    envelope
        .get("error")
        .and_then(|e| serde_json::from_value(e.clone()).ok())
}

/// Render a unary answer (a JSON-RPC envelope, mutations applied) as HTTP+JSON and journal it.
pub(crate) fn respond(
    st: &AgentState,
    call: &Call,
    envelope: Value,
    rpc_error: Option<i64>,
) -> Response {
    let (status, body) = match envelope_error(&envelope) {
        Some(e) => error_body(&e),
        // Delete's `{}` and every other result go out as they are.
        None => (200, envelope.get("result").cloned().unwrap_or(json!({}))),
    };
    if !call.dropping {
        st.journal(Event::Response {
            retry_after_s: None,
            req: call.req,
            status,
            rpc_error,
            grpc_status: None,
            body: st.net.journal.summarise(&neutral(&envelope)),
        });
    }
    json_response(status, &body)
}

/// An HTTP+JSON body with its status.
pub(crate) fn json_response(status: u16, body: &Value) -> Response {
    let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        code,
        [(header::CONTENT_TYPE, REST_CONTENT_TYPE)],
        serde_json::to_vec(body).unwrap_or_default(),
    )
        .into_response()
}

/// The AIP-193 body of a transport-level failure (`http_status` fault, routing errors): the
/// status's gRPC code, no A2A reason.
pub(crate) fn status_body(status: u16, message: &str) -> Value {
    let grpc = a2a_protocol::GrpcCode::from_http_status(status);
    json!({"error": {"code": status, "status": grpc.name(), "message": message, "details": []}})
}

/// Answer a request the binding cannot route (unknown path, wrong method, unserved binding):
/// journaled, an AIP-193 body, `Allow` for a 405.
fn route_error(
    st: &AgentState,
    req: u64,
    status: u16,
    message: &str,
    allow: Option<&str>,
) -> Response {
    let body = status_body(status, message);
    st.journal(Event::Response {
        retry_after_s: None,
        req,
        status,
        rpc_error: Some(ErrorCode::MethodNotFound.code()),
        grpc_status: None,
        body: body.clone(),
    });
    let mut resp = json_response(status, &body);
    if let Some(a) = allow.and_then(|a| HeaderValue::from_str(a).ok()) {
        resp.headers_mut().insert(header::ALLOW, a);
    }
    resp
}

/// Every request under [`REST_PATH`].
pub(crate) async fn rest_handler(
    State(st): State<Arc<AgentState>>,
    ctl: Option<Extension<ConnControl>>,
    request: Request,
) -> Response {
    let ctl = ctl.map(|Extension(c)| c).unwrap_or_default();
    let req = st.net.next_req.fetch_add(1, Ordering::Relaxed);
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    let full_path = parts.uri.path().to_string();
    let sub_path = full_path
        .strip_prefix(REST_PATH)
        .unwrap_or_default()
        .to_string();
    let query = parts.uri.query().map(str::to_string);
    let http_method = parts.method.as_str().to_string();
    let journal_request = |method: Option<String>, params: Value| {
        st.journal(Event::Request {
            req,
            binding: Binding::Rest,
            http_method: http_method.clone(),
            path: match &query {
                Some(q) => format!("{full_path}?{q}"),
                None => full_path.clone(),
            },
            method,
            rpc_id: None,
            params: Box::new(params),
            headers: Box::new(header_map(&headers)),
            envelope: None,
        });
    };
    let bytes = match crate::rpc::read_body(&st, body).await {
        Ok(b) => b,
        Err(too) => {
            journal_request(None, json!(too.describe(&st)));
            let e = ErrorCode::InvalidRequest.to_error(Some(too.message()), &[]);
            let (_, body) = error_body(&e);
            let status = too.status();
            let mut body = body;
            body["error"]["code"] = json!(status);
            st.journal(Event::Response {
                retry_after_s: None,
                req,
                status,
                rpc_error: Some(e.code),
                grpc_status: None,
                body: Value::Null,
            });
            let mut resp = json_response(status, &body);
            if too.closes() {
                resp.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            return resp;
        }
    };
    let call = Call {
        req,
        id: Id::Null,
        v03: false,
        binding: Binding::Rest,
        method: None,
        headers: headers.clone(),
        ctl,
        dropping: false,
        notification: false,
        // The binding carries the tenant in the path; a `tenant` in a body does not count.
        tenant: a2a_protocol::rest::path_tenant(&sub_path).filter(|t| !t.is_empty()),
        omit: Vec::new(),
    };
    let raw_text = || json!(String::from_utf8_lossy(&bytes[..bytes.len().min(1024)]));
    if !st.serves(Binding::Rest) {
        journal_request(None, Value::Null);
        return route_error(
            &st,
            req,
            404,
            "this agent does not serve the HTTP+JSON binding",
            None,
        );
    }
    // A body is JSON by its Content-Type (application/a2a+json, application/json, any +json).
    let has_body = !bytes.is_empty();
    if has_body
        && let Some(ct) = headers.get(header::CONTENT_TYPE)
        && !crate::rpc::is_json_media_type(ct.to_str().unwrap_or_default())
    {
        let ct = String::from_utf8_lossy(ct.as_bytes()).into_owned();
        journal_request(None, raw_text());
        return call.error(
            &st,
            ErrorCode::ContentTypeNotSupported,
            Some(&format!(
                "request Content-Type {ct:?} is not supported: send {REST_CONTENT_TYPE}"
            )),
            &[("contentType", &ct)],
        );
    }
    let body: Option<Value> = if has_body {
        match serde_json::from_slice(&bytes) {
            Ok(v) => Some(v),
            Err(e) => {
                journal_request(None, raw_text());
                return call.error(&st, ErrorCode::JsonParse, Some(&e.to_string()), &[]);
            }
        }
    } else {
        None
    };
    let (method, params) = match route(&http_method, &sub_path, query.as_deref(), body.clone()) {
        Ok(r) => r,
        Err(e) => {
            journal_request(
                None,
                body.map(|b| st.net.journal.summarise(&b))
                    .unwrap_or_default(),
            );
            return match &e {
                RestError::NotFound { .. } => route_error(&st, req, 404, &e.to_string(), None),
                RestError::MethodNotAllowed { allowed, .. } => {
                    route_error(&st, req, 405, &e.to_string(), Some(allowed))
                }
                _ => call.error(&st, ErrorCode::InvalidParams, Some(&e.to_string()), &[]),
            };
        }
    };
    journal_request(
        Some(method.as_str().to_string()),
        st.net.journal.summarise(&params),
    );
    // Version negotiation as on JSON-RPC: the header, else the `A2A-Version` query parameter.
    let query_version = query.as_deref().and_then(|q| {
        q.split('&')
            .find_map(|kv| kv.strip_prefix("A2A-Version=").map(str::to_string))
    });
    let version = headers
        .get(a2a_protocol::VERSION_HEADER)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or(query_version);
    match compat03::negotiate(version.as_deref()) {
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
    crate::methods::dispatch(st, call, method.as_str().to_string(), params).await
}
