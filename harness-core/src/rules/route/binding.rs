//! DLG-ROUTE-* on the protocol binding: only advertised bindings, the first supported
//! interface in card order, visible failure or fallback to another binding, the interface's
//! URL and tenant.

use super::*;

/// An A2A request of the delegator to an agent (not a card or blob fetch, not one mock agent
/// delegating to another), on any binding, routed or not: (seq, agent, binding).
fn a2a_requests<'a>(ev: &Evidence<'a>) -> Vec<(u64, &'a str, Binding)> {
    ev.journal
        .iter()
        .filter_map(|e| match &e.event {
            Event::Request {
                binding,
                path,
                http_method,
                headers,
                ..
            } if !(http_method == "GET"
                && (path.split('?').next() == Some(a2a_protocol::AGENT_CARD_PATH)
                    || path.starts_with("/blobs/")))
                && !headers.contains_key(a2a_mock_agents::MOCK_PEER_HEADER) =>
            {
                Some((e.seq, e.agent.as_str(), *binding))
            }
            _ => None,
        })
        .collect()
}

/// The bindings an agent serves and the ones its card lists, in order.
fn agent_bindings(ev: &Evidence, agent: &str) -> Option<(Vec<Binding>, Vec<Binding>)> {
    let spec = agent_spec(ev, agent)?;
    let default = ev.scenario.network.default_bindings.as_deref();
    Some((spec.served_bindings(default), spec.advertised(default)))
}

/// The bindings the delegator says it speaks (`binding:*` in `init_ok.supports`), JSON-RPC
/// when it names none.
fn delegator_bindings(ev: &Evidence) -> Vec<Binding> {
    let declared: Vec<Binding> = ev
        .messages
        .iter()
        .find_map(|m| match m {
            FromDelegator::InitOk(i) => Some(
                i.supports
                    .iter()
                    .filter_map(|s| s.strip_prefix("binding:"))
                    .filter_map(|b| b.parse().ok())
                    .collect(),
            ),
            _ => None,
        })
        .unwrap_or_default();
    if declared.is_empty() {
        vec![Binding::JsonRpc]
    } else {
        declared
    }
}

pub(in crate::rules) fn only_advertised_bindings(ev: &Evidence) -> Check {
    let mut any = false;
    for (seq, agent, binding) in a2a_requests(ev) {
        let Some((_, advertised)) = agent_bindings(ev, agent) else {
            continue;
        };
        any = true;
        if !advertised.contains(&binding) {
            return fail(
                format!(
                    "requests to {agent} only over its advertised bindings {}",
                    list(&advertised)
                ),
                format!("a request over {binding}"),
                vec![seq],
            );
        }
    }
    Check::held_if_seen(any)
}

