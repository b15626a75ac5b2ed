//! Extensions and service parameters (DLG-EXT-*): required extensions declared in
//! `A2A-Extensions` or the agent left alone (proto `AgentExtension.required`, spec §4.6), and
//! several values of one service parameter in one header (spec §9.2, §10.2, §11.2).

use super::evidence::*;
use super::front::*;
use super::registry::{Check, fail};
use super::words::list;

/// The service parameters of the bindings, as the journal names their headers (gRPC metadata
/// keys are the same).
const SERVICE_PARAMETERS: [&str; 2] = ["a2a-version", a2a_mock_agents::EXTENSIONS_HEADER];

/// The extension URIs a request asks for: every `A2A-Extensions` line split at commas, trimmed
/// (whitespace around a value is optional whitespace, not part of the URI).
fn requested<'a>(h: &Http<'a>) -> Vec<&'a str> {
    h.header_lines(a2a_mock_agents::EXTENSIONS_HEADER)
        .into_iter()
        .flat_map(|l| l.split(','))
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .collect()
}

/// DLG-EXT-01 (proto `AgentExtension.required`, spec §4.6, MUST): for an agent whose card marks
/// extensions required, either the delegator supports them all (`init.extensions`) and every
/// A2A request to the agent lists each in `A2A-Extensions` (learning it from a -32008 is too
/// late: that request already broke the rule), or it supports some not and sends the agent
/// nothing at all (reading its card is not using it). The situations: requests to an agent
/// whose required extensions it declared; work such an agent could have done that ended
/// without it.
pub(super) fn required_extensions_honoured(ev: &Evidence) -> Check {
    let supported = &ev.scenario.extensions;
    let http = delegator_http(ev.journal);
    let mut seen = false;
    for a in &ev.scenario.network.agents {
        let required: Vec<&str> = a
            .extensions
            .iter()
            .filter(|e| e.required)
            .map(|e| e.uri.as_str())
            .collect();
        if required.is_empty() {
            continue;
        }
        let unsupported: Vec<&str> = required
            .iter()
            .copied()
            .filter(|u| !supported.iter().any(|s| s == u))
            .collect();
        let to_it: Vec<&Http> = http
            .iter()
            .filter(|h| h.agent == a.name && h.is_a2a())
            .collect();
        if unsupported.is_empty() {
            for h in to_it {
                seen = true;
                let asked = requested(h);
                let missing: Vec<&str> = required
                    .iter()
                    .copied()
                    .filter(|u| !asked.contains(u))
                    .collect();
                if !missing.is_empty() {
                    return fail(
                        format!(
                            "every request to {} lists its required extension(s) {} in A2A-Extensions",
                            a.name,
                            list(&required)
                        ),
                        format!(
                            "{} without {} (A2A-Extensions: {})",
                            h.what(),
                            list(&missing),
                            list(&asked)
                        ),
                        vec![h.seq],
                    );
                }
            }
        } else {
            if let Some(h) = to_it.first() {
                return fail(
                    format!(
                        "{} left unused: its card requires {}, which the delegator does not support (init extensions: {})",
                        a.name,
                        list(&unsupported),
                        list(supported)
                    ),
                    format!("{} sent to it", h.what()),
                    vec![h.seq],
                );
            }
            seen |= ev.scenario.delegations.iter().any(|d| {
                a.skills
                    .iter()
                    .chain(&a.extended_skills)
                    .any(|s| s.id == d.capability)
                    && ev.outcomes.contains_key(&d.id)
            });
        }
    }
    Check::held_if_seen(seen)
}

/// DLG-EXT-02 (spec §9.2, §10.2, §11.2, SHOULD): a service parameter (`A2A-Version`,
/// `A2A-Extensions`) goes in one header line (gRPC: one metadata entry), several values
/// comma-separated, never on repeated lines. The situation: a request carrying two values or
/// more of one.
pub(super) fn service_parameters_comma_joined(ev: &Evidence) -> Check {
    let mut seen = false;
    for h in delegator_http(ev.journal) {
        for name in SERVICE_PARAMETERS {
            let lines = h.header_lines(name);
            if lines.len() > 1 {
                return fail(
                    format!("one {name} header, several values comma-separated"),
                    format!(
                        "{} {name} lines on {}: {}",
                        lines.len(),
                        h.what(),
                        lines.join(" | ")
                    ),
                    vec![h.seq],
                );
            }
        }
        seen |= requested(&h).len() >= 2;
    }
    Check::held_if_seen(seen)
}

