//! Proptest strategies for every wire type: the leaves here, composite types in the submodules.

use super::*;

mod agent_card;
mod jsonrpc;
mod messages;
mod requests;

pub(crate) use agent_card::*;
pub(crate) use jsonrpc::*;
pub(crate) use messages::*;
pub(crate) use requests::*;

/// A non-empty identifier (required strings).
pub(crate) fn ident() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9][a-zA-Z0-9_.:-]{0,11}"
}

/// Any printable text, possibly empty.
pub(crate) fn text() -> impl Strategy<Value = String> {
    "\\PC{0,12}"
}

pub(crate) fn url() -> impl Strategy<Value = String> {
    "https://[a-z]{1,8}\\.example(/[a-z0-9]{1,6}){0,2}"
}

pub(crate) fn media_type() -> impl Strategy<Value = String> {
    select(vec![
        "text/plain",
        "application/json",
        "image/png",
        "application/pdf",
        "text/markdown",
    ])
    .prop_map(str::to_string)
}

pub(crate) fn valid_role() -> impl Strategy<Value = Role> {
    select(vec![Role::User, Role::Agent])
}

pub(crate) fn valid_state() -> impl Strategy<Value = TaskState> {
    select(TaskState::ALL[1..].to_vec())
}

/// A timestamp at millisecond precision anywhere in years 0001-9999.
pub(crate) fn timestamp() -> impl Strategy<Value = Timestamp> {
    (
        1i32..=9999,
        1u8..=12,
        1u8..=28,
        0u8..24,
        0u8..60,
        0u8..60,
        0u16..1000,
    )
        .prop_map(|(y, mo, d, h, mi, s, ms)| {
            let text = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z");
            let t = Timestamp::parse(&text).expect("valid timestamp");
            assert_eq!(t.to_rfc3339(), text);
            t
        })
}

/// A finite number that survives text round trips exactly (a dyadic fraction).
pub(crate) fn exact_f64() -> impl Strategy<Value = f64> {
    (any::<i32>(), 0u32..10).prop_map(|(m, e)| f64::from(m) / f64::from(1u32 << e))
}

pub(crate) fn json_key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z_-]{1,8}",
        select(vec![
            "kind", "text", "raw", "url", "data", "task", "message", "state", "id", "parts",
            "x-deleg", "@type",
        ])
        .prop_map(str::to_string),
    ]
}

pub(crate) fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        exact_f64().prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

/// Any JSON value (google.protobuf.Value), small and shallow.
pub(crate) fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(Value::Array),
            btree_map(json_key(), inner, 0..5).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Any JSON value except `null` (`Option<Value>` fields cannot carry a present `null`).
pub(crate) fn non_null_json() -> impl Strategy<Value = Value> {
    json_value().prop_filter("not null", |v| !v.is_null())
}

/// A google.protobuf.Struct.
pub(crate) fn metadata() -> impl Strategy<Value = Metadata> {
    btree_map(json_key(), json_value(), 0..4).prop_map(|m| m.into_iter().collect::<Map<_, _>>())
}

pub(crate) fn string_map() -> impl Strategy<Value = BTreeMap<String, String>> {
    btree_map("[a-z:._]{1,10}", text(), 0..3)
}
