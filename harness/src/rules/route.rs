//! Routing (DLG-ROUTE-*): capable agents, streaming choice, 0.3 agents spoken to in 0.3, and
//! the protocol binding chosen from the card (advertised only, card order, fallback).

use super::evidence::*;
use super::front::*;
use super::registry::{Check, fail};
use a2a_driver_contract::FromDelegator;
use a2a_mock_agents::Event;
use a2a_protocol::{Binding, Method};

/// Whether the delegator is entitled to `agent`'s extended card: the card declares
/// `capabilities.extendedAgentCard` (the mock declares it when the agent has extended skills or
/// an extended tenant) and the delegator can authenticate the GetExtendedAgentCard call: the
/// card declares no security scheme guarding it, or the harness gave the delegator the agent's
/// credential (`init.agent_credentials`, [`crate::scenario::Scenario::agent_credentials`]).
pub(super) fn entitled_to_extended_card(ev: &Evidence, agent: &a2a_mock_agents::AgentSpec) -> bool {
    has_extended_card(agent)
        && (agent.security.is_none()
            || ev
                .scenario
                .agent_credentials()
                .any(|(name, _)| name == agent.name))
}

/// Whether the delegator held `agent`'s extended card before journal entry `before`: entitled
/// to it ([`entitled_to_extended_card`]) and a GetExtendedAgentCard call to that agent answered
/// without an error earlier (in this process life or a previous one). A delegator learns an
/// extended skill only from that card: sending work there without it is no informed routing.
fn extended_card_held(ev: &Evidence, agent: &a2a_mock_agents::AgentSpec, before: u64) -> bool {
    entitled_to_extended_card(ev, agent)
        && extended_card_obtained(ev, &agent.name)
            .iter()
            .any(|s| *s < before)
}

