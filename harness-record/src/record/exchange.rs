//! One proxied call as the journal sees it: the request decoded per binding (JSON-RPC envelope,
//! HTTP+JSON route, gRPC ProtoJSON), and an [`Observer`] that decodes the answer as it streams
//! by (a unary body, SSE events, gRPC frames and trailers) into the mock network's entries.

use super::redact::{self, Redactor};
use super::sink::JournalSink;
use super::tasks::{TaskTracker, is_interrupted, is_terminal};
use a2a_mock_agents::{AgentName, Event};
use a2a_protocol::conformance::ObjectType;
use a2a_protocol::grpc::Rpc;
use a2a_protocol::grpc::framing::FrameDecoder;
use a2a_protocol::sse::SseDecoder;
use a2a_protocol::{Binding, Method, compat03};
use bytes::Bytes;
use hyper::HeaderMap;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// The largest body (request, unary answer, one SSE event or gRPC message) decoded for the
/// journal; larger ones are forwarded all the same, and a note says they were not decoded.
pub const MAX_DECODED_BYTES: usize = 16 * 1024 * 1024;

/// What one proxied upstream shares across its calls.
pub struct Recording {
    /// The agent's name in the journal (its card's name).
    pub agent: AgentName,
    /// The journal.
    pub sink: JournalSink,
    /// Redaction and size rules.
    pub redactor: Redactor,
    /// Task states and artifacts seen so far.
    pub tracker: Mutex<TaskTracker>,
}

impl Recording {
    /// Journal one event under this agent.
    pub fn record(&self, event: Event) -> u64 {
        self.sink.record(&self.agent, event)
    }

    /// Journal a note.
    pub fn note(&self, req: Option<u64>, text: impl Into<String>) {
        self.record(Event::Note {
            req,
            text: text.into(),
        });
    }

    /// Journal the agent-side events of one result.
    pub fn observe_result(&self, result: &Value, created_by: Option<&str>) -> Vec<String> {
        let events = self
            .tracker
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .observe(result, created_by);
        let mut states = Vec::new();
        for e in events {
            if let Event::TaskState { state, .. } = &e {
                states.push(state.clone());
            }
            self.record(e);
        }
        states
    }
}

/// A request as decoded for the journal.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The binding it came over.
    pub binding: Binding,
    /// The A2A method, when the request named a known one.
    pub method: Option<Method>,
    /// The method name as sent (0.3 names included), when it named one.
    pub method_name: Option<String>,
    /// The JSON-RPC id.
    pub rpc_id: Option<Value>,
    /// The method was named in 0.3 (`message/send`): its results are 0.3 objects.
    pub v03: bool,
    /// The JSON-RPC-shaped params (unredacted), or the raw text when undecodable.
    pub params: Value,
    /// Why it could not be decoded, if it could not.
    pub problem: Option<String>,
    /// A JSON-RPC request's envelope without `params` (the journal's `envelope`).
    pub envelope: Option<Value>,
}

