//! Agent discovery and routing: read agent cards leniently (and cache them as HTTP says), choose
//! the interfaces to call, and choose an agent for a delegation by skill, output modes and the
//! extensions its card requires.
//!
//! A 1.0 card has `supportedInterfaces`; a 0.3 card (top-level `url`, `protocolVersion` 0.3) is
//! translated with [`a2a_protocol::compat03::to_v1`] first.
//!
//! **Interface selection** ([`select_interfaces`]): the candidates are the interfaces whose
//! `protocolBinding` this client speaks ([`SUPPORTED_BINDINGS`]) and, when the `bindings` option
//! is given, that it names. Among them the 1.x interfaces are used (a patch number such as
//! `1.0.3` is version 1.0: specification §3.6), in card order (§8.3.2: the first entry whose
//! binding and version the client supports), or, with the `bindings` option, in the order of
//! that list (card order among equals). The first is called, at its own `url` and with its own
//! `tenant`; the others are its fallbacks ([`Endpoint::fallbacks`]), each with its own `url` and
//! `tenant` too. Only when the card has no usable 1.x interface is a 0.x `JSONRPC` one used
//! (through the 0.3 adapter, without fallbacks): a 1.0 agent is never spoken to as 0.3 silently.
//! Interfaces with an unrecognized version come last, taken as 1.0.
//!
//! **Extensions** (proto `AgentExtension.required`, §4.6): an agent whose card marks an extension
//! `required` that this delegator does not support ([`AgentInfo::unsupported_extensions`]) is not
//! used; the required extensions it does support are activated on every request
//! ([`Endpoint::extensions`], the `A2A-Extensions` header).
//!
//! **Caching** (§8.6, RFC 9111): [`CardCache`] keeps a card's freshness and validators; a stale
//! card is revalidated with `If-None-Match` / `If-Modified-Since` ([`fetch_card_doc`]).
//! Without caching headers a card stays fresh for [`DEFAULT_CARD_MAX_AGE`].

use crate::client::{Endpoint, SUPPORTED_BINDINGS};
use crate::request::{ArtifactSpec, media_type_accepted};
use a2a_protocol::compat03::{self, ObjectKind};
use a2a_protocol::version::ProtocolVersion;
use a2a_protocol::{AgentCard, AgentInterface, Binding, SecurityScheme};
use serde_json::Value;
use std::time::{Duration, Instant};

/// How long a card without caching headers (no `Cache-Control` freshness, no `Expires`) stays
/// fresh: five minutes (RFC 9111 leaves the heuristic to the cache; §8.6.2 allows a default).
pub const DEFAULT_CARD_MAX_AGE: Duration = Duration::from_secs(300);

/// The largest card body accepted.
pub const MAX_CARD_BYTES: usize = 1024 * 1024;

/// A card could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("agent card {url}: {message}")]
pub struct CardError {
    /// The card URL.
    pub url: String,
    /// What is wrong.
    pub message: String,
}

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

/// What the delegator knows about one agent.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentInfo {
    /// The card URL (the agent's identity in records and provenance).
    pub card_url: String,
    /// The card in use (1.0 form): the extended card when the delegator obtained it
    /// ([`AgentInfo::extended`]), else the public card.
    pub card: AgentCard,
    /// The public card, as last fetched.
    pub public_card: AgentCard,
    /// The chosen interface, with the others to fall back to.
    pub endpoint: Endpoint,
    /// Extensions the card marks `required` that this delegator does not support: the agent is
    /// not used while any is listed.
    pub unsupported_extensions: Vec<String>,
    /// Why the card is not trusted (A2A §8.4.3: its signatures do not verify, or it is unsigned
    /// where signatures are required): the agent is not used while this is set.
    pub untrusted_card: Option<String>,
    /// The agent's credential (`init.agent_credentials`) goes with every request: the public
    /// card's `securityRequirements` apply to every call (§7.3) and the credential is of a scheme
    /// they name.
    pub credential_on_every_request: bool,
    /// [`AgentInfo::card`] is the extended card (GetExtendedAgentCard, §3.1.11): its skills and
    /// interfaces replace the public card's.
    pub extended: bool,
    /// Freshness and validators of the public card.
    pub cache: CardCache,
}