/// The `init_ok.supports` feature list of the delegator (empty before any `init_ok`).
fn delegator_supports<'a>(ev: &Evidence<'a>) -> &'a [String] {
    ev.messages
        .iter()
        .find_map(|m| match m {
            FromDelegator::InitOk(i) => Some(i.supports.as_slice()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The interfaces of `agent`'s card in card order: (binding, protocolVersion). Every interface
/// of a mock card carries the agent's one protocol version.
fn card_interfaces(ev: &Evidence, agent: &str) -> Option<Vec<(Binding, String)>> {
    let spec = agent_spec(ev, agent)?;
    let (_, advertised) = agent_bindings(ev, agent)?;
    let version = spec.protocol.header_value().to_string();
    Some(
        advertised
            .into_iter()
            .map(|b| (b, version.clone()))
            .collect(),
    )
}

/// Whether the delegator supports protocol version `version` of an interface: every 1.x
/// version (a patch number changes nothing, spec §3.6), a 0.x one only when `init_ok.supports`
/// lists `a2a_0_3` (the contract's feature name for speaking 0.3 through an adapter).
pub(super) fn version_supported(ev: &Evidence, version: &str) -> bool {
    match version.trim().split('.').next() {
        Some("1") => true,
        Some("0") => delegator_supports(ev).iter().any(|s| s == "a2a_0_3"),
        _ => false,
    }
}

/// DLG-ROUTE-05 (spec §8.3.2 (1, 2), MUST): the first request to an agent goes over the first
/// interface in card order whose binding and protocol version the delegator supports. Judged
/// where the card offers the delegator a choice (two supported interfaces or more).
pub(in crate::rules) fn first_supported_interface(ev: &Evidence) -> Check {
    let speaks = delegator_bindings(ev);
    let mut any = false;
    let mut one_choice = None;
    let mut seen = std::collections::BTreeSet::new();
    for (seq, agent, binding) in a2a_requests(ev) {
        if !seen.insert(agent) {
            continue;
        }
        let Some(interfaces) = card_interfaces(ev, agent) else {
            continue;
        };
        let advertised: Vec<Binding> = interfaces.iter().map(|(b, _)| *b).collect();
        let supported: Vec<Binding> = interfaces
            .iter()
            .filter(|(b, v)| speaks.contains(b) && version_supported(ev, v))
            .map(|(b, _)| *b)
            .collect();
        let Some(expected) = supported.first() else {
            continue;
        };
        if advertised.len() < 2 {
            continue;
        }
        // A card with a choice, but the delegator supports only one of its interfaces.
        if supported.len() < 2 {
            one_choice = Some(format!(
                "the delegator supports only {expected} of {agent}'s {}",
                list(&advertised)
            ));
            continue;
        }
        any = true;
        if binding != *expected {
            return fail(
                format!(
                    "the first request to {agent} over {expected}: first of its card's {} whose binding and version the delegator supports ({})",
                    list(&advertised),
                    list(&speaks)
                ),
                format!("it went over {binding}"),
                vec![seq],
            );
        }
    }
    match one_choice {
        Some(why) if !any => Check::NotExercised { why },
        _ => Check::held_if_seen(any),
    }
}

pub(in crate::rules) fn failed_binding_falls_back_or_fails_visibly(ev: &Evidence) -> Check {
    // Requests over a binding the agent advertises but does not serve.
    let failed: Vec<(u64, &str, Binding)> = a2a_requests(ev)
        .into_iter()
        .filter(|(_, agent, b)| {
            agent_bindings(ev, agent)
                .is_some_and(|(served, advertised)| advertised.contains(b) && !served.contains(b))
        })
        .collect();
    let Some(&(first_seq, agent, binding)) = failed.first() else {
        return Check::NotExercised {
            why: "no request went over an advertised binding the agent does not serve".into(),
        };
    };
    for d in &ev.scenario.delegations {
        if ev.outcomes.contains_key(&d.id) {
            continue;
        }
        return fail(
            format!(
                "after {binding} failed at {agent}, a fallback to another advertised binding or a visible end of delegation {}",
                d.id
            ),
            "the delegation never ended",
            vec![first_seq],
        );
    }
    Check::Pass
}

/// DLG-ROUTE-07 (spec §8.3.2 (3, 4), MUST): every A2A request goes to the URL of an interface the
/// agent advertised for its binding (JSON-RPC: the `/a2a` endpoint; HTTP+JSON: under `/rest`; a
/// gRPC interface is a host and port, which the journal's agent is) and carries that interface's
/// tenant exactly, where the binding puts it (JSON-RPC `params.tenant`, the gRPC request's
/// `tenant`, the HTTP+JSON `/{tenant}` path prefix), none when it has none. Any interface the
/// agent advertised counts: every public card version so far and, once the delegator obtained
/// it, the extended card's. Requests over a binding the card does not advertise are
/// DLG-ROUTE-04's.
pub(in crate::rules) fn interface_url_and_tenant(ev: &Evidence) -> Check {
    let mut any = false;
    for h in delegator_http(ev.journal).into_iter().filter(Http::is_a2a) {
        let Some(a) = agent_spec(ev, h.agent) else {
            continue;
        };
        let Some((_, advertised)) = agent_bindings(ev, h.agent) else {
            continue;
        };
        if !advertised.contains(&h.binding) {
            continue;
        }
        any = true;
        let (url_ok, endpoint) = match h.binding {
            Binding::JsonRpc => {
                let t = h.target();
                (
                    t == a2a_mock_agents::RPC_PATH
                        || t.strip_suffix('/') == Some(a2a_mock_agents::RPC_PATH),
                    a2a_mock_agents::RPC_PATH.to_string(),
                )
            }
            Binding::Rest => (
                h.rest_sub_path().is_some(),
                format!("{}/…", a2a_mock_agents::REST_PATH),
            ),
            Binding::Grpc => (true, String::new()),
        };
        if !url_ok {
            return fail(
                format!(
                    "requests to {} over {} at its interface's URL (path {endpoint})",
                    h.agent, h.binding
                ),
                format!("{} {}", h.http_method, h.target()),
                vec![h.seq],
            );
        }
        let sent = h.tenant();
        let ok = advertised_tenants(ev, a, h.seq, h.at_us);
        if !ok.contains(&sent) {
            let shown: Vec<String> = ok.iter().map(|t| shown_tenant(t.as_deref())).collect();
            return fail(
                format!(
                    "the tenant of an interface {} advertised: {}",
                    h.agent,
                    shown.join(" or ")
                ),
                format!(
                    "{} with {} over {}",
                    h.what(),
                    shown_tenant(sent.as_deref()),
                    h.binding
                ),
                vec![h.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

/// DLG-ROUTE-08 (spec §5.2, SHOULD): after a request over a binding the agent advertises but
/// fails on at the transport level (the mock's advertised-but-unserved binding), the delegator
/// sends a later request to that agent over another binding the card advertises and the
/// delegator speaks. NOT EXERCISED when it never met the failure, or speaks no other advertised
/// binding.
pub(in crate::rules) fn falls_back_to_another_binding(ev: &Evidence) -> Check {
    let speaks = delegator_bindings(ev);
    let reqs = a2a_requests(ev);
    let mut any = false;
    let mut why = None;
    let mut judged = std::collections::BTreeSet::new();
    for &(seq, agent, binding) in &reqs {
        let Some((served, advertised)) = agent_bindings(ev, agent) else {
            continue;
        };
        if !advertised.contains(&binding) || served.contains(&binding) || !judged.insert(agent) {
            continue;
        }
        let others: Vec<Binding> = advertised
            .iter()
            .copied()
            .filter(|b| *b != binding && speaks.contains(b))
            .collect();
        if others.is_empty() {
            why = Some(format!(
                "{binding} failed at {agent}, whose card lists no other binding the delegator speaks ({})",
                list(&speaks)
            ));
            continue;
        }
        any = true;
        let fell_back = reqs
            .iter()
            .any(|(s, a, b)| *s > seq && *a == agent && others.contains(b));
        if !fell_back {
            return fail(
                format!(
                    "after {binding} failed at {agent}, a fallback to {} (advertised, spoken by the delegator)",
                    list(&others)
                ),
                "no later request to it over another binding",
                vec![seq],
            );
        }
    }
    match why {
        Some(why) if !any => Check::NotExercised { why },
        _ if !any => Check::NotExercised {
            why: "no request went over an advertised binding the agent does not serve".into(),
        },
        _ => Check::Pass,
    }
}

pub(super) fn list(bindings: &[Binding]) -> String {
    let names: Vec<&str> = bindings.iter().map(|b| b.short_name()).collect();
    format!("[{}]", names.join(", "))
}
