//! Routing (DLG-ROUTE-*): capable agents, streaming choice, 0.3 agents spoken to in 0.3.

use super::evidence::*;
use super::registry::{Check, fail};
use a2a_protocol::Method;

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
        let skill = a.skills.iter().find(|s| s.id == d.capability);
        let Some(skill) = skill else {
            return fail(
                format!("only agents with skill {:?}", d.capability),
                format!("sent to {} which lacks it", r.agent),
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
                format!("{} produces only {modes:?}", r.agent),
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

pub(super) fn streaming_when_declared_and_preferred(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let Some(d) = (r.is_new_send()).then(|| delegation_of(ev, &r)).flatten() else {
            continue;
        };
        let Some(a) = agent_spec(ev, r.agent) else {
            continue;
        };
        any = true;
        let streamed = r.calls(&[Method::SendStreamingMessage]);
        let want = a.streaming && d.streaming_preferred;
        if streamed != want {
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

#[cfg(test)]
mod tests {
    use crate::rules::test_support::*;
    use serde_json::json;

    #[test]
    fn route_01_wrong_agent() {
        let mut c = Case::new(&delegation(""));
        c.j.send("attacker", "m1", "do the thing", json!({}));
        assert!(fails(c.check(checker("DLG-ROUTE-01"))));
    }

    #[test]
    fn route_02_streaming_ignored() {
        let mut c = Case::new(&delegation("streaming_preferred = true"));
        c.j.send("a", "m1", "do the thing", json!({}));
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
}
