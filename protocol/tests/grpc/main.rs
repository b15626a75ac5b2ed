//! The gRPC binding (`a2a_protocol::grpc`): the compiled proto against the official Python SDK's
//! descriptor, protobuf round trips of every wire type, framing, status trailers, the
//! conformance check on protobuf payloads, and protobuf bytes crossing to and from the SDK
//! (`interop/sdk_oracle.py pb-encode|pb-decode|pb-descriptor`).
//!
//! The Python side runs from `<repo>/.venv` (`bash scripts/setup-python.sh`); a missing
//! environment fails the tests that need it, it never skips them.
#![allow(dead_code, unused_imports)]

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
#[path = "../interop_sdk/fixtures.rs"]
mod fixtures;
#[path = "../interop_sdk/items.rs"]
mod items;
#[path = "../interop_sdk/oracle.rs"]
mod oracle;

mod conformance_pb;
mod descriptor;
mod framing;
mod props;
mod roundtrip;
mod sdk_bytes;
mod status;

use common::{md, ts};
use fixtures::*;
use items::*;
use oracle::*;

/// Upper bound for one oracle run (Python start-up is about half a second).
const ORACLE_TIMEOUT: Duration = Duration::from_secs(120);

const SETUP_HINT: &str = "Python environment missing: run `bash scripts/setup-python.sh` \
     (or the README's test command)";
