//! HTTP helpers shared by the JSON-RPC and HTTP+JSON bindings: the `Authorization` value,
//! transport errors classified, `Retry-After`, the content type of a stream, bounded bodies.

use super::*;

/// An `Authorization` value marked sensitive, so that no `Debug` of a request (a log line)
/// prints the credential.
pub(super) fn auth_header(credential: &str) -> Result<reqwest::header::HeaderValue, ClientError> {
    let mut v = reqwest::header::HeaderValue::from_str(credential)
        .map_err(|_| ClientError::Transport("the credential is not a valid header value".into()))?;
    v.set_sensitive(true);
    Ok(v)
}

pub(super) fn classify(url: &str, e: reqwest::Error) -> ClientError {
    if e.is_connect() {
        ClientError::Connect {
            url: url.to_string(),
            message: e.to_string(),
        }
    } else {
        ClientError::Transport(e.to_string())
    }
}

pub(super) fn retry_after_of(resp: &reqwest::Response) -> Option<Duration> {
    resp.headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after)
}

pub(super) fn is_event_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"))
}

/// Parse `Retry-After`: delta-seconds or an HTTP date.
pub fn parse_retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when =
        time::OffsetDateTime::parse(v, &time::format_description::well_known::Rfc2822).ok()?;
    let delta = when - time::OffsetDateTime::now_utc();
    Some(Duration::from_secs_f64(delta.as_seconds_f64().max(0.0)))
}

pub(super) async fn read_limited(
    mut resp: reqwest::Response,
    limit: usize,
) -> Result<Vec<u8>, ClientError> {
    let mut out = Vec::new();
    while let Some(chunk) = resp
        .chunk()
        .await
        .map_err(|e| ClientError::Transport(e.to_string()))?
    {
        if out.len() + chunk.len() > limit {
            return Err(ClientError::Protocol(format!(
                "response body exceeds {limit} bytes"
            )));
        }
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}
