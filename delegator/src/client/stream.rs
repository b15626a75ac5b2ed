//! [`EventStream`]: the events of a streamed call, whatever the binding (SSE of JSON-RPC
//! responses, SSE of bare `StreamResponse`s, gRPC messages), one [`StreamItem`] at a time.

use super::*;

/// One event read from a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamItem {
    /// The event; an artifact update's inline bytes shared with the received payload (see
    /// [`a2a_protocol::artifact_chunk`]).
    pub event: SharedStreamResponse,
    /// Raw state names rewritten to UNSPECIFIED.
    pub unknown_states: Vec<String>,
    /// The REQUIRED fields the event lacks ([`required::stream_response`]): such an event is
    /// never taken as a result.
    pub lacks: Vec<String>,
}

/// How the `data:` of an SSE event is framed.
#[derive(Debug)]
pub(super) enum SseFraming {
    /// A JSON-RPC response around the `StreamResponse`; its id must be the request's.
    JsonRpc {
        version: ProtocolVersion,
        rpc_id: Id,
    },
    /// A bare `StreamResponse`; `event: error` carries an HTTP+JSON error body.
    Rest,
}

/// Where a stream's events come from.
#[derive(Debug)]
pub(super) enum Source {
    /// Nothing more (a one-event stream made of a JSON reply).
    Empty,
    /// An SSE response body.
    Sse(Box<SseSource>),
    /// A server-streaming gRPC call (dropping it cancels the call).
    Grpc {
        url: String,
        stream: Box<tonic::Streaming<a2a_protocol::grpc::pb::StreamResponse>>,
    },
}

/// An SSE response body being decoded.
#[derive(Debug)]
pub(super) struct SseSource {
    resp: reqwest::Response,
    decoder: SseDecoder,
    events: VecDeque<SseEventBytes>,
    framing: SseFraming,
    /// The agent's connection, held until the body ends ([`super::cap`]).
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

/// An open stream of [`StreamResponse`] events, whatever the binding. Dropping it ends the call.
#[derive(Debug)]
pub struct EventStream {
    source: Source,
    pending: VecDeque<Result<(Value, Vec<String>), ClientError>>,
    method: Method,
    done: bool,
}

impl EventStream {
    pub(super) fn one(method: Method, result: Value, unknown: Vec<String>) -> Self {
        let mut pending = VecDeque::new();
        pending.push_back(Ok((result, unknown)));
        EventStream {
            source: Source::Empty,
            pending,
            method,
            done: false,
        }
    }

    pub(super) fn sse(
        method: Method,
        resp: reqwest::Response,
        max_event_bytes: usize,
        framing: SseFraming,
        permit: tokio::sync::OwnedSemaphorePermit,
    ) -> Self {
        EventStream {
            source: Source::Sse(Box::new(SseSource {
                resp,
                decoder: SseDecoder::new(max_event_bytes),
                events: VecDeque::new(),
                framing,
                permit: Some(permit),
            })),
            pending: VecDeque::new(),
            method,
            done: false,
        }
    }

    pub(super) fn grpc(
        method: Method,
        url: String,
        stream: tonic::Streaming<a2a_protocol::grpc::pb::StreamResponse>,
    ) -> Self {
        EventStream {
            source: Source::Grpc {
                url,
                stream: Box::new(stream),
            },
            pending: VecDeque::new(),
            method,
            done: false,
        }
    }

