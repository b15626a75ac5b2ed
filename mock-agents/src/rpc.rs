//! The HTTP surface of an agent: its router, the agent card, the JSON-RPC envelope (body limit,
//! parse errors, version negotiation and 0.3 translation) and recorded unary responses.

use crate::agent::*;
use crate::journal::Event;
use crate::script::*;
use crate::server::ConnControl;
use a2a_protocol::compat03::ProtocolVersion;
use a2a_protocol::compat03::{self, ObjectKind};
use a2a_protocol::*;
use axum::extract::Request;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Extension, Router};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// The header that marks a request one mock agent sends another (`[[agent.rule]]` step
/// `delegate`); its value is the sending agent's name.
pub const MOCK_PEER_HEADER: &str = "x-a2a-mock-peer";

/// The header on every push notification a mock agent sends; its value is the sending
/// network's [`NetShared::id`](crate::agent::NetShared::id).
pub const MOCK_PUSH_HEADER: &str = "x-a2a-mock-push";

/// A push notification from another network (another case) that reached this agent because
/// the OS gave this agent the port of a webhook that has gone away: not this network's
/// traffic, answered 404 and not journaled.
fn foreign_push(st: &AgentState, headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(MOCK_PUSH_HEADER)
        .is_some_and(|v| v.as_bytes() != st.net.id.as_bytes())
}

/// The path of the JSON-RPC endpoint (its card `url` is `http://127.0.0.1:PORT/a2a`).
pub const RPC_PATH: &str = "/a2a";

/// Build the router of an agent.
pub(crate) fn router(state: Arc<AgentState>) -> Router {
    Router::new()
        .route(a2a_protocol::AGENT_CARD_PATH, get(card_handler))
        .route(crate::signing::JWKS_PATH, get(crate::signing::jwks_handler))
        .route(RPC_PATH, post(rpc_handler))
        .route(RPC_PATH_SLASH, post(rpc_handler))
        .route("/", post(rpc_handler))
        .route("/blobs/{key}", get(crate::blobs::blob_handler))
        .route(crate::rest::REST_PATH, any(crate::rest::rest_handler))
        .route("/rest/{*path}", any(crate::rest::rest_handler))
        .route(
            "/lf.a2a.v1.A2AService/{rpc}",
            any(crate::grpc::grpc_handler),
        )
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(state)
}

/// The JSON-RPC endpoint with a trailing slash (clients such as the official TCK append one).
const RPC_PATH_SLASH: &str = "/a2a/";

/// Any other path: HTTP 404 with a JSON body, journaled.
async fn not_found(State(st): State<Arc<AgentState>>, request: Request) -> Response {
    unrouted(&st, request, StatusCode::NOT_FOUND)
}

/// A known path with a method it does not serve (`GET /a2a`): HTTP 405 with a JSON body, journaled.
async fn method_not_allowed(State(st): State<Arc<AgentState>>, request: Request) -> Response {
    unrouted(&st, request, StatusCode::METHOD_NOT_ALLOWED)
}

fn unrouted(st: &AgentState, request: Request, status: StatusCode) -> Response {
    if foreign_push(st, request.headers()) {
        return StatusCode::NOT_FOUND.into_response();
    }
    if crate::grpc::is_grpc_request(request.headers()) {
        // A gRPC call of another service: gRPC's answer, not an HTTP one.
        return crate::grpc::unimplemented(st, &request, "no such gRPC service");
    }
    let method = request.method().to_string();
    let path = request.uri().path().to_string();
    let req = journal_plain_request(
        st,
        &method,
        path_and_query(request.uri()),
        request.headers(),
    );
    let body = json!({
        "error": status.canonical_reason().unwrap_or("unrouted"),
        "method": method,
        "path": path,
        "rpcEndpoint": RPC_PATH,
    });
    st.journal(Event::Response {
        retry_after_s: None,
        grpc_status: None,
        req,
        status: status.as_u16(),
        rpc_error: None,
        body: body.clone(),
    });
    (status, axum::Json(body)).into_response()
}