/// DLG-ROUTE-01: work goes only to an agent whose card advertises the capability (a skill of
/// that id) with an output mode the request accepts. The skills of the extended card count when
/// the delegator is entitled to it and had obtained it before the send.
pub(super) fn routed_to_capable_agent(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let Some(d) = (r.is_new_send()).then(|| delegation_of(ev, &r)).flatten() else {
            continue;
        };
        let Some(a) = agent_spec(ev, r.agent) else {
            continue;
        };
        any = true;
        let skill = a.skills.iter().find(|s| s.id == d.capability).or_else(|| {
            extended_card_held(ev, a, r.seq)
                .then(|| a.extended_skills.iter().find(|s| s.id == d.capability))
                .flatten()
        });
        let Some(skill) = skill else {
            let only_extended = a.extended_skills.iter().any(|s| s.id == d.capability);
            return fail(
                format!("only agents with skill {}", d.capability),
                if only_extended && entitled_to_extended_card(ev, a) {
                    format!(
                        "sent to {}, whose public card lacks it, before its extended card (which has it) was obtained",
                        r.agent
                    )
                } else {
                    format!("sent to {} which lacks it", r.agent)
                },
                vec![r.seq],
            );
        };
        let modes: Vec<String> = if !skill.output_modes.is_empty() {
            skill.output_modes.clone()
        } else if !a.output_modes.is_empty() {
            a.output_modes.clone()
        } else {
            vec![
                "text/plain".into(),
                "application/json".into(),
                "application/octet-stream".into(),
            ]
        };
        if !modes
            .iter()
            .any(|m| d.mime_types.iter().any(|a| media_type_accepts(a, m)))
        {
            return fail(
                "an agent with an accepted output mode",
                format!("{} produces only {}", r.agent, super::words::list(&modes)),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

/// True when the accepted media type `accepted` (which may be `type/*` or `*/*`) covers the
/// agent's output mode `mode` (compared without parameters, case-insensitively).
pub(super) fn media_type_accepts(accepted: &str, mode: &str) -> bool {
    let bare = |s: &str| {
        s.split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase()
    };
    let (a, m) = (bare(accepted), bare(mode));
    if a == "*/*" || a == m {
        return true;
    }
    match (a.split_once('/'), m.split_once('/')) {
        (Some((at, "*")), Some((mt, _))) => at == mt,
        _ => false,
    }
}

/// JSON-RPC errors by which an agent refuses streaming: method not found (-32601) and
/// unsupported operation (-32004).
const STREAMING_REFUSED: [i64; 2] = [-32601, -32004];

/// DLG-ROUTE-02: streaming exactly when the card declares it and the request prefers it. Once
/// the agent refused a stream of the delegation (-32601 or -32004, whatever its card says),
/// falling back to SendMessage for that delegation is correct, not a routing slip.
pub(super) fn streaming_when_declared_and_preferred(ev: &Evidence) -> Check {
    let mut any = false;
    let reqs = requests(ev.journal);
    for r in &reqs {
        let Some(d) = (r.is_new_send()).then(|| delegation_of(ev, r)).flatten() else {
            continue;
        };
        let Some(a) = agent_spec(ev, r.agent) else {
            continue;
        };
        any = true;
        let streamed = r.calls(&[Method::SendStreamingMessage]);
        let refused = reqs.iter().any(|q| {
            q.seq < r.seq
                && q.agent == r.agent
                && q.calls(&[Method::SendStreamingMessage])
                && delegation_of(ev, q).is_some_and(|x| x.id == d.id)
                && response_of(ev.journal, q.req).is_some_and(|e| {
                    matches!(&e.event, Event::Response { rpc_error: Some(c), .. } if STREAMING_REFUSED.contains(c))
                })
        });
        let want = a.streaming && d.streaming_preferred;
        if streamed != want && !refused {
            return fail(
                format!(
                    "streaming = {want} (card {}, preferred {})",
                    a.streaming, d.streaming_preferred
                ),
                format!("{} used", r.method),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

pub(super) fn v03_agents_spoken_to_in_v03(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let Some(a) = agent_spec(ev, r.agent) else {
            continue;
        };
        if a.protocol != a2a_mock_agents::script::ProtocolVersion::V0_3 {
            continue;
        }
        any = true;
        if a2a_protocol::compat03::method_to_v1(r.method).is_none() {
            return fail(
                "0.3 method names to a 0.3 agent",
                format!("{:?}", r.method),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

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

pub(super) fn only_advertised_bindings(ev: &Evidence) -> Check {
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
fn version_supported(ev: &Evidence, version: &str) -> bool {
    match version.trim().split('.').next() {
        Some("1") => true,
        Some("0") => delegator_supports(ev).iter().any(|s| s == "a2a_0_3"),
        _ => false,
    }
}

/// DLG-ROUTE-05 (spec §8.3.2 (1, 2), MUST): the first request to an agent goes over the first
/// interface in card order whose binding and protocol version the delegator supports. Judged
/// where the card offers the delegator a choice (two supported interfaces or more).
pub(super) fn first_supported_interface(ev: &Evidence) -> Check {
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

pub(super) fn failed_binding_falls_back_or_fails_visibly(ev: &Evidence) -> Check {
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
pub(super) fn interface_url_and_tenant(ev: &Evidence) -> Check {
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
pub(super) fn falls_back_to_another_binding(ev: &Evidence) -> Check {
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

/// The push-config methods (the `pushNotifications` capability).
const PUSH_METHODS: [Method; 4] = [
    Method::CreateTaskPushNotificationConfig,
    Method::GetTaskPushNotificationConfig,
    Method::ListTaskPushNotificationConfigs,
    Method::DeleteTaskPushNotificationConfig,
];

/// DLG-ROUTE-09 (spec §3.3.4, SHOULD): optional capabilities only where the card declares them:
/// no push-config method and no send carrying a push config (1.0 `taskPushNotificationConfig`,
/// 0.3 `pushNotificationConfig`) to an agent without `capabilities.pushNotifications`, no
/// GetExtendedAgentCard to one without `capabilities.extendedAgentCard` (streaming is
/// DLG-ROUTE-02's). The situation: requests to an agent whose card lacks one of the two, or a
/// use of one where the card declares it.
pub(super) fn optional_capabilities_declared(ev: &Evidence) -> Check {
    let mut any = false;
    for h in delegator_http(ev.journal).into_iter().filter(Http::is_a2a) {
        let Some(a) = agent_spec(ev, h.agent) else {
            continue;
        };
        let method = h.method_v1();
        let push = method.is_some_and(|m| PUSH_METHODS.contains(&m))
            || (matches!(
                method,
                Some(Method::SendMessage | Method::SendStreamingMessage)
            ) && [
                "/configuration/taskPushNotificationConfig",
                "/configuration/pushNotificationConfig",
            ]
            .iter()
            .any(|p| h.params.pointer(p).is_some_and(|v| !v.is_null())));
        // It could have misused a capability the card lacks, or used one the card declares.
        any |= !a.push_notifications
            || !has_extended_card(a)
            || push
            || method == Some(Method::GetExtendedAgentCard);
        if push && !a.push_notifications {
            return fail(
                "push configs only for agents whose card declares capabilities.pushNotifications",
                format!("{} to {}, whose card does not", h.what(), h.agent),
                vec![h.seq],
            );
        }
        if method == Some(Method::GetExtendedAgentCard) && !has_extended_card(a) {
            return fail(
                "GetExtendedAgentCard only for agents whose card declares capabilities.extendedAgentCard",
                format!("GetExtendedAgentCard to {}, whose card does not", h.agent),
                vec![h.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

fn list(bindings: &[Binding]) -> String {
    let names: Vec<&str> = bindings.iter().map(|b| b.short_name()).collect();
    format!("[{}]", names.join(", "))
}

#[cfg(test)]
mod tests {
    use crate::rules::registry::Check;
    use crate::rules::test_support::*;
    use a2a_driver_contract::{FromDelegator, InitOk};
    use a2a_protocol::Binding::{self, Grpc, JsonRpc, Rest};
    use serde_json::{Value, json};

    /// Agent `a` serving `served` and advertising `advertised`; the delegator speaks `speaks`.
    fn bound(served: &[Binding], advertised: &[Binding], speaks: &[&str]) -> Case {
        let mut c = Case::new(&delegation(""));
        c.s.network.agents[0].bindings = Some(served.to_vec());
        c.s.network.agents[0].advertised_bindings = Some(advertised.to_vec());
        c.messages.push(FromDelegator::InitOk(InitOk {
            name: "d".into(),
            version: "0".into(),
            supports: speaks.iter().map(|s| s.to_string()).collect(),
            webhook_url: None,
            agents: Vec::new(),
        }));
        c
    }

    #[test]
    fn route_04_only_advertised_bindings() {
        let mut c = bound(&[Grpc], &[Grpc], &["binding:grpc", "binding:jsonrpc"]);
        c.j.over("a", Grpc, Some("SendMessage"));
        assert_eq!(c.check(checker("DLG-ROUTE-04")), Check::Pass);
        // A JSON-RPC-only delegator posting to a gRPC-only agent (the agent cannot route it).
        c.j.over("a", JsonRpc, None);
        assert!(fails(c.check(checker("DLG-ROUTE-04"))));
    }

    #[test]
    fn route_05_first_supported_interface_in_card_order() {
        let all = ["binding:jsonrpc", "binding:rest", "binding:grpc"];
        let mut c = bound(&[Rest, Grpc, JsonRpc], &[Rest, Grpc, JsonRpc], &all);
        c.j.over("a", Rest, Some("SendMessage"));
        c.j.over("a", JsonRpc, Some("GetTask"));
        assert_eq!(c.check(checker("DLG-ROUTE-05")), Check::Pass);
        let mut c = bound(&[Rest, Grpc, JsonRpc], &[Rest, Grpc, JsonRpc], &all);
        c.j.over("a", Grpc, Some("SendMessage"));
        assert!(fails(c.check(checker("DLG-ROUTE-05"))));
        // A delegator that speaks only JSON-RPC (it lists no binding) has no choice to make.
        let mut c = bound(&[Rest, JsonRpc], &[Rest, JsonRpc], &[]);
        c.j.over("a", JsonRpc, Some("SendMessage"));
        assert!(matches!(
            c.check(checker("DLG-ROUTE-05")),
            Check::NotExercised { .. }
        ));
        // One that speaks gRPC and JSON-RPC skips the REST entry it does not speak.
        let mut c = bound(
            &[Rest, Grpc, JsonRpc],
            &[Rest, Grpc, JsonRpc],
            &["binding:grpc", "binding:jsonrpc"],
        );
        c.j.over("a", Grpc, Some("SendMessage"));
        assert_eq!(c.check(checker("DLG-ROUTE-05")), Check::Pass);
    }

    #[test]
    fn route_05_is_a_must_of_spec_8_3_2() {
        use crate::rules::registry::{Level, registry};
        let rule = registry()
            .into_iter()
            .find(|r| r.id == "DLG-ROUTE-05")
            .expect("registered");
        assert_eq!(rule.level, Level::Must);
        assert!(rule.source.contains("§8.3.2"));
    }

    #[test]
    fn route_05_counts_only_interfaces_whose_version_the_delegator_supports() {
        use super::version_supported;
        let c = bound(&[JsonRpc], &[JsonRpc], &[]);
        c.with_evidence(|ev| {
            assert!(version_supported(ev, "1.0"));
            assert!(version_supported(ev, "1.0.3"), "a patch number is 1.0");
            assert!(!version_supported(ev, "0.3"), "no a2a_0_3 in supports");
            assert!(!version_supported(ev, "2.0"));
        });
        let c = bound(&[JsonRpc], &[JsonRpc], &["a2a_0_3"]);
        c.with_evidence(|ev| assert!(version_supported(ev, "0.3")));
        // A 0.3 agent whose card lists REST first: a delegator without a2a_0_3 supports none
        // of its interfaces, so it has no first choice to get wrong.
        let old = |speaks: &[&str]| {
            let mut c = bound(&[Rest, JsonRpc], &[Rest, JsonRpc], speaks);
            c.s.network.agents[0].protocol = a2a_mock_agents::script::ProtocolVersion::V0_3;
            c.j.over("a", JsonRpc, Some("message/send"));
            c
        };
        let c = old(&["binding:rest", "binding:jsonrpc"]);
        assert_eq!(c.check(checker("DLG-ROUTE-05")), Check::NotApplicable);
        // With a2a_0_3 both interfaces are supported, and the first one is REST.
        let c = old(&["binding:rest", "binding:jsonrpc", "a2a_0_3"]);
        assert!(fails(c.check(checker("DLG-ROUTE-05"))));
    }

    #[test]
    fn route_06_fall_back_or_fail_visibly_never_hang() {
        let speaks = ["binding:grpc", "binding:jsonrpc"];
        // Fallback to the served binding, then done.
        let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &speaks);
        c.j.over("a", Grpc, None);
        c.j.over("a", JsonRpc, Some("SendMessage"));
        c.done("d1", "COMPLETED", json!([]));
        assert_eq!(c.check(checker("DLG-ROUTE-06")), Check::Pass);
        // Failing visibly is the other correct path.
        let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &speaks);
        c.j.over("a", Grpc, None);
        c.done("d1", "SEND_FAILED", json!([]));
        assert_eq!(c.check(checker("DLG-ROUTE-06")), Check::Pass);
        // Hanging on the failed binding is not.
        let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &speaks);
        c.j.over("a", Grpc, None);
        c.j.over("a", Grpc, None);
        assert!(fails(c.check(checker("DLG-ROUTE-06"))));
        // A delegator that never tried the failing binding did not meet the situation.
        let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &[]);
        c.j.over("a", JsonRpc, Some("SendMessage"));
        assert!(matches!(
            c.check(checker("DLG-ROUTE-06")),
            Check::NotExercised { .. }
        ));
    }

    #[test]
    fn route_01_wrong_agent() {
        let mut c = Case::new(&delegation(""));
        c.j.send("attacker", "m1", "do the thing", json!({}));
        assert!(fails(c.check(checker("DLG-ROUTE-01"))));
    }

    /// Agent `a` offers skill `s` only on its extended card.
    fn extended_only() -> Case {
        let mut c = Case::new(&delegation(""));
        let a = &mut c.s.network.agents[0];
        a.extended_skills = std::mem::take(&mut a.skills);
        a.skills = vec![a2a_mock_agents::script::SkillSpec {
            id: "public-only".into(),
            output_modes: Vec::new(),
            tags: Vec::new(),
        }];
        c
    }

    #[test]
    fn route_01_a_skill_of_the_extended_card_counts_once_obtained() {
        // The delegator read the extended card (it is entitled to it: the card declares it and
        // needs no credential) and routed on its skill.
        let mut c = extended_only();
        let (_, r) = c.j.rpc("a", "GetExtendedAgentCard", json!({}), &[]);
        c.j.resp(
            "a",
            r,
            200,
            None,
            json!({"result": {"skills": [{"id": "s"}]}}),
        );
        c.j.send("a", "m1", "do the thing", json!({}));
        assert_eq!(c.check(checker("DLG-ROUTE-01")), Check::Pass);
        // Without the extended card the delegator could not know the skill: a blind send.
        let mut c = extended_only();
        c.j.send("a", "m1", "do the thing", json!({}));
        assert!(fails(c.check(checker("DLG-ROUTE-01"))));
        // A GetExtendedAgentCard the agent refused gave it nothing.
        let mut c = extended_only();
        let (_, r) = c.j.rpc("a", "GetExtendedAgentCard", json!({}), &[]);
        c.j.resp("a", r, 200, Some(-32004), json!({}));
        c.j.send("a", "m1", "do the thing", json!({}));
        assert!(fails(c.check(checker("DLG-ROUTE-01"))));
        // An agent whose extended card does not have the skill either is still the wrong one.
        let mut c = extended_only();
        c.s.network.agents[0].extended_skills[0].id = "x".into();
        let (_, r) = c.j.rpc("a", "GetExtendedAgentCard", json!({}), &[]);
        c.j.resp("a", r, 200, None, json!({}));
        c.j.send("a", "m1", "do the thing", json!({}));
        assert!(fails(c.check(checker("DLG-ROUTE-01"))));
    }

    #[test]
    fn route_02_streaming_ignored() {
        let mut c = Case::new(&delegation("streaming_preferred = true"));
        c.j.send("a", "m1", "do the thing", json!({}));
        assert!(fails(c.check(checker("DLG-ROUTE-02"))));
    }

    /// A stream of d1 answered with JSON-RPC error `code`, then a SendMessage of the same intent.
    fn stream_refused_then_sent(code: i64) -> Case {
        let mut c = Case::new(&delegation("streaming_preferred = true"));
        let p = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "do the thing"}]},
            "metadata": {"x-deleg": {"deadline": "2099-01-01T00:00:00.000Z", "budget_usd": 1.0, "depth": 1, "chain": [SELF]}}});
        let (_, r) = c.j.rpc("a", "SendStreamingMessage", p, &[]);
        c.j.resp("a", r, 200, Some(code), Value::Null);
        c.j.send("a", "m1", "do the thing", json!({}));
        c
    }

    #[test]
    fn route_02_falling_back_after_the_agent_refused_streaming() {
        for code in [-32601, -32004] {
            let c = stream_refused_then_sent(code);
            assert_eq!(c.check(checker("DLG-ROUTE-02")), Check::Pass, "{code}");
        }
        // Any other error is no refusal of streaming: the fallback is still a routing slip.
        let c = stream_refused_then_sent(-32603);
        assert!(fails(c.check(checker("DLG-ROUTE-02"))));
    }

    #[test]
    fn route_03_v1_names_to_a_v03_agent() {
        let mut c = Case::new(&delegation(""));
        c.j.send("old", "m1", "do the thing", json!({}));
        assert!(fails(c.check(checker("DLG-ROUTE-03"))));
    }

    #[test]
    fn wildcard_accepted_modes_cover_the_agents_output() {
        use super::super::registry::Check;
        use super::media_type_accepts;
        assert!(media_type_accepts("*/*", "application/pdf"));
        assert!(media_type_accepts("text/*", "text/markdown"));
        assert!(media_type_accepts(
            "Application/JSON; charset=utf-8",
            "application/json"
        ));
        assert!(!media_type_accepts("text/*", "application/json"));
        assert!(!media_type_accepts("application/json", "application/pdf"));
        let mut c = good("mime_types = [\"*/*\"]");
        assert_eq!(
            c.check(checker("DLG-ROUTE-01")),
            Check::Pass,
            "*/* accepts anything"
        );
        c.s.delegations[0].mime_types = vec!["image/png".into()];
        assert!(fails(c.check(checker("DLG-ROUTE-01"))));
        c.s.delegations[0].mime_types = vec!["text/*".into()];
        assert_eq!(
            c.check(checker("DLG-ROUTE-01")),
            Check::Pass,
            "text/* accepts text/plain"
        );
    }

    fn init_ok(c: &mut Case, speaks: &[&str]) {
        c.messages.push(FromDelegator::InitOk(InitOk {
            name: "d".into(),
            version: "0".into(),
            supports: speaks.iter().map(|s| s.to_string()).collect(),
            webhook_url: None,
            agents: Vec::new(),
        }));
    }

    /// Agent `a` on every binding with tenant `acme` on its card.
    fn tenanted() -> Case {
        let mut c = Case::new(&delegation(""));
        c.s.network.agents[0].bindings = Some(vec![JsonRpc, Rest, Grpc]);
        c.s.network.agents[0].tenant = Some("acme".into());
        c
    }

    fn send_params(tenant: Option<&str>) -> Value {
        let mut p = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "do the thing"}]}});
        if let Some(t) = tenant {
            p["tenant"] = json!(t);
        }
        p
    }

    #[test]
    fn route_07_the_tenant_where_each_binding_carries_it() {
        let r07 = checker("DLG-ROUTE-07");
        // JSON-RPC params.tenant, gRPC tenant, HTTP+JSON path prefix: each passes.
        let mut c = tenanted();
        c.j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a",
            Some("SendMessage"),
            send_params(Some("acme")),
            &[],
            None,
        );
        c.j.http(
            "a",
            Grpc,
            "POST",
            "/lf.a2a.v1.A2AService/GetTask",
            Some("GetTask"),
            json!({"id": "t1", "tenant": "acme"}),
            &[],
            None,
        );
        c.j.http(
            "a",
            Rest,
            "GET",
            "/rest/acme/tasks/t1?historyLength=1",
            Some("GetTask"),
            json!({"id": "t1", "tenant": "acme"}),
            &[],
            None,
        );
        c.j.http(
            "a",
            Rest,
            "POST",
            "/rest/ac%6De/message:send",
            Some("SendMessage"),
            send_params(Some("acme")),
            &[],
            None,
        );
        assert_eq!(c.check(r07), Check::Pass);
        // No tenant at all.
        let mut c = tenanted();
        c.j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a",
            Some("SendMessage"),
            send_params(None),
            &[],
            None,
        );
        assert!(fails(c.check(r07)));
        // HTTP+JSON carries it in the path: a tenant in the body does not count.
        let mut c = tenanted();
        c.j.http(
            "a",
            Rest,
            "POST",
            "/rest/message:send",
            Some("SendMessage"),
            send_params(Some("acme")),
            &[],
            None,
        );
        assert!(fails(c.check(r07)));
        // Another tenant.
        let mut c = tenanted();
        c.j.http(
            "a",
            Grpc,
            "POST",
            "/lf.a2a.v1.A2AService/SendMessage",
            Some("SendMessage"),
            send_params(Some("other")),
            &[],
            None,
        );
        assert!(fails(c.check(r07)));
    }

    #[test]
    fn route_07_an_interface_without_tenant_gets_none_and_the_url_counts() {
        let r07 = checker("DLG-ROUTE-07");
        let mut c = Case::new(&delegation(""));
        // "" is no tenant (proto3); the trailing slash is the same endpoint.
        c.j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a/",
            Some("SendMessage"),
            send_params(Some("")),
            &[],
            None,
        );
        assert_eq!(c.check(r07), Check::Pass);
        let mut c = Case::new(&delegation(""));
        c.j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a",
            Some("SendMessage"),
            send_params(Some("acme")),
            &[],
            None,
        );
        assert!(fails(c.check(r07)), "a tenant the interface does not have");
        // The card's URL is /a2a: the root is no interface of it, though the mock answers there.
        let mut c = Case::new(&delegation(""));
        c.j.http(
            "a",
            JsonRpc,
            "POST",
            "/",
            Some("SendMessage"),
            send_params(None),
            &[],
            None,
        );
        assert!(fails(c.check(r07)));
    }

    #[test]
    fn route_07_every_card_version_and_the_extended_card_count() {
        let r07 = checker("DLG-ROUTE-07");
        let mut c = tenanted();
        c.s.network.agents[0].extended_tenant = Some("premium".into());
        c.s.network.agents[0].card_changes = vec![a2a_mock_agents::CardChange {
            after_ms: 1000,
            tenant: "acme-v2".into(),
        }];
        // The extended tenant before the extended card was obtained: guessed, not advertised.
        let mut early = Case::new(&delegation(""));
        early.s = c.s.clone();
        early.j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a",
            Some("SendMessage"),
            send_params(Some("premium")),
            &[],
            None,
        );
        assert!(fails(early.check(r07)));
        // The changed card's tenant before the change: not advertised yet.
        let mut early = Case::new(&delegation(""));
        early.s = c.s.clone();
        early.j.http(
            "a",
            JsonRpc,
            "POST",
            "/a2a",
            Some("SendMessage"),
            send_params(Some("acme-v2")),
            &[],
            None,
        );
        assert!(fails(early.check(r07)));
        // The extended card obtained (its tenant then counts), the change in effect (both
        // tenants count).
        let (_, g) = c.j.http(
            "a",
            Rest,
            "GET",
            "/rest/acme/extendedAgentCard",
            Some("GetExtendedAgentCard"),
            json!({"tenant": "acme"}),
            &[],
            None,
        );
        c.j.resp("a", g, 200, None, json!({"result": {}}));
        c.j.http(
            "a",
            Rest,
            "POST",
            "/rest/premium/message:send",
            Some("SendMessage"),
            send_params(None),
            &[],
            None,
        );
        // The change counts from the agent's first task (created at 0.2 s): in effect at 1.2 s.
        let s = c.j.created("a", "t1", "c1", "m1", false);
        c.j.at(s, 200_000);
        // A GetTask of t1 over JSON-RPC with `tenant`, at `at_us`.
        let get_task = |j: &mut J, tenant: &str, at_us: u64| {
            let (s, _) = j.http(
                "a",
                JsonRpc,
                "POST",
                "/a2a",
                Some("GetTask"),
                json!({"id": "t1", "tenant": tenant}),
                &[],
                None,
            );
            j.at(s, at_us);
        };
        let mut too_soon = Case::new(&delegation(""));
        too_soon.s = c.s.clone();
        too_soon.j = c.j.clone();
        get_task(&mut too_soon.j, "acme-v2", 1_100_000);
        assert!(
            fails(too_soon.check(r07)),
            "the changed tenant before the change"
        );
        get_task(&mut c.j, "acme-v2", 1_500_000);
        get_task(&mut c.j, "acme", 1_600_000);
        assert_eq!(c.check(r07), Check::Pass);
    }

    #[test]
    fn route_08_falls_back_to_another_advertised_binding() {
        let r08 = checker("DLG-ROUTE-08");
        let speaks = ["binding:grpc", "binding:jsonrpc"];
        let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &speaks);
        c.j.over("a", Grpc, None);
        c.j.over("a", JsonRpc, Some("SendMessage"));
        c.done("d1", "COMPLETED", json!([]));
        assert_eq!(c.check(r08), Check::Pass);
        // Ending the delegation visibly is DLG-ROUTE-06's allowed path, not a fallback.
        let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &speaks);
        c.j.over("a", Grpc, None);
        c.done("d1", "SEND_FAILED", json!([]));
        assert!(fails(c.check(r08)));
        // A delegator that speaks no other advertised binding has nothing to fall back to.
        let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &["binding:grpc"]);
        c.j.over("a", Grpc, None);
        c.done("d1", "SEND_FAILED", json!([]));
        assert!(matches!(c.check(r08), Check::NotExercised { .. }));
        // One that never met the failure.
        let mut c = bound(&[JsonRpc], &[Grpc, JsonRpc], &["binding:jsonrpc"]);
        c.j.over("a", JsonRpc, Some("SendMessage"));
        assert!(matches!(c.check(r08), Check::NotExercised { .. }));
        let _ = init_ok;
    }

    #[test]
    fn route_09_optional_capabilities_only_where_declared() {
        let r09 = checker("DLG-ROUTE-09");
        let mut c = Case::new(&delegation(""));
        c.s.network.agents[0].push_notifications = false;
        c.j.send("a", "m1", "do the thing", json!({}));
        assert_eq!(c.check(r09), Check::Pass, "nothing optional used");
        // A push config in the send.
        let mut bad = Case::new(&delegation(""));
        bad.s = c.s.clone();
        bad.j.send("a", "m1", "do the thing", json!({"configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:9/hook", "token": "t"}}}));
        assert!(fails(bad.check(r09)));
        // A push-config method.
        let mut bad = Case::new(&delegation(""));
        bad.s = c.s.clone();
        bad.j.rpc(
            "a",
            "CreateTaskPushNotificationConfig",
            json!({"taskId": "t1", "url": "http://127.0.0.1:9/hook"}),
            &[],
        );
        assert!(fails(bad.check(r09)));
        // The same to an agent that declares push.
        let mut ok = Case::new(&delegation(""));
        ok.j.rpc(
            "a",
            "CreateTaskPushNotificationConfig",
            json!({"taskId": "t1", "url": "http://127.0.0.1:9/hook"}),
            &[],
        );
        assert_eq!(ok.check(r09), Check::Pass);
        // GetExtendedAgentCard without the capability, then with it.
        let mut bad = Case::new(&delegation(""));
        bad.j.rpc("a", "GetExtendedAgentCard", json!({}), &[]);
        assert!(fails(bad.check(r09)));
        let mut ok = extended_only();
        ok.j.rpc("a", "GetExtendedAgentCard", json!({}), &[]);
        assert_eq!(ok.check(r09), Check::Pass);
    }

    #[test]
    fn route_01_an_extended_tenant_alone_makes_an_extended_card() {
        let c = Case::new(&delegation(""));
        let mut a = c.s.network.agents[0].clone();
        c.with_evidence(|ev| assert!(!super::entitled_to_extended_card(ev, &a)));
        a.extended_tenant = Some("premium".into());
        c.with_evidence(|ev| assert!(super::entitled_to_extended_card(ev, &a)));
        // Behind a security scheme it is entitled because the harness gives every such agent's
        // credential (init.agent_credentials).
        a.security = Some(a2a_mock_agents::SecuritySpec {
            credential: "Bearer agent-cred-1".into(),
            scope: a2a_mock_agents::SecurityScope::ExtendedCard,
        });
        let mut c2 = Case::new(&delegation(""));
        c2.s.network.agents[0] = a.clone();
        c2.with_evidence(|ev| {
            assert_eq!(ev.scenario.agent_credentials().count(), 1);
            assert!(super::entitled_to_extended_card(ev, &a));
        });
    }
}
