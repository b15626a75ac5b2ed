//! Fetching agent cards ([`fetch_card`], [`fetch_card_doc`]) and caching them as HTTP says
//! ([`CardCache`], RFC 9111): freshness, validators, revalidation.

use super::*;

/// How long a card without caching headers (no `Cache-Control` freshness, no `Expires`) stays
/// fresh: five minutes (RFC 9111 leaves the heuristic to the cache; §8.6.2 allows a default).
pub const DEFAULT_CARD_MAX_AGE: Duration = Duration::from_secs(300);

/// The freshness of a fetched card (RFC 9111) and the validators to revalidate it with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardCache {
    /// When the response was received.
    pub fetched: Instant,
    /// How long it stays fresh from then (`max-age` less `Age`, or `Expires`, or
    /// [`DEFAULT_CARD_MAX_AGE`]).
    pub lifetime: Duration,
    /// `Cache-Control: no-cache`: revalidated before every use.
    pub no_cache: bool,
    /// `Cache-Control: no-store`: never reused, fetched again (unconditionally) before every use.
    pub no_store: bool,
    /// The `ETag`, sent back as `If-None-Match`.
    pub etag: Option<String>,
    /// The `Last-Modified` date, sent back as `If-Modified-Since`.
    pub last_modified: Option<String>,
}

impl CardCache {
    /// The cache entry of a response with these headers, received at `now`. `previous` is the
    /// entry a `304 Not Modified` refreshes: its validators are kept unless the 304 sends new
    /// ones, and its lifetime when the 304 says nothing about freshness.
    pub fn from_headers(
        headers: &reqwest::header::HeaderMap,
        now: Instant,
        previous: Option<&CardCache>,
    ) -> CardCache {
        let text = |name: &str| -> Option<String> {
            let v: Vec<&str> = headers
                .get_all(name)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect();
            (!v.is_empty()).then(|| v.join(","))
        };
        let mut max_age = None;
        let (mut no_cache, mut no_store) = (false, false);
        let cache_control = text("cache-control");
        for directive in cache_control.iter().flat_map(|c| c.split(',')) {
            let (name, value) = match directive.split_once('=') {
                Some((n, v)) => (n.trim(), Some(v.trim().trim_matches('"'))),
                None => (directive.trim(), None),
            };
            match name.to_ascii_lowercase().as_str() {
                "max-age" => max_age = value.and_then(|v| v.parse::<u64>().ok()),
                "no-cache" => no_cache = true,
                "no-store" => no_store = true,
                _ => {}
            }
        }
        let age = text("age")
            .and_then(|a| a.trim().parse::<u64>().ok())
            .unwrap_or(0);
        let explicit = match max_age {
            Some(s) => Some(Duration::from_secs(s.saturating_sub(age))),
            None => text("expires").map(|e| {
                // An invalid date (`0`) means already expired (RFC 9111 §5.3).
                let date = text("date").and_then(|d| http_date(&d));
                match (http_date(&e), date) {
                    (Some(exp), Some(date)) => exp - date,
                    (Some(exp), None) => exp - time::OffsetDateTime::now_utc(),
                    _ => time::Duration::ZERO,
                }
                .try_into()
                .unwrap_or(Duration::ZERO)
                .saturating_sub(Duration::from_secs(age))
            }),
        };
        let (lifetime, no_cache, no_store) = match (explicit, previous) {
            (Some(l), _) => (l, no_cache, no_store),
            (None, Some(p)) if cache_control.is_none() => (p.lifetime, p.no_cache, p.no_store),
            (None, _) => (
                DEFAULT_CARD_MAX_AGE.saturating_sub(Duration::from_secs(age)),
                no_cache,
                no_store,
            ),
        };
        let etag = text("etag").or_else(|| previous.and_then(|p| p.etag.clone()));
        let last_modified =
            text("last-modified").or_else(|| previous.and_then(|p| p.last_modified.clone()));
        CardCache {
            fetched: now,
            lifetime,
            no_cache,
            no_store,
            etag,
            last_modified,
        }
    }