impl AgentInfo {
    /// The card declares streaming.
    pub fn streaming(&self) -> bool {
        self.card.capabilities.streaming == Some(true)
    }

    /// The card declares push notifications.
    pub fn push(&self) -> bool {
        self.card.capabilities.push_notifications == Some(true)
    }

    /// The agent may be used: no extension it requires is one this delegator lacks.
    pub fn usable(&self) -> bool {
        self.unsupported_extensions.is_empty() && self.untrusted_card.is_none()
    }

    /// True when the card advertises `skill` with an output mode `spec` accepts.
    pub fn can_do(&self, skill: &str, spec: &ArtifactSpec) -> bool {
        let Some(s) = self.card.skill(skill) else {
            return false;
        };
        let modes = self.card.output_modes(s);
        modes.iter().any(|m| {
            media_type_accepted(&spec.mime_types, m)
                || spec
                    .mime_types
                    .iter()
                    .any(|a| media_type_accepted(std::slice::from_ref(m), a))
        })
    }

    /// Apply the extensions this delegator supports: the card's required extensions it supports
    /// are activated on every interface, the others make the agent unusable.
    pub fn with_supported_extensions(mut self, supported: &[String]) -> Self {
        let required = required_extensions(&self.card);
        let (active, missing): (Vec<String>, Vec<String>) = required
            .into_iter()
            .partition(|u| supported.iter().any(|s| s == u));
        self.unsupported_extensions = missing;
        self.endpoint = self.endpoint.with_extensions(active);
        self
    }

    /// The agent with its extended card: the extended card's skills and interfaces (its first
    /// usable interface, with its tenant) replace the public card's; what the delegator decided
    /// from the public card (credentials, freshness) stays, and an extension either card
    /// requires counts.
    pub fn with_extended_card(self, extended: AgentInfo, supported: &[String]) -> AgentInfo {
        let ext = extended.with_supported_extensions(supported);
        let mut unsupported = self.unsupported_extensions.clone();
        for u in &ext.unsupported_extensions {
            if !unsupported.contains(u) {
                unsupported.push(u.clone());
            }
        }
        let mut active = self.endpoint.extensions.clone();
        for u in &ext.endpoint.extensions {
            if !active.contains(u) {
                active.push(u.clone());
            }
        }
        AgentInfo {
            card_url: self.card_url,
            card: ext.card,
            public_card: self.public_card,
            endpoint: ext.endpoint.with_extensions(active),
            unsupported_extensions: unsupported,
            untrusted_card: self.untrusted_card,
            credential_on_every_request: self.credential_on_every_request,
            extended: true,
            cache: self.cache,
        }
    }
}

/// The URIs of the extensions `card` marks `required`, in card order, without repeats.
pub fn required_extensions(card: &AgentCard) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in &card.capabilities.extensions {
        if e.required && !e.uri.is_empty() && !out.contains(&e.uri) {
            out.push(e.uri.clone());
        }
    }
    out
}

/// Whether `credential` (an `Authorization` value such as `Bearer abc`) is of scheme `s`: an HTTP
/// scheme of the same name, an OAuth 2.0 or OpenID Connect scheme for a `Bearer` token, or an API
/// key carried in the `Authorization` header.
fn credential_of_scheme(s: &SecurityScheme, credential: &str) -> bool {
    let kind = credential.split_whitespace().next().unwrap_or_default();
    match s {
        SecurityScheme::HttpAuthSecurityScheme(h) => {
            !kind.is_empty() && h.scheme.trim().eq_ignore_ascii_case(kind)
        }
        SecurityScheme::Oauth2SecurityScheme(_)
        | SecurityScheme::OpenIdConnectSecurityScheme(_) => kind.eq_ignore_ascii_case("bearer"),
        SecurityScheme::ApiKeySecurityScheme(k) => {
            k.location.eq_ignore_ascii_case("header")
                && k.name.eq_ignore_ascii_case("authorization")
        }
        SecurityScheme::MtlsSecurityScheme(_) => false,
    }
}

