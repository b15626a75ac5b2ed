//! Tests of the 0.3 ⇔ 1.0 adapter: one test per mapping plus a round-trip property.

use a2a_protocol::compat03::{
    AdaptErrorKind, ObjectKind, ProtocolVersion, VersionError, error_code_known_in_v03,
    error_name_to_v1, error_name_to_v03, is_final_state, method_to_v1, method_to_v03, negotiate,
    role_to_v1, role_to_v03, state_to_v1, state_to_v03, to_v1, to_v03,
};
use proptest::prelude::*;
use serde_json::{Value, json};

mod agent_card;
mod errors;
mod methods;
mod objects;
mod params_and_push_configs;
mod parts;
mod results;
mod roundtrip_property;
mod states_and_roles;
mod versions;

/// Translate both ways and check each direction against the expected form.
fn both_ways(kind: ObjectKind, v03: Value, v1: Value) {
    assert_eq!(to_v1(kind, &v03).expect("to_v1"), v1, "{kind:?} 0.3 -> 1.0");
    assert_eq!(
        to_v03(kind, &v1).expect("to_v03"),
        v03,
        "{kind:?} 1.0 -> 0.3"
    );
}

fn message03() -> Value {
    json!({"kind": "message", "messageId": "m-1", "role": "agent", "contextId": "c-1",
           "taskId": "t-1", "parts": [{"kind": "text", "text": "From which airport?"}],
           "metadata": {"x": 1}, "referenceTaskIds": ["t-0"], "extensions": ["urn:e"]})
}

fn message1() -> Value {
    json!({"messageId": "m-1", "role": "ROLE_AGENT", "contextId": "c-1", "taskId": "t-1",
           "parts": [{"text": "From which airport?"}], "metadata": {"x": 1},
           "referenceTaskIds": ["t-0"], "extensions": ["urn:e"]})
}

fn artifact03() -> Value {
    json!({"artifactId": "a-1", "name": "report", "description": "d",
           "parts": [{"kind": "data", "data": {"ok": true}}, {"kind": "text", "text": "x"}]})
}

fn artifact1() -> Value {
    json!({"artifactId": "a-1", "name": "report", "description": "d",
           "parts": [{"data": {"ok": true}}, {"text": "x"}]})
}

fn task03() -> Value {
    json!({"kind": "task", "id": "t-1", "contextId": "c-1",
           "status": {"state": "input-required", "timestamp": "2026-03-20T10:00:00.000Z",
                      "message": message03()},
           "history": [message03()], "artifacts": [artifact03()], "metadata": {"m": "v"}})
}

fn task1() -> Value {
    json!({"id": "t-1", "contextId": "c-1",
           "status": {"state": "TASK_STATE_INPUT_REQUIRED", "timestamp": "2026-03-20T10:00:00.000Z",
                      "message": message1()},
           "history": [message1()], "artifacts": [artifact1()], "metadata": {"m": "v"}})
}
