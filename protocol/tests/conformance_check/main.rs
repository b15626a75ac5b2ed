//! One test per conformance `DeviationKind`, asserting the exact JSON path and rule ID of each
//! deviation; that the lenient decoders accept the same payloads where the value is representable;
//! and that `codec::decode` errors name the JSON path of the problem.

use a2a_protocol::codec::{DecodeError, decode, decode_value};
use a2a_protocol::conformance::{
    Deviation, DeviationKind, ObjectType, conformance, conformance_response, params_type,
    result_type,
};
use a2a_protocol::jsonrpc::{Id, JsonRpcRequest, JsonRpcResponse};
use a2a_protocol::*;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::fmt::Debug;

use DeviationKind::*;

mod decode_errors;
mod enums;
mod fields;
mod method_tables;
mod missing_required;
mod one_of;
mod value_types;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// The deviations as sorted (path, rule, kind) triples.
fn triples(found: &[Deviation]) -> Vec<(String, String, DeviationKind)> {
    let mut v: Vec<_> = found
        .iter()
        .map(|d| (d.path.clone(), d.rule.clone(), d.kind))
        .collect();
    v.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    v
}

/// `conformance(t, v)` finds exactly `expected` (path, rule, kind), in any order.
#[track_caller]
fn assert_exactly(t: ObjectType, v: &Value, expected: &[(&str, &str, DeviationKind)]) {
    let found = conformance(t, v);
    let mut want: Vec<_> = expected
        .iter()
        .map(|(p, r, k)| (p.to_string(), r.to_string(), *k))
        .collect();
    want.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(triples(&found), want, "{t:?} {v:#}\n{found:#?}");
    for d in &found {
        assert!(!d.message.is_empty());
        // Display shows path and rule.
        let shown = d.to_string();
        assert!(shown.starts_with(&d.path) && shown.contains(&format!("[{}]", d.rule)));
    }
}

/// The lenient decoder accepts `v` (from text and from the value) and gives the same result.
#[track_caller]
fn lenient<T: DeserializeOwned + PartialEq + Debug>(v: &Value) -> T {
    let from_text: T = decode(v.to_string().as_bytes()).unwrap_or_else(|e| panic!("{e}\n{v}"));
    let from_value: T = decode_value(v).unwrap_or_else(|e| panic!("{e}\n{v}"));
    assert_eq!(from_text, from_value);
    from_text
}

/// The decoder rejects `text`, naming `path`.
#[track_caller]
fn rejects_at<T: DeserializeOwned + Debug>(text: &str, path: &str) -> DecodeError {
    let err = decode::<T>(text.as_bytes()).expect_err(text);
    assert_eq!(err.path(), path, "{err}");
    assert!(
        err.to_string().starts_with(path),
        "Display names the path: {err}"
    );
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        let err2 = decode_value::<T>(&v).expect_err(text);
        assert_eq!(err2.path(), path, "decode_value: {err2}");
    }
    err
}

fn task_with_state(state: Value) -> Value {
    json!({"id": "t-1", "contextId": "c-1", "status": {"state": state}})
}

fn user_message() -> Value {
    json!({"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]})
}

fn minimal_card() -> Value {
    json!({
        "name": "a", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": "http://x/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "n", "description": "d", "tags": ["t"]}]
    })
}

#[test]
fn valid_payloads_have_no_deviations() {
    assert_exactly(
        ObjectType::Task,
        &task_with_state(json!("TASK_STATE_COMPLETED")),
        &[],
    );
    assert_exactly(ObjectType::Message, &user_message(), &[]);
    assert_exactly(ObjectType::AgentCard, &minimal_card(), &[]);
    // ProtoJSON allows int32 as a numeric string and `null` for an unset field.
    assert_exactly(
        ObjectType::GetTaskRequest,
        &json!({"id": "t-1", "historyLength": "10", "tenant": null}),
        &[],
    );
    let r: GetTaskRequest = lenient(&json!({"id": "t-1", "historyLength": "10", "tenant": null}));
    assert_eq!(r.history_length, Some(10));
    assert_eq!(r.tenant, None);
}
