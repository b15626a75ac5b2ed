//! The gRPC binding, hand-rolled on the agent's axum router and port (HTTP/2 prior knowledge,
//! served by the accept loop's auto protocol detection): `POST /lf.a2a.v1.A2AService/<Rpc>`.
//!
//! The edges only: [`grpc_handler`] checks the content type (`application/grpc[+proto]`, else
//! HTTP 415), decodes the one length-prefixed request message into its ProtoJSON (the JSON-RPC
//! `params`), checks the `a2a-version` metadata and calls the one dispatcher
//! ([`crate::methods::dispatch`]); [`respond`] renders the JSON-RPC envelope it produced as one
//! frame and `grpc-status: 0` trailers, or as a trailers-only error with `grpc-message` and
//! `grpc-status-details-bin` (`google.rpc.Status` with `ErrorInfo`, or `BadRequest` for invalid
//! arguments). Streams are framed in [`crate::sse`] (one frame per `StreamResponse`, then the
//! trailers). Nothing a peer sends can panic here: every failure is a gRPC status.

use crate::agent::AgentState;
use crate::journal::Event;
use crate::rpc::{Call, header_map};
use crate::server::ConnControl;
use a2a_protocol::compat03::{self, ProtocolVersion};
use a2a_protocol::conformance::ObjectType;
use a2a_protocol::grpc::framing::{FrameDecoder, FrameError, encode_raw_frame};
use a2a_protocol::grpc::status::{
    BAD_REQUEST_TYPE_URL, ERROR_INFO_TYPE_URL, ok_trailers, pack_any, status_trailers,
};
use a2a_protocol::grpc::{Rpc, encode_from_json, is_grpc_content_type, pb, rpc, to_pb};
use a2a_protocol::{Binding, ErrorCode, GrpcCode, Id, JsonRpcError, Method};
use axum::Extension;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::BytesMut;
use futures::Stream;
use hyper::body::Frame;
use serde_json::{Value, json};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

/// The content type of every gRPC response.
const GRPC_CONTENT_TYPE: &str = "application/grpc";

/// The enum number an `unknown_state` step sends over gRPC when its state is a name.
pub(crate) const UNKNOWN_STATE_NUMBER: i32 = 99;

/// A response body made of HTTP frames (data, then trailers): what gRPC needs and
/// `Body::from_stream` cannot express.
pub(crate) struct FrameBody(Pin<Box<dyn Stream<Item = Frame<Bytes>> + Send>>);

impl hyper::body::Body for FrameBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        self.0.as_mut().poll_next(cx).map(|f| f.map(Ok))
    }
}

/// A body of these frames.
pub(crate) fn frame_body(frames: impl Stream<Item = Frame<Bytes>> + Send + 'static) -> Body {
    Body::new(FrameBody(Box::pin(frames)))
}

/// Marks a gRPC unary response: its message frame and trailers, so a `trickle` fault can
/// re-send it slowly with the trailers last.
#[derive(Clone)]
pub(crate) struct GrpcUnary {
    /// The framed message.
    pub data: Bytes,
    /// The trailers.
    pub trailers: HeaderMap,
}

/// Marks a gRPC streaming response (its faults act per frame, in [`crate::sse`]).
#[derive(Clone, Copy)]
pub(crate) struct GrpcStream;

/// A response with a message and trailers.
pub(crate) fn unary_response(data: Bytes, trailers: HeaderMap) -> Response {
    let mut resp = grpc_ok_response(frame_body(futures::stream::iter([
        Frame::data(data.clone()),
        Frame::trailers(trailers.clone()),
    ])));
    resp.extensions_mut().insert(GrpcUnary { data, trailers });
    resp
}

/// HTTP 200 with the gRPC content type and this body.
pub(crate) fn grpc_ok_response(body: Body) -> Response {
    let mut resp = Response::new(body);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(GRPC_CONTENT_TYPE),
    );
    resp
}

