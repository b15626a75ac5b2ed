//! The proxy of one upstream: its accept loop (HTTP/1.1 and HTTP/2 prior knowledge on one
//! port), the card (URLs rewritten), every other call forwarded, and the push-notification relay.

use super::body::{BoxError, ProxyBody, TapBody};
use super::card::{interface_urls, rewrite_card};
use super::exchange::{
    Decoded, MAX_DECODED_BYTES, Observer, Recording, decode_request, request_event,
    single_grpc_message,
};
use super::origins::Origins;
use a2a_mock_agents::Event;
use a2a_protocol::grpc::Rpc;
use a2a_protocol::{AGENT_CARD_PATH, Binding, Method};
use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming};
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};
use hyper::{Request, Response, StatusCode, Uri, Version};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// The path prefix of the proxy's own push-notification relay.
pub const PUSH_PREFIX: &str = "/__a2a-record/push/";

/// Paths the 0.3 card is served at, besides [`AGENT_CARD_PATH`].
const CARD_PATHS_03: &[&str] = &["/.well-known/agent.json"];

/// Bounds of one proxy.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Connecting to the upstream (or to a delegator's webhook).
    pub connect: Duration,
    /// Waiting for the upstream's answer headers, and for each next body frame.
    pub upstream: Duration,
    /// Reading a request body from the delegator.
    pub request_body: Duration,
}

/// The proxy of one origin of an upstream agent.
pub struct Proxy {
    /// The journal and the task tracker (one per agent, shared by its origins' proxies).
    pub rec: Arc<Recording>,
    /// The upstream origin's `host:port`.
    pub upstream: String,
    /// The proxy's own `host:port`.
    pub own: String,
    /// Paths of the card's HTTP+JSON interfaces (the route prefixes), from the last card seen
    /// (shared by the agent's origins).
    pub rest_prefixes: Arc<Mutex<Vec<String>>>,
    /// The agent's origins and their listen addresses (shared by the agent's origins).
    pub origins: Arc<Origins>,
    /// The delegator's webhook URLs, by relay index (shared by the agent's origins: a push
    /// config made over one binding is read back over another).
    pub webhooks: Arc<Mutex<Vec<String>>>,
    /// Bounds.
    pub bounds: Bounds,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Hop-by-hop headers, never forwarded.
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
    )
}

fn copy_headers(from: &HeaderMap, to: &mut HeaderMap) {
    for (k, v) in from {
        if !hop_by_hop(k) {
            to.append(k.clone(), v.clone());
        }
    }
}

fn plain(status: StatusCode, text: String) -> Response<ProxyBody> {
    let mut r = Response::new(ProxyBody::full(text));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

/// Connect to `authority` and send `req` (HTTP/2 prior knowledge when `h2`); the answer's
/// headers, bounded by `bounds`.
async fn send(
    authority: &str,
    req: Request<ProxyBody>,
    h2: bool,
    bounds: Bounds,
) -> Result<Response<Incoming>, SendError> {
    let tcp = tokio::time::timeout(bounds.connect, TcpStream::connect(authority))
        .await
        .map_err(|_| {
            SendError::Connect(format!(
                "connecting to {authority} timed out after {:?}",
                bounds.connect
            ))
        })?
        .map_err(|e| SendError::Connect(format!("connecting to {authority}: {e}")))?;
    let _ = tcp.set_nodelay(true);
    let io = TokioIo::new(tcp);
    let answer = async {
        if h2 {
            let (mut s, conn) = hyper::client::conn::http2::Builder::new(TokioExecutor::new())
                .timer(TokioTimer::new())
                .handshake(io)
                .await
                .map_err(|e| {
                    SendError::Connect(format!("HTTP/2 handshake with {authority}: {e}"))
                })?;
            tokio::spawn(conn);
            s.send_request(req).await.map_err(SendError::Failed)
        } else {
            let (mut s, conn) = hyper::client::conn::http1::handshake(io)
                .await
                .map_err(|e| {
                    SendError::Connect(format!("HTTP/1 handshake with {authority}: {e}"))
                })?;
            tokio::spawn(conn);
            s.send_request(req).await.map_err(SendError::Failed)
        }
    };
    tokio::time::timeout(bounds.upstream, answer)
        .await
        .map_err(|_| SendError::Timeout(bounds.upstream))?
}

/// Why a call to the upstream got no answer.
#[derive(Debug)]
enum SendError {
    /// Nothing reached it (down, refused, handshake failed): the delegator gets a 502.
    Connect(String),
    /// The request went out and the connection failed before an answer.
    Failed(hyper::Error),
    /// No answer headers in time.
    Timeout(Duration),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Connect(s) => f.write_str(s),
            SendError::Failed(e) => write!(f, "the upstream failed before answering: {e}"),
            SendError::Timeout(d) => write!(f, "no answer from the upstream within {d:?}"),
        }
    }
}

