//! Wire conformance (DLG-WIRE-*): every request to a 1.0 agent is a conformant 1.0 request.

use super::evidence::*;
use super::registry::{Check, fail};

pub(super) fn requests_conform_to_v1(ev: &Evidence) -> Check {
    let mut any = false;
    for r in requests(ev.journal) {
        let v1 = agent_spec(ev, r.agent)
            .is_some_and(|a| a.protocol == a2a_mock_agents::script::ProtocolVersion::V1_0);
        if !v1 {
            continue;
        }
        any = true;
        let Some(t) = a2a_protocol::conformance::params_type(r.method) else {
            return fail(
                "an A2A 1.0 method name",
                format!("{:?}", r.method),
                vec![r.seq],
            );
        };
        let found = a2a_protocol::conformance::conformance(t, r.params);
        // Long strings are summarised in the journal; that never changes the shape checked here.
        if let Some(d) = found.first() {
            let all: Vec<String> = found.iter().take(5).map(|d| d.to_string()).collect();
            return fail(
                format!("{} params conformant to A2A 1.0", r.method),
                format!(
                    "{} deviation(s), first {d}: {}",
                    found.len(),
                    all.join("; ")
                ),
                vec![r.seq],
            );
        }
    }
    Check::held_if_seen(any)
}

#[cfg(test)]
mod tests {
    use super::super::registry::Check;
    use crate::rules::test_support::*;
    use serde_json::json;

    #[test]
    fn wire_01_legacy_fields_and_names() {
        let c = good("");
        assert_eq!(c.check(checker("DLG-WIRE-01")), Check::Pass);
        let mut c = good("");
        c.j.send("a", "m2", "other", json!({"message": {"kind": "message"}}));
        assert!(fails(c.check(checker("DLG-WIRE-01"))), "kind");
        let mut c = good("");
        c.j.rpc("a", "tasks/get", json!({"id": "t1"}), &[]);
        assert!(
            fails(c.check(checker("DLG-WIRE-01"))),
            "0.3 name to a 1.0 agent"
        );
        let mut c = good("");
        c.j.send("a", "m3", "other", json!({"message": {"role": "user"}}));
        assert!(fails(c.check(checker("DLG-WIRE-01"))), "lowercase enum");
    }
}