/// A trailers-only response (the status in the headers, no body).
pub(crate) fn trailers_only(status: &rpc::Status) -> Response {
    let mut resp = grpc_ok_response(Body::empty());
    resp.headers_mut().extend(status_trailers(status));
    resp
}

/// One message frame around protobuf bytes.
pub(crate) fn frame(body: &[u8]) -> Bytes {
    let mut buf = BytesMut::with_capacity(body.len() + 5);
    encode_raw_frame(0, body, &mut buf);
    buf.freeze()
}

/// A frame whose body is not protobuf: `0xFF` (a truncated varint tag) and then `text`.
pub(crate) fn garbage_frame(text: &[u8]) -> Bytes {
    let mut body = Vec::with_capacity(text.len() + 1);
    body.push(0xFF);
    body.extend_from_slice(text);
    frame(&body)
}

/// The `google.rpc.Status` of an error the dispatcher produced in JSON-RPC form: the mapped
/// code, the message, the `ErrorInfo` it carries (or its code's), a `BadRequest` for an
/// invalid argument without one.
pub(crate) fn status_of(e: &JsonRpcError) -> rpc::Status {
    let code = ErrorCode::from_code(e.code);
    let grpc = match code {
        ErrorCode::Other(_) => GrpcCode::Unknown,
        c => c.grpc_code(),
    };
    let mut details = Vec::new();
    let infos: Vec<&Value> = match &e.data {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(d @ Value::Object(_)) => vec![d],
        _ => Vec::new(),
    };
    for d in infos {
        if d.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE_URL) {
            let metadata = d
                .get("metadata")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| {
                            let v = v.as_str().map(str::to_string).unwrap_or(v.to_string());
                            (k.clone(), v)
                        })
                        .collect()
                })
                .unwrap_or_default();
            let info = rpc::ErrorInfo {
                reason: d
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                domain: d
                    .get("domain")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                metadata,
            };
            details.push(pack_any(ERROR_INFO_TYPE_URL, &info));
        }
    }
    if details.is_empty()
        && let Some(info) = a2a_protocol::grpc::status::error_info(code, &[])
    {
        details.push(pack_any(ERROR_INFO_TYPE_URL, &info));
    }
    if details.is_empty() && grpc == GrpcCode::InvalidArgument {
        let bad = rpc::BadRequest {
            field_violations: vec![rpc::bad_request::FieldViolation {
                field: String::new(),
                description: e.message.clone(),
                ..Default::default()
            }],
        };
        details.push(pack_any(BAD_REQUEST_TYPE_URL, &bad));
    }
    rpc::Status {
        code: grpc.number(),
        message: e.message.clone(),
        details,
    }
}

/// A status for a transport-level failure (no A2A error behind it).
pub(crate) fn plain_status(code: GrpcCode, message: &str) -> rpc::Status {
    rpc::Status {
        code: code.number(),
        message: message.to_string(),
        details: Vec::new(),
    }
}

/// The protobuf bytes of an RPC's result (ProtoJSON), `Empty` for Delete.
fn encode_result(method: Option<Method>, result: &Value) -> Result<Vec<u8>, String> {
    let Some(t) = method.and_then(|m| Rpc::from(m).response_type()) else {
        return Ok(Vec::new());
    };
    encode_from_json(t, result).map_err(|e| e.to_string())
}

