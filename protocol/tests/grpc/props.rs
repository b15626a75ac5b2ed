//! Property: arbitrary wire values (the strategies of `tests/roundtrip`) survive
//! wire type -> prost -> bytes -> prost -> wire type.
//!
//! proto3 has no presence for plain `string`/`int32`/`bool` fields, so an optional wire field set
//! to its default (`Some("")`) comes back unset; values are compared as ProtoJSON with such
//! defaults removed (outside `Struct`/`Value` contents, which keep everything but hold numbers as
//! doubles, so they are compared as doubles).

use a2a_protocol::codec::{decode, decode_value};
use a2a_protocol::conformance::{
    ObjectType, conformance, conformance_response, params_type, result_type,
};
use a2a_protocol::grpc::PbWire;
use a2a_protocol::jsonrpc::{Id, JsonRpcError, JsonRpcRequest, JsonRpcResponse, Method};
use a2a_protocol::*;
use proptest::collection::{btree_map, vec};
use proptest::option::of;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use prost::Message as _;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt::Debug;

#[path = "../roundtrip/strategies/mod.rs"]
mod strategies;

/// Keys whose values are `Struct`/`Value` (kept verbatim).
const OPAQUE: &[&str] = &["metadata", "data", "params", "header"];

/// ProtoJSON without proto3 defaults, with integral doubles as integers and timestamps in
/// the crate's millisecond form.
fn canon(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| !matches!(x, Value::String(s) if s.is_empty()))
                .filter(|(_, x)| !matches!(x, Value::Bool(false)))
                .filter(|(_, x)| !matches!(x, Value::String(s) if s.ends_with("_UNSPECIFIED")))
                .filter(|(_, x)| x.as_i64() != Some(0))
                .filter(|(_, x)| !matches!(x, Value::Array(a) if a.is_empty()))
                .map(|(k, x)| {
                    let x = if OPAQUE.contains(&k.as_str()) {
                        doubles(x)
                    } else {
                        canon(x)
                    };
                    (k.clone(), x)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(canon).collect()),
        _ => super::normalise(v),
    }
}

/// `Struct`/`Value` numbers are doubles in protobuf: compare them as doubles.
fn doubles(v: &Value) -> Value {
    match v {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .unwrap_or_else(|| v.clone()),
        Value::Array(a) => Value::Array(a.iter().map(doubles).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), doubles(x))).collect()),
        _ => v.clone(),
    }
}

fn through_bytes<W: PbWire + Serialize>(w: &W) -> Result<(), TestCaseError> {
    let p = w
        .to_pb()
        .map_err(|e| TestCaseError::fail(format!("to prost: {e}")))?;
    let bytes = p.encode_to_vec();
    let p2 = W::Pb::decode(bytes.as_slice()).map_err(|e| TestCaseError::fail(format!("{e}")))?;
    let back = W::from_pb(&p2).map_err(|e| TestCaseError::fail(format!("from prost: {e}")))?;
    let a = canon(&serde_json::to_value(&back).expect("serialise"));
    let b = canon(&serde_json::to_value(w).expect("serialise"));
    prop_assert_eq!(a, b);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn tasks(t in strategies::task()) { through_bytes(&t)?; }

    #[test]
    fn stream_responses(s in strategies::stream_response()) { through_bytes(&s)?; }

    #[test]
    fn send_message_requests(r in strategies::send_message_request()) { through_bytes(&r)?; }

    #[test]
    fn send_message_responses(r in strategies::send_message_response()) { through_bytes(&r)?; }

    #[test]
    fn agent_cards(c in strategies::agent_card()) { through_bytes(&c)?; }

    #[test]
    fn list_tasks(r in strategies::list_tasks_request(), s in strategies::list_tasks_response()) {
        through_bytes(&r)?;
        through_bytes(&s)?;
    }

    #[test]
    fn push_configs(
        c in strategies::push_config(),
        r in strategies::push_config_ref(),
        l in strategies::list_push_configs_request(),
        s in strategies::list_push_configs_response(),
    ) {
        through_bytes(&c)?;
        through_bytes(&r)?;
        through_bytes(&l)?;
        through_bytes(&s)?;
    }

    #[test]
    fn small_requests(
        g in strategies::get_task_request(),
        c in strategies::cancel_task_request(),
        s in strategies::subscribe_request(),
        e in strategies::extended_card_request(),
    ) {
        through_bytes(&g)?;
        through_bytes(&c)?;
        through_bytes(&s)?;
        through_bytes(&e)?;
    }
}