    /// Whether the card may be used at `now` without asking the agent again.
    pub fn is_fresh(&self, now: Instant) -> bool {
        !self.no_store && !self.no_cache && now.duration_since(self.fetched) < self.lifetime
    }

    /// The conditional headers that revalidate this card (none for a `no-store` one).
    pub fn conditional_headers(&self) -> Vec<(&'static str, String)> {
        if self.no_store {
            return Vec::new();
        }
        let mut out = Vec::new();
        if let Some(e) = &self.etag {
            out.push(("If-None-Match", e.clone()));
        }
        if let Some(lm) = &self.last_modified {
            out.push(("If-Modified-Since", lm.clone()));
        }
        out
    }
}

/// An HTTP date (RFC 9110 IMF-fixdate, the RFC 2822 form).
fn http_date(s: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(s.trim(), &time::format_description::well_known::Rfc2822).ok()
}

/// What fetching a card gave.
#[derive(Debug, Clone, PartialEq)]
pub enum CardFetch {
    /// A card document (200), with its cache entry.
    Card(Value, CardCache),
    /// `304 Not Modified`: the cached card is still valid; its refreshed cache entry.
    NotModified(CardCache),
}

/// GET the card at `card_url` (body limited to [`MAX_CARD_BYTES`], `timeout` for the whole
/// fetch). With `cached`, the request is conditional (its validators) and a 304 answers
/// [`CardFetch::NotModified`].
pub async fn fetch_card_doc(
    http: &reqwest::Client,
    card_url: &str,
    timeout: Duration,
    cached: Option<&CardCache>,
) -> Result<CardFetch, CardError> {
    let fail = |message: String| CardError {
        url: card_url.to_string(),
        message,
    };
    let fetch = async {
        let mut rb = http.get(card_url).header("Accept", "application/json");
        for (name, value) in cached
            .map(CardCache::conditional_headers)
            .unwrap_or_default()
        {
            rb = rb.header(name, value);
        }
        let mut resp = rb.send().await.map_err(|e| fail(e.to_string()))?;
        let now = Instant::now();
        if resp.status() == reqwest::StatusCode::NOT_MODIFIED
            && let Some(c) = cached
        {
            return Ok(CardFetch::NotModified(CardCache::from_headers(
                resp.headers(),
                now,
                Some(c),
            )));
        }
        if !resp.status().is_success() {
            return Err(fail(format!("HTTP {}", resp.status().as_u16())));
        }
        let cache = CardCache::from_headers(resp.headers(), now, None);
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| fail(e.to_string()))? {
            if body.len() + chunk.len() > MAX_CARD_BYTES {
                return Err(fail("card larger than 1 MiB".into()));
            }
            body.extend_from_slice(&chunk);
        }
        let v: Value = serde_json::from_slice(&body).map_err(|e| fail(format!("not JSON: {e}")))?;
        Ok(CardFetch::Card(v, cache))
    };
    tokio::time::timeout(timeout, fetch)
        .await
        .map_err(|_| fail(format!("no card within {} s", timeout.as_secs())))?
}

/// Fetch and parse a card unconditionally (see [`fetch_card_doc`]; `prefs` as for
/// [`parse_card`]).
pub async fn fetch_card(
    http: &reqwest::Client,
    card_url: &str,
    timeout: Duration,
    prefs: &[Binding],
) -> Result<AgentInfo, CardError> {
    match fetch_card_doc(http, card_url, timeout, None).await? {
        CardFetch::Card(v, cache) => {
            let mut a = parse_card(card_url, &v, prefs)?;
            a.cache = cache;
            Ok(a)
        }
        CardFetch::NotModified(_) => Err(CardError {
            url: card_url.to_string(),
            message: "304 to an unconditional request".into(),
        }),
    }
}
