//! The accept loop: serves an axum router on a bound listener, one hyper connection per socket,
//! and lets a handler drop its own connection ([`ConnControl::abort`]) to simulate a peer that
//! vanishes before or after processing.

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore, watch};
use tower::ServiceExt;

/// Called once the client has closed a connection the server asked it to close.
type OnClientClose = Box<dyn FnOnce() + Send>;

/// How long a server that half-closed a connection (see [`ConnControl::on_client_close`]) waits
/// for the client's own close before it lets go.
const LINGER: Duration = Duration::from_secs(10);

/// At most this much is read (and discarded) from a client while waiting for its close.
const LINGER_DRAIN_BYTES: usize = 64 * 1024;

/// The report slot, whoever panicked while holding it.
fn lock(
    slot: &std::sync::Mutex<Option<OnClientClose>>,
) -> std::sync::MutexGuard<'_, Option<OnClientClose>> {
    slot.lock().unwrap_or_else(|p| p.into_inner())
}

/// Per-connection control, available to handlers as a request extension.
#[derive(Clone, Default)]
pub struct ConnControl {
    abort: Arc<Notify>,
    reset: Arc<AtomicBool>,
    on_client_close: Arc<std::sync::Mutex<Option<OnClientClose>>>,
}

impl ConnControl {
    /// Drop this connection now, without a response: the socket is closed with a TCP reset
    /// (`SO_LINGER` 0), so the peer sees "connection reset", not a clean end of stream.
    pub fn abort(&self) {
        self.reset.store(true, Ordering::SeqCst);
        self.abort.notify_one();
    }

    /// For a response that carries `Connection: close` over HTTP/1.1: once hyper has written
    /// it and shuts the connection down, the server half-closes (its FIN) and keeps reading
    /// until the client closes its side, then calls `report`. A client that receives `close`
    /// closes the connection after reading that response (RFC 9112 §9.6), so `report` runs once
    /// the client has read it. Not called when the client keeps the connection open longer than
    /// [`LINGER`], nor over HTTP/2 (which has no `Connection` header).
    pub fn on_client_close(&self, report: impl FnOnce() + Send + 'static) {
        *lock(&self.on_client_close) = Some(Box::new(report));
    }
}

/// A TCP stream that is closed with a reset instead of a FIN when its connection was aborted,
/// and that waits for the client's close when asked to ([`ConnControl::on_client_close`]).
struct ResettableStream {
    inner: TcpStream,
    reset: Arc<AtomicBool>,
    on_client_close: Arc<std::sync::Mutex<Option<OnClientClose>>>,
    /// The write half is shut and the wait for the client's close has begun, until then.
    lingering: Option<Pin<Box<tokio::time::Sleep>>>,
    /// Bytes read and discarded while lingering.
    drained: usize,
}

impl ResettableStream {
    fn new(inner: TcpStream, ctl: &ConnControl) -> Self {
        ResettableStream {
            inner,
            reset: ctl.reset.clone(),
            on_client_close: ctl.on_client_close.clone(),
            lingering: None,
            drained: 0,
        }
    }

    /// The shutdown of a connection whose client is to be watched: half-close, then read until
    /// the client's end of stream (its close: report it), an error (a reset: report it too), the
    /// drain bound or [`LINGER`] (give up, report nothing).
    fn poll_linger(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.lingering.is_none() {
            std::task::ready!(Pin::new(&mut self.inner).poll_shutdown(cx))?;
            // The bound of the wait, not the wait: the client's end of stream ends it.
            self.lingering = Some(Box::pin(tokio::time::sleep(LINGER)));
        }
        let mut scratch = [0u8; 1024];
        loop {
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.inner).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if !buf.filled().is_empty() => {
                    self.drained += buf.filled().len();
                    if self.drained > LINGER_DRAIN_BYTES {
                        lock(&self.on_client_close).take();
                        return Poll::Ready(Ok(()));
                    }
                }
                Poll::Ready(_) => {
                    if let Some(report) = lock(&self.on_client_close).take() {
                        report();
                    }
                    return Poll::Ready(Ok(()));
                }
                Poll::Pending => {
                    let gave_up = self
                        .lingering
                        .as_mut()
                        .is_some_and(|t| t.as_mut().poll(cx).is_ready());
                    if gave_up {
                        lock(&self.on_client_close).take();
                        return Poll::Ready(Ok(()));
                    }
                    return Poll::Pending;
                }
            }
        }
    }
}

