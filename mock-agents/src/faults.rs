//! Faults: the ones that act before processing (`drop_before`, `http_status`, `rpc_error`,
//! `garbage_body`, `stall`), the ones that act on a processed response (`drop_response`,
//! `stall_response`, `trickle` on a unary body), and the per-method fault queue.

use crate::agent::*;
use crate::journal::Event;
use crate::rpc::{Call, respond};
use crate::script::*;
use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::time::Duration;

/// The default body of a `garbage_body` fault.
const GARBAGE: &str = "<<garbage>>";

/// Take the next queued fault of `method`, if any (one use of its `times`).
pub(crate) fn take_queued(st: &AgentState, method: &str) -> Option<Fault> {
    let mut q = lock_map(&st.queued);
    let i = q.iter().position(|f| f.method == method && f.times > 0)?;
    let f = q[i].fault.clone();
    q[i].times -= 1;
    if q[i].times == 0 {
        q.remove(i);
    }
    Some(f)
}

/// Apply a fault that acts on the processed response: `drop_response` drops the connection
/// instead of answering; `stall_response` holds the answer; `trickle` re-sends a unary body slowly (streams trickle in
/// [`crate::sse`]).
pub(crate) async fn post_fault(
    st: &AgentState,
    call: &Call,
    fault: Option<&Fault>,
    resp: Response,
) -> Response {
    match fault {
        Some(Fault::DropResponse) => {
            st.journal(Event::Fault {
                req: call.req,
                kind: "drop_response".into(),
            });
            st.journal(Event::ConnectionDropped {
                req: call.req,
                phase: "after_processing".into(),
            });
            drop(resp);
            call.ctl.abort();
            hang().await
        }
        Some(Fault::StallResponse { ms }) => {
            st.journal(Event::Fault {
                req: call.req,
                kind: "stall_response".into(),
            });
            tokio::time::sleep(Duration::from_millis(*ms)).await;
            resp
        }
        Some(Fault::Trickle { bytes_per_sec }) if !is_stream(&resp) => {
            st.journal(Event::Fault {
                req: call.req,
                kind: "trickle".into(),
            });
            if let Some(g) = resp.extensions().get::<crate::grpc::GrpcUnary>().cloned() {
                // The frame slowly, then the trailers.
                let (parts, _) = resp.into_parts();
                let slice = usize::try_from(*bytes_per_sec / 20)
                    .unwrap_or(usize::MAX)
                    .max(1);
                let chunks: Vec<Bytes> = g.data.chunks(slice).map(Bytes::copy_from_slice).collect();
                use futures::StreamExt;
                let frames = futures::stream::iter(chunks)
                    .then(|c| async move {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        hyper::body::Frame::data(c)
                    })
                    .chain(futures::stream::iter([hyper::body::Frame::trailers(
                        g.trailers,
                    )]));
                return Response::from_parts(parts, crate::grpc::frame_body(frames));
            }
            let (parts, body) = resp.into_parts();
            // A unary body is already in memory; re-send it slowly.
            match axum::body::to_bytes(body, usize::MAX).await {
                Ok(bytes) => Response::from_parts(parts, trickle(bytes.to_vec(), *bytes_per_sec)),
                Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
            }
        }
        _ => resp,
    }
}

/// A streaming response (SSE or gRPC): its faults act per event, in [`crate::sse`].
fn is_stream(resp: &Response) -> bool {
    resp.extensions().get::<crate::grpc::GrpcStream>().is_some()
        || resp
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"))
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
                retry_after_s: *retry_after_s,
                grpc_status: (call.binding == Binding::Grpc)
                    .then(|| a2a_protocol::GrpcCode::from_http_status(*status).number()),
                req: call.req,
                status: *status,
                rpc_error: None,
                body: Value::Null,
            });
            let code = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let message = format!("injected HTTP {status}");
            if call.binding == Binding::Grpc {
                return Some(crate::grpc::injected_status(*status, *retry_after_s));
            }
            let mut resp = match call.binding {
                Binding::Rest => crate::rest::json_response(
                    *status,
                    &crate::rest::status_body(*status, &message),
                ),
                _ => (code, message).into_response(),
            };
            if let Some(s) = retry_after_s
                && let Ok(v) = header::HeaderValue::from_str(&s.to_string())
            {
                resp.headers_mut().insert(header::RETRY_AFTER, v);
            }
            // The connection ends with the error, as many servers end it: a client that reads
            // this answer closes its side (RFC 9112 §9.6), which the journal records, so a crash
            // can land once the client holds the error and waits (HTTP/2 drops the header).
            resp.headers_mut().insert(
                header::CONNECTION,
                header::HeaderValue::from_static("close"),
            );
            let (journal, agent, req) = (st.net.journal.clone(), st.spec.name.clone(), call.req);
            call.ctl.on_client_close(move || {
                journal.record(&agent, Event::ClientClosed { req });
            });
            Some(resp)
        }
        Fault::RpcError { code, message } => {
            st.journal(Event::Fault {
                req: call.req,
                kind: format!("rpc_error_{code}"),
            });
            let e = a2a_protocol::ErrorCode::from_code(*code).to_error(message.as_deref(), &[]);
            Some(respond(st, call, Err(e), &[]))
        }
        Fault::GarbageBody { body } => {
            st.journal(Event::Fault {
                req: call.req,
                kind: "garbage_body".into(),
            });
            let body = body.clone().unwrap_or_else(|| GARBAGE.to_string());
            if call.binding == Binding::Grpc {
                st.journal(Event::Response {
                    retry_after_s: None,
                    grpc_status: Some(0),
                    req: call.req,
                    status: 200,
                    rpc_error: None,
                    body: Value::String(body.clone()),
                });
                return Some(crate::grpc::garbage_response(&body));
            }
            st.journal(Event::Response {
                retry_after_s: None,
                grpc_status: None,
                req: call.req,
                status: 200,
                rpc_error: None,
                body: Value::String(body.clone()),
            });
            Some(
                (
                    StatusCode::OK,
                    [(
                        header::CONTENT_TYPE,
                        match call.binding {
                            Binding::Rest => a2a_protocol::rest::REST_CONTENT_TYPE,
                            _ => "application/json",
                        },
                    )],
                    body,
                )
                    .into_response(),
            )
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
