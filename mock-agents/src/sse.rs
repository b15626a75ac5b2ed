//! SSE stream framing: turns a task's outgoing items into `text/event-stream` frames, applying
//! mutations, the 0.3 translation and the stream faults (`close_after`, `reset_after`, `trickle`).

use crate::agent::*;
use crate::journal::Event;
use crate::methods::to_value;
use crate::mutations::mutate;
use crate::rpc::Call;
use crate::script::*;
use a2a_protocol::compat03::{self, ObjectKind};
use a2a_protocol::*;
use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Encode one SSE frame for a JSON-RPC response around `result` (mutations are defined on the
/// envelope); over HTTP+JSON the `data:` is the bare `StreamResponse` of the mutated envelope.
/// Also returns what to journal: the envelope (JSON-RPC), or `{"result": …}` (other bindings).
pub(crate) fn frame(
    binding: Binding,
    id: &Id,
    result: &Value,
    mutations: &[Mutation],
) -> (Vec<u8>, Value) {
    let mut v = json!({"jsonrpc": "2.0", "id": id, "result": result});
    mutate(&mut v, mutations);
    let (sent, journaled) = match binding {
        Binding::JsonRpc => (v.clone(), v),
        _ => (
            v.get("result").cloned().unwrap_or(Value::Null),
            crate::rest::neutral(&v),
        ),
    };
    let text = serde_json::to_string(&sent).unwrap_or_default();
    let mut out = Vec::with_capacity(text.len() + 8);
    a2a_protocol::sse::encode_event(&mut out, None, &text);
    (out, journaled)
}

pub(crate) struct StreamState {
    st: Arc<AgentState>,
    req: u64,
    id: Id,
    v03: bool,
    binding: Binding,
    mutations: Vec<Mutation>,
    first: std::vec::IntoIter<Arc<Outgoing>>,
    rx: mpsc::Receiver<Arc<Outgoing>>,
    index: u32,
    close_after: Option<u32>,
    reset_after: Option<u32>,
    ctl: crate::server::ConnControl,
    /// Half an event went out: reset the connection at the next poll.
    resetting: bool,
    /// The end of the stream is journaled (otherwise dropping it means the client went away).
    closed: bool,
}

impl StreamState {
    fn close(&mut self, reason: &str) {
        self.closed = true;
        self.st.journal(Event::StreamClosed {
            req: self.req,
            events: self.index,
            reason: reason.into(),
        });
    }
}

impl Drop for StreamState {
    fn drop(&mut self) {
        if !self.closed {
            self.close("client_gone");
        }
    }
}

/// Encode the next item of a stream, or `None` when it closes.
pub(crate) async fn next_frame(s: &mut StreamState) -> Option<Vec<u8>> {
    if s.close_after == Some(s.index) {
        s.st.journal(Event::Fault {
            req: s.req,
            kind: "close_after".into(),
        });
        s.close("fault");
        return None;
    }
    let next = match s.first.next() {
        Some(o) => Some(o),
        None => s.rx.recv().await,
    };
    let Some(out) = next else {
        s.close("task_ended");
        return None;
    };
    let bytes = match out.as_ref() {
        Outgoing::Close(reason) => {
            s.close(reason);
            return None;
        }
        Outgoing::Event(ev) => {
            let mut result = to_value(ev.as_ref());
            if s.v03 {
                result = compat03::to_v03(ObjectKind::StreamResult, &result).unwrap_or(result);
            }
            let (b, v) = frame(s.binding, &s.id, &result, &s.mutations);
            s.st.journal(Event::SseEvent {
                req: s.req,
                index: s.index,
                data: s.st.net.journal.summarise(&v),
            });
            b
        }
        Outgoing::Raw(result) => {
            let (b, v) = frame(s.binding, &s.id, result, &s.mutations);
            s.st.journal(Event::SseEvent {
                req: s.req,
                index: s.index,
                data: s.st.net.journal.summarise(&v),
            });
            b
        }
        Outgoing::RawText(text) => {
            let mut b = Vec::new();
            a2a_protocol::sse::encode_event(&mut b, None, text);
            s.st.journal(Event::SseEvent {
                req: s.req,
                index: s.index,
                data: s.st.net.journal.summarise(&json!(text)),
            });
            b
        }
        Outgoing::Huge(n) => {
            let mut b = Vec::with_capacity(n + 16);
            b.extend_from_slice(b"data: ");
            b.resize(n + 6, b'x');
            b.extend_from_slice(b"\n\n");
            s.st.journal(Event::SseEvent {
                req: s.req,
                index: s.index,
                data: json!(format!("<huge event of {n} bytes>")),
            });
            b
        }
    };
    if s.reset_after == Some(s.index) {
        s.st.journal(Event::Fault {
            req: s.req,
            kind: "reset_after".into(),
        });
        s.st.journal(Event::ConnectionDropped {
            req: s.req,
            phase: "mid_event".into(),
        });
        s.closed = true;
        s.resetting = true;
        return Some(bytes[..bytes.len() / 2].to_vec());
    }
    s.index += 1;
    Some(bytes)
}

pub(crate) fn sse_response(
    st: &Arc<AgentState>,
    call: &Call,
    rx: mpsc::Receiver<Arc<Outgoing>>,
    first: Vec<Arc<Outgoing>>,
    mutations: &[Mutation],
    fault: Option<&Fault>,
) -> Response {
    let (close_after, reset_after) = match fault {
        Some(Fault::CloseAfter { events }) => (Some(*events), None),
        Some(Fault::ResetAfter { events }) => (None, Some(*events)),
        _ => (None, None),
    };
    let state = StreamState {
        st: st.clone(),
        req: call.req,
        id: call.id.clone(),
        v03: call.v03,
        binding: call.binding,
        mutations: mutations.to_vec(),
        first: first.into_iter(),
        rx,
        index: 0,
        close_after,
        reset_after,
        ctl: call.ctl.clone(),
        resetting: false,
        // A response that will be dropped is never seen: journal nothing about it.
        closed: call.dropping,
    };
    if !call.dropping {
        st.journal(Event::Response {
            grpc_status: None,
            req: call.req,
            status: 200,
            rpc_error: None,
            body: json!("<text/event-stream>"),
        });
    }
    let stream = futures::stream::unfold(state, |mut s| async move {
        if s.resetting {
            // Give the half event time to reach the socket, then reset the connection; the
            // reset drops this stream, so the wait below ends either way.
            tokio::time::sleep(Duration::from_millis(50)).await;
            s.ctl.abort();
            tokio::time::sleep(Duration::from_secs(30)).await;
            return None;
        }
        let b = next_frame(&mut s).await?;
        Some((Ok::<Bytes, std::io::Error>(Bytes::from(b)), s))
    });
    let body = match fault {
        Some(Fault::Trickle { bytes_per_sec }) => {
            st.journal(Event::Fault {
                req: call.req,
                kind: "trickle".into(),
            });
            let slice = usize::try_from(*bytes_per_sec / 20)
                .unwrap_or(usize::MAX)
                .max(1);
            use futures::StreamExt;
            Body::from_stream(stream.flat_map(move |r| {
                let chunks: Vec<Result<Bytes, std::io::Error>> = match r {
                    Ok(b) => b
                        .chunks(slice)
                        .map(|c| Ok(Bytes::copy_from_slice(c)))
                        .collect(),
                    Err(e) => vec![Err(e)],
                };
                futures::stream::iter(chunks).then(|c| async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    c
                })
            }))
        }
        _ => Body::from_stream(stream),
    };
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-store")
        .body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
