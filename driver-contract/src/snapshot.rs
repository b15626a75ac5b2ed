//! The durable delegation record of a `snapshot_ok` ([`SnapshotRecord`]).
//!
//! The published schema constrains only the fields it always did (the rest are described in
//! `docs/driver-protocol.md` but accepted in any shape from a foreign delegator); the Rust types
//! here are what the reference delegator writes.

use crate::from_delegator::EscalationKind;
use crate::state::DelegationState;
use crate::to_delegator::any_value;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One durable delegation record. Secrets are never included: no scoped credential, no push
/// token (only its sha256), no credential of any kind (DLG-SECRET-01).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SnapshotRecord {
    /// Delegation id.
    pub id: String,
    /// Parent delegation of a fan-out child.
    #[serde(default)]
    pub parent_id: Option<String>,
    /// The accepted `delegate` request, as the delegator recorded it.
    #[serde(default)]
    pub request: Map<String, Value>,
    /// Card URL of the chosen agent (`null` until routed).
    #[serde(default)]
    pub agent_url: Option<String>,
    /// JSON-RPC endpoint of the chosen agent.
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub rpc_url: Option<String>,
    /// Protocol version spoken to the agent (`1.0` or `0.3`).
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub protocol_version: Option<String>,
    /// Skill id.
    #[serde(default)]
    pub skill: String,
    /// Every `messageId` sent, by purpose (`create`, `input-1`, `auth-2`, …).
    pub message_ids: BTreeMap<String, String>,
    /// Remote task id, recorded as soon as it is known.
    #[schemars(schema_with = "crate::nullable_string")]
    pub task_id: Option<String>,
    /// Remote context id.
    #[schemars(schema_with = "crate::nullable_string")]
    pub context_id: Option<String>,
    /// State.
    pub state: DelegationState,
    /// Why the delegation ended as it did (or what it waits for).
    #[serde(default)]
    pub reason: Option<String>,
    /// Budget given by the caller.
    #[serde(default)]
    pub budget_usd: f64,
    /// Share sent to the agent in `x-deleg` (the rest is the reserve).
    #[serde(default)]
    pub budget_share: f64,
    /// Spend reported by the agent, 0 when unknown.
    #[serde(default)]
    pub spend_usd: f64,
    /// Local deadline (RFC 3339).
    #[serde(default)]
    pub deadline: String,
    /// Depth at which the work arrived.
    #[serde(default)]
    #[schemars(with = "i64")]
    pub depth: u32,
    /// Chain as received.
    #[serde(default)]
    pub chain: Vec<String>,
    /// The delegation this one refines.
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub refine_of: Option<String>,
    /// `referenceTaskIds` sent.
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub reference_task_ids: Vec<String>,
    /// Observed by streaming (else polling).
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub streaming: bool,
    /// Lowercase hex sha256 of each push token configured for this delegation, oldest first
    /// (a recovery resend may configure a new one). Never the token itself: a push token is a
    /// secret (DLG-SECRET-01); an incoming token is hashed and compared with these.
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub push_token_sha256: Vec<String>,
    /// Send attempts made (the first send counts as 1).
    #[schemars(with = "i64")]
    pub attempts: u32,
    /// The last error.
    #[serde(default)]
    pub last_error: Option<String>,
    /// JSON-RPC code of a definite error that ended the delegation.
    #[serde(default)]
    pub error_code: Option<i64>,
    /// The agent's final status message or direct reply.
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub final_message: Option<String>,
    /// Priority (from the request).
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub priority: Option<String>,
    /// Created (RFC 3339).
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub created_at: Option<String>,
    /// Last changed (RFC 3339).
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub updated_at: Option<String>,
    /// When it reached a final state (RFC 3339).
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub terminal_at: Option<String>,
    /// True when it is in the dead-letter queue.
    pub dlq: bool,
    /// Input and auth rounds.
    pub input_rounds: Vec<InputRound>,
    /// Artifacts (partial, uncommitted ones only for dead-lettered delegations).
    pub artifacts: Vec<RecordArtifact>,
    /// Errors seen (the reference delegator keeps the latest 50).
    #[serde(default)]
    #[schemars(schema_with = "array_of_objects")]
    pub errors: Vec<RecordError>,
}

fn array_of_objects(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "array", "items": {"type": "object"}})
}

/// One input or auth round of a record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InputRound {
    /// 1-based round number within the delegation.
    #[schemars(with = "i64")]
    pub round: u32,
    /// `input` or `auth`.
    pub kind: EscalationKind,
    /// The agent's question.
    pub question: String,
    /// The `messageId` of the agent's status message, when it had one.
    #[serde(default)]
    pub question_message_id: Option<String>,
    /// The answer sent (for auth rounds a placeholder, never the credential).
    #[schemars(schema_with = "crate::nullable_string")]
    pub answer: Option<String>,
    /// Where the answer came from: `inputs.<key>`, `caller`, or `cap_exceeded`.
    #[schemars(schema_with = "crate::nullable_string")]
    pub source: Option<String>,
    /// The `messageId` of the answer.
    #[serde(default)]
    pub answer_message_id: Option<String>,
    /// When the question was seen.
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub asked_at: Option<String>,
    /// When the answer was decided.
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub answered_at: Option<String>,
    /// When the agent acknowledged the answer.
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub sent_at: Option<String>,
}

/// An artifact of a record, with its provenance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecordArtifact {
    /// The agent's `artifactId`.
    pub artifact_id: String,
    /// The artifact's name, if given.
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub name: Option<String>,
    /// Media type.
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub media_type: Option<String>,
    /// Byte length.
    #[schemars(with = "i64")]
    pub bytes: u64,
    /// Lowercase hex SHA-256 of the bytes.
    pub sha256: String,
    /// The file holding the bytes.
    #[serde(default)]
    #[schemars(schema_with = "any_value")]
    pub path: Option<String>,
    /// Provenance: the agent's card URL.
    pub agent_url: String,
    /// Provenance: the skill.
    pub skill: String,
    /// Provenance: the task.
    pub task_id: String,
    /// True once committed from a COMPLETED task; false for partial (dead-lettered) artifacts.
    pub committed: bool,
}

/// One error seen while working on a delegation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecordError {
    /// When (RFC 3339).
    pub at: String,
    /// The operation, such as `SendMessage` or `artifact`.
    pub op: String,
    /// JSON-RPC code, if the error was one.
    #[serde(default)]
    pub code: Option<i64>,
    /// HTTP status, if the error was one.
    #[serde(default)]
    pub http_status: Option<u16>,
    /// True when it was treated as transient (retried).
    #[serde(default)]
    pub transient: bool,
    /// Description.
    pub message: String,
}
