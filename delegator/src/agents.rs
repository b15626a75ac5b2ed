//! Agent discovery and routing: read agent cards leniently, pick the JSON-RPC interface, and choose
//! an agent for a delegation by skill and output modes.
//!
//! A 1.0 card has `supportedInterfaces`; a 0.3 card (top-level `url`, `protocolVersion` 0.3) is
//! translated with [`a2a_protocol::compat03::to_v1`] first. The first `JSONRPC` interface whose
//! version is 1.x is preferred, else the first 0.x one (spoken to through the 0.3 adapter).

use crate::client::Endpoint;
use crate::request::{ArtifactSpec, media_type_accepted};
use a2a_protocol::compat03::{self, ObjectKind};
use a2a_protocol::version::ProtocolVersion;
use a2a_protocol::{AgentCard, BINDING_JSONRPC};
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
    /// The chosen JSON-RPC endpoint.
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

/// Turn a card document into an [`AgentInfo`]. `card_url` resolves relative interface URLs.
pub fn parse_card(card_url: &str, v: &Value) -> Result<AgentInfo, CardError> {
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
    let jsonrpc: Vec<_> = card
        .supported_interfaces
        .iter()
        .filter(|i| i.protocol_binding.eq_ignore_ascii_case(BINDING_JSONRPC))
        .collect();
    let major = |s: &str| s.trim().split('.').next().unwrap_or_default().to_string();
    let chosen = jsonrpc
        .iter()
        .find(|i| major(&i.protocol_version) == "1")
        .map(|i| (*i, ProtocolVersion::V1_0))
        .or_else(|| {
            jsonrpc
                .iter()
                .find(|i| major(&i.protocol_version) == "0")
                .map(|i| (*i, ProtocolVersion::V0_3))
        })
        .or_else(|| jsonrpc.first().map(|i| (*i, ProtocolVersion::V1_0)))
        .ok_or_else(|| fail("no JSONRPC interface in supportedInterfaces".into()))?;
    let base = reqwest::Url::parse(card_url).map_err(|e| fail(format!("bad card URL: {e}")))?;
    let url = base
        .join(&chosen.0.url)
        .map_err(|e| fail(format!("bad interface url {:?}: {e}", chosen.0.url)))?;
    if card.skills.is_empty() {
        return Err(fail("no skills".into()));
    }
    Ok(AgentInfo {
        card_url: card_url.to_string(),
        endpoint: Endpoint {
            url: url.to_string(),
            version: chosen.1,
            tenant: chosen.0.tenant.clone().filter(|t| !t.is_empty()),
        },
        card,
    })
}

/// Fetch and parse a card (body limited to 1 MiB, `timeout` for the whole fetch).
pub async fn fetch_card(
    http: &reqwest::Client,
    card_url: &str,
    timeout: Duration,
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
        parse_card(card_url, &v)
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
        )
        .unwrap();
        assert_eq!(a.endpoint.url, "http://127.0.0.1:9/rpc");
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
        let a = parse_card("http://127.0.0.1:9/.well-known/agent-card.json", &v).unwrap();
        assert_eq!(a.endpoint.version, ProtocolVersion::V0_3);
        assert_eq!(a.endpoint.url, "http://127.0.0.1:9/a2a");
    }

    #[test]
    fn bad_cards_name_the_problem() {
        let e = parse_card("http://x/", &json!([])).unwrap_err();
        assert!(e.message.contains("object"));
        let e = parse_card("http://x/", &json!({"name": "n"})).unwrap_err();
        assert!(e.message.contains("supportedInterfaces"));
        let mut c = card_v1("s", &["text/plain"]);
        c["supportedInterfaces"] =
            json!([{"url": "http://x", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]);
        let e = parse_card("http://x/", &c).unwrap_err();
        assert!(e.message.contains("JSONRPC"));
        let mut c = card_v1("s", &["text/plain"]);
        c["skills"] = json!("nope");
        let e = parse_card("http://x/", &c).unwrap_err();
        assert!(e.message.contains("skills"), "{e}");
    }

    #[test]
    fn routing_by_skill_and_output_mode() {
        let a = parse_card("http://a/", &card_v1("s", &["image/png"])).unwrap();
        let b = parse_card("http://b/", &card_v1("s", &["text/plain"])).unwrap();
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