/// Whether the (public) card declares a security scheme `credential` is of: the condition for
/// authenticating GetExtendedAgentCard with it (§3.1.11).
pub fn credential_fits_card(card: &AgentCard, credential: &str) -> bool {
    card.security_schemes
        .values()
        .any(|s| credential_of_scheme(s, credential))
}

/// Whether the card's `securityRequirements` (which apply to every request, §7.3) can be met with
/// `credential`: some requirement names only schemes it is of.
pub fn credential_meets_requirements(card: &AgentCard, credential: &str) -> bool {
    card.security_requirements.iter().any(|req| {
        !req.schemes.is_empty()
            && req.schemes.keys().all(|name| {
                card.security_schemes
                    .get(name)
                    .is_some_and(|s| credential_of_scheme(s, credential))
            })
    })
}

/// Turn a card document into an [`AgentInfo`] (no extension supported, no credential, fresh for
/// [`DEFAULT_CARD_MAX_AGE`] from now). `card_url` resolves relative interface URLs; `prefs` is
/// the `bindings` option (empty: every supported binding, in card order).
pub fn parse_card(card_url: &str, v: &Value, prefs: &[Binding]) -> Result<AgentInfo, CardError> {
    let fail = |message: String| CardError {
        url: card_url.to_string(),
        message,
    };
    if !v.is_object() {
        return Err(fail("not a JSON object".into()));
    }
    let is_v1 = v.get("supportedInterfaces").is_some_and(|s| !s.is_null());
    let v1 = if is_v1 {
        v.clone()
    } else if v.get("url").is_some() {
        compat03::to_v1(ObjectKind::AgentCard, v).map_err(|e| fail(format!("0.3 card: {e}")))?
    } else {
        return Err(fail(
            "neither supportedInterfaces (1.0) nor url (0.3) is present".into(),
        ));
    };
    let card: AgentCard =
        a2a_protocol::codec::decode_value(&v1).map_err(|e| fail(e.to_string()))?;
    let endpoint = select_interfaces(card_url, &card.supported_interfaces, prefs).map_err(fail)?;
    if card.skills.is_empty() {
        return Err(fail("no skills".into()));
    }
    let info = AgentInfo {
        card_url: card_url.to_string(),
        endpoint,
        public_card: card.clone(),
        card,
        unsupported_extensions: Vec::new(),
        untrusted_card: None,
        credential_on_every_request: false,
        extended: false,
        cache: CardCache {
            fetched: Instant::now(),
            lifetime: DEFAULT_CARD_MAX_AGE,
            no_cache: false,
            no_store: false,
            etag: None,
            last_modified: None,
        },
    };
    Ok(info.with_supported_extensions(&[]))
}

