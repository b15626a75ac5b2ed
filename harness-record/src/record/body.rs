//! The bodies the proxy sends: a whole buffer (requests, rewritten answers) or an upstream
//! response passed through frame by frame as it arrives ([`TapBody`]: same bytes, same timing,
//! each frame shown to an [`Observer`](super::exchange::Observer) on the way).

use super::exchange::Observer;
use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// The error type of proxied bodies.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An upstream body that went quiet for longer than the idle bound.
#[derive(Debug, thiserror::Error)]
#[error("no data from the upstream for {0:?}")]
pub struct IdleTimeout(pub Duration);

/// A body the proxy sends.
pub enum ProxyBody {
    /// These frames (data and trailers), then the end.
    Frames(VecDeque<Frame<Bytes>>),
    /// An upstream response passed through.
    Tap(Box<TapBody>),
}

impl ProxyBody {
    /// One buffer (nothing when empty).
    pub fn full(b: impl Into<Bytes>) -> Self {
        let b = b.into();
        let mut q = VecDeque::new();
        if !b.is_empty() {
            q.push_back(Frame::data(b));
        }
        ProxyBody::Frames(q)
    }
}

/// An upstream response body passed through unchanged, observed frame by frame, cut with an
/// error when the upstream sends nothing for `idle`.
pub struct TapBody {
    inner: Incoming,
    observer: Observer,
    idle: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    ended: bool,
}

impl TapBody {
    /// Pass `inner` through, showing each frame to `observer`.
    pub fn new(inner: Incoming, mut observer: Observer, idle: Duration) -> Self {
        // An empty body (a gRPC trailers-only answer, `Content-Length: 0`) is never polled.
        let ended = inner.is_end_stream();
        if ended {
            observer.on_end();
        }
        TapBody {
            inner,
            observer,
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
            ended,
        }
    }
}

impl Body for ProxyBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.get_mut() {
            ProxyBody::Frames(q) => Poll::Ready(q.pop_front().map(Ok)),
            ProxyBody::Tap(t) => t.poll(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ProxyBody::Frames(q) => q.is_empty(),
            ProxyBody::Tap(t) => t.ended,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ProxyBody::Frames(q) => {
                let n: usize = q.iter().filter_map(|f| f.data_ref().map(Bytes::len)).sum();
                if q.iter().all(Frame::is_data) {
                    SizeHint::with_exact(n as u64)
                } else {
                    SizeHint::default()
                }
            }
            ProxyBody::Tap(t) => t.inner.size_hint(),
        }
    }
}

impl TapBody {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if self.ended {
            return Poll::Ready(None);
        }
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                self.timer
                    .as_mut()
                    .reset(tokio::time::Instant::now() + self.idle);
                if let Some(d) = frame.data_ref() {
                    self.observer.on_data(d);
                } else if let Some(t) = frame.trailers_ref() {
                    self.observer.on_trailers(t);
                }
                // A body of known length ends with its last frame: the server does not poll
                // again for the end.
                if self.inner.is_end_stream() {
                    self.ended = true;
                    self.observer.on_end();
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => {
                self.ended = true;
                self.observer.on_error(&e.to_string());
                Poll::Ready(Some(Err(Box::new(e))))
            }
            Poll::Ready(None) => {
                self.ended = true;
                self.observer.on_end();
                Poll::Ready(None)
            }
            Poll::Pending => {
                if self.timer.as_mut().poll(cx).is_ready() {
                    self.ended = true;
                    let e = IdleTimeout(self.idle);
                    self.observer.on_error(&e.to_string());
                    return Poll::Ready(Some(Err(Box::new(e))));
                }
                Poll::Pending
            }
        }
    }
}
