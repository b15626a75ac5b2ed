//! # a2a-driver-contract: the typed driver contract
//!
//! The one definition of what the `a2a-harness` and a delegator under test say to each other
//! (`docs/driver-protocol.md`) and of what the harness reports:
//!
//! - [`ToDelegator`]: `init`, `delegate`, `answer`, `credential`, `cancel`, `snapshot`;
//! - [`FromDelegator`]: `init_ok`, `state`, `escalate`, `done`, `snapshot_ok`, `error`;
//! - the vocabulary they use: [`DelegationState`], [`Outcome`] (the final states of `done`),
//!   [`EscalationKind`], [`DriverErrorCode`], [`Priority`], the [`SnapshotRecord`];
//! - the run index `index.json` ([`RunIndex`], with its [`INDEX_SCHEMA_VERSION`]) and the
//!   [`HarnessExitCode`]s of `a2a-harness`;
//! - [`schema`]: the JSON Schemas generated from these types, committed under `docs/`.
//!
//! Both directions are newline-delimited JSON objects tagged by a `type` field; receivers
//! ignore fields they do not know. The crate depends on serde and schemars only, so a delegator
//! written in Rust can use it without the harness.
//!
//! ```
//! use a2a_driver_contract::{DelegationState, Delegate, FromDelegator, ToDelegator};
//!
//! // Parse one line a delegator wrote.
//! let line = r#"{"type":"state","id":"d1","state":"WORKING","task_id":"t-1","context_id":null}"#;
//! let msg = FromDelegator::from_line(line)?;
//! assert!(matches!(&msg, FromDelegator::State(s) if s.state == DelegationState::Working));
//!
//! // Write one line to a delegator.
//! let delegate = ToDelegator::Delegate(Delegate::new("d1", "clause-extraction", "Extract"));
//! let line = delegate.to_line()?;
//! assert!(line.starts_with(r#"{"type":"delegate","id":"d1""#) && line.ends_with('\n'));
//! assert_eq!(ToDelegator::from_line(&line)?, delegate);
//! # Ok::<(), serde_json::Error>(())
//! ```

#![warn(missing_docs)]

mod exit;
mod from_delegator;
#[cfg(feature = "process")]
pub mod process;
pub mod report;
pub mod schema;
mod snapshot;
mod state;
mod to_delegator;

pub use exit::HarnessExitCode;
pub use from_delegator::{
    AgentStatus, Done, DoneArtifact, DriverErrorCode, ErrorReply, Escalate, EscalationKind,
    FromDelegator, InitOk, SnapshotOk, StateChange,
};
pub use report::{INDEX_SCHEMA_VERSION, RunIndex};
pub use snapshot::{InputRound, RecordArtifact, RecordError, SnapshotRecord};
pub use state::{DelegationState, Outcome};
pub use to_delegator::{
    Answer, ArtifactSpec, BindingName, Cancel, CardSignaturePolicy, ChildDelegate, Credential,
    Delegate, Init, InitOptions, Priority, ToDelegator,
};

/// The longest line either side must accept (16 MiB); a longer line is skipped and answered
/// with `error` code [`DriverErrorCode::BadRequest`].
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

macro_rules! line_io {
    ($t:ty) => {
        impl $t {
            /// Parse one protocol line (surrounding whitespace, including the newline, is
            /// ignored). Unknown fields are ignored; an unknown `type` is an error.
            pub fn from_line(line: &str) -> Result<Self, serde_json::Error> {
                serde_json::from_str(line.trim())
            }

            /// The message as one protocol line: compact JSON ending in `\n`.
            pub fn to_line(&self) -> Result<String, serde_json::Error> {
                let mut s = serde_json::to_string(self)?;
                s.push('\n');
                Ok(s)
            }

            /// The `type` value of this message.
            pub fn type_name(&self) -> &'static str {
                self.into()
            }
        }
    };
}

line_io!(ToDelegator);
line_io!(FromDelegator);

impl From<&ToDelegator> for &'static str {
    fn from(m: &ToDelegator) -> Self {
        match m {
            ToDelegator::Init(_) => "init",
            ToDelegator::Delegate(_) => "delegate",
            ToDelegator::Answer(_) => "answer",
            ToDelegator::Credential(_) => "credential",
            ToDelegator::Cancel(_) => "cancel",
            ToDelegator::Snapshot => "snapshot",
        }
    }
}

impl From<&FromDelegator> for &'static str {
    fn from(m: &FromDelegator) -> Self {
        match m {
            FromDelegator::InitOk(_) => "init_ok",
            FromDelegator::State(_) => "state",
            FromDelegator::Escalate(_) => "escalate",
            FromDelegator::Done(_) => "done",
            FromDelegator::SnapshotOk(_) => "snapshot_ok",
            FromDelegator::Error(_) => "error",
        }
    }
}

/// The schema of a member that must be present and may be `null` (`Option<String>` without a
/// serde default): schemars alone would either drop `null` or the requirement.
pub(crate) fn nullable_string(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": ["string", "null"]})
}

/// Render a unit-variant enum as `{"type": "string", "enum": [...]}` instead of a `oneOf` of
/// documented constants, so a validator's message lists the allowed values.
pub(crate) fn plain_enum(schema: &mut schemars::Schema) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    let Some(serde_json::Value::Array(variants)) = obj.remove("oneOf") else {
        return;
    };
    let consts: Option<Vec<serde_json::Value>> =
        variants.iter().map(|v| v.get("const").cloned()).collect();
    match consts {
        Some(values) => {
            obj.insert("type".into(), "string".into());
            obj.insert("enum".into(), serde_json::Value::Array(values));
        }
        None => {
            obj.insert("oneOf".into(), serde_json::Value::Array(variants));
        }
    }
}
