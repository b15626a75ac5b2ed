//! Support shared by several test binaries of this crate: constructors for fixture values.
//!
//! A binary at `tests/NAME.rs` includes it with `mod common;`, one at `tests/NAME/main.rs` with
//! `#[path = "../common/mod.rs"] mod common;`.

use a2a_protocol::{Metadata, Timestamp};
use serde_json::Value;

/// The timestamp written in a test as RFC 3339 text.
pub fn ts(s: &str) -> Timestamp {
    Timestamp::parse(s).expect("valid timestamp")
}

/// Metadata (a `google.protobuf.Struct`) from a JSON object literal.
pub fn md(v: Value) -> Metadata {
    match v {
        Value::Object(m) => m,
        other => panic!("metadata must be an object, got {other}"),
    }
}
