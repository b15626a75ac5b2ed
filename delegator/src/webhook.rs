//! The push-notification receiver: an axum server the agents POST task events to.
//!
//! Route: `POST /a2a-webhook/{delegation_id}` with a bare `StreamResponse` body. The per-delegation
//! token is accepted as `Authorization: Bearer <token>` (spec 1.0.1) or
//! `X-A2A-Notification-Token: <token>` (Python SDK); anything else is 401, an unknown delegation
//! 404, a body that is not a `StreamResponse` 400. A valid notification is only a hint: the
//! delegation reads the task with `GetTask`, so duplicates and reordering are harmless.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use std::net::SocketAddr;
use std::sync::Arc;

/// The path prefix of webhook URLs.
pub const WEBHOOK_PATH: &str = "/a2a-webhook";

/// The largest accepted notification body.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// What the receiver decides about a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted (2xx).
    Accepted,
    /// Wrong or missing token (401).
    BadToken,
    /// No such delegation (404).
    Unknown,
}

/// Where the receiver sends notifications.
pub trait WebhookSink: Send + Sync + 'static {
    /// Check the token and deliver the event hint.
    fn notify(
        &self,
        delegation_id: &str,
        token: Option<&str>,
        event: a2a_protocol::StreamResponse,
    ) -> Verdict;
}

fn token_of(headers: &HeaderMap) -> Option<String> {
    if let Some(v) = headers.get("authorization").and_then(|v| v.to_str().ok()) {
        let v = v.trim();
        if let Some((scheme, rest)) = v.split_once(' ')
            && scheme.eq_ignore_ascii_case("bearer")
        {
            return Some(rest.trim().to_string());
        }
    }
    headers
        .get("x-a2a-notification-token")
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_string())
}

async fn handle(
    State(sink): State<Arc<dyn WebhookSink>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let event = match a2a_protocol::codec::decode::<a2a_protocol::StreamResponse>(&body) {
        Ok(e) => e,
        Err(e) => {
            tracing::warn!(delegation = %id, "webhook: bad body: {e}");
            return StatusCode::BAD_REQUEST;
        }
    };
    match sink.notify(&id, token_of(&headers).as_deref(), event) {
        Verdict::Accepted => StatusCode::OK,
        Verdict::BadToken => StatusCode::UNAUTHORIZED,
        Verdict::Unknown => StatusCode::NOT_FOUND,
    }
}

/// Bind `listen` and serve notifications to `sink` until the runtime stops. Returns the bound
/// address (useful with port 0).
pub async fn serve(
    listen: SocketAddr,
    sink: Arc<dyn WebhookSink>,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let app = Router::new()
        .route(&format!("{WEBHOOK_PATH}/{{id}}"), post(handle))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(sink);
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let addr = listener.local_addr()?;
    let handle = tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!("webhook server stopped: {e}");
        }
    });
    Ok((addr, handle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    struct Sink(Mutex<Vec<String>>);
    impl WebhookSink for Sink {
        fn notify(
            &self,
            id: &str,
            token: Option<&str>,
            event: a2a_protocol::StreamResponse,
        ) -> Verdict {
            if id != "d1" {
                return Verdict::Unknown;
            }
            if token != Some("tok") {
                return Verdict::BadToken;
            }
            self.0
                .lock()
                .unwrap()
                .push(event.task_id().unwrap_or_default().to_string());
            Verdict::Accepted
        }
    }

    #[tokio::test]
    async fn tokens_are_checked_and_duplicates_accepted() {
        let sink = Arc::new(Sink(Mutex::new(vec![])));
        let (addr, _h) = serve("127.0.0.1:0".parse().unwrap(), sink.clone())
            .await
            .unwrap();
        let http = reqwest::Client::builder().no_proxy().build().unwrap();
        let body = r#"{"statusUpdate":{"taskId":"t1","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#;
        let url = format!("http://{addr}{WEBHOOK_PATH}/d1");
        let send = |auth: Option<(&'static str, &'static str)>, url: String| {
            let mut rb = http.post(url).body(body);
            if let Some((k, v)) = auth {
                rb = rb.header(k, v);
            }
            rb.send()
        };
        let r = send(Some(("Authorization", "Bearer tok")), url.clone())
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let r = send(Some(("X-A2A-Notification-Token", "tok")), url.clone())
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
        let r = send(Some(("Authorization", "Bearer nope")), url.clone())
            .await
            .unwrap();
        assert_eq!(r.status(), 401);
        let r = send(None, url.clone()).await.unwrap();
        assert_eq!(r.status(), 401);
        let r = send(
            Some(("Authorization", "Bearer tok")),
            format!("http://{addr}{WEBHOOK_PATH}/zz"),
        )
        .await
        .unwrap();
        assert_eq!(r.status(), 404);
        let r = http.post(url).body("garbage").send().await.unwrap();
        assert_eq!(r.status(), 400);
        assert_eq!(*sink.0.lock().unwrap(), vec!["t1", "t1"]);
    }
}