    /// The next event; `None` when the server closed the stream. An error ends the stream.
    pub async fn next(&mut self) -> Option<Result<StreamItem, ClientError>> {
        loop {
            if let Some(p) = self.pending.pop_front() {
                return Some(p.and_then(|(v, unknown)| self.decode_result(v, unknown, true)));
            }
            if let Source::Sse(sse) = &mut self.source
                && let Some(ev) = sse.events.pop_front()
            {
                // Fast path: the payload decoded once, from its bytes straight into the typed
                // envelope and event (no `Value`), an artifact chunk's text parts left in the
                // payload buffer (`a2a_protocol::artifact_chunk`: the chunk bytes are copied at
                // most once, by the SSE decoder when an event spans two reads). It is taken only
                // when that decode succeeds, which implies every task state in it is known;
                // anything else (an unknown state, a wrong shape, a 0.3 agent, an SSE error
                // event) goes through the `Value` path below, which rewrites unknown states to
                // UNSPECIFIED, records them, and produces the same errors as before. No
                // conformance check runs on either path (the delegator never ran one on
                // events; the harness checks what the agents send).
                let typed = match &sse.framing {
                    SseFraming::JsonRpc { version, rpc_id } => {
                        jsonrpc::event_typed(self.method, *version, rpc_id, &ev)
                    }
                    SseFraming::Rest => rest::event_typed(&ev),
                };
                // An event that may lack a REQUIRED field (an empty id, no parts, a state that
                // may be absent) leaves the fast path too: the `Value` path names what it lacks
                // (`required`). Complete events are never decoded twice.
                match typed {
                    Some(Ok(event)) if !required::suspicious(&event) => {
                        return Some(Ok(StreamItem {
                            event,
                            unknown_states: Vec::new(),
                            lacks: Vec::new(),
                        }));
                    }
                    Some(Err(e)) => return Some(Err(e)),
                    Some(Ok(_)) | None => {}
                }
                let ev = ev.into_event();
                let v = match &sse.framing {
                    SseFraming::JsonRpc { version, rpc_id } => {
                        jsonrpc::event_value(self.method, *version, rpc_id, ev)
                    }
                    SseFraming::Rest => rest::event_value(ev),
                };
                return Some(v.and_then(|v| self.decode_result(v, Vec::new(), true)));
            }
            if self.done {
                return None;
            }
            let sse = match &mut self.source {
                Source::Sse(sse) => sse,
                Source::Grpc { url, stream } => {
                    return match stream.message().await {
                        // Fast path: a plain artifact chunk moved from prost into the typed
                        // event; anything else through ProtoJSON and the `Value` path.
                        Ok(Some(m)) => Some(match grpc::stream_typed(m) {
                            Ok(event) => {
                                let event: SharedStreamResponse = event.into();
                                let lacks = match &event {
                                    SharedStreamResponse::ArtifactChunk(c) => required::chunk(c),
                                    SharedStreamResponse::Other(_) => Vec::new(),
                                };
                                Ok(StreamItem {
                                    event,
                                    unknown_states: Vec::new(),
                                    lacks,
                                })
                            }
                            // Proto3 cannot tell an absent state from UNSPECIFIED.
                            Err(m) => grpc::stream_value(&m)
                                .and_then(|v| self.decode_result(v, Vec::new(), false)),
                        }),
                        Ok(None) => {
                            self.done = true;
                            None
                        }
                        Err(s) => {
                            self.done = true;
                            Some(Err(grpc::stream_status_error(url, &s)))
                        }
                    };
                }
                Source::Empty => {
                    self.done = true;
                    return None;
                }
            };
            match sse.resp.chunk().await {
                Ok(Some(bytes)) => {
                    let mut out = Vec::new();
                    let r = sse.decoder.feed_bytes(&bytes, &mut out);
                    sse.events.extend(out);
                    if let Err(e) = r {
                        self.done = true;
                        self.pending
                            .push_back(Err(ClientError::AgentProtocol(format!("SSE: {e}"))));
                    }
                }
                Ok(None) => {
                    self.done = true;
                    // The connection is back in the pool: the next request may have it.
                    sse.permit = None;
                    if let Err(e) = sse.decoder.finish() {
                        self.pending
                            .push_back(Err(ClientError::AgentProtocol(format!("SSE: {e}"))));
                    }
                }
                Err(e) => {
                    self.done = true;
                    sse.permit = None;
                    self.pending
                        .push_back(Err(ClientError::Transport(format!("stream dropped: {e}"))));
                }
            }
        }
    }

    /// Decode one event's value; `state_presence`: whether an absent `status.state` can be told
    /// from UNSPECIFIED (the JSON bindings).
    pub(super) fn decode_result(
        &self,
        mut v: Value,
        mut unknown: Vec<String>,
        state_presence: bool,
    ) -> Result<StreamItem, ClientError> {
        let lacks = required::stream_response(&v, state_presence);
        unknown.extend(sanitize_states(&mut v));
        let event = a2a_protocol::codec::decode_value::<StreamResponse>(&v)
            .map_err(|e| ClientError::AgentProtocol(format!("{} event: {e}", self.method)))?;
        Ok(StreamItem {
            event: event.into(),
            unknown_states: unknown,
            lacks,
        })
    }
}
