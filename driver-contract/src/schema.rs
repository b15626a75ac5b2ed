//! The JSON Schemas generated from these types: one file per driver message in
//! `docs/driver-schema/<type>.json` and the run index in `docs/report-schema/index.schema.json`.
//!
//! The files are committed so that a foreign delegator's author (and the harness, which embeds
//! them to check every line a delegator writes) can use them without Rust. The test
//! `tests/schemas.rs` fails when a committed file differs from [`generated_files`]; run it with
//! `UPDATE_SCHEMAS=1` to rewrite them:
//!
//! ```text
//! UPDATE_SCHEMAS=1 cargo test -p a2a-driver-contract --test schemas
//! ```
//!
//! Every object accepts members it does not describe (receivers ignore unknown fields), as the
//! hand-written schemas these replace did.

use crate::from_delegator::{Done, ErrorReply, Escalate, InitOk, SnapshotOk, StateChange};
use crate::report::RunIndex;
use crate::to_delegator::{Answer, Cancel, Credential, Delegate, Init};
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{Map, Value, json};

/// The `$id` prefix of every driver message schema.
pub const DRIVER_SCHEMA_BASE: &str = "https://a2a-delegation-harness.invalid/driver-schema/";

/// The `$id` of the run index schema.
pub const INDEX_SCHEMA_ID: &str =
    "https://a2a-delegation-harness.invalid/report-schema/index.schema.json";

/// Where the index schema is committed, relative to the repository root.
pub const INDEX_SCHEMA_PATH: &str = "docs/report-schema/index.schema.json";

/// Where the driver message schemas are committed, relative to the repository root.
pub const DRIVER_SCHEMA_DIR: &str = "docs/driver-schema";

/// Who writes a driver message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The harness writes it to the delegator's stdin ([`crate::ToDelegator`]).
    ToDelegator,
    /// The delegator writes it to its stdout ([`crate::FromDelegator`]).
    FromDelegator,
}

/// One driver message type and its schema.
#[derive(Debug, Clone, Copy)]
pub struct MessageType {
    /// The `type` value, which is also the schema's file stem.
    pub name: &'static str,
    /// Who writes it.
    pub direction: Direction,
    /// The schema's title.
    pub title: &'static str,
    body: fn(&mut SchemaGenerator) -> Value,
}

impl MessageType {
    /// The schema's file name, `<type>.json`.
    pub fn file_name(&self) -> String {
        format!("{}.json", self.name)
    }

    /// The schema (draft 2020-12, self-contained).
    pub fn schema(&self) -> Value {
        let mut generator = generator();
        let mut body = (self.body)(&mut generator);
        let obj = body.as_object_mut().map(std::mem::take).unwrap_or_default();
        let mut out = Map::new();
        out.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        out.insert(
            "$id".into(),
            json!(format!("{DRIVER_SCHEMA_BASE}{}", self.file_name())),
        );
        out.insert("title".into(), json!(self.title));
        for (k, v) in obj {
            if !matches!(k.as_str(), "$schema" | "title") {
                out.insert(k, v);
            }
        }
        out.insert("type".into(), json!("object"));
        let props = out
            .entry("properties")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        let mut with_type = Map::new();
        with_type.insert("type".into(), json!({"const": self.name}));
        with_type.extend(props);
        out.insert("properties".into(), Value::Object(with_type));
        let mut required = vec![json!("type")];
        if let Some(Value::Array(r)) = out.get("required") {
            required.extend(r.iter().cloned());
        }
        out.insert("required".into(), Value::Array(required));
        Value::Object(out)
    }
}

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
}

fn body_of<T: JsonSchema>(g: &mut SchemaGenerator) -> Value {
    g.root_schema_for::<T>().to_value()
}

fn empty_body(_: &mut SchemaGenerator) -> Value {
    json!({})
}

/// Every driver message type, harness → delegator first.
pub const MESSAGE_TYPES: &[MessageType] = &[
    MessageType {
        name: "init",
        direction: Direction::ToDelegator,
        title: "init: harness to delegator, first message",
        body: body_of::<Init>,
    },
    MessageType {
        name: "delegate",
        direction: Direction::ToDelegator,
        title: "delegate: start one delegation",
        body: body_of::<Delegate>,
    },
    MessageType {
        name: "answer",
        direction: Direction::ToDelegator,
        title: "answer: reply to an input escalation",
        body: body_of::<Answer>,
    },
    MessageType {
        name: "credential",
        direction: Direction::ToDelegator,
        title: "credential: scoped credential for an auth escalation",
        body: body_of::<Credential>,
    },
    MessageType {
        name: "cancel",
        direction: Direction::ToDelegator,
        title: "cancel: cancel a running delegation",
        body: body_of::<Cancel>,
    },
    MessageType {
        name: "snapshot",
        direction: Direction::ToDelegator,
        title: "snapshot: ask for the durable records",
        body: empty_body,
    },
    MessageType {
        name: "init_ok",
        direction: Direction::FromDelegator,
        title: "init_ok: delegator ready",
        body: body_of::<InitOk>,
    },
    MessageType {
        name: "state",
        direction: Direction::FromDelegator,
        title: "state: a delegation changed state",
        body: body_of::<StateChange>,
    },
    MessageType {
        name: "escalate",
        direction: Direction::FromDelegator,
        title: "escalate: the caller must answer",
        body: body_of::<Escalate>,
    },
    MessageType {
        name: "done",
        direction: Direction::FromDelegator,
        title: "done: a delegation is finished",
        body: body_of::<Done>,
    },
    MessageType {
        name: "snapshot_ok",
        direction: Direction::FromDelegator,
        title: "snapshot_ok: every durable delegation record",
        body: body_of::<SnapshotOk>,
    },
    MessageType {
        name: "error",
        direction: Direction::FromDelegator,
        title: "error: a request failed",
        body: body_of::<ErrorReply>,
    },
];

/// The message type with this `type` value.
pub fn message_type(name: &str) -> Option<&'static MessageType> {
    MESSAGE_TYPES.iter().find(|m| m.name == name)
}

/// The schema of `index.json`.
pub fn index_schema() -> Value {
    let mut v = generator().root_schema_for::<RunIndex>().to_value();
    if let Some(o) = v.as_object_mut() {
        o.insert("$id".into(), json!(INDEX_SCHEMA_ID));
        o.insert("title".into(), json!("index.json: one a2a-harness run"));
    }
    v
}

/// Every generated file: its path relative to the repository root and its contents (pretty
/// JSON with a final newline).
pub fn generated_files() -> Vec<(String, String)> {
    let pretty = |v: &Value| {
        let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
        s.push('\n');
        s
    };
    let mut files: Vec<(String, String)> = MESSAGE_TYPES
        .iter()
        .map(|m| {
            (
                format!("{DRIVER_SCHEMA_DIR}/{}", m.file_name()),
                pretty(&m.schema()),
            )
        })
        .collect();
    files.push((INDEX_SCHEMA_PATH.to_owned(), pretty(&index_schema())));
    files
}
