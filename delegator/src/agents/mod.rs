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

//!
//! Files: `card` (reading a card: interfaces, extensions, credentials), `cache` (fetching
//! and caching cards); routing is here.

mod cache;
mod card;
#[cfg(test)]
mod tests;

pub use cache::*;
pub use card::*;

use crate::client::{Endpoint, SUPPORTED_BINDINGS};
use crate::request::{ArtifactSpec, media_type_accepted};
use a2a_protocol::compat03::{self, ObjectKind};
use a2a_protocol::version::ProtocolVersion;
use a2a_protocol::{AgentCard, AgentInterface, Binding, SecurityScheme};
use serde_json::Value;
use std::borrow::Borrow;
use std::time::{Duration, Instant};

/// Routing failed: why no agent fits.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("no capable agent: {0}")]
pub struct RouteError(pub String);

/// The agents (in configuration order) that advertise `skill` with an accepted output mode and
/// may be used (no required extension this delegator lacks); when `only` is given, that agent
/// must be the one. The error says why none fits, naming the extensions that excluded a capable
/// agent.
pub fn route_candidates<'a, A: Borrow<AgentInfo>>(
    agents: &'a [A],
    skill: &str,
    spec: &ArtifactSpec,
    only: Option<&str>,
) -> Result<Vec<&'a A>, RouteError> {
    fn info<A: Borrow<AgentInfo>>(a: &A) -> &AgentInfo {
        a.borrow()
    }
    let candidates: Vec<&A> = agents
        .iter()
        .filter(|a| only.is_none_or(|o| info(*a).card_url == o))
        .collect();
    if candidates.is_empty() {
        return Err(RouteError(match only {
            Some(o) => format!("agent {o} is not known (or its card could not be read)"),
            None => "no agent card could be read".to_string(),
        }));
    }
    let capable: Vec<&A> = candidates
        .into_iter()
        .filter(|a| info(*a).can_do(skill, spec))
        .collect();
    let usable: Vec<&A> = capable
        .iter()
        .copied()
        .filter(|a| info(*a).usable())
        .collect();
    if !usable.is_empty() {
        return Ok(usable);
    }
    let capable: Vec<&AgentInfo> = capable.into_iter().map(|a| info(a)).collect();
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
pub fn route<'a, A: Borrow<AgentInfo>>(
    agents: &'a [A],
    skill: &str,
    spec: &ArtifactSpec,
    only: Option<&str>,
) -> Result<&'a A, RouteError> {
    route_candidates(agents, skill, spec, only).map(|c| c[0])
}
