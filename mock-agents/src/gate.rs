//! The front door of every A2A request, after the binding's version negotiation and before
//! queued faults and rules: the card's security scheme (an unauthenticated request is refused
//! as the binding refuses one: HTTP 401 with `WWW-Authenticate`, gRPC `UNAUTHENTICATED`), the
//! interface's tenant (-32602) and the card's required extensions (-32008), in that order; and
//! the echo of the extensions a request activated (`A2A-Extensions` on the response).
//!
//! Requests one mock agent sends another (`delegate` steps, marked with
//! [`crate::rpc::MOCK_PEER_HEADER`]) are simulation traffic and pass.

use crate::agent::AgentState;
use crate::journal::Event;
use crate::rpc::{Call, MOCK_PEER_HEADER};
use crate::script::{SecurityScope, SecuritySpec};
use a2a_protocol::{Binding, ErrorCode, GrpcCode, JsonRpcError, JsonRpcResponse};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The JSON-RPC error code of an unauthenticated request (HTTP 401): the specification leaves
/// the JSON-RPC form of an authentication failure to the implementation, so the mock uses the
/// generic implementation-defined server error; a client acts on the HTTP status.
pub const UNAUTHENTICATED_CODE: i64 = -32000;

/// The header naming extensions, in requests (asked for) and responses (activated).
pub const EXTENSIONS_HEADER: &str = "a2a-extensions";

/// The refusal of a request that may not pass the front door, if it may not.
pub(crate) fn refuse(st: &AgentState, call: &Call, method: &str) -> Option<Response> {
    if call.headers.contains_key(MOCK_PEER_HEADER) {
        return None;
    }
    if let Some(sec) = &st.spec.security {
        let guarded = sec.scope == SecurityScope::All || method == "GetExtendedAgentCard";
        if guarded && !authenticated(&call.headers, &sec.credential) {
            return Some(unauthenticated(st, call, sec));
        }
    }
    if let Some(accepted) = st.accepted_tenants() {
        let sent = call.tenant.as_deref();
        if !accepted.contains(&sent) {
            let served: Vec<String> = accepted
                .iter()
                .map(|t| match t {
                    Some(t) => format!("{t:?}"),
                    None => "none".to_string(),
                })
                .collect();
            let message = match sent {
                Some(t) => format!(
                    "tenant {t:?} is not served here (expected {})",
                    served.join(" or ")
                ),
                None => format!("tenant missing (expected {})", served.join(" or ")),
            };
            return Some(call.error(st, ErrorCode::InvalidParams, Some(&message), &[]));
        }
    }
    let asked = requested(&call.headers);
    let missing: Vec<&str> = st
        .spec
        .extensions
        .iter()
        .filter(|e| e.required && !asked.contains(&e.uri.as_str()))
        .map(|e| e.uri.as_str())
        .collect();
    if !missing.is_empty() {
        let list = missing.join(",");
        return Some(call.error(
            st,
            ErrorCode::ExtensionSupportRequired,
            Some(&format!(
                "required extension(s) not requested in A2A-Extensions: {list}"
            )),
            &[("extensions", &list)],
        ));
    }
    None
}

/// Echo the extensions the request activated (asked for and on the card) in the response's
/// `A2A-Extensions` header, comma-separated, as the extensions guide recommends.
pub(crate) fn echo_extensions(
    st: &AgentState,
    headers: &HeaderMap,
    mut resp: Response,
) -> Response {
    let mut active: Vec<&str> = Vec::new();
    for u in requested(headers) {
        if st.spec.extensions.iter().any(|e| e.uri == u) && !active.contains(&u) {
            active.push(u);
        }
    }
    if !active.is_empty()
        && let Ok(v) = HeaderValue::from_str(&active.join(", "))
    {
        resp.headers_mut().insert(EXTENSIONS_HEADER, v);
    }
    resp
}

/// The extension URIs a request asks for: every `A2A-Extensions` line (gRPC: metadata entry),
/// split at commas, trimmed.
fn requested(headers: &HeaderMap) -> Vec<&str> {
    headers
        .get_all(EXTENSIONS_HEADER)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect()
}

/// Exactly one `Authorization` line, exactly the credential.
fn authenticated(headers: &HeaderMap, credential: &str) -> bool {
    let mut lines = headers.get_all(header::AUTHORIZATION).iter();
    matches!((lines.next(), lines.next()), (Some(v), None) if v.as_bytes() == credential.as_bytes())
}

/// The binding's refusal of an unauthenticated request, journaled: HTTP 401 with
/// `WWW-Authenticate` (JSON-RPC: a JSON-RPC error body, code [`UNAUTHENTICATED_CODE`];
/// HTTP+JSON: an AIP-193 body with status `UNAUTHENTICATED`), gRPC trailers-only
/// `UNAUTHENTICATED` with `www-authenticate` metadata.
fn unauthenticated(st: &AgentState, call: &Call, sec: &SecuritySpec) -> Response {
    let sent = call.headers.contains_key(header::AUTHORIZATION);
    let message = if sent {
        "the Authorization credential is not accepted"
    } else {
        "authentication required: send Authorization with a credential for the card's securitySchemes"
    };
    let mut challenge = format!("{} realm={:?}", sec.scheme(), st.spec.name);
    if sent && sec.scheme().eq_ignore_ascii_case("bearer") {
        challenge.push_str(", error=\"invalid_token\"");
    }
    let error = JsonRpcError {
        code: UNAUTHENTICATED_CODE,
        message: message.to_string(),
        data: None,
    };
    let journal = |grpc_status: Option<i32>, body: Value| {
        if !call.dropping {
            st.journal(Event::Response {
                retry_after_s: None,
                req: call.req,
                status: 401,
                rpc_error: Some(UNAUTHENTICATED_CODE),
                grpc_status,
                body,
            });
        }
    };
    let mut resp = match call.binding {
        Binding::JsonRpc => {
            let envelope = serde_json::to_value(JsonRpcResponse::<Value>::error(
                call.id.clone(),
                error.clone(),
            ))
            .unwrap_or(Value::Null);
            journal(None, envelope.clone());
            (
                StatusCode::UNAUTHORIZED,
                [(header::CONTENT_TYPE, "application/json")],
                serde_json::to_vec(&envelope).unwrap_or_default(),
            )
                .into_response()
        }
        Binding::Rest => {
            journal(None, json!({"error": error}));
            crate::rest::json_response(
                401,
                &json!({"error": {"code": 401, "status": GrpcCode::Unauthenticated.name(),
                                  "message": message, "details": []}}),
            )
        }
        Binding::Grpc => {
            journal(
                Some(GrpcCode::Unauthenticated.number()),
                json!({"error": error}),
            );
            crate::grpc::trailers_only(&crate::grpc::plain_status(
                GrpcCode::Unauthenticated,
                message,
            ))
        }
    };
    if let Ok(v) = HeaderValue::from_str(&challenge) {
        resp.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    resp
}
