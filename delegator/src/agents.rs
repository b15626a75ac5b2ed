//! Agent discovery and routing: read agent cards leniently, choose the interfaces to call, and
//! choose an agent for a delegation by skill and output modes.
//!
//! A 1.0 card has `supportedInterfaces`; a 0.3 card (top-level `url`, `protocolVersion` 0.3) is
//! translated with [`a2a_protocol::compat03::to_v1`] first.
//!
//! **Interface selection** ([`select_interfaces`]): the candidates are the interfaces whose
//! `protocolBinding` this client speaks ([`SUPPORTED_BINDINGS`]) and, when the `bindings` option
//! is given, that it names. Among them the 1.x interfaces are used, in card order (specification
//! §8.3.2: the first entry whose binding and version the client supports), or, with the
//! `bindings` option, in the order of that list (card order among equals). The first is called;
//! the others are its fallbacks ([`Endpoint::fallbacks`]). Only when the card has no usable 1.x
//! interface is a 0.x `JSONRPC` one used (through the 0.3 adapter, without fallbacks): a 1.0
//! agent is never spoken to as 0.3 silently. Interfaces with an unrecognized version come last,
//! taken as 1.0.

use crate::client::{Endpoint, SUPPORTED_BINDINGS};
use crate::request::{ArtifactSpec, media_type_accepted};
use a2a_protocol::compat03::{self, ObjectKind};
use a2a_protocol::version::ProtocolVersion;
use a2a_protocol::{AgentCard, AgentInterface, Binding};
use serde_json::Value;
use std::time::Duration;

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
    /// The parsed (1.0-form) card.
    pub card: AgentCard,
    /// The chosen interface, with the others to fall back to.
    pub endpoint: Endpoint,
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
}

/// Turn a card document into an [`AgentInfo`]. `card_url` resolves relative interface URLs;
/// `prefs` is the `bindings` option (empty: every supported binding, in card order).
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
    Ok(AgentInfo {
        card_url: card_url.to_string(),
        endpoint,
        card,
    })
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

/// Fetch and parse a card (body limited to 1 MiB, `timeout` for the whole fetch; `prefs` as
/// for [`parse_card`]).
pub async fn fetch_card(
    http: &reqwest::Client,
    card_url: &str,
    timeout: Duration,
    prefs: &[Binding],
) -> Result<AgentInfo, CardError> {
    let fail = |message: String| CardError {
        url: card_url.to_string(),
        message,
    };
    let fetch = async {
        let mut resp = http
            .get(card_url)
            .header("Accept", "application/json")
            .send()
            .await
            .map_err(|e| fail(e.to_string()))?;
        if !resp.status().is_success() {
            return Err(fail(format!("HTTP {}", resp.status().as_u16())));
        }
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| fail(e.to_string()))? {
            if body.len() + chunk.len() > 1024 * 1024 {
                return Err(fail("card larger than 1 MiB".into()));
            }
            body.extend_from_slice(&chunk);
        }
        let v: Value = serde_json::from_slice(&body).map_err(|e| fail(format!("not JSON: {e}")))?;
        parse_card(card_url, &v, prefs)
    };
    tokio::time::timeout(timeout, fetch)
        .await
        .map_err(|_| fail(format!("no card within {} s", timeout.as_secs())))?
}

/// Routing failed: why no agent fits.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("no capable agent: {0}")]
pub struct RouteError(pub String);

/// Choose the first agent (in configuration order) that advertises `skill` with an accepted
/// output mode; when `only` is given, that agent must be the one.
pub fn route<'a>(
    agents: &'a [AgentInfo],
    skill: &str,
    spec: &ArtifactSpec,
    only: Option<&str>,
) -> Result<&'a AgentInfo, RouteError> {
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
    candidates
        .iter()
        .find(|a| a.can_do(skill, spec))
        .copied()
        .ok_or_else(|| {
            RouteError(format!(
                "no agent advertises skill {skill:?} with an output mode in {:?}",
                spec.mime_types
            ))
        })
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
}