/// Is this a gRPC request or response by its content type?
pub fn is_grpc(headers: &HeaderMap) -> bool {
    headers
        .get(hyper::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(a2a_protocol::grpc::is_grpc_content_type)
}

fn raw_text(body: &[u8]) -> Value {
    json!(String::from_utf8_lossy(&body[..body.len().min(1024)]))
}

/// One gRPC message of `body` (the only frame of a unary request or answer).
pub fn single_grpc_message(body: &[u8]) -> Result<Bytes, String> {
    let mut d = FrameDecoder::new(MAX_DECODED_BYTES);
    d.push(body);
    match d.next_frame() {
        Ok(Some(m)) if d.buffered() == 0 => Ok(m),
        Ok(Some(_)) => Err("more than one gRPC message".into()),
        Ok(None) => Err(match d.finish() {
            Err(e) => e.to_string(),
            Ok(()) => "no gRPC message".into(),
        }),
        Err(e) => Err(e.to_string()),
    }
}

/// Decode a request: gRPC by content type, JSON-RPC by its envelope, HTTP+JSON by its route
/// under one of `rest_prefixes` (the paths of the card's HTTP+JSON interfaces).
pub fn decode_request(
    http_method: &str,
    path: &str,
    query: Option<&str>,
    headers: &HeaderMap,
    body: &[u8],
    rest_prefixes: &[String],
) -> Decoded {
    let mut d = Decoded {
        binding: Binding::JsonRpc,
        method: None,
        method_name: None,
        rpc_id: None,
        v03: false,
        params: Value::Null,
        problem: None,
        envelope: None,
    };
    if is_grpc(headers) {
        d.binding = Binding::Grpc;
        let Some(rpc) = Rpc::from_path(path) else {
            d.problem = Some(format!("no gRPC method of lf.a2a.v1.A2AService at {path}"));
            return d;
        };
        d.method = Some(Method::from(rpc));
        d.method_name = Some(rpc.name().to_string());
        match single_grpc_message(body).and_then(|m| {
            a2a_protocol::grpc::decode_to_json(rpc.request_type(), &m).map_err(|e| e.to_string())
        }) {
            Ok(p) => d.params = p,
            Err(e) => {
                d.params = json!(format!("<{} bytes of gRPC body>", body.len()));
                d.problem = Some(format!("undecodable gRPC request: {e}"));
            }
        }
        return d;
    }
    let json: Option<Value> = if body.is_empty() {
        None
    } else {
        match serde_json::from_slice(body) {
            Ok(v) => Some(v),
            Err(e) => {
                d.params = raw_text(body);
                d.problem = Some(format!("request body is not JSON: {e}"));
                None
            }
        }
    };
    if let Some(v) = &json
        && v.get("jsonrpc").is_some()
    {
        if let Some(m) = v.get("method").and_then(Value::as_str) {
            let parsed = Method::parse_any(m);
            d.method = parsed.map(|(m, _)| m);
            d.v03 = parsed.is_some_and(|(_, v)| v == a2a_protocol::ProtocolVersion::V0_3);
            d.method_name = Some(m.to_string());
        }
        d.rpc_id = v.get("id").cloned();
        d.params = v.get("params").cloned().unwrap_or(Value::Null);
        d.envelope = v.as_object().map(|o| {
            Value::Object(
                o.iter()
                    .filter(|(k, _)| k.as_str() != "params")
                    .map(|(k, x)| (k.clone(), x.clone()))
                    .collect(),
            )
        });
        return d;
    }
    for prefix in rest_prefixes {
        let Some(sub) = path.strip_prefix(prefix.as_str()) else {
            continue;
        };
        if let Ok((m, params)) = a2a_protocol::rest::route(http_method, sub, query, json.clone()) {
            d.binding = Binding::Rest;
            d.method = Some(m);
            d.method_name = Some(m.as_str().to_string());
            d.params = params;
            return d;
        }
    }
    if let Some(v) = json {
        d.params = v;
    }
    if d.problem.is_none() && http_method != "GET" {
        d.problem = Some(format!(
            "{http_method} {path}: neither a JSON-RPC request nor an HTTP+JSON route"
        ));
    }
    d
}

/// How an answer's body is read.
enum Reading {
    /// Buffered (up to [`MAX_DECODED_BYTES`]) and decoded at its end.
    Unary { buf: Vec<u8>, overflow: bool },
    /// SSE events, each one stream item.
    Sse(Box<SseDecoder>),
    /// gRPC messages, each one stream item.
    GrpcStream(FrameDecoder),
}

/// The `Retry-After` header in its delta-seconds form (an HTTP-date is not converted: the
/// journal would then depend on the recording's clock).
fn retry_after_of(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(hyper::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Watches one answer go by and journals it.
pub struct Observer {
    rec: Arc<Recording>,
    req: u64,
    binding: Binding,
    method: Option<Method>,
    status: u16,
    /// gRPC status from trailers-only headers.
    header_grpc_status: Option<i32>,
    header_rpc_error: Option<i64>,
    /// The answer's `Retry-After` in seconds (delta-seconds form only), if it had one.
    retry_after_s: Option<u64>,
    reading: Reading,
    created_by: Option<String>,
    /// A 0.3 method's result kind: results are translated to 1.0 before tasks are derived.
    v03_result: Option<compat03::ObjectKind>,
    index: u32,
    last_state: Option<String>,
    decode_failed: bool,
    finished: bool,
}

impl Observer {
    /// Start observing an answer with this status and headers. Streams (SSE, gRPC
    /// server-streaming) get their `response` entry now, unary answers at their end.
    pub fn new(
        rec: Arc<Recording>,
        req: u64,
        decoded: &Decoded,
        status: u16,
        headers: &HeaderMap,
    ) -> Self {
        let sse = headers
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let grpc = decoded.binding == Binding::Grpc && is_grpc(headers);
        let trailers_only = grpc && headers.contains_key(a2a_protocol::grpc::status::GRPC_STATUS);
        let mut header_grpc_status = None;
        let mut header_rpc_error = None;
        if trailers_only {
            (header_grpc_status, header_rpc_error) = grpc_status_of(headers);
        }
        let streaming_rpc = decoded.method.is_some_and(Method::is_streaming);
        let reading = if sse {
            Reading::Sse(Box::new(SseDecoder::new(MAX_DECODED_BYTES)))
        } else if grpc && streaming_rpc && !trailers_only {
            Reading::GrpcStream(FrameDecoder::new(MAX_DECODED_BYTES))
        } else {
            Reading::Unary {
                buf: Vec::new(),
                overflow: false,
            }
        };
        let created_by = match decoded.method {
            Some(Method::SendMessage | Method::SendStreamingMessage) => decoded
                .params
                .pointer("/message/messageId")
                .and_then(Value::as_str)
                .map(str::to_string),
            _ => None,
        };
        let o = Observer {
            rec,
            req,
            binding: decoded.binding,
            method: decoded.method,
            status,
            header_grpc_status,
            header_rpc_error,
            retry_after_s: retry_after_of(headers),
            reading,
            created_by,
            v03_result: decoded
                .v03
                .then(|| {
                    decoded
                        .method_name
                        .as_deref()
                        .and_then(compat03::ObjectKind::result_of)
                })
                .flatten(),
            index: 0,
            last_state: None,
            decode_failed: false,
            finished: false,
        };
        if !matches!(o.reading, Reading::Unary { .. }) {
            o.rec.record(Event::Response {
                retry_after_s: o.retry_after_s,
                req,
                status,
                rpc_error: None,
                grpc_status: None,
                body: json!("<text/event-stream>"),
            });
        }
        o
    }

    /// A result in 1.0 form (a 0.3 agent's translated; as it is when it does not translate).
    fn as_v1(&self, r: &Value) -> Value {
        match self.v03_result {
            Some(kind) => compat03::to_v1(kind, r).unwrap_or_else(|_| r.clone()),
            None => r.clone(),
        }
    }

    /// The type of each gRPC answer message.
    fn grpc_type(&self) -> Option<ObjectType> {
        self.method.and_then(|m| Rpc::from(m).response_type())
    }

    /// Journal one stream item (an SSE event's data or a gRPC message as ProtoJSON).
    fn item(&mut self, data: Value) {
        let result = match self.binding {
            Binding::JsonRpc => data.get("result").cloned(),
            _ => Some(data.clone()),
        };
        let journaled = match self.binding {
            Binding::JsonRpc => data,
            _ => json!({ "result": data }),
        };
        self.rec.record(Event::SseEvent {
            req: self.req,
            index: self.index,
            data: self.rec.redactor.payload(&journaled),
        });
        self.index += 1;
        if let Some(r) = result {
            let r = self.as_v1(&r);
            let states = self.rec.observe_result(&r, self.created_by.as_deref());
            if let Some(s) = states.last() {
                self.last_state = Some(s.clone());
            }
        }
    }

    /// A piece of the body went by.
    pub fn on_data(&mut self, chunk: &Bytes) {
        match &mut self.reading {
            Reading::Unary { buf, overflow } => {
                if buf.len() + chunk.len() > MAX_DECODED_BYTES {
                    *overflow = true;
                    buf.clear();
                } else if !*overflow {
                    buf.extend_from_slice(chunk);
                }
            }
            Reading::Sse(dec) => {
                if self.decode_failed {
                    return;
                }
                let mut events = Vec::new();
                let r = dec.feed(chunk, &mut events);
                for e in events {
                    let data = match serde_json::from_str::<Value>(&e.data) {
                        Ok(v) => v,
                        Err(err) => {
                            self.rec.note(
                                Some(self.req),
                                format!("SSE event {} is not JSON: {err}", self.index),
                            );
                            json!(e.data)
                        }
                    };
                    self.item(data);
                }
                if let Err(e) = r {
                    self.decode_failed = true;
                    self.rec.note(
                        Some(self.req),
                        format!("broken SSE stream after {} events: {e} (forwarded as sent, no longer decoded)", self.index),
                    );
                }
            }
            Reading::GrpcStream(dec) => {
                if self.decode_failed {
                    return;
                }
                dec.push(chunk);
                let mut items = Vec::new();
                let mut failure = None;
                loop {
                    match dec.next_frame() {
                        Ok(Some(m)) => items.push(m),
                        Ok(None) => break,
                        Err(e) => {
                            failure = Some(e.to_string());
                            break;
                        }
                    }
                }
                let ty = self.grpc_type();
                for m in items {
                    let data = match ty.map(|t| a2a_protocol::grpc::decode_to_json(t, &m)) {
                        Some(Ok(v)) => v,
                        other => {
                            let why = match other {
                                Some(Err(e)) => e.to_string(),
                                _ => "no message type".into(),
                            };
                            self.rec.note(
                                Some(self.req),
                                format!("gRPC stream message {} undecodable: {why}", self.index),
                            );
                            json!(format!("<{} bytes of undecodable protobuf>", m.len()))
                        }
                    };
                    self.item(data);
                }
                if let Some(e) = failure {
                    self.decode_failed = true;
                    self.rec.note(
                        Some(self.req),
                        format!("broken gRPC framing after {} messages: {e} (forwarded as sent, no longer decoded)", self.index),
                    );
                }
            }
        }
    }

    /// gRPC trailers went by.
    pub fn on_trailers(&mut self, trailers: &HeaderMap) {
        let (g, e) = grpc_status_of(trailers);
        self.header_grpc_status = g.or(self.header_grpc_status);
        self.header_rpc_error = e.or(self.header_rpc_error);
    }

    /// The body ended cleanly.
    pub fn on_end(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        match std::mem::replace(
            &mut self.reading,
            Reading::Unary {
                buf: Vec::new(),
                overflow: false,
            },
        ) {
            Reading::Unary { buf, overflow } => self.unary_end(&buf, overflow),
            Reading::Sse(mut dec) => {
                if !self.decode_failed {
                    match dec.finish() {
                        Ok(false) => {}
                        Ok(true) => self.rec.note(
                            Some(self.req),
                            "SSE stream ended inside an event (no blank line after it)",
                        ),
                        Err(e) => self
                            .rec
                            .note(Some(self.req), format!("broken SSE stream at its end: {e}")),
                    }
                }
                self.stream_closed(None);
            }
            Reading::GrpcStream(dec) => {
                if !self.decode_failed
                    && let Err(e) = dec.finish()
                {
                    self.rec.note(
                        Some(self.req),
                        format!("gRPC stream ended inside a message: {e}"),
                    );
                }
                self.stream_closed(None);
            }
        }
    }

    fn stream_closed(&mut self, forced: Option<&str>) {
        let reason = match (forced, self.header_grpc_status) {
            (Some(r), _) => r.to_string(),
            (None, Some(code)) if code != 0 => format!("grpc_status {code}"),
            _ => match self.last_state.as_deref() {
                Some(s) if is_terminal(s) => "terminal".into(),
                Some(s) if is_interrupted(s) => "interrupted".into(),
                _ => "upstream_closed".into(),
            },
        };
        self.rec.record(Event::StreamClosed {
            req: self.req,
            events: self.index,
            reason,
        });
    }

    fn unary_end(&mut self, buf: &[u8], overflow: bool) {
        let mut rpc_error = self.header_rpc_error;
        let body = if overflow {
            self.rec.note(
                Some(self.req),
                format!("answer larger than {MAX_DECODED_BYTES} bytes: forwarded, not decoded"),
            );
            Value::Null
        } else if buf.is_empty() {
            Value::Null
        } else if self.binding == Binding::Grpc {
            match single_grpc_message(buf).and_then(|m| {
                let t = self.grpc_type().ok_or("no message type")?;
                a2a_protocol::grpc::decode_to_json(t, &m).map_err(|e| e.to_string())
            }) {
                Ok(v) => {
                    self.rec.observe_result(&v, self.created_by.as_deref());
                    json!({ "result": v })
                }
                Err(e) => {
                    self.rec
                        .note(Some(self.req), format!("undecodable gRPC answer: {e}"));
                    json!(format!("<{} bytes of gRPC body>", buf.len()))
                }
            }
        } else {
            match serde_json::from_slice::<Value>(buf) {
                Ok(v) => match self.binding {
                    Binding::JsonRpc => {
                        rpc_error = v.pointer("/error/code").and_then(Value::as_i64);
                        if let Some(r) = v.get("result") {
                            let r = self.as_v1(r);
                            self.rec.observe_result(&r, self.created_by.as_deref());
                        }
                        v
                    }
                    _ => {
                        if (200..300).contains(&self.status) {
                            self.rec.observe_result(&v, self.created_by.as_deref());
                            json!({ "result": v })
                        } else {
                            match a2a_protocol::rest::error_from_body(self.status, &v) {
                                Some(e) => {
                                    rpc_error = Some(e.code);
                                    json!({ "error": e })
                                }
                                None => json!({ "error": v }),
                            }
                        }
                    }
                },
                Err(e) => {
                    // An error status with a text body (`503 Service Unavailable`) is ordinary.
                    if self.method.is_some() && (200..300).contains(&self.status) {
                        self.rec
                            .note(Some(self.req), format!("answer body is not JSON: {e}"));
                    }
                    raw_text(buf)
                }
            }
        };
        let status = match self.header_grpc_status {
            Some(code) => a2a_protocol::GrpcCode::from_number(code)
                .unwrap_or(a2a_protocol::GrpcCode::Unknown)
                .http_status(),
            None => self.status,
        };
        self.rec.record(Event::Response {
            retry_after_s: self.retry_after_s,
            req: self.req,
            status,
            rpc_error,
            grpc_status: self.header_grpc_status,
            body: self.rec.redactor.payload(&body),
        });
    }

    /// The upstream body failed (reset, idle bound): journaled as a dropped connection.
    pub fn on_error(&mut self, why: &str) {
        if self.finished {
            return;
        }
        self.finished = true;
        self.rec.note(
            Some(self.req),
            format!("upstream body failed after {} items: {why}", self.index),
        );
        self.rec.record(Event::ConnectionDropped {
            req: self.req,
            phase: "mid_event".into(),
        });
        if !matches!(self.reading, Reading::Unary { .. }) {
            self.stream_closed(Some("upstream_reset"));
        }
    }
}

impl Drop for Observer {
    fn drop(&mut self) {
        if !self.finished {
            self.finished = true;
            if matches!(self.reading, Reading::Unary { .. }) {
                self.rec.note(
                    Some(self.req),
                    "the delegator went away before the whole answer",
                );
            } else {
                self.stream_closed(Some("client_gone"));
            }
        }
    }
}

/// The gRPC status and its A2A code (JSON-RPC number) in these headers or trailers.
fn grpc_status_of(h: &HeaderMap) -> (Option<i32>, Option<i64>) {
    let code = h
        .get(a2a_protocol::grpc::status::GRPC_STATUS)
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.trim().parse::<i32>().ok());
    let err = match a2a_protocol::grpc::status::failure_from_trailers(h) {
        Ok(Some(f)) => Some(f.error_code.code()),
        _ => None,
    };
    (code, err)
}

/// Redacted headers and path, as the journal records a request.
pub fn request_event(
    req: u64,
    decoded: &Decoded,
    http_method: &str,
    path_and_query: &str,
    headers: &HeaderMap,
    redactor: &Redactor,
) -> Event {
    Event::Request {
        req,
        binding: decoded.binding,
        http_method: http_method.to_string(),
        path: redact::redact_path(path_and_query),
        method: decoded.method_name.clone(),
        rpc_id: decoded.rpc_id.clone().map(Box::new),
        params: Box::new(redactor.payload(&decoded.params)),
        headers: Box::new(redact::header_map(headers)),
        envelope: decoded
            .envelope
            .as_ref()
            .map(|e| Box::new(redactor.payload(e))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jsonrpc_request_keeps_its_envelope_without_params() {
        let h = HeaderMap::new();
        let body = br#"{"jsonrpc":"1.0","id":3,"method":"GetTask","params":{"id":"t"},"x":1}"#;
        let d = decode_request("POST", "/a2a", None, &h, body, &[]);
        assert_eq!(d.method, Some(Method::GetTask));
        assert_eq!(
            d.envelope,
            Some(json!({"jsonrpc": "1.0", "id": 3, "method": "GetTask", "x": 1}))
        );
        let r = Redactor {
            paths: Vec::new(),
            max_inline_bytes: None,
            artifacts: None,
        };
        let e = request_event(1, &d, "POST", "/a2a?A2A-Version=1.0", &h, &r);
        match e {
            Event::Request { envelope, path, .. } => {
                assert_eq!(envelope.as_deref(), d.envelope.as_ref());
                assert_eq!(path, "/a2a?A2A-Version=1.0");
            }
            other => panic!("{other:?}"),
        }
        // Not JSON-RPC (an HTTP+JSON body): no envelope.
        let d = decode_request(
            "POST",
            "/rest/message:send",
            None,
            &h,
            br#"{"message":{}}"#,
            &["/rest".to_string()],
        );
        assert_eq!((d.binding, d.envelope), (Binding::Rest, None));
    }
}
