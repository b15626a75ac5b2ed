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
use axum::body::Bytes;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper::body::Frame;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Encode one stream item for a JSON-RPC response around `result` (mutations are defined on
/// the envelope): an SSE event of the envelope (JSON-RPC) or of the bare `StreamResponse` of
/// the mutated envelope (HTTP+JSON), or a gRPC frame ([`crate::grpc::stream_frame`]). Also
/// returns what to journal: the envelope (JSON-RPC), or `{"result": …}` (other bindings).
pub(crate) fn frame(
    binding: Binding,
    id: &Id,
    result: &Value,
    mutations: &[Mutation],
) -> (Vec<u8>, Value) {
    let mut v = json!({"jsonrpc": "2.0", "id": id, "result": result});
    mutate(&mut v, mutations);
    let sent = match binding {
        Binding::JsonRpc => return (sse_event(&v), v),
        Binding::Rest => v.get("result").cloned().unwrap_or(Value::Null),
        Binding::Grpc => {
            let mutated = v.get("result").cloned().unwrap_or(Value::Null);
            let (bytes, sent) = crate::grpc::stream_frame(&mutated, result);
            return (bytes.to_vec(), json!({ "result": sent }));
        }
    };
    (sse_event(&sent), crate::rest::neutral(&v))
}

/// One SSE event whose data is this JSON.
fn sse_event(v: &Value) -> Vec<u8> {
    let text = serde_json::to_string(v).unwrap_or_default();
    let mut out = Vec::with_capacity(text.len() + 8);
    a2a_protocol::sse::encode_event(&mut out, None, &text);
    out
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
    /// The rest of a pre-encoded frame sent in pieces ([`crate::frames::encode`]).
    pending: std::collections::VecDeque<Bytes>,
    /// Pointers an `omit_fields` fault still has to remove from the first event holding any.
    omit: Vec<String>,
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
pub(crate) async fn next_frame(s: &mut StreamState) -> Option<Bytes> {
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
    let bytes: Bytes = match out.as_ref() {
        Outgoing::Close(reason) => {
            s.close(reason);
            return None;
        }
        Outgoing::Event(ev) => event_frame(s, ev),
        Outgoing::Omitted { result, removed } => {
            let mut result = result.clone();
            if s.binding != Binding::Grpc {
                s.st.clock.restyle(&mut result);
            }
            s.st.journal(Event::Fault {
                req: s.req,
                kind: crate::omit::kind(removed),
            });
            let (b, v) = frame(s.binding, &s.id, &result, &s.mutations);
            s.st.journal(Event::SseEvent {
                req: s.req,
                index: s.index,
                data: s.st.net.journal.summarise(&v),
            });
            b.into()
        }
        Outgoing::Chunk(c) => {
            let fast = if s.v03 || !s.mutations.is_empty() || !s.omit.is_empty() {
                None
            } else {
                crate::frames::encode(s.binding, &s.id, c)
            };
            match fast {
                Some(mut parts) if !parts.is_empty() => {
                    if s.st.net.journal.is_full() {
                        let data =
                            crate::frames::journal_data(&s.st.net.journal, s.binding, &s.id, c);
                        s.st.journal(Event::SseEvent {
                            req: s.req,
                            index: s.index,
                            data,
                        });
                    }
                    if s.reset_after == Some(s.index) {
                        // Halved below: one piece.
                        parts.concat().into()
                    } else {
                        let first = parts.remove(0);
                        s.pending.extend(parts);
                        first
                    }
                }
                _ => event_frame(s, &c.event()),
            }
        }
        Outgoing::Raw(result) => {
            let (b, v) = frame(s.binding, &s.id, result, &s.mutations);
            s.st.journal(Event::SseEvent {
                req: s.req,
                index: s.index,
                data: s.st.net.journal.summarise(&v),
            });
            b.into()
        }
        Outgoing::RawText(text) if s.binding == Binding::Grpc => {
            let b = crate::grpc::garbage_frame(text.as_bytes());
            s.st.journal(Event::SseEvent {
                req: s.req,
                index: s.index,
                data: s.st.net.journal.summarise(&json!(text)),
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
            b.into()
        }
        Outgoing::Huge(n) => {
            let mut b = Vec::with_capacity(n + 16);
            if s.binding == Binding::Grpc {
                // A frame declaring (and carrying) n bytes.
                b.push(0);
                b.extend_from_slice(&u32::try_from(*n).unwrap_or(u32::MAX).to_be_bytes());
                b.resize(n + 5, b'x');
            } else {
                b.extend_from_slice(b"data: ");
                b.resize(n + 6, b'x');
                b.extend_from_slice(b"\n\n");
            }
            s.st.journal(Event::SseEvent {
                req: s.req,
                index: s.index,
                data: json!(format!("<huge event of {n} bytes>")),
            });
            b.into()
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
        return Some(bytes.slice(..bytes.len() / 2));
    }
    s.index += 1;
    Some(bytes)
}

/// The frame of a typed event (general path: translation, timestamp style, a pending
/// `omit_fields` fault and mutations apply), journaled.
fn event_frame(s: &mut StreamState, ev: &StreamResponse) -> Bytes {
    let mut result = to_value(ev);
    if s.v03 {
        result = compat03::to_v03(ObjectKind::StreamResult, &result).unwrap_or(result);
    }
    if s.binding != Binding::Grpc {
        s.st.clock.restyle(&mut result);
    }
    if !s.omit.is_empty() {
        let removed = crate::omit::from_result(&mut result, &s.omit);
        if !removed.is_empty() {
            s.omit.clear();
            s.st.journal(Event::Fault {
                req: s.req,
                kind: crate::omit::kind(&removed),
            });
        }
    }
    let (b, v) = frame(s.binding, &s.id, &result, &s.mutations);
    s.st.journal(Event::SseEvent {
        req: s.req,
        index: s.index,
        data: s.st.net.journal.summarise(&v),
    });
    b.into()
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
    let omit = match fault {
        Some(Fault::OmitFields { pointers }) => pointers.clone(),
        _ => Vec::new(),
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
        pending: Default::default(),
        omit,
    };
    if !call.dropping {
        st.journal(Event::Response {
            retry_after_s: None,
            grpc_status: None,
            req: call.req,
            status: 200,
            rpc_error: None,
            body: json!("<text/event-stream>"),
        });
    }
    let grpc = call.binding == Binding::Grpc;
    // Data frames, then (gRPC, after a clean end) the `grpc-status: 0` trailers.
    let stream = futures::stream::unfold((state, false), move |(mut s, done)| async move {
        if done {
            return None;
        }
        if s.resetting {
            // Give the half event time to reach the socket, then reset the connection; the
            // reset drops this stream, so the wait below ends either way.
            tokio::time::sleep(Duration::from_millis(50)).await;
            s.ctl.abort();
            tokio::time::sleep(Duration::from_secs(30)).await;
            return None;
        }
        if let Some(b) = s.pending.pop_front() {
            return Some((Frame::data(b), (s, false)));
        }
        match next_frame(&mut s).await {
            Some(b) => Some((Frame::data(b), (s, false))),
            None if grpc => Some((
                Frame::trailers(a2a_protocol::grpc::status::ok_trailers()),
                (s, true),
            )),
            None => None,
        }
    });
    use futures::StreamExt;
    let body = match fault {
        Some(Fault::Trickle { bytes_per_sec }) => {
            st.journal(Event::Fault {
                req: call.req,
                kind: "trickle".into(),
            });
            let slice = usize::try_from(*bytes_per_sec / 20)
                .unwrap_or(usize::MAX)
                .max(1);
            crate::grpc::frame_body(stream.flat_map(move |f| {
                let frames: Vec<Frame<Bytes>> = match f.into_data() {
                    Ok(b) => b
                        .chunks(slice)
                        .map(|c| Frame::data(Bytes::copy_from_slice(c)))
                        .collect(),
                    Err(other) => vec![other],
                };
                futures::stream::iter(frames).then(|c| async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    c
                })
            }))
        }
        _ => crate::grpc::frame_body(stream),
    };
    if grpc {
        let mut resp = crate::grpc::grpc_ok_response(body);
        resp.extensions_mut().insert(crate::grpc::GrpcStream);
        return resp;
    }
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-store")
        .body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
