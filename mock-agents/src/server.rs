//! The accept loop: serves an axum router on a bound listener, one hyper connection per socket,
//! and lets a handler drop its own connection ([`ConnControl::abort`]) to simulate a peer that
//! vanishes before or after processing.

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tower::ServiceExt;

/// Per-connection control, available to handlers as a request extension.
#[derive(Clone, Default)]
pub struct ConnControl {
    abort: Arc<Notify>,
}

impl ConnControl {
    /// Drop this connection now, without a response (the socket is reset).
    pub fn abort(&self) {
        self.abort.notify_one();
    }
}

/// Serve `router` on `listener` until `shutdown` becomes true.
pub async fn serve(listener: TcpListener, router: Router, mut shutdown: watch::Receiver<bool>) {
    let mut conns = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = shutdown.changed() => break,
        };
        let Ok((stream, _)) = accepted else { continue };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let mut shutdown = shutdown.clone();
        conns.spawn(async move {
            let ctl = ConnControl::default();
            let abort = ctl.abort.clone();
            let svc = hyper::service::service_fn(
                move |mut req: hyper::Request<hyper::body::Incoming>| {
                    req.extensions_mut().insert(ctl.clone());
                    router.clone().oneshot(req.map(axum::body::Body::new))
                },
            );
            let builder = Builder::new(TokioExecutor::new());
            let conn = builder.serve_connection(TokioIo::new(stream), svc);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = abort.notified() => {}
                _ = shutdown.changed() => {}
            }
        });
        // Reap finished connections so the set stays small.
        while conns.try_join_next().is_some() {}
    }
    conns.abort_all();
}
