//! Reading an agent card ([`parse_card`]) into what the delegator knows about the agent
//! ([`AgentInfo`]): the interfaces to call ([`select_interfaces`]), the extensions it requires,
//! whether a credential fits its security schemes.

use super::*;

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
