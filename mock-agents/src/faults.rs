//! Transport and HTTP faults that act before processing (`drop_before`, `http_status`,
//! `stall`) and the helpers of the ones that act after (`drop_response`, `trickle`).

use crate::agent::*;
use crate::journal::Event;
use crate::rpc::Call;
use crate::script::*;
use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::time::Duration;

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
                req: call.req,
                status: *status,
                rpc_error: None,
                body: Value::Null,
            });
            let code = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            let mut resp = (code, format!("injected HTTP {status}")).into_response();
            if let Some(s) = retry_after_s
                && let Ok(v) = header::HeaderValue::from_str(&s.to_string())
            {
                resp.headers_mut().insert(header::RETRY_AFTER, v);
            }
            Some(resp)
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
