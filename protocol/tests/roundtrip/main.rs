//! Property tests for every public wire type: serialize → deserialize is the identity, values that
//! satisfy the required fields have no conformance deviations, and no input (arbitrary JSON values,
//! mutated valid payloads, arbitrary bytes) makes a decoder or the conformance check panic.

use a2a_protocol::codec::{decode, decode_value};
use a2a_protocol::conformance::{
    ObjectType, conformance, conformance_response, params_type, result_type,
};
use a2a_protocol::jsonrpc::{Id, JsonRpcError, JsonRpcRequest, JsonRpcResponse, Method};
use a2a_protocol::*;
use proptest::collection::{btree_map, vec};
use proptest::option::of;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt::Debug;

mod robustness;
mod strategies;
mod wire_types;

use strategies::*;

// ---------------------------------------------------------------------------
// Configuration and shared checks
// ---------------------------------------------------------------------------

/// Moderate case counts keep the suite fast; no regression files are written into the tree.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// serialize → deserialize gives the same value, through text, `codec::decode` and
/// `codec::decode_value`.
fn check_roundtrip<T>(v: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let text = serde_json::to_string(v).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: T = serde_json::from_str(&text)
        .map_err(|e| TestCaseError::fail(format!("from_str: {e}\n{text}")))?;
    prop_assert_eq!(&back, v, "text round trip of {}", text);
    let back: T = decode(text.as_bytes())
        .map_err(|e| TestCaseError::fail(format!("codec::decode: {e}\n{text}")))?;
    prop_assert_eq!(&back, v);
    let value = serde_json::to_value(v).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: T = decode_value(&value)
        .map_err(|e| TestCaseError::fail(format!("codec::decode_value: {e}\n{text}")))?;
    prop_assert_eq!(&back, v);
    // Canonical output is stable: re-encoding the decoded value gives the same JSON.
    prop_assert_eq!(
        serde_json::to_value(&back).map_err(|e| TestCaseError::fail(e.to_string()))?,
        value
    );
    Ok(())
}

/// The canonical JSON of `v` has no deviations when read as `t`.
fn check_conforms<T: Serialize>(t: ObjectType, v: &T) -> Result<(), TestCaseError> {
    let value = serde_json::to_value(v).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let found = conformance(t, &value);
    prop_assert!(found.is_empty(), "{:?}: {:#?}\n{:#}", t, found, value);
    Ok(())
}

fn check_both<T>(t: ObjectType, v: &T) -> Result<(), TestCaseError>
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    check_roundtrip(v)?;
    check_conforms(t, v)
}