pub(crate) async fn card_handler(
    State(st): State<Arc<AgentState>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
) -> Response {
    let req = journal_plain_request(&st, "GET", path_and_query(&uri), &headers);
    let version = st.card_version();
    let card = serde_json::to_value(st.card_at(version)).unwrap_or(Value::Null);
    let card = if st.is_v03() {
        compat03::to_v03(ObjectKind::AgentCard, &card).unwrap_or(card)
    } else if let Some(how) = &st.spec.card_signing {
        crate::signing::sign(&st, how, card)
    } else {
        card
    };
    let body = serde_json::to_vec(&card).unwrap_or_default();
    let etag = format!("\"{}\"", &hex::encode(Sha256::digest(&body))[..32]);
    let last_modified = httpdate::fmt_http_date(st.card_last_modified(version));
    let cached = st.spec.card_cache_headers;
    // Without validators there is nothing to revalidate against: always the whole card.
    let not_modified = cached
        && match headers.get(header::IF_NONE_MATCH) {
            // If-None-Match wins over If-Modified-Since (RFC 9110 §13.2.2).
            Some(inm) => etag_matches(inm.to_str().unwrap_or_default(), &etag),
            None => headers
                .get(header::IF_MODIFIED_SINCE)
                .and_then(|h| h.to_str().ok())
                .and_then(|h| httpdate::parse_http_date(h).ok())
                .and_then(|since| {
                    let modified = httpdate::parse_http_date(&last_modified).ok()?;
                    Some(modified <= since)
                })
                .unwrap_or(false),
        };
    let status = if not_modified {
        StatusCode::NOT_MODIFIED
    } else {
        StatusCode::OK
    };
    // Which card was served (the version counts `card_change`s) and its validator.
    let served = if cached {
        json!({"card_version": version, "etag": etag})
    } else {
        json!({"card_version": version})
    };
    st.journal(Event::Response {
        retry_after_s: None,
        grpc_status: None,
        req,
        status: status.as_u16(),
        rpc_error: None,
        body: served,
    });
    let mut resp = if not_modified {
        status.into_response()
    } else {
        (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
    };
    if cached {
        for (name, value) in [
            (
                header::CACHE_CONTROL,
                format!("max-age={}", st.spec.card_max_age_s),
            ),
            (header::ETAG, etag),
            (header::LAST_MODIFIED, last_modified),
        ] {
            if let Ok(v) = header::HeaderValue::from_str(&value) {
                resp.headers_mut().insert(name, v);
            }
        }
    }
    resp
}

/// Does an `If-None-Match` value (`*` or a list of entity tags, weak ones compared weakly) match?
fn etag_matches(if_none_match: &str, etag: &str) -> bool {
    if_none_match
        .split(',')
        .map(str::trim)
        .any(|t| t == "*" || t.trim_start_matches("W/") == etag)
}

/// The headers as the journal records them: lowercase names, one entry per name, the values of
/// a header sent on several lines joined with `"\n"` (which no header value can contain), so a
/// checker tells `a, b` on one line from `a` and `b` on two.
pub(crate) fn header_map(h: &HeaderMap) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for (k, v) in h {
        let v = String::from_utf8_lossy(v.as_bytes()).into_owned();
        m.entry(k.as_str().to_ascii_lowercase())
            .and_modify(|e: &mut String| {
                e.push('\n');
                e.push_str(&v);
            })
            .or_insert(v);
    }
    m
}

/// Journal a request that is no A2A call (a card, key set or blob fetch; an unrouted path) and
/// return its request number.
pub(crate) fn journal_plain_request(
    st: &AgentState,
    http_method: &str,
    path: String,
    headers: &HeaderMap,
) -> u64 {
    let req = st.net.next_req.fetch_add(1, Ordering::Relaxed);
    st.journal(Event::Request {
        binding: Binding::JsonRpc,
        req,
        http_method: http_method.into(),
        path,
        method: None,
        rpc_id: None,
        params: Box::new(Value::Null),
        headers: Box::new(header_map(headers)),
        envelope: None,
    });
    req
}

/// The path and query of a request as sent (still percent-encoded).
pub(crate) fn path_and_query(uri: &axum::http::Uri) -> String {
    uri.path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| uri.path().to_string())
}

