//! Interop with the official Python A2A SDK (`a2a-sdk` 1.3.0, proto package `lf.a2a.v1`).
//!
//! Every object type crosses both ways:
//!
//! - SDK → Rust: `interop/sdk_oracle.py emit` prints a fully populated instance of every message
//!   type (each one-of member included), serialised by the SDK's own `MessageToDict`. Each one
//!   (and each nested object type inside it) must pass [`conformance`] with no deviation, decode
//!   with [`decode_value`] and re-encode to the same JSON.
//! - Rust → SDK: fully populated Rust values of every type are serialised here and sent to
//!   `interop/sdk_oracle.py check`, which parses them strictly (protobuf `ParseDict` without
//!   `ignore_unknown_fields`) and runs the SDK's REQUIRED-field validator. Each must parse, have no
//!   required-field violation, and come back (`canonical`) equal to what was sent, so the SDK
//!   neither dropped nor renamed anything.
//! - Coverage: every message type the SDK module defines maps to an [`ObjectType`] (by
//!   [`ObjectType::from_name`]) and is covered by both directions, as is every member of every
//!   one-of.
//! - Required fields: for every type, the value this crate emits when nothing is set is judged the
//!   same by [`conformance`] (`MissingRequired`) and by the SDK's REQUIRED-field validator, except
//!   for the listed, explained disagreements.
//!
//! The Python side runs from `<repo>/.venv` (created by `bash scripts/setup-python.sh`, which
//! `scripts/test.sh` runs first). A missing environment fails the tests; it never skips them.

use a2a_protocol::codec::decode_value;
use a2a_protocol::conformance::{ObjectType, conformance};
use a2a_protocol::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};

use ObjectType as O;

#[path = "../common/mod.rs"]
mod common;
mod coverage;
mod fixtures;
mod items;
mod oracle;
mod required_fields;
mod rust_to_sdk;
mod sdk_to_rust;

use common::{md, ts};
use fixtures::*;
use items::*;
use oracle::*;
use rust_to_sdk::*;
use sdk_to_rust::*;

/// Upper bound for one oracle run (Python start-up is about half a second).
const ORACLE_TIMEOUT: Duration = Duration::from_secs(120);

const SETUP_HINT: &str = "Python environment missing: run `bash scripts/setup-python.sh` \
     (or the README's test command)";