impl Drop for ResettableStream {
    fn drop(&mut self) {
        if self.reset.load(Ordering::SeqCst) {
            let _ = self.inner.set_zero_linger();
        }
    }
}

impl AsyncRead for ResettableStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for ResettableStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.lingering.is_some() || lock(&self.on_client_close).is_some() {
            return self.poll_linger(cx);
        }
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

/// The TLS side of an agent's listener, with what it needs to journal what it sees.
#[derive(Clone)]
pub struct TlsListener {
    /// The configuration and whether plain HTTP is served too.
    pub tls: crate::tls::ServerTls,
    /// The certificate served (journaled with every connection).
    pub certificate: crate::tls::CertKind,
    /// The journal.
    pub journal: crate::journal::Journal,
    /// The agent's name.
    pub agent: String,
}

impl TlsListener {
    fn record(
        &self,
        outcome: &str,
        version: Option<String>,
        alpn: Option<String>,
        sni: Option<String>,
        error: Option<String>,
    ) {
        self.journal.record(
            &self.agent,
            crate::journal::Event::Tls {
                outcome: outcome.to_string(),
                certificate: self.certificate,
                version: version.map(Into::into),
                alpn: alpn.map(Into::into),
                sni: sni.map(Into::into),
                error: error.map(Into::into),
            },
        );
    }

    fn journal_plain(&self) {
        self.record("plaintext", None, None, None, None);
    }

    fn journal_failed(&self, error: String) {
        self.record("handshake_failed", None, None, None, Some(error));
    }

    fn journal_handshake(&self, s: &tokio_rustls::server::TlsStream<ResettableStream>) {
        let (_, c) = s.get_ref();
        self.record(
            "handshake",
            crate::tls::version_name(c.protocol_version()),
            c.alpn_protocol()
                .map(|p| String::from_utf8_lossy(p).into_owned()),
            c.server_name().map(str::to_string),
            None,
        );
    }
}

/// A served connection: plain TCP or TLS over it.
enum Conn {
    Plain(ResettableStream),
    Tls(Box<tokio_rustls::server::TlsStream<ResettableStream>>),
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_flush(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Conn::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Conn::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Conn::Plain(s) => s.is_write_vectored(),
            Conn::Tls(s) => s.is_write_vectored(),
        }
    }
}

/// What one agent's server tolerates from its peers.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Longest wait for a request's complete headers (from connect, or from the previous
    /// response on a kept-alive connection).
    pub header_timeout: Duration,
    /// Connections served at once; the rest wait, unaccepted, in the listen backlog.
    pub max_connections: usize,
}

/// The largest read buffer of an HTTP/1 connection (so the largest request head).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Concurrent streams of one HTTP/2 connection.
const MAX_H2_STREAMS: u32 = 64;

impl Limits {
    /// The limits an agent's script asks for.
    pub fn of(spec: &crate::script::AgentSpec) -> Self {
        Limits {
            header_timeout: Duration::from_millis(spec.header_timeout_ms),
            max_connections: spec.max_connections.max(1),
        }
    }
}

/// Connections that have not sent their first request yet, oldest first: the ones to evict when
/// the server is full (a flood of half-open connections then churns among itself while a client
/// that sends its request at once gets in).
#[derive(Default)]
struct Waiting(std::sync::Mutex<std::collections::BTreeMap<u64, Arc<Notify>>>);