/// Render a unary answer (a JSON-RPC envelope, mutations applied; `original` the envelope
/// before them, when there were any) as gRPC and journal it. A result the mutations made
/// unencodable goes out unmutated; one that cannot be encoded at all is `INTERNAL`.
pub(crate) fn respond(
    st: &AgentState,
    call: &Call,
    envelope: Value,
    original: Option<Value>,
    rpc_error: Option<i64>,
) -> Response {
    let journal = |status: &rpc::Status, sent: &Value| {
        if !call.dropping {
            let code = GrpcCode::from_number(status.code).unwrap_or(GrpcCode::Unknown);
            st.journal(Event::Response {
                retry_after_s: None,
                req: call.req,
                status: code.http_status(),
                rpc_error,
                grpc_status: Some(status.code),
                body: st.net.journal.summarise(&crate::rest::neutral(sent)),
            });
        }
    };
    if let Some(e) = crate::rest::envelope_error(&envelope) {
        let status = status_of(&e);
        journal(&status, &envelope);
        return trailers_only(&status);
    }
    let result = |env: &Value| env.get("result").cloned().unwrap_or(json!({}));
    let mut encoded = encode_result(call.method, &result(&envelope)).map(|b| (b, &envelope));
    if encoded.is_err()
        && let Some(o) = &original
    {
        encoded = encode_result(call.method, &result(o)).map(|b| (b, o));
    }
    match encoded {
        Ok((bytes, sent)) => {
            journal(&plain_status(GrpcCode::Ok, ""), sent);
            unary_response(frame(&bytes), ok_trailers())
        }
        Err(e) => {
            let status = plain_status(
                GrpcCode::Internal,
                &format!("the mock agent cannot encode its answer as protobuf: {e}"),
            );
            journal(&status, &json!({"error": {"code": -32603, "message": e}}));
            trailers_only(&status)
        }
    }
}

/// The protobuf frame of one stream event (`result` of the JSON-RPC envelope): the mutated
/// result, else the unmutated one, else with an unknown state name sent as an enum number,
/// else undecodable. Also returns what was sent (ProtoJSON) for the journal.
pub(crate) fn stream_frame(mutated: &Value, original: &Value) -> (Bytes, Value) {
    for candidate in [mutated, original] {
        if let Ok(b) = encode_from_json(ObjectType::StreamResponse, candidate) {
            return (frame(&b), candidate.clone());
        }
    }
    if let Some((b, sent)) = unknown_state_frame(original) {
        return (b, sent);
    }
    let text = serde_json::to_vec(original).unwrap_or_default();
    (garbage_frame(&text), original.clone())
}

/// A status update or task whose state is no `TaskState` name, as the enum number it stands
/// for (the state itself if numeric, else [`UNKNOWN_STATE_NUMBER`]).
fn unknown_state_frame(result: &Value) -> Option<(Bytes, Value)> {
    let (pointer, which) = if result.pointer("/statusUpdate/status/state").is_some() {
        ("/statusUpdate/status/state", 0)
    } else if result.pointer("/task/status/state").is_some() {
        ("/task/status/state", 1)
    } else {
        return None;
    };
    let state = result.pointer(pointer)?.as_str()?.to_string();
    let number = state.parse::<i32>().unwrap_or(UNKNOWN_STATE_NUMBER);
    let mut known = result.clone();
    *known.pointer_mut(pointer)? = json!("TASK_STATE_UNSPECIFIED");
    let mut m: pb::StreamResponse = to_pb(&known).ok()?;
    match (&mut m.payload, which) {
        (Some(pb::stream_response::Payload::StatusUpdate(u)), 0) => {
            u.status.as_mut()?.state = number;
        }
        (Some(pb::stream_response::Payload::Task(t)), 1) => t.status.as_mut()?.state = number,
        _ => return None,
    }
    let mut sent = result.clone();
    *sent.pointer_mut(pointer)? = json!(number);
    Some((
        Bytes::from(a2a_protocol::grpc::framing::encode_frame(&m).to_vec()),
        sent,
    ))
}

