//! The push-notification receiver: an axum server the agents POST task events to.
//!
//! Route: `POST /a2a-webhook/{delegation_id}` with a bare `StreamResponse` body. The per-delegation
//! token is accepted as `Authorization: Bearer <token>` (spec 1.0.1) or
//! `X-A2A-Notification-Token: <token>` (Python SDK). The token is checked first, in constant
//! time ([`token_matches`]): a wrong or missing token and an unknown delegation get the same
//! answer (401, empty body), so delegation ids cannot be probed. The delegator keeps only the
//! sha256 of each token it configured ([`token_sha256`]; a push token is a secret,
//! DLG-SECRET-01): the presented token is hashed and compared with those. Only then is the body read; one
//! that is not a `StreamResponse` is 400; every other push with the right token is answered 200,
//! duplicates too (A2A §4.3.3: the receiver acknowledges with 2xx). A valid notification is only
//! a hint: the delegation reads its own task with `GetTask`, so duplicates and reordering are
//! harmless, and a push about a task the delegation's agent did not create for it is ignored by
//! the sink (acknowledged, changes nothing).

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use sha2::{Digest, Sha256};
use std::net::SocketAddr;
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// The path prefix of webhook URLs.
pub const WEBHOOK_PATH: &str = "/a2a-webhook";

/// The largest accepted notification body.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// Where the receiver sends notifications.
pub trait WebhookSink: Send + Sync + 'static {
    /// The sha256 of each push token accepted for `delegation_id`: empty when the delegation is
    /// unknown, not running, or not observed by push. The receiver compares the presented
    /// token with [`token_matches`].
    fn expected_token_hashes(&self, delegation_id: &str) -> Vec<TokenHash>;
    /// Deliver the event of an authorized notification (a hint).
    fn notify(&self, delegation_id: &str, event: a2a_protocol::StreamResponse);
}

/// The sha256 of a push token: all the delegator keeps of it.
pub type TokenHash = [u8; 32];

/// The sha256 of `token`.
pub fn token_hash(token: &str) -> TokenHash {
    Sha256::digest(token.as_bytes()).into()
}

/// The lowercase hex sha256 of `token`, as records keep it (`push_token_sha256`).
pub fn token_sha256(token: &str) -> String {
    hex::encode(token_hash(token))
}

/// A record's hex hashes as [`TokenHash`]es (a malformed one is skipped: it matches nothing).
pub fn token_hashes(hex_hashes: &[String]) -> Vec<TokenHash> {
    hex_hashes
        .iter()
        .filter_map(|h| hex::decode(h).ok()?.try_into().ok())
        .collect()
}

/// Compared with the presented token's hash when no token is expected, so that an unknown
/// delegation costs the same comparison as a known one.
const NO_TOKEN: &TokenHash = &[0u8; 32];

