//! DLG-ROUTE-* on what an agent can do: delegations routed to a capable agent (skills, media
//! types, the extended card), streaming when declared and preferred, 0.3 agents spoken to in
//! 0.3, optional capabilities used only when declared.

use super::*;

/// Whether the delegator is entitled to `agent`'s extended card: the card declares
/// `capabilities.extendedAgentCard` (the mock declares it when the agent has extended skills or
/// an extended tenant) and the delegator can authenticate the GetExtendedAgentCard call: the
/// card declares no security scheme guarding it, or the harness gave the delegator the agent's
/// credential (`init.agent_credentials`, [`crate::scenario::Scenario::agent_credentials`]).
pub(in crate::rules) fn entitled_to_extended_card(
    ev: &Evidence,
    agent: &a2a_mock_agents::AgentSpec,
) -> bool {
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
pub(in crate::rules) fn routed_to_capable_agent(ev: &Evidence) -> Check {
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
                format!(
                    "{} produces only {}",
                    r.agent,
                    crate::rules::words::list(&modes)
                ),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

/// True when the accepted media type `accepted` (which may be `type/*` or `*/*`) covers the
/// agent's output mode `mode` (compared without parameters, case-insensitively).
pub(in crate::rules) fn media_type_accepts(accepted: &str, mode: &str) -> bool {
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
pub(in crate::rules) fn streaming_when_declared_and_preferred(ev: &Evidence) -> Check {
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

pub(in crate::rules) fn v03_agents_spoken_to_in_v03(ev: &Evidence) -> Check {
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
pub(in crate::rules) fn optional_capabilities_declared(ev: &Evidence) -> Check {
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