/// An `http_status` fault over gRPC: trailers-only with the status's gRPC code, `retry-after`
/// kept as response metadata.
pub(crate) fn injected_status(status: u16, retry_after_s: Option<u64>) -> Response {
    let code = GrpcCode::from_http_status(status);
    let mut resp = trailers_only(&plain_status(code, &format!("injected HTTP {status}")));
    if let Some(s) = retry_after_s
        && let Ok(v) = HeaderValue::from_str(&s.to_string())
    {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
    resp
}

/// A `garbage_body` fault over gRPC: one undecodable frame, then `OK`.
pub(crate) fn garbage_response(text: &str) -> Response {
    unary_response(garbage_frame(text.as_bytes()), ok_trailers())
}

/// Is this request gRPC by its content type?
pub(crate) fn is_grpc_request(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(is_grpc_content_type)
}

/// Answer a gRPC request that names no RPC of this agent (another service, an unknown method,
/// an unserved binding): `UNIMPLEMENTED`, journaled.
pub(crate) fn unimplemented(st: &AgentState, request: &Request, message: &str) -> Response {
    let req = st.net.next_req.fetch_add(1, Ordering::Relaxed);
    st.journal(Event::Request {
        req,
        binding: Binding::Grpc,
        http_method: request.method().to_string(),
        path: request.uri().path().to_string(),
        method: None,
        rpc_id: None,
        params: Box::new(Value::Null),
        headers: Box::new(header_map(request.headers())),
        envelope: None,
    });
    let status = plain_status(GrpcCode::Unimplemented, message);
    st.journal(Event::Response {
        retry_after_s: None,
        req,
        status: GrpcCode::Unimplemented.http_status(),
        rpc_error: Some(ErrorCode::MethodNotFound.code()),
        grpc_status: Some(status.code),
        body: Value::Null,
    });
    trailers_only(&status)
}

/// Every request to `/lf.a2a.v1.A2AService/{rpc}`.
pub(crate) async fn grpc_handler(
    State(st): State<Arc<AgentState>>,
    ctl: Option<Extension<ConnControl>>,
    request: Request,
) -> Response {
    let path = request.uri().path().to_string();
    if !st.serves(Binding::Grpc) {
        return unimplemented(&st, &request, "this agent does not serve the gRPC binding");
    }
    let ctl = ctl.map(|Extension(c)| c).unwrap_or_default();
    let (parts, body) = request.into_parts();
    let headers = parts.headers;
    let http_method = parts.method.as_str().to_string();
    let rpc = Rpc::from_path(&path);
    let req = st.net.next_req.fetch_add(1, Ordering::Relaxed);
    let journal_request = |params: Value| {
        st.journal(Event::Request {
            req,
            binding: Binding::Grpc,
            http_method: http_method.clone(),
            path: path.clone(),
            method: rpc.map(|r| r.name().to_string()),
            rpc_id: None,
            params: Box::new(params),
            headers: Box::new(header_map(&headers)),
            envelope: None,
        });
    };
    let refuse = |status: StatusCode, why: &str| {
        st.journal(Event::Response {
            retry_after_s: None,
            req,
            status: status.as_u16(),
            rpc_error: None,
            grpc_status: None,
            body: json!(why),
        });
        (status, why.to_string()).into_response()
    };
    // Wrong HTTP method or content type: plain HTTP refusals (gRPC over HTTP/2 spec).
    if http_method != "POST" {
        journal_request(Value::Null);
        let mut resp = refuse(StatusCode::METHOD_NOT_ALLOWED, "gRPC calls are POSTs");
        resp.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("POST"));
        return resp;
    }
    if !is_grpc_request(&headers) {
        journal_request(Value::Null);
        return refuse(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "content-type must be application/grpc or application/grpc+proto",
        );
    }
    let mut call = Call {
        req,
        id: Id::Null,
        v03: false,
        binding: Binding::Grpc,
        method: rpc.map(Method::from),
        headers: headers.clone(),
        ctl,
        dropping: false,
        notification: false,
        tenant: None,
        omit: Vec::new(),
    };
    let fail = |params: Value, status: rpc::Status, rpc_error: i64| {
        journal_request(params);
        st.journal(Event::Response {
            retry_after_s: None,
            req,
            status: GrpcCode::from_number(status.code)
                .unwrap_or(GrpcCode::Unknown)
                .http_status(),
            rpc_error: Some(rpc_error),
            grpc_status: Some(status.code),
            body: json!({"error": {"code": rpc_error, "message": status.message}}),
        });
        trailers_only(&status)
    };
    let Some(rpc) = rpc else {
        let name = path.rsplit('/').next().unwrap_or_default();
        return fail(
            Value::Null,
            plain_status(
                GrpcCode::Unimplemented,
                &format!("unknown method {name:?} of lf.a2a.v1.A2AService"),
            ),
            ErrorCode::MethodNotFound.code(),
        );
    };
    let bytes = match crate::rpc::read_body(&st, body).await {
        Ok(b) => b,
        Err(too) => {
            let code = match too {
                crate::rpc::BodyError::TooLarge => GrpcCode::ResourceExhausted,
                crate::rpc::BodyError::Timeout => GrpcCode::DeadlineExceeded,
                crate::rpc::BodyError::Cut => GrpcCode::Cancelled,
            };
            let resp = fail(
                json!(too.describe(&st)),
                plain_status(code, too.message()),
                ErrorCode::InvalidRequest.code(),
            );
            if too.closes() {
                call.ctl.abort();
            }
            return resp;
        }
    };
    let raw = || json!(format!("<{} bytes of gRPC body>", bytes.len()));
    let mut decoder = FrameDecoder::new(st.spec.max_body_bytes);
    decoder.push(&bytes);
    let message = match decoder.next_frame() {
        Ok(Some(m)) if decoder.buffered() == 0 => m,
        Ok(Some(_)) => {
            return fail(
                raw(),
                plain_status(
                    GrpcCode::Unimplemented,
                    "more than one request message on a unary or server-streaming RPC",
                ),
                ErrorCode::InvalidRequest.code(),
            );
        }
        Ok(None) => {
            let e = ErrorCode::InvalidRequest.to_error(
                Some(&match decoder.finish() {
                    Err(e) => e.to_string(),
                    Ok(()) => "no request message".to_string(),
                }),
                &[],
            );
            return fail(raw(), status_of(&e), e.code);
        }
        Err(FrameError::Compressed) => {
            return fail(
                raw(),
                plain_status(
                    GrpcCode::Unimplemented,
                    "compressed messages are not supported (no grpc-encoding)",
                ),
                ErrorCode::InvalidRequest.code(),
            );
        }
        Err(e @ FrameError::TooLarge { .. }) => {
            return fail(
                raw(),
                plain_status(GrpcCode::ResourceExhausted, &e.to_string()),
                ErrorCode::InvalidRequest.code(),
            );
        }
        Err(e) => {
            let e = ErrorCode::JsonParse.to_error(Some(&e.to_string()), &[]);
            return fail(raw(), status_of(&e), e.code);
        }
    };
    let params = match a2a_protocol::grpc::decode_to_json(rpc.request_type(), &message) {
        Ok(p) => p,
        Err(e) => {
            let e = ErrorCode::JsonParse.to_error(Some(&e.to_string()), &[]);
            return fail(raw(), status_of(&e), e.code);
        }
    };
    journal_request(st.net.journal.summarise(&params));
    // proto3: an empty `tenant` is no tenant (ProtoJSON leaves it out).
    call.tenant = params.get("tenant").and_then(crate::rpc::tenant_of);
    let version = headers
        .get(a2a_protocol::grpc::VERSION_METADATA)
        .and_then(|h| h.to_str().ok());
    match compat03::negotiate(version) {
        Ok(ProtocolVersion::V1_0) => {}
        Ok(ProtocolVersion::V0_3) => {
            return call.error(
                &st,
                ErrorCode::VersionNotSupported,
                Some("a2a-version metadata missing: 0.3 is not served, send a2a-version: 1.0"),
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
    crate::methods::dispatch(st, call, rpc.name().to_string(), params).await
}