/// The context of one request, whatever its binding.
pub(crate) struct Call {
    pub req: u64,
    pub id: Id,
    pub v03: bool,
    /// The binding the call arrived on: how its answers are rendered.
    pub binding: Binding,
    /// The A2A method, when the binding needs it to render an answer (gRPC's response type).
    pub method: Option<Method>,
    pub headers: HeaderMap,
    pub ctl: ConnControl,
    /// The response will be dropped (fault `drop_response`): do not journal it as sent.
    pub dropping: bool,
    /// A JSON-RPC notification (no `id`): whatever the outcome, the answer is HTTP 204, no body.
    pub notification: bool,
    /// The tenant the request carries where its binding puts it (JSON-RPC `params.tenant`,
    /// the gRPC `tenant` field, the HTTP+JSON path prefix); `None` for none or `""`.
    pub tenant: Option<String>,
    /// Pointers an `omit_fields` fault removes from the unary answer (empty: none).
    pub omit: Vec<String>,
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

/// Send a unary response, applying mutations to its JSON-RPC envelope and recording it; the
/// call's binding renders it (the envelope as is, a bare HTTP+JSON body, a gRPC message).
pub(crate) fn respond(
    st: &AgentState,
    call: &Call,
    payload: Result<Value, JsonRpcError>,
    mutations: &[Mutation],
) -> Response {
    let rpc_error = payload.as_ref().err().map(|e| e.code);
    if call.notification {
        if !call.dropping {
            st.journal(Event::Response {
                retry_after_s: None,
                grpc_status: None,
                req: call.req,
                status: 204,
                rpc_error,
                body: Value::Null,
            });
        }
        return StatusCode::NO_CONTENT.into_response();
    }
    let mut body = serde_json::to_value(JsonRpcResponse {
        id: call.id.clone(),
        payload,
    })
    .unwrap_or(Value::Null);
    if call.binding != Binding::Grpc {
        // gRPC's binary Timestamp has one form.
        st.clock.restyle(&mut body);
    }
    if !call.omit.is_empty()
        && let Some(result) = body.get_mut("result")
    {
        let removed = crate::omit::from_result(result, &call.omit);
        if !removed.is_empty() && !call.dropping {
            st.journal(Event::Fault {
                req: call.req,
                kind: crate::omit::kind(&removed),
            });
        }
    }
    let original = (call.binding == Binding::Grpc && !mutations.is_empty()).then(|| body.clone());
    crate::mutations::mutate(&mut body, mutations);
    match call.binding {
        Binding::JsonRpc => {}
        Binding::Rest => return crate::rest::respond(st, call, body, rpc_error),
        Binding::Grpc => return crate::grpc::respond(st, call, body, original, rpc_error),
    }
    if !call.dropping {
        st.journal(Event::Response {
            retry_after_s: None,
            grpc_status: None,
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

pub(crate) async fn rpc_handler(
    State(st): State<Arc<AgentState>>,
    ctl: Option<Extension<ConnControl>>,
    request: Request,
) -> Response {
    if foreign_push(&st, request.headers()) {
        return StatusCode::NOT_FOUND.into_response();
    }
    // Mock agents delegate to each other over JSON-RPC whatever their peers serve: that
    // traffic is part of the simulation, marked, and never the delegator's.
    let from_peer = request.headers().contains_key(MOCK_PEER_HEADER);
    if !st.serves(Binding::JsonRpc) && !from_peer {
        // An agent without the JSON-RPC binding has no such endpoint.
        return unrouted(&st, request, StatusCode::NOT_FOUND);
    }
    let ctl = ctl.map(|Extension(c)| c).unwrap_or_default();
    let req = st.net.next_req.fetch_add(1, Ordering::Relaxed);
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    let path = path_and_query(&parts.uri);
    let query_version = parts.uri.query().and_then(|q| {
        q.split('&')
            .find_map(|kv| kv.strip_prefix("A2A-Version=").map(str::to_string))
    });
    let bytes = match read_body(&st, body).await {
        Ok(b) => b,
        Err(too) => {
            // A body that trickles in (or never comes) is cut off and its connection closed.
            st.journal(Event::Request {
                binding: Binding::JsonRpc,
                req,
                http_method: "POST".into(),
                path,
                method: None,
                rpc_id: None,
                params: Box::new(json!(too.describe(&st))),
                headers: Box::new(header_map(&headers)),
                envelope: None,
            });
            let e = ErrorCode::InvalidRequest.to_error(Some(too.message()), &[]);
            let body = serde_json::to_vec(&JsonRpcResponse::<Value>::error(Id::Null, e))
                .unwrap_or_default();
            st.journal(Event::Response {
                retry_after_s: None,
                grpc_status: None,
                req,
                status: too.status(),
                rpc_error: Some(-32600),
                body: Value::Null,
            });
            let status =
                StatusCode::from_u16(too.status()).unwrap_or(StatusCode::PAYLOAD_TOO_LARGE);
            let mut resp =
                (status, [(header::CONTENT_TYPE, "application/json")], body).into_response();
            if too.closes() {
                resp.headers_mut().insert(
                    header::CONNECTION,
                    header::HeaderValue::from_static("close"),
                );
            }
            return resp;
        }
    };
    // -32005 for a body that is not JSON by its Content-Type, before any parsing.
    if let Some(ct) = headers.get(header::CONTENT_TYPE)
        && !is_json_media_type(ct.to_str().unwrap_or_default())
    {
        let ct = String::from_utf8_lossy(ct.as_bytes()).into_owned();
        st.journal(Event::Request {
            binding: Binding::JsonRpc,
            req,
            http_method: "POST".into(),
            path,
            method: None,
            rpc_id: None,
            params: Box::new(json!(String::from_utf8_lossy(
                &bytes[..bytes.len().min(1024)]
            ))),
            headers: Box::new(header_map(&headers)),
            envelope: None,
        });
        let call = Call {
            req,
            id: Id::Null,
            v03: st.is_v03(),
            binding: Binding::JsonRpc,
            method: None,
            headers,
            ctl,
            dropping: false,
            notification: false,
            tenant: None,
            omit: Vec::new(),
        };
        return call.error(
            &st,
            ErrorCode::ContentTypeNotSupported,
            Some(&format!(
                "request Content-Type {ct:?} is not supported: send application/json"
            )),
            &[("contentType", &ct)],
        );
    }
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
    // The envelope without `params`, as received: a checker sees a missing or wrong `jsonrpc`.
    let envelope = parsed.as_ref().ok().map(|v| match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| k.as_str() != "params")
                .map(|(k, x)| (k.clone(), x.clone()))
                .collect(),
        ),
        other => other.clone(),
    });
    st.journal(Event::Request {
        binding: Binding::JsonRpc,
        req,
        http_method: "POST".into(),
        path,
        method: method.clone(),
        rpc_id: rpc_id.clone().map(Box::new),
        params: Box::new(params),
        headers: Box::new(header_map(&headers)),
        envelope: envelope.map(|e| Box::new(st.net.journal.summarise(&e))),
    });
    let Ok(v) = parsed else {
        let call = Call {
            req,
            id: Id::Null,
            v03: st.is_v03(),
            binding: Binding::JsonRpc,
            method: None,
            headers,
            ctl,
            dropping: false,
            notification: false,
            tenant: None,
            omit: Vec::new(),
        };
        return call.error(&st, ErrorCode::JsonParse, None, &[]);
    };
    // A JSON-RPC id is a string, a number or null; anything else makes the request invalid.
    let raw_id = v.get("id");
    let id_ok = matches!(
        raw_id,
        None | Some(Value::Null | Value::String(_) | Value::Number(_))
    );
    let id: Id = raw_id
        .cloned()
        .filter(|_| id_ok)
        .and_then(|i| serde_json::from_value(i).ok())
        .unwrap_or(Id::Null);
    // A request without `id` is a notification: processed, never answered.
    let notification = v.is_object() && raw_id.is_none();
    let mut call = Call {
        req,
        id,
        v03: st.is_v03(),
        binding: Binding::JsonRpc,
        method: None,
        headers,
        ctl,
        dropping: false,
        notification: false,
        tenant: v
            .get("params")
            .and_then(|p| p.get("tenant"))
            .and_then(tenant_of),
        omit: Vec::new(),
    };
    if !v.is_object() || v.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return call.error(
            &st,
            ErrorCode::InvalidRequest,
            Some("not a JSON-RPC 2.0 request"),
            &[],
        );
    }
    if !id_ok {
        return call.error(
            &st,
            ErrorCode::InvalidRequest,
            Some("id must be a string, a number or null"),
            &[],
        );
    }
    call.notification = notification;
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
    if notification {
        // Answered now; the processing goes on without a listener (and is not journaled as sent).
        st.journal(Event::Response {
            retry_after_s: None,
            grpc_status: None,
            req,
            status: 204,
            rpc_error: None,
            body: Value::Null,
        });
        call.dropping = true;
        tokio::spawn(crate::methods::dispatch(st, call, method_v1, params));
        return StatusCode::NO_CONTENT.into_response();
    }
    crate::methods::dispatch(st, call, method_v1, params).await
}

/// The tenant a request carries in a `tenant` member: a string (`""` is none), or any other
/// JSON value as its text (which matches no tenant).
pub(crate) fn tenant_of(v: &Value) -> Option<String> {
    match v {
        Value::String(t) if t.is_empty() => None,
        Value::String(t) => Some(t.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The params journaled for a request whose body was cut off by the client (see
/// `BodyError::Cut`); rules about what a delegator sends skip it.
pub const CUT_BODY: &str =
    "<body cut off: the client closed or reset the connection before its end>";

/// Why a request body was not read.
#[derive(Debug, Clone, Copy)]
pub(crate) enum BodyError {
    /// Not complete within `body_timeout_ms`.
    Timeout,
    /// Over `max_body_bytes`.
    TooLarge,
    /// The body ended in a transport error before it was complete: the client closed or reset
    /// the connection (a delegator killed while sending, say). Nothing of it is judged.
    Cut,
}

impl BodyError {
    /// The text journaled as the request's params.
    pub fn describe(self, st: &AgentState) -> String {
        match self {
            BodyError::Timeout => {
                format!("<body not received within {} ms>", st.spec.body_timeout_ms)
            }
            BodyError::TooLarge => format!("<body over {} bytes>", st.spec.max_body_bytes),
            BodyError::Cut => CUT_BODY.to_string(),
        }
    }

    /// The error message sent.
    pub fn message(self) -> &'static str {
        match self {
            BodyError::Timeout => "request body not received in time",
            BodyError::TooLarge => "request body too large",
            BodyError::Cut => "request body cut off",
        }
    }

    /// The HTTP status: 408, 413 or 400.
    pub fn status(self) -> u16 {
        match self {
            BodyError::Timeout => 408,
            BodyError::TooLarge => 413,
            BodyError::Cut => 400,
        }
    }

    /// Is the connection closed after the answer (a body still trickling in, or a broken one)?
    pub fn closes(self) -> bool {
        matches!(self, BodyError::Timeout | BodyError::Cut)
    }
}

/// Read a request body within the agent's time and size limits.
pub(crate) async fn read_body(
    st: &AgentState,
    body: axum::body::Body,
) -> Result<axum::body::Bytes, BodyError> {
    let body_timeout = std::time::Duration::from_millis(st.spec.body_timeout_ms);
    match tokio::time::timeout(
        body_timeout,
        axum::body::to_bytes(body, st.spec.max_body_bytes),
    )
    .await
    {
        Ok(Ok(b)) => Ok(b),
        Ok(Err(e)) => {
            let inner = e.into_inner();
            let over =
                std::iter::successors(Some(&*inner as &(dyn std::error::Error + 'static)), |e| {
                    e.source()
                })
                .any(|e| e.is::<http_body_util::LengthLimitError>());
            Err(if over {
                BodyError::TooLarge
            } else {
                BodyError::Cut
            })
        }
        Err(_) => Err(BodyError::Timeout),
    }
}

/// Is this `Content-Type` JSON (`application/json`, or any `+json` type, parameters allowed)?
pub(crate) fn is_json_media_type(ct: &str) -> bool {
    let essence = ct
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || essence
            .strip_prefix("application/")
            .is_some_and(|sub| sub.ends_with("+json"))
}