/// The upstream's card, read at start (for the agent's name and its HTTP+JSON paths), within
/// the connect bound (a slow upstream does not hold the start up).
pub async fn fetch_card(authority: &str, bounds: Bounds) -> Result<Value, String> {
    let bounds = Bounds {
        upstream: bounds.connect.min(bounds.upstream),
        ..bounds
    };
    let mut req = Request::new(ProxyBody::full(Bytes::new()));
    *req.uri_mut() = Uri::from_static(AGENT_CARD_PATH);
    if let Ok(h) = HeaderValue::from_str(authority) {
        req.headers_mut().insert(header::HOST, h);
    }
    let a = send(authority, req, false, bounds)
        .await
        .map_err(|e| e.to_string())?;
    let (parts, body) = a.into_parts();
    if !parts.status.is_success() {
        return Err(format!("HTTP {}", parts.status));
    }
    let (b, _) = read_all(body, MAX_DECODED_BYTES, bounds.upstream).await?;
    serde_json::from_slice(&b).map_err(|e| format!("the card is not JSON: {e}"))
}

/// Read a whole body, at most `max` bytes, within `within`.
async fn read_all(
    mut body: impl Body<Data = Bytes, Error = impl std::fmt::Display> + Unpin,
    max: usize,
    within: Duration,
) -> Result<(Vec<u8>, Option<HeaderMap>), String> {
    let collect = async {
        let mut buf = Vec::new();
        let mut trailers = None;
        while let Some(f) =
            std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await
        {
            let f = f.map_err(|e| e.to_string())?;
            match f.into_data() {
                Ok(d) => {
                    if buf.len() + d.len() > max {
                        return Err(format!("body larger than {max} bytes"));
                    }
                    buf.extend_from_slice(&d);
                }
                Err(f) => {
                    if let Ok(t) = f.into_trailers() {
                        trailers = Some(t);
                    }
                }
            }
        }
        Ok((buf, trailers))
    };
    tokio::time::timeout(within, collect)
        .await
        .map_err(|_| format!("body not complete within {within:?}"))?
}