/// The endpoint to call for these interfaces (see the module documentation for the rule), or
/// why there is none.
pub fn select_interfaces(
    card_url: &str,
    interfaces: &[AgentInterface],
    prefs: &[Binding],
) -> Result<Endpoint, String> {
    #[derive(PartialEq)]
    enum Class {
        V1,
        V03,
        Unknown,
    }
    let major = |s: &str| s.trim().split('.').next().unwrap_or_default().to_string();
    let allowed =
        |b: Binding| SUPPORTED_BINDINGS.contains(&b) && (prefs.is_empty() || prefs.contains(&b));
    let usable: Vec<(Binding, Class, &AgentInterface)> = interfaces
        .iter()
        .filter_map(|i| {
            let b = Binding::from_protocol_binding(&i.protocol_binding)?;
            if !allowed(b) {
                return None;
            }
            let class = match major(&i.protocol_version).as_str() {
                "1" => Class::V1,
                "0" if b == Binding::JsonRpc => Class::V03,
                "0" => return None,
                _ => Class::Unknown,
            };
            Some((b, class, i))
        })
        .collect();
    let of = |c: Class| -> Vec<(Binding, &AgentInterface)> {
        usable
            .iter()
            .filter(|(_, k, _)| *k == c)
            .map(|(b, _, i)| (*b, *i))
            .collect()
    };
    let (mut chosen, version) = {
        let v1 = of(Class::V1);
        let v03 = of(Class::V03);
        if !v1.is_empty() {
            (v1, ProtocolVersion::V1_0)
        } else if let Some(first) = v03.first() {
            (vec![*first], ProtocolVersion::V0_3)
        } else {
            (of(Class::Unknown), ProtocolVersion::V1_0)
        }
    };
    if !prefs.is_empty() {
        // Stable: card order among interfaces of the same binding.
        chosen.sort_by_key(|(b, _)| prefs.iter().position(|p| p == b).unwrap_or(usize::MAX));
    }
    let base = reqwest::Url::parse(card_url).map_err(|e| format!("bad card URL: {e}"))?;
    let mut endpoints = Vec::new();
    let mut problems = Vec::new();
    for (binding, i) in chosen {
        let url = match binding {
            Binding::Grpc => grpc_target(&i.url),
            Binding::JsonRpc | Binding::Rest => match base.join(&i.url) {
                Ok(u) => Ok(u.to_string()),
                Err(e) => Err(format!("bad interface url {:?}: {e}", i.url)),
            },
        };
        match url {
            Ok(url) => endpoints.push(Endpoint {
                url,
                version,
                tenant: i.tenant.clone().filter(|t| !t.is_empty()),
                binding,
                extensions: Vec::new(),
                fallbacks: Vec::new(),
            }),
            Err(p) => problems.push(p),
        }
    }
    let mut it = endpoints.into_iter();
    let Some(mut first) = it.next() else {
        let names: Vec<&str> = SUPPORTED_BINDINGS
            .iter()
            .filter(|b| allowed(**b))
            .map(|b| b.protocol_binding())
            .collect();
        let mut msg = format!(
            "no usable interface in supportedInterfaces (this delegator speaks {})",
            names.join(", ")
        );
        if !prefs.is_empty() {
            msg.push_str(" as restricted by the `bindings` option");
        }
        if !problems.is_empty() {
            msg.push_str(&format!(": {}", problems.join("; ")));
        }
        return Err(msg);
    };
    first.fallbacks = it.collect();
    Ok(first)
}

/// A gRPC interface `url` as a target URI: `host:port` (the proto's form) becomes
/// `http://host:port` (plaintext h2c: TLS is not signalled by the card); `http(s)://…` stays, its
/// path is ignored by the transport.
pub fn grpc_target(url: &str) -> Result<String, String> {
    let url = url.trim();
    let full = if url.contains("://") {
        url.to_string()
    } else {
        format!("http://{url}")
    };
    let parsed =
        reqwest::Url::parse(&full).map_err(|e| format!("bad gRPC interface url {url:?}: {e}"))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(format!(
            "bad gRPC interface url {url:?}: expected host:port or http(s)://host:port"
        ));
    }
    Ok(full)
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

/// Routing failed: why no agent fits.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("no capable agent: {0}")]
pub struct RouteError(pub String);

/// The agents (in configuration order) that advertise `skill` with an accepted output mode and
/// may be used (no required extension this delegator lacks); when `only` is given, that agent
/// must be the one. The error says why none fits, naming the extensions that excluded a capable
/// agent.
pub fn route_candidates<'a>(
    agents: &'a [AgentInfo],
    skill: &str,
    spec: &ArtifactSpec,
    only: Option<&str>,
) -> Result<Vec<&'a AgentInfo>, RouteError> {
    let candidates: Vec<&AgentInfo> = agents
        .iter()
        .filter(|a| only.is_none_or(|o| a.card_url == o))
        .collect();
    if candidates.is_empty() {
        return Err(RouteError(match only {
            Some(o) => format!("agent {o} is not known (or its card could not be read)"),
            None => "no agent card could be read".to_string(),
        }));
    }
    let capable: Vec<&AgentInfo> = candidates
        .into_iter()
        .filter(|a| a.can_do(skill, spec))
        .collect();
    let usable: Vec<&AgentInfo> = capable.iter().copied().filter(|a| a.usable()).collect();
    if !usable.is_empty() {
        return Ok(usable);
    }
    if let Some(a) = capable.first()
        && let Some(why) = &a.untrusted_card
    {
        return Err(RouteError(format!(
            "agent {} advertises skill {skill:?} but is not trusted: {why}",
            a.card_url
        )));
    }
    if let Some(a) = capable.first() {
        return Err(RouteError(format!(
            "agent {} advertises skill {skill:?} but requires extension{} {} that this delegator \
             does not support",
            a.card_url,
            if a.unsupported_extensions.len() == 1 {
                ""
            } else {
                "s"
            },
            a.unsupported_extensions.join(", ")
        )));
    }
    Err(RouteError(format!(
        "no agent advertises skill {skill:?} with an output mode in {:?}",
        spec.mime_types
    )))
}