/// True when the sha256 of `presented` equals one of `expected`, each compared in constant
/// time. No expected hash (an unknown delegation) and no presented token never match, after the
/// same work.
pub fn token_matches(expected: &[TokenHash], presented: Option<&str>) -> bool {
    let got = token_hash(presented.unwrap_or_default());
    let mut equal = subtle::Choice::from(0u8);
    if expected.is_empty() {
        equal |= NO_TOKEN.ct_eq(&got);
    }
    for want in expected {
        equal |= want.ct_eq(&got);
    }
    bool::from(equal) && !expected.is_empty() && presented.is_some()
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
    // The token first: nothing about the delegation or the body is revealed without it.
    let expected = sink.expected_token_hashes(&id);
    if !token_matches(&expected, token_of(&headers).as_deref()) {
        return StatusCode::UNAUTHORIZED;
    }
    match a2a_protocol::codec::decode::<a2a_protocol::StreamResponse>(&body) {
        Ok(event) => {
            sink.notify(&id, event);
            StatusCode::OK
        }
        Err(e) => {
            tracing::warn!(delegation = %id, "webhook: bad body: {e}");
            StatusCode::BAD_REQUEST
        }
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

    /// One running delegation, `d1`, with tokens `tok` and (configured again after a restart)
    /// `tok2`, known by their hashes.
    struct Sink(Mutex<Vec<String>>);
    impl WebhookSink for Sink {
        fn expected_token_hashes(&self, id: &str) -> Vec<TokenHash> {
            if id == "d1" {
                token_hashes(&[token_sha256("tok"), token_sha256("tok2")])
            } else {
                vec![]
            }
        }
        fn notify(&self, _id: &str, event: a2a_protocol::StreamResponse) {
            self.0
                .lock()
                .unwrap()
                .push(event.task_id().unwrap_or_default().to_string());
        }
    }

    const BODY: &str = r#"{"statusUpdate":{"taskId":"t1","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#;

    /// Status, content type and body of one POST.
    async fn post(
        http: &reqwest::Client,
        url: String,
        auth: Option<(&str, &str)>,
        body: &'static str,
    ) -> (u16, Option<String>, Vec<u8>) {
        let mut rb = http.post(url).body(body);
        if let Some((k, v)) = auth {
            rb = rb.header(k, v);
        }
        let r = rb.send().await.unwrap();
        let status = r.status().as_u16();
        let ct = r
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string());
        (status, ct, r.bytes().await.unwrap().to_vec())
    }

    #[tokio::test]
    async fn the_token_is_checked_first_and_unknown_ids_look_like_wrong_tokens() {
        let sink = Arc::new(Sink(Mutex::new(vec![])));
        let (addr, _h) = serve("127.0.0.1:0".parse().unwrap(), sink.clone())
            .await
            .unwrap();
        let http = reqwest::Client::builder().no_proxy().build().unwrap();
        let url = format!("http://{addr}{WEBHOOK_PATH}/d1");
        let unknown = format!("http://{addr}{WEBHOOK_PATH}/zz");
        let bearer = Some(("Authorization", "Bearer tok"));
        // The right token, in either header, is accepted (duplicates too), and so is the token
        // of an older push config of the same delegation.
        assert_eq!(post(&http, url.clone(), bearer, BODY).await.0, 200);
        let xtoken = Some(("X-A2A-Notification-Token", "tok"));
        assert_eq!(post(&http, url.clone(), xtoken, BODY).await.0, 200);
        let older = Some(("Authorization", "Bearer tok2"));
        assert_eq!(post(&http, url.clone(), older, BODY).await.0, 200);
        // A wrong token, no token, and an unknown delegation (even with a token that is right
        // elsewhere, or with a garbage body) all get one and the same answer.
        let wrong = post(
            &http,
            url.clone(),
            Some(("Authorization", "Bearer nope")),
            BODY,
        )
        .await;
        assert_eq!(wrong.0, 401);
        for other in [
            post(&http, url.clone(), None, BODY).await,
            post(
                &http,
                url.clone(),
                Some(("Authorization", "Bearer tok3")),
                BODY,
            )
            .await,
            post(
                &http,
                url.clone(),
                Some(("Authorization", "Bearer nope")),
                "garbage",
            )
            .await,
            post(&http, unknown.clone(), bearer, BODY).await,
            post(&http, unknown.clone(), None, BODY).await,
            post(&http, unknown.clone(), bearer, "garbage").await,
        ] {
            assert_eq!(other, wrong);
        }
        // The body is read only with the right token.
        assert_eq!(post(&http, url, bearer, "garbage").await.0, 400);
        assert_eq!(*sink.0.lock().unwrap(), vec!["t1", "t1", "t1"]);
    }

    #[test]
    fn tokens_match_only_when_equal_and_both_present() {
        let hashed = |t: Option<&str>| t.map(|t| vec![token_hash(t)]).unwrap_or_default();
        assert!(token_matches(&hashed(Some("tok")), Some("tok")));
        assert!(token_matches(
            &[token_hash("a"), token_hash("tok")],
            Some("tok")
        ));
        for (expected, presented) in [
            (Some("tok"), Some("tok ")),
            (Some("tok"), Some("to")),
            (Some("tok"), Some("tokk")),
            (Some("tok"), Some("TOK")),
            (Some("tok"), Some("")),
            (Some("tok"), None),
            (None, Some("tok")),
            (None, None),
            (None, Some("")),
            (Some(""), None),
        ] {
            assert!(
                !token_matches(&hashed(expected), presented),
                "{expected:?} vs {presented:?}"
            );
        }
        // The stored form is the lowercase hex sha256; a malformed one matches nothing.
        assert_eq!(
            token_sha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            token_hashes(&["zz".into(), token_sha256("abc")]),
            vec![token_hash("abc")]
        );
    }
}