impl Waiting {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<u64, Arc<Notify>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Evict the connection that has waited longest for its first request; false if none.
    fn evict_oldest(&self) -> bool {
        match self.lock().pop_first() {
            Some((_, evict)) => {
                evict.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Removes a connection from [`Waiting`] when it ends.
struct Registered(Arc<Waiting>, u64);

impl Drop for Registered {
    fn drop(&mut self) {
        self.0.lock().remove(&self.1);
    }
}

/// Serve `router` on `listener` until `shutdown` becomes true.
///
/// At most `limits.max_connections` connections are served at once. When a connection arrives at
/// the cap, the connection that has waited longest without sending a request is closed to make
/// room; if every connection is busy with a request, the new one waits for a slot (and the ones
/// behind it wait, unaccepted, in the listen backlog).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    tls: Option<TlsListener>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut conns = tokio::task::JoinSet::new();
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let waiting = Arc::new(Waiting::default());
    let mut next_conn = 0u64;
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = shutdown.changed() => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of descriptors or a transient error: back off instead of spinning.
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_millis(20)) => continue,
                    _ = shutdown.changed() => break,
                }
            }
        };
        let permit = match slots.clone().try_acquire_owned() {
            Ok(p) => p,
            Err(tokio::sync::TryAcquireError::Closed) => break,
            Err(tokio::sync::TryAcquireError::NoPermits) => {
                waiting.evict_oldest();
                tokio::select! {
                    p = slots.clone().acquire_owned() => match p {
                        Ok(p) => p,
                        Err(_) => break,
                    },
                    _ = shutdown.changed() => break,
                }
            }
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let mut shutdown = shutdown.clone();
        let id = next_conn;
        next_conn += 1;
        let evict = Arc::new(Notify::new());
        waiting.lock().insert(id, evict.clone());
        let registered = Registered(waiting.clone(), id);
        let tls = tls.clone();
        conns.spawn(async move {
            let _permit = permit;
            let registered = Arc::new(registered);
            // hyper's header timer starts only once the protocol is detected from the first
            // bytes: a connection that sends nothing at all is cut here.
            let mut first = [0u8; 1];
            let peeked = tokio::select! {
                p = tokio::time::timeout(limits.header_timeout, stream.peek(&mut first)) => p,
                _ = evict.notified() => return,
            };
            if !matches!(peeked, Ok(Ok(n)) if n > 0) {
                return;
            }
            let ctl = ConnControl::default();
            let abort = ctl.abort.clone();
            let io = ResettableStream::new(stream, &ctl);
            // On a TLS port: a handshake first (journaled whatever its end), or a plain client.
            let io = match &tls {
                None => Conn::Plain(io),
                Some(t) if first[0] != crate::tls::TLS_HANDSHAKE_BYTE => {
                    t.journal_plain();
                    if !t.tls.plaintext {
                        return;
                    }
                    Conn::Plain(io)
                }
                Some(t) => {
                    let acceptor = tokio_rustls::TlsAcceptor::from(t.tls.config.clone());
                    let handshake = tokio::select! {
                        h = tokio::time::timeout(limits.header_timeout, acceptor.accept(io)) => h,
                        _ = evict.notified() => return,
                        _ = shutdown.changed() => return,
                    };
                    match handshake {
                        Ok(Ok(s)) => {
                            t.journal_handshake(&s);
                            Conn::Tls(Box::new(s))
                        }
                        Ok(Err(e)) => {
                            t.journal_failed(e.to_string());
                            return;
                        }
                        Err(_) => {
                            t.journal_failed("handshake not finished in time".to_string());
                            return;
                        }
                    }
                }
            };
            let started = registered.clone();
            let svc = hyper::service::service_fn(
                move |mut req: hyper::Request<hyper::body::Incoming>| {
                    // A request arrived: no longer a candidate for eviction.
                    started.0.lock().remove(&started.1);
                    req.extensions_mut().insert(ctl.clone());
                    // HTTP/2 carries the host in `:authority`: record it as `Host`, as HTTP/1
                    // sends it, so every binding's journal names the host the client addressed.
                    if !req.headers().contains_key(hyper::header::HOST)
                        && let Some(host) = req
                            .uri()
                            .authority()
                            .and_then(|a| hyper::header::HeaderValue::from_str(a.as_str()).ok())
                    {
                        req.headers_mut().insert(hyper::header::HOST, host);
                    }
                    router.clone().oneshot(req.map(axum::body::Body::new))
                },
            );
            let mut builder = Builder::new(TokioExecutor::new());
            builder
                .http1()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .max_buf_size(MAX_HEAD_BYTES);
            builder
                .http2()
                .timer(TokioTimer::new())
                .max_concurrent_streams(MAX_H2_STREAMS)
                .max_header_list_size(MAX_HEAD_BYTES as u32);
            let conn = builder.serve_connection(TokioIo::new(io), svc);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = abort.notified() => {}
                _ = evict.notified() => {}
                _ = shutdown.changed() => {}
            }
        });
        // Reap finished connections so the set stays small.
        while conns.try_join_next().is_some() {}
    }
    // Every connection is gone (and its buffers freed) before the server's task ends, so that
    // `Network::shutdown` returning means the network holds no more memory: an aborted task ends
    // at its next poll.
    conns.abort_all();
    while conns.join_next().await.is_some() {}
}