/// A gRPC frame around one message.
fn grpc_frame(msg: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(msg.len() + 5);
    out.push(0);
    out.extend_from_slice(&u32::try_from(msg.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(msg);
    out
}

/// Where a method's params carry a push-notification URL (1.0, or 0.3 when `v03`).
fn push_url_pointer(m: Option<Method>, v03: bool) -> Option<&'static str> {
    match (m?, v03) {
        (Method::SendMessage | Method::SendStreamingMessage, false) => {
            Some("/configuration/taskPushNotificationConfig/url")
        }
        (Method::SendMessage | Method::SendStreamingMessage, true) => {
            Some("/configuration/pushNotificationConfig/url")
        }
        (Method::CreateTaskPushNotificationConfig, false) => Some("/url"),
        (Method::CreateTaskPushNotificationConfig, true) => Some("/pushNotificationConfig/url"),
        _ => None,
    }
}

/// Does this method's answer need rewriting (a card, or push configs naming the relay)?
fn rewrites_answer(m: Option<Method>) -> bool {
    matches!(
        m,
        Some(
            Method::GetExtendedAgentCard
                | Method::CreateTaskPushNotificationConfig
                | Method::GetTaskPushNotificationConfig
                | Method::ListTaskPushNotificationConfigs
        )
    )
}

impl Proxy {
    fn relay_url(&self, i: usize) -> String {
        format!("http://{}{PUSH_PREFIX}{i}", self.own)
    }

    /// Substitute the relay for the delegator's webhook URL at `pointer` of `params`; true when
    /// one was substituted.
    fn substitute_webhook(&self, params: &mut Value, pointer: &str) -> bool {
        let Some(u) = params.pointer_mut(pointer) else {
            return false;
        };
        let Some(orig) = u.as_str().map(str::to_string) else {
            return false;
        };
        if orig.is_empty() {
            return false;
        }
        let mut hooks = lock(&self.webhooks);
        let i = match hooks.iter().position(|h| *h == orig) {
            Some(i) => i,
            None => {
                hooks.push(orig);
                hooks.len() - 1
            }
        };
        *u = Value::String(self.relay_url(i));
        true
    }

    /// Put the delegator's webhook URLs back where an answer names the relay.
    fn restore_webhooks(&self, v: &mut Value) {
        match v {
            Value::String(s) => {
                // A relay URL of any of the agent's listen addresses (a config made over one
                // binding, read back over another).
                let relay = self.origins.all().into_iter().find_map(|(_, addr)| {
                    s.strip_prefix(&format!("http://{addr}{PUSH_PREFIX}"))
                        .and_then(|i| i.parse::<usize>().ok())
                });
                if let Some(i) = relay
                    && let Some(orig) = lock(&self.webhooks).get(i)
                {
                    *s = orig.clone();
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.restore_webhooks(x)),
            Value::Object(o) => o.values_mut().for_each(|x| self.restore_webhooks(x)),
            _ => {}
        }
    }

    /// Rewrite an answer result the delegator sees (the extended card, push configs).
    fn rewrite_result(&self, m: Option<Method>, result: &mut Value) {
        if m == Some(Method::GetExtendedAgentCard) {
            self.proxy_card(result);
        } else {
            self.restore_webhooks(result);
        }
    }

    /// One request from the delegator (or a push notification from the upstream).
    pub async fn handle(
        self: Arc<Self>,
        req: Request<Incoming>,
    ) -> Result<Response<ProxyBody>, BoxError> {
        let path = req.uri().path().to_string();
        if let Some(i) = path.strip_prefix(PUSH_PREFIX) {
            return Ok(self.relay_push(i.parse().ok(), req).await);
        }
        if req.method() == hyper::Method::GET
            && (path == AGENT_CARD_PATH || CARD_PATHS_03.contains(&path.as_str()))
        {
            return Ok(self.card(req).await);
        }
        self.forward(req).await
    }

    /// The card: fetched from the upstream, its interface URLs pointing here.
    async fn card(&self, req: Request<Incoming>) -> Response<ProxyBody> {
        let n = self.rec.sink.next_req();
        let (parts, _) = req.into_parts();
        let pq = parts
            .uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_default();
        self.rec.record(Event::Request {
            req: n,
            binding: Binding::JsonRpc,
            http_method: "GET".into(),
            path: super::redact::redact_path(&pq),
            method: None,
            rpc_id: None,
            params: Box::new(Value::Null),
            headers: Box::new(super::redact::header_map(&parts.headers)),
            envelope: None,
        });
        let mut up = Request::new(ProxyBody::full(Bytes::new()));
        *up.method_mut() = hyper::Method::GET;
        *up.uri_mut() = Uri::try_from(pq.as_str()).unwrap_or_else(|_| Uri::from_static("/"));
        copy_headers(&parts.headers, up.headers_mut());
        if let Ok(h) = HeaderValue::from_str(&self.upstream) {
            up.headers_mut().insert(header::HOST, h);
        }
        let answer = match send(&self.upstream, up, false, self.bounds).await {
            Ok(a) => a,
            Err(e) => return self.unreachable(n, &e.to_string()),
        };
        let (aparts, abody) = answer.into_parts();
        let (bytes, _) = match read_all(abody, MAX_DECODED_BYTES, self.bounds.upstream).await {
            Ok(b) => b,
            Err(e) => return self.unreachable(n, &format!("reading the card: {e}")),
        };
        // The card as served is journaled (with the proxy's addresses): `scenario from-journal`
        // gives the replayed agent its skills, capabilities and interface order.
        let mut journaled = Value::Null;
        let out = match serde_json::from_slice::<Value>(&bytes) {
            Ok(mut card) if aparts.status.is_success() => {
                let others = self.proxy_card(&mut card);
                if !others.is_empty() {
                    self.rec.note(
                        Some(n),
                        format!(
                            "card interfaces at other origins are not proxied: {}",
                            others.join(", ")
                        ),
                    );
                }
                self.learn_card(&card);
                let out = serde_json::to_vec(&card).unwrap_or(bytes);
                journaled = self.rec.redactor.payload(&card);
                out
            }
            Ok(_) => bytes,
            Err(e) => {
                if aparts.status.is_success() {
                    self.rec.note(
                        Some(n),
                        format!("the card is not JSON: {e}; forwarded as sent"),
                    );
                }
                bytes
            }
        };
        self.rec.record(Event::Response {
            retry_after_s: None,
            req: n,
            status: aparts.status.as_u16(),
            rpc_error: None,
            grpc_status: None,
            body: journaled,
        });
        let mut resp = Response::new(ProxyBody::full(out));
        *resp.status_mut() = aparts.status;
        copy_headers(&aparts.headers, resp.headers_mut());
        resp
    }

    /// Make `card` point at the proxy: a listener (and its proxy) for each plain origin of its
    /// interfaces not proxied yet, then every interface URL at a proxied origin rewritten to
    /// its listen address; returns the interface URLs left alone (TLS, or no address to bind).
    pub fn proxy_card(&self, card: &mut Value) -> Vec<String> {
        // A card read while the recording stops opens nothing (nothing would wait for it).
        let stopping = *self.origins.shutdown.borrow();
        let (opened, failed) = if stopping {
            (Vec::new(), Vec::new())
        } else {
            self.origins.open(&interface_urls(card))
        };
        for f in failed {
            self.rec.note(None, f);
        }
        for o in opened {
            self.rec.note(
                None,
                format!(
                    "the card's interfaces at {} are proxied at {}",
                    o.upstream, o.addr
                ),
            );
            let p = Arc::new(Proxy {
                rec: self.rec.clone(),
                upstream: o.upstream,
                own: o.addr.to_string(),
                rest_prefixes: self.rest_prefixes.clone(),
                origins: self.origins.clone(),
                webhooks: self.webhooks.clone(),
                bounds: self.bounds,
            });
            let shutdown = self.origins.shutdown.clone();
            self.origins.tasks.spawn(serve(p, o.listener, shutdown));
        }
        rewrite_card(card, |a| self.origins.route(a))
    }

    /// Remember the card's HTTP+JSON route prefixes (as rewritten: paths are unchanged).
    pub fn learn_card(&self, card: &Value) {
        let mut prefixes: Vec<String> = Vec::new();
        let lists = ["supportedInterfaces", "additionalInterfaces"];
        for i in lists
            .iter()
            .filter_map(|k| card.get(*k).and_then(Value::as_array))
            .flatten()
        {
            let binding = i
                .get("protocolBinding")
                .or_else(|| i.get("transport"))
                .and_then(Value::as_str)
                .and_then(Binding::from_protocol_binding);
            if binding == Some(Binding::Rest)
                && let Some(u) = i.get("url").and_then(Value::as_str)
                && let Ok(uri) = u.parse::<Uri>()
            {
                let p = uri.path().trim_end_matches('/').to_string();
                if !prefixes.contains(&p) {
                    prefixes.push(p);
                }
            }
        }
        if !prefixes.is_empty() {
            *lock(&self.rest_prefixes) = prefixes;
        }
    }

    fn unreachable(&self, n: u64, why: &str) -> Response<ProxyBody> {
        self.rec
            .note(Some(n), format!("upstream unreachable: {why}"));
        self.rec.record(Event::Response {
            retry_after_s: None,
            req: n,
            status: 502,
            rpc_error: None,
            grpc_status: None,
            body: Value::Null,
        });
        plain(
            StatusCode::BAD_GATEWAY,
            format!("a2a-harness record: upstream {}: {why}\n", self.upstream),
        )
    }

    /// Forward one call, journaling it.
    async fn forward(&self, req: Request<Incoming>) -> Result<Response<ProxyBody>, BoxError> {
        let n = self.rec.sink.next_req();
        let (parts, body) = req.into_parts();
        let pq = parts
            .uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| "/".into());
        let (body, _) = match read_all(body, MAX_DECODED_BYTES, self.bounds.request_body).await {
            Ok(b) => b,
            Err(e) => {
                self.rec.record(Event::Request {
                    req: n,
                    binding: Binding::JsonRpc,
                    http_method: parts.method.to_string(),
                    path: super::redact::redact_path(&pq),
                    method: None,
                    rpc_id: None,
                    params: Box::new(Value::Null),
                    headers: Box::new(super::redact::header_map(&parts.headers)),
                    envelope: None,
                });
                self.rec.note(
                    Some(n),
                    format!("request body from the delegator unreadable: {e}"),
                );
                let status = if e.starts_with("body larger") {
                    StatusCode::PAYLOAD_TOO_LARGE
                } else {
                    StatusCode::BAD_REQUEST
                };
                return Ok(plain(status, format!("a2a-harness record: {e}\n")));
            }
        };
        let prefixes = lock(&self.rest_prefixes).clone();
        let decoded = decode_request(
            parts.method.as_str(),
            parts.uri.path(),
            parts.uri.query(),
            &parts.headers,
            &body,
            &prefixes,
        );
        self.rec.record(request_event(
            n,
            &decoded,
            parts.method.as_str(),
            &pq,
            &parts.headers,
            &self.rec.redactor,
        ));
        if let Some(p) = &decoded.problem {
            self.rec.note(Some(n), p.clone());
        }
        let body = self.substitute_in_request(&decoded, body, n);
        let h2 = parts.version == Version::HTTP_2;
        let mut up = Request::new(ProxyBody::full(body));
        *up.method_mut() = parts.method.clone();
        *up.uri_mut() = if h2 {
            Uri::try_from(format!("http://{}{pq}", self.upstream))?
        } else {
            Uri::try_from(pq.as_str())?
        };
        copy_headers(&parts.headers, up.headers_mut());
        if !h2 && let Ok(h) = HeaderValue::from_str(&self.upstream) {
            up.headers_mut().insert(header::HOST, h);
        }
        let answer = match send(&self.upstream, up, h2, self.bounds).await {
            Ok(a) => a,
            Err(SendError::Connect(why)) => return Ok(self.unreachable(n, &why)),
            Err(e) => {
                // Mirror it: the delegator's connection (or HTTP/2 stream) is dropped too.
                self.rec.note(Some(n), e.to_string());
                self.rec.record(Event::ConnectionDropped {
                    req: n,
                    phase: "before_response".into(),
                });
                return Err(e.to_string().into());
            }
        };
        let (aparts, abody) = answer.into_parts();
        if rewrites_answer(decoded.method) && aparts.status.is_success() {
            return Ok(self.rewritten_answer(n, &decoded, aparts, abody).await);
        }
        let observer = Observer::new(
            self.rec.clone(),
            n,
            &decoded,
            aparts.status.as_u16(),
            &aparts.headers,
        );
        let mut resp = Response::new(ProxyBody::Tap(Box::new(TapBody::new(
            abody,
            observer,
            self.bounds.upstream,
        ))));
        *resp.status_mut() = aparts.status;
        copy_headers(&aparts.headers, resp.headers_mut());
        if let Some(len) = aparts.headers.get(header::CONTENT_LENGTH) {
            resp.headers_mut()
                .insert(header::CONTENT_LENGTH, len.clone());
        }
        Ok(resp)
    }

    /// The request body with the delegator's webhook replaced by the relay (the one change the
    /// proxy makes to a request); unchanged when there is none or it cannot be re-encoded.
    fn substitute_in_request(&self, d: &Decoded, body: Vec<u8>, n: u64) -> Vec<u8> {
        let Some(pointer) = push_url_pointer(d.method, d.v03) else {
            return body;
        };
        match d.binding {
            Binding::Grpc => {
                let Some(m) = d.method else { return body };
                let mut params = d.params.clone();
                if !self.substitute_webhook(&mut params, pointer) {
                    return body;
                }
                match a2a_protocol::grpc::encode_from_json(Rpc::from(m).request_type(), &params) {
                    Ok(msg) => grpc_frame(&msg),
                    Err(e) => {
                        self.rec.note(
                            Some(n),
                            format!("push URL not relayed: re-encoding the request failed: {e}"),
                        );
                        body
                    }
                }
            }
            _ => {
                let Ok(mut v) = serde_json::from_slice::<Value>(&body) else {
                    return body;
                };
                let at = if d.binding == Binding::JsonRpc {
                    format!("/params{pointer}")
                } else {
                    pointer.to_string()
                };
                if !self.substitute_webhook(&mut v, &at) {
                    return body;
                }
                serde_json::to_vec(&v).unwrap_or(body)
            }
        }
    }

    /// An answer read whole and rewritten (extended card, push configs), then journaled as the
    /// delegator sees it.
    async fn rewritten_answer(
        &self,
        n: u64,
        d: &Decoded,
        aparts: hyper::http::response::Parts,
        abody: Incoming,
    ) -> Response<ProxyBody> {
        let (bytes, trailers) = match read_all(abody, MAX_DECODED_BYTES, self.bounds.upstream).await
        {
            Ok(b) => b,
            Err(e) => {
                self.rec
                    .note(Some(n), format!("upstream answer unreadable: {e}"));
                self.rec.record(Event::ConnectionDropped {
                    req: n,
                    phase: "mid_event".into(),
                });
                let mut r = Response::new(ProxyBody::Frames(VecDeque::new()));
                *r.status_mut() = StatusCode::BAD_GATEWAY;
                return r;
            }
        };
        let rewritten = match d.binding {
            Binding::Grpc => d
                .method
                .and_then(|m| Rpc::from(m).response_type())
                .and_then(|t| {
                    let msg = single_grpc_message(&bytes).ok()?;
                    let mut v = a2a_protocol::grpc::decode_to_json(t, &msg).ok()?;
                    self.rewrite_result(d.method, &mut v);
                    a2a_protocol::grpc::encode_from_json(t, &v)
                        .ok()
                        .map(|m| grpc_frame(&m))
                }),
            Binding::JsonRpc => serde_json::from_slice::<Value>(&bytes)
                .ok()
                .and_then(|mut v| {
                    let r = v.get_mut("result")?;
                    self.rewrite_result(d.method, r);
                    serde_json::to_vec(&v).ok()
                }),
            Binding::Rest => serde_json::from_slice::<Value>(&bytes)
                .ok()
                .and_then(|mut v| {
                    self.rewrite_result(d.method, &mut v);
                    serde_json::to_vec(&v).ok()
                }),
        };
        let out = rewritten.unwrap_or(bytes);
        let mut observer = Observer::new(
            self.rec.clone(),
            n,
            d,
            aparts.status.as_u16(),
            &aparts.headers,
        );
        let out = Bytes::from(out);
        observer.on_data(&out);
        if let Some(t) = &trailers {
            observer.on_trailers(t);
        }
        observer.on_end();
        let mut frames = VecDeque::new();
        if !out.is_empty() {
            frames.push_back(Frame::data(out));
        }
        if let Some(t) = trailers {
            frames.push_back(Frame::trailers(t));
        }
        let mut resp = Response::new(ProxyBody::Frames(frames));
        *resp.status_mut() = aparts.status;
        copy_headers(&aparts.headers, resp.headers_mut());
        resp
    }

    /// A push notification from the upstream to the relay: journaled, then forwarded to the
    /// delegator's webhook; its answer goes back to the upstream.
    async fn relay_push(&self, i: Option<usize>, req: Request<Incoming>) -> Response<ProxyBody> {
        let target = i.and_then(|i| lock(&self.webhooks).get(i).cloned());
        let (parts, body) = req.into_parts();
        let Some(target) = target else {
            self.rec.note(
                None,
                format!("push notification to an unknown relay {}", parts.uri.path()),
            );
            return plain(
                StatusCode::NOT_FOUND,
                "a2a-harness record: no such webhook\n".into(),
            );
        };
        let (body, _) = match read_all(body, MAX_DECODED_BYTES, self.bounds.request_body).await {
            Ok(b) => b,
            Err(e) => {
                self.rec
                    .note(None, format!("push notification body unreadable: {e}"));
                return plain(
                    StatusCode::BAD_REQUEST,
                    format!("a2a-harness record: {e}\n"),
                );
            }
        };
        let parsed = serde_json::from_slice::<Value>(&body).ok();
        let task_id = parsed
            .as_ref()
            .and_then(|v| {
                [
                    "/task/id",
                    "/statusUpdate/taskId",
                    "/artifactUpdate/taskId",
                    "/id",
                ]
                .iter()
                .find_map(|p| v.pointer(p).and_then(Value::as_str))
            })
            .unwrap_or_default()
            .to_string();
        match &parsed {
            Some(v) => {
                self.rec.observe_result(v, None);
            }
            None => self.rec.note(
                None,
                format!("push notification for task {task_id:?} is not JSON"),
            ),
        }
        let uri: Result<Uri, _> = target.parse();
        let result = match uri {
            Ok(uri) if uri.authority().is_some() => {
                let authority = uri.authority().map(|a| a.to_string()).unwrap_or_default();
                let pq = uri
                    .path_and_query()
                    .map(|p| p.as_str().to_string())
                    .unwrap_or_else(|| "/".into());
                let mut out = Request::new(ProxyBody::full(body));
                *out.method_mut() = parts.method.clone();
                *out.uri_mut() =
                    Uri::try_from(pq.as_str()).unwrap_or_else(|_| Uri::from_static("/"));
                copy_headers(&parts.headers, out.headers_mut());
                if let Ok(h) = HeaderValue::from_str(&authority) {
                    out.headers_mut().insert(header::HOST, h);
                }
                match send(&authority, out, false, self.bounds).await {
                    Ok(a) => {
                        let (ap, ab) = a.into_parts();
                        let b = read_all(ab, MAX_DECODED_BYTES, self.bounds.upstream)
                            .await
                            .map(|(b, _)| b)
                            .unwrap_or_default();
                        Ok((ap, b))
                    }
                    Err(e) => Err(e.to_string()),
                }
            }
            _ => Err(format!(
                "the delegator's webhook {target:?} is no absolute http URL"
            )),
        };
        let url = super::redact::redact_path(&target);
        match result {
            Ok((ap, b)) => {
                self.rec.record(Event::Push {
                    task_id,
                    url,
                    status: Some(ap.status.as_u16()),
                    error: None,
                });
                let mut resp = Response::new(ProxyBody::full(b));
                *resp.status_mut() = ap.status;
                copy_headers(&ap.headers, resp.headers_mut());
                resp
            }
            Err(e) => {
                self.rec.record(Event::Push {
                    task_id,
                    url,
                    status: None,
                    error: Some(e.clone()),
                });
                plain(
                    StatusCode::BAD_GATEWAY,
                    format!("a2a-harness record: {e}\n"),
                )
            }
        }
    }
}

/// Serve `proxy` on `listener` until `shutdown` turns true.
pub async fn serve(proxy: Arc<Proxy>, listener: TcpListener, mut shutdown: watch::Receiver<bool>) {
    let mut conns = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = shutdown.changed() => break,
        };
        let stream = match accepted {
            Ok((s, _)) => s,
            Err(_) => {
                // Out of descriptors or a transient error: back off instead of spinning.
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(20)) => continue,
                    _ = shutdown.changed() => break,
                }
            }
        };
        let _ = stream.set_nodelay(true);
        let p = proxy.clone();
        conns.spawn(async move {
            let svc = hyper::service::service_fn(move |req| p.clone().handle(req));
            let mut b = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            b.http1()
                .timer(TokioTimer::new())
                .header_read_timeout(Duration::from_secs(30));
            b.http2().timer(TokioTimer::new());
            let _ = b.serve_connection(TokioIo::new(stream), svc).await;
        });
        while conns.try_join_next().is_some() {}
    }
    conns.abort_all();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grpc_frame_has_the_five_byte_header() {
        assert_eq!(grpc_frame(b"ab"), vec![0, 0, 0, 0, 2, b'a', b'b']);
        assert_eq!(push_url_pointer(Some(Method::GetTask), false), None);
        assert!(rewrites_answer(Some(
            Method::ListTaskPushNotificationConfigs
        )));
    }
}
