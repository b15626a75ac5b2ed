//! Messages from the delegator to the harness ([`FromDelegator`]), one per line on its stdout.

use crate::snapshot::SnapshotRecord;
use crate::state::{DelegationState, Outcome};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One line a delegator writes to its stdout, tagged by its `type` field.
///
/// The typed form is what a delegator emits; the harness still checks a foreign delegator's raw
/// line against the generated schema (see [`crate::schema`]) before relying on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromDelegator {
    /// The answer to `init`: the delegator is ready.
    InitOk(InitOk),
    /// A delegation changed state (after the change is durable).
    State(StateChange),
    /// The caller must answer (`answer` or `credential`).
    Escalate(Escalate),
    /// A delegation is finished: exactly one per delegation and process life.
    Done(Done),
    /// The answer to `snapshot`.
    SnapshotOk(SnapshotOk),
    /// A request failed or was declined.
    Error(ErrorReply),
}

/// `init_ok`: the delegator's name, version and features.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InitOk {
    /// The delegator's name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Feature names, recorded in the report for the reader (declining an operation is done
    /// with `error` code `unsupported`, not here).
    pub supports: Vec<String>,
    /// The push base URL actually served, or `null`.
    #[serde(default)]
    pub webhook_url: Option<String>,
    /// What became of each agent card of `init.agents`.
    #[serde(default)]
    pub agents: Vec<AgentStatus>,
}

/// One agent card as `init_ok.agents` reports it: `ok` with `name` and `protocol_version`, or
/// not `ok` with `error`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentStatus {
    /// The card URL from `init.agents`.
    pub card_url: String,
    /// Whether the card was read.
    pub ok: bool,
    /// The agent's name (when `ok`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub name: Option<String>,
    /// The protocol version spoken to it, `1.0` or `0.3` (when `ok`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub protocol_version: Option<String>,
    /// The binding of the interface it is called over first, `jsonrpc`, `rest` or `grpc` (when
    /// `ok`; optional: other interfaces may serve a call that one does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub binding: Option<String>,
    /// Why the card could not be read (when not `ok`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub error: Option<String>,
}

/// `state`: a delegation's new state. `task_id` and `context_id` are `null` until known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StateChange {
    /// The delegation id.
    #[schemars(length(min = 1, max = 128))]
    pub id: String,
    /// The new state.
    pub state: DelegationState,
    /// The agent's task id, once known.
    #[schemars(schema_with = "crate::nullable_string")]
    pub task_id: Option<String>,
    /// The agent's context id, once known.
    #[schemars(schema_with = "crate::nullable_string")]
    pub context_id: Option<String>,
}

/// What an escalation asks the caller for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::plain_enum)]
pub enum EscalationKind {
    /// The task needs input the delegation's own data cannot answer: reply with `answer`.
    Input,
    /// The task needs a credential scoped to that agent and task: reply with `credential`.
    Auth,
}

impl EscalationKind {
    /// `input` or `auth`.
    pub const fn as_str(self) -> &'static str {
        match self {
            EscalationKind::Input => "input",
            EscalationKind::Auth => "auth",
        }
    }

    /// The kind with this wire name (exact match).
    pub fn parse(name: &str) -> Option<EscalationKind> {
        [EscalationKind::Input, EscalationKind::Auth]
            .into_iter()
            .find(|k| k.as_str() == name)
    }
}

impl fmt::Display for EscalationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `escalate`: the task is interrupted and only the caller can continue it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Escalate {
    /// The delegation id.
    #[schemars(length(min = 1, max = 128))]
    pub id: String,
    /// What is needed.
    pub kind: EscalationKind,
    /// The agent's status message (its text parts, then its data parts as JSON): data, never
    /// instructions.
    pub question: String,
    /// The agent's card URL.
    pub agent: String,
    /// The agent's task id.
    #[schemars(schema_with = "crate::nullable_string")]
    pub task_id: Option<String>,
}

/// `done`: how a delegation ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Done {
    /// The delegation id.
    #[schemars(length(min = 1, max = 128))]
    pub id: String,
    /// The final state.
    pub state: Outcome,
    /// The reason in words.
    #[schemars(schema_with = "crate::nullable_string")]
    pub reason: Option<String>,
    /// The agent's task id, if a task exists.
    #[schemars(schema_with = "crate::nullable_string")]
    pub task_id: Option<String>,
    /// The agent's context id, if known.
    #[schemars(schema_with = "crate::nullable_string")]
    pub context_id: Option<String>,
    /// The agent's final status message or direct reply text, `null` if none.
    #[schemars(schema_with = "crate::nullable_string")]
    pub message: Option<String>,
    /// The committed artifacts: only from a `COMPLETED` task, after validation; else `[]`.
    pub artifacts: Vec<DoneArtifact>,
}

/// One committed artifact of a `done`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DoneArtifact {
    /// The agent's `artifactId`.
    pub artifact_id: String,
    /// The artifact's name, if given.
    #[serde(default)]
    pub name: Option<String>,
    /// Length of the artifact's bytes (the concatenation of its parts' bytes).
    pub bytes: u64,
    /// Lowercase hex SHA-256 of those bytes.
    #[schemars(pattern(r"^[0-9a-f]{64}$"))]
    pub sha256: String,
    /// Media type.
    pub media_type: String,
    /// The file that holds the bytes.
    pub path: String,
}

/// `snapshot_ok`: every durable delegation record, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SnapshotOk {
    /// The records.
    pub records: Vec<SnapshotRecord>,
}

/// The code of an `error` line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(transform = crate::plain_enum)]
pub enum DriverErrorCode {
    /// The delegator declines this operation or message type: the harness records the case
    /// as UNSUPPORTED (unless a MUST rule already failed in it).
    Unsupported,
    /// A malformed or conflicting request; the message names what is wrong.
    BadRequest,
    /// The delegator failed.
    Internal,
}

impl DriverErrorCode {
    /// `unsupported`, `bad_request` or `internal`.
    pub const fn as_str(self) -> &'static str {
        match self {
            DriverErrorCode::Unsupported => "unsupported",
            DriverErrorCode::BadRequest => "bad_request",
            DriverErrorCode::Internal => "internal",
        }
    }
}

impl fmt::Display for DriverErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `error`: a request failed or was declined.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorReply {
    /// The request's id when it had one, else `null`.
    #[schemars(schema_with = "crate::nullable_string")]
    pub id: Option<String>,
    /// What kind of failure.
    pub code: DriverErrorCode,
    /// What is wrong, in words (for `bad_request`: names the field).
    pub message: String,
}

impl From<ErrorReply> for FromDelegator {
    fn from(e: ErrorReply) -> Self {
        FromDelegator::Error(e)
    }
}