#[cfg(test)]
mod tests {
    use crate::rules::registry::Check;
    use crate::rules::test_support::*;
    use a2a_protocol::Binding::{Grpc, JsonRpc};
    use serde_json::json;

    const TRACE: &str = "https://example.com/ext/trace/v1";
    const AUDIT: &str = "https://example.com/ext/audit/v1";

    /// Agent `a` requires `required`; the delegator supports `supported`.
    fn requiring(required: &[&str], supported: &[&str]) -> Case {
        let mut c = Case::new(&delegation(""));
        c.s.network.agents[0].extensions = required
            .iter()
            .map(|u| a2a_mock_agents::ExtensionSpec {
                uri: u.to_string(),
                description: String::new(),
                required: true,
            })
            .collect();
        c.s.extensions = supported.iter().map(|s| s.to_string()).collect();
        c
    }

    fn call(c: &mut Case, agent: &str, headers: &[(&str, &str)]) {
        c.j.http(agent, JsonRpc, "POST", "/a2a", Some("SendMessage"), json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "do the thing"}]}}), headers, None);
    }

    #[test]
    fn ext_01_required_extensions_declared_or_the_agent_left_alone() {
        let r = checker("DLG-EXT-01");
        // Declared, with extra whitespace and another extension beside it.
        let mut c = requiring(&[TRACE], &[TRACE, AUDIT]);
        call(
            &mut c,
            "a",
            &[("a2a-extensions", &format!("  {AUDIT} ,{TRACE}  "))],
        );
        assert_eq!(c.check(r), Check::Pass);
        // Over gRPC the metadata entry counts the same.
        let mut c = requiring(&[TRACE], &[TRACE]);
        c.j.http(
            "a",
            Grpc,
            "POST",
            "/lf.a2a.v1.A2AService/SendMessage",
            Some("SendMessage"),
            json!({}),
            &[("a2a-extensions", TRACE)],
            None,
        );
        assert_eq!(c.check(r), Check::Pass);
        // Forgotten (first without, then with after the -32008: the first request broke it).
        let mut c = requiring(&[TRACE], &[TRACE]);
        call(&mut c, "a", &[]);
        call(&mut c, "a", &[("a2a-extensions", TRACE)]);
        assert!(fails(c.check(r)));
        // Not supported by the delegator: the agent must not be used at all.
        let mut c = requiring(&[TRACE], &[]);
        call(&mut c, "a", &[("a2a-extensions", TRACE)]);
        assert!(fails(c.check(r)));
        // Left alone while the work went elsewhere: the "not used" path.
        let mut c = requiring(&[TRACE], &[AUDIT]);
        c.s.network.agents[1].protocol = a2a_mock_agents::script::ProtocolVersion::V1_0;
        call(&mut c, "old", &[]);
        c.done("d1", "COMPLETED", json!([]));
        assert_eq!(c.check(r), Check::Pass);
        // No agent requires anything.
        let c = Case::new(&delegation(""));
        assert_eq!(c.check(r), Check::NotApplicable);
    }

    #[test]
    fn ext_02_several_values_in_one_header() {
        let r = checker("DLG-EXT-02");
        let mut c = requiring(&[TRACE, AUDIT], &[TRACE, AUDIT]);
        call(
            &mut c,
            "a",
            &[("a2a-extensions", &format!("{TRACE}, {AUDIT}"))],
        );
        assert_eq!(c.check(r), Check::Pass);
        // Repeated header lines.
        let mut c = requiring(&[TRACE, AUDIT], &[TRACE, AUDIT]);
        call(
            &mut c,
            "a",
            &[("a2a-extensions", TRACE), ("a2a-extensions", AUDIT)],
        );
        assert!(fails(c.check(r)));
        // One value only: the situation did not arise.
        let mut c = requiring(&[TRACE], &[TRACE]);
        call(&mut c, "a", &[("a2a-extensions", TRACE)]);
        assert_eq!(c.check(r), Check::NotApplicable);
    }
}