/// The first of [`route_candidates`].
pub fn route<'a>(
    agents: &'a [AgentInfo],
    skill: &str,
    spec: &ArtifactSpec,
    only: Option<&str>,
) -> Result<&'a AgentInfo, RouteError> {
    route_candidates(agents, skill, spec, only).map(|c| c[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn card_v1(skill: &str, modes: &[&str]) -> Value {
        json!({
            "name": "a", "description": "d", "version": "1",
            "supportedInterfaces": [
                {"url": "http://127.0.0.1:1/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
                {"url": "/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "t1"}
            ],
            "capabilities": {"streaming": true},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": modes,
            "skills": [{"id": skill, "name": "n", "description": "d", "tags": ["x"]}]
        })
    }

    #[test]
    fn v1_card_picks_jsonrpc_and_resolves_url() {
        let a = parse_card(
            "http://127.0.0.1:9/.well-known/agent-card.json",
            &card_v1("s", &["text/plain"]),
            &[Binding::JsonRpc],
        )
        .unwrap();
        assert_eq!(a.endpoint.url, "http://127.0.0.1:9/rpc");
        assert_eq!(a.endpoint.binding, Binding::JsonRpc);
        assert_eq!(a.endpoint.version, ProtocolVersion::V1_0);
        assert_eq!(a.endpoint.tenant.as_deref(), Some("t1"));
        assert!(a.streaming());
        assert!(!a.push());
    }

    #[test]
    fn v03_card_goes_through_the_adapter() {
        let v = json!({
            "name": "old", "description": "d", "version": "1", "url": "http://127.0.0.1:9/a2a",
            "protocolVersion": "0.3.0", "capabilities": {"streaming": false},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "n", "description": "d", "tags": ["x"]}]
        });
        let a = parse_card("http://127.0.0.1:9/.well-known/agent-card.json", &v, &[]).unwrap();
        assert_eq!(a.endpoint.version, ProtocolVersion::V0_3);
        assert_eq!(a.endpoint.url, "http://127.0.0.1:9/a2a");
    }

    #[test]
    fn bad_cards_name_the_problem() {
        let e = parse_card("http://x/", &json!([]), &[]).unwrap_err();
        assert!(e.message.contains("object"));
        let e = parse_card("http://x/", &json!({"name": "n"}), &[]).unwrap_err();
        assert!(e.message.contains("supportedInterfaces"));
        let mut c = card_v1("s", &["text/plain"]);
        c["supportedInterfaces"] = json!([{"url": "http://x", "protocolBinding":
            "https://example.com/soap", "protocolVersion": "1.0"}]);
        let e = parse_card("http://x/", &c, &[]).unwrap_err();
        assert!(e.message.contains("JSONRPC"), "{e}");
        let mut c = card_v1("s", &["text/plain"]);
        c["skills"] = json!("nope");
        let e = parse_card("http://x/", &c, &[]).unwrap_err();
        assert!(e.message.contains("skills"), "{e}");
    }

    fn iface(binding: &str, url: &str, version: &str) -> Value {
        json!({"url": url, "protocolBinding": binding, "protocolVersion": version})
    }

    fn select(ifaces: Vec<Value>, prefs: &[Binding]) -> Result<Endpoint, String> {
        let list: Vec<AgentInterface> = ifaces
            .into_iter()
            .map(|v| serde_json::from_value(v).unwrap())
            .collect();
        select_interfaces("http://h:1/.well-known/agent-card.json", &list, prefs)
    }

    fn order(ep: &Endpoint) -> Vec<(Binding, String)> {
        ep.candidates()
            .into_iter()
            .map(|c| (c.binding, c.url))
            .collect()
    }

    #[test]
    fn selection_follows_card_order_then_the_bindings_option() {
        let card = || {
            vec![
                iface("HTTP+JSON", "/rest/", "1.0"),
                iface("JSONRPC", "/rpc", "1.0"),
                iface("https://example.com/custom", "/c", "1.0"),
                iface("JSONRPC", "/old", "0.3"),
            ]
        };
        let ep = select(card(), &[]).unwrap();
        assert_eq!(
            order(&ep),
            vec![
                (Binding::Rest, "http://h:1/rest/".to_string()),
                (Binding::JsonRpc, "http://h:1/rpc".to_string()),
            ]
        );
        assert_eq!(ep.version, ProtocolVersion::V1_0);
        let ep = select(card(), &[Binding::JsonRpc, Binding::Rest]).unwrap();
        assert_eq!(ep.binding, Binding::JsonRpc);
        assert_eq!(ep.fallbacks.len(), 1);
        // The option also restricts: only JSON-RPC, no fallback.
        let ep = select(card(), &[Binding::JsonRpc]).unwrap();
        assert_eq!(
            order(&ep),
            vec![(Binding::JsonRpc, "http://h:1/rpc".to_string())]
        );
        // Never silently down to 0.3 while a 1.x interface is usable.
        let ep = select(card(), &[Binding::Rest]).unwrap();
        assert_eq!(ep.binding, Binding::Rest);
        assert!(ep.fallbacks.is_empty());
        // A 0.3-only card: its JSON-RPC interface, no fallbacks.
        let ep = select(
            vec![
                iface("HTTP+JSON", "/r", "0.3"),
                iface("JSONRPC", "/old", "0.3"),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(
            (ep.binding, ep.version),
            (Binding::JsonRpc, ProtocolVersion::V0_3)
        );
        assert!(ep.fallbacks.is_empty());
        // Restricted to a binding the card lacks: a visible error naming the restriction.
        let e = select(vec![iface("JSONRPC", "/rpc", "1.0")], &[Binding::Rest]).unwrap_err();
        assert!(e.contains("HTTP+JSON") && e.contains("bindings"), "{e}");
    }

    #[test]
    fn grpc_urls_are_normalized() {
        assert_eq!(
            grpc_target("127.0.0.1:50051").unwrap(),
            "http://127.0.0.1:50051"
        );
        assert_eq!(grpc_target("localhost:7").unwrap(), "http://localhost:7");
        assert_eq!(
            grpc_target("https://a.example/a2a/grpc").unwrap(),
            "https://a.example/a2a/grpc"
        );
        assert!(grpc_target("ftp://x:1").is_err());
        assert!(grpc_target("").is_err());
    }

    #[test]
    fn routing_by_skill_and_output_mode() {
        let a = parse_card("http://a/", &card_v1("s", &["image/png"]), &[]).unwrap();
        let b = parse_card("http://b/", &card_v1("s", &["text/plain"]), &[]).unwrap();
        let agents = vec![a, b];
        let mut spec = ArtifactSpec {
            mime_types: vec!["text/*".into()],
            ..Default::default()
        };
        assert_eq!(
            route(&agents, "s", &spec, None).unwrap().card_url,
            "http://b/"
        );
        assert!(route(&agents, "other", &spec, None).is_err());
        assert!(route(&agents, "s", &spec, Some("http://a/")).is_err());
        spec.mime_types = vec!["*/*".into()];
        assert_eq!(
            route(&agents, "s", &spec, None).unwrap().card_url,
            "http://a/"
        );
    }

    fn headers(pairs: &[(&str, &str)]) -> reqwest::header::HeaderMap {
        let mut h = reqwest::header::HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                reqwest::header::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    #[test]
    fn card_freshness_follows_rfc_9111() {
        let now = Instant::now();
        let c = CardCache::from_headers(
            &headers(&[
                ("cache-control", "public, max-age=60"),
                ("age", "10"),
                ("etag", "\"v1\""),
                ("last-modified", "Sun, 06 Nov 1994 08:49:37 GMT"),
            ]),
            now,
            None,
        );
        assert_eq!(c.lifetime, Duration::from_secs(50));
        assert!(c.is_fresh(now + Duration::from_secs(49)));
        assert!(!c.is_fresh(now + Duration::from_secs(50)));
        assert_eq!(
            c.conditional_headers(),
            vec![
                ("If-None-Match", "\"v1\"".to_string()),
                (
                    "If-Modified-Since",
                    "Sun, 06 Nov 1994 08:49:37 GMT".to_string()
                )
            ]
        );
        // No caching headers: the default duration.
        let d = CardCache::from_headers(&headers(&[]), now, None);
        assert_eq!(d.lifetime, DEFAULT_CARD_MAX_AGE);
        assert!(d.conditional_headers().is_empty());
        // no-cache: kept, but revalidated before every use; no-store: never reused.
        let nc = CardCache::from_headers(
            &headers(&[
                ("cache-control", "no-cache, max-age=600"),
                ("etag", "\"x\""),
            ]),
            now,
            None,
        );
        assert!(!nc.is_fresh(now));
        assert_eq!(nc.conditional_headers().len(), 1);
        let ns = CardCache::from_headers(
            &headers(&[("cache-control", "no-store"), ("etag", "\"x\"")]),
            now,
            None,
        );
        assert!(!ns.is_fresh(now));
        assert!(ns.conditional_headers().is_empty());
        // Expires relative to Date; an invalid Expires is already stale.
        let e = CardCache::from_headers(
            &headers(&[
                ("date", "Sun, 06 Nov 1994 08:49:37 GMT"),
                ("expires", "Sun, 06 Nov 1994 08:50:37 GMT"),
            ]),
            now,
            None,
        );
        assert_eq!(e.lifetime, Duration::from_secs(60));
        let bad = CardCache::from_headers(&headers(&[("expires", "0")]), now, None);
        assert!(!bad.is_fresh(now));
        // A 304 without freshness headers keeps the entry's lifetime and validators, fresh
        // from now.
        let later = now + Duration::from_secs(100);
        let r = CardCache::from_headers(&headers(&[]), later, Some(&c));
        assert_eq!((r.lifetime, r.fetched), (c.lifetime, later));
        assert_eq!(r.etag, c.etag);
        let r = CardCache::from_headers(
            &headers(&[("cache-control", "max-age=5"), ("etag", "\"v2\"")]),
            later,
            Some(&c),
        );
        assert_eq!(r.lifetime, Duration::from_secs(5));
        assert_eq!(r.etag.as_deref(), Some("\"v2\""));
    }

    fn secured(schemes: Value, requirements: Value) -> AgentCard {
        let mut v = card_v1("s", &["text/plain"]);
        v["securitySchemes"] = schemes;
        v["securityRequirements"] = requirements;
        a2a_protocol::codec::decode_value(&v).unwrap()
    }

    #[test]
    fn credentials_fit_only_declared_schemes() {
        let bearer = json!({"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}});
        let card = secured(
            bearer.clone(),
            json!([{"schemes": {"bearer": {"list": []}}}]),
        );
        assert!(credential_fits_card(&card, "Bearer abc"));
        assert!(credential_fits_card(&card, "bearer abc"));
        assert!(!credential_fits_card(&card, "Basic dXNlcjpwdw=="));
        assert!(credential_meets_requirements(&card, "Bearer abc"));
        // Declared but not required for every call.
        let card = secured(bearer, json!([]));
        assert!(credential_fits_card(&card, "Bearer abc"));
        assert!(!credential_meets_requirements(&card, "Bearer abc"));
        // A requirement naming an undeclared scheme cannot be met.
        let card = secured(
            json!({"basic": {"httpAuthSecurityScheme": {"scheme": "Basic"}}}),
            json!([{"schemes": {"oauth": {"list": ["read"]}}}]),
        );
        assert!(credential_fits_card(&card, "Basic dXNlcjpwdw=="));
        assert!(!credential_meets_requirements(&card, "Basic dXNlcjpwdw=="));
        let card = secured(
            json!({"o": {"oauth2SecurityScheme": {"flows": {"clientCredentials":
                {"tokenUrl": "https://t", "scopes": {}}}}}}),
            json!([{"schemes": {"o": {"list": []}}}]),
        );
        assert!(credential_meets_requirements(&card, "Bearer t"));
        assert!(!credential_fits_card(&card, "Basic x"));
        // No schemes at all: nothing fits.
        assert!(!credential_fits_card(
            &secured(json!({}), json!([])),
            "Bearer abc"
        ));
    }

    #[test]
    fn required_extensions_decide_use_and_activation() {
        let mut v = card_v1("s", &["text/plain"]);
        v["capabilities"]["extensions"] = json!([
            {"uri": "urn:a", "required": true},
            {"uri": "urn:opt"},
            {"uri": "urn:b", "required": true}
        ]);
        let a = parse_card("http://a/", &v, &[]).unwrap();
        assert_eq!(a.unsupported_extensions, ["urn:a", "urn:b"]);
        assert!(!a.usable());
        let a = a.with_supported_extensions(&["urn:b".into(), "urn:opt".into(), "urn:a".into()]);
        assert!(a.usable());
        assert_eq!(a.endpoint.extensions, ["urn:a", "urn:b"]);
        assert!(
            a.endpoint
                .fallbacks
                .iter()
                .all(|f| f.extensions == ["urn:a", "urn:b"])
        );
        assert_eq!(
            a.endpoint.extensions_header().as_deref(),
            Some("urn:a,urn:b")
        );
        let spec = ArtifactSpec {
            mime_types: vec!["text/plain".into()],
            ..Default::default()
        };
        let picky = parse_card("http://picky/", &v, &[])
            .unwrap()
            .with_supported_extensions(&["urn:a".into()]);
        let e = route(std::slice::from_ref(&picky), "s", &spec, None).unwrap_err();
        assert!(
            e.0.contains("urn:b") && e.0.contains("http://picky/"),
            "{e}"
        );
        assert_eq!(
            route(&[picky, a], "s", &spec, None).unwrap().card_url,
            "http://a/"
        );
    }

    #[test]
    fn the_extended_card_replaces_skills_and_interfaces() {
        let public =
            parse_card("http://127.0.0.1:9/c", &card_v1("s", &["text/plain"]), &[]).unwrap();
        let mut ext = card_v1("s", &["text/plain"]);
        ext["skills"] = json!([{"id": "premium", "name": "n", "description": "d", "tags": ["x"]}]);
        ext["supportedInterfaces"] = json!([
            {"url": "/premium", "protocolBinding": "JSONRPC", "protocolVersion": "1.0",
             "tenant": "vip"}
        ]);
        let ext = parse_card("http://127.0.0.1:9/c", &ext, &[]).unwrap();
        let spec = ArtifactSpec {
            mime_types: vec!["text/plain".into()],
            ..Default::default()
        };
        let mut with = public.clone();
        with.credential_on_every_request = true;
        let with = with.with_extended_card(ext, &[]);
        assert!(with.extended && with.credential_on_every_request);
        assert!(with.can_do("premium", &spec) && !public.can_do("premium", &spec));
        assert_eq!(with.endpoint.url, "http://127.0.0.1:9/premium");
        assert_eq!(with.endpoint.tenant.as_deref(), Some("vip"));
        assert_eq!(with.public_card, public.card);
    }

    #[test]
    fn a_patch_version_is_version_1_0() {
        let ep = select(vec![iface("JSONRPC", "/rpc", "1.0.3")], &[]).unwrap();
        assert_eq!(ep.version, ProtocolVersion::V1_0);
        assert_eq!(ep.version.header_value(), "1.0");
    }
}
