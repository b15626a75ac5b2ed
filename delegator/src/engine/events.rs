//! What the engine reports: state changes, escalations the caller must answer, and how each
//! finished delegation ended. The vocabulary is the driver contract's ([`EscalationKind`],
//! [`Done`], [`Outcome`]): the engine reports exactly what the driver writes.

use crate::store::{ArtifactRecord, DelegationRecord, DelegationState};
pub use a2a_driver_contract::{Done, DoneArtifact, EscalationKind, Outcome};

/// What the engine reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A delegation changed state.
    State {
        /// Delegation id.
        id: String,
        /// New state.
        state: DelegationState,
        /// Task id.
        task_id: Option<String>,
        /// Context id.
        context_id: Option<String>,
    },
    /// The caller must answer.
    Escalate {
        /// Delegation id.
        id: String,
        /// Input or auth.
        kind: EscalationKind,
        /// The agent's question (data).
        question: String,
        /// The agent's card URL.
        agent: String,
        /// Task id.
        task_id: Option<String>,
    },
    /// A delegation is finished (its final record is durable).
    Done(Done),
    /// The delegator failed on a delegation: its final state could not be made durable, so no
    /// `done` follows in this process (a restart resumes it from its last durable state). The
    /// driver reports it as `error` with code `internal`.
    Error {
        /// Delegation id.
        id: String,
        /// What failed.
        message: String,
    },
}

/// A committed artifact as `done` reports it.
pub fn done_artifact(a: &ArtifactRecord) -> DoneArtifact {
    DoneArtifact {
        artifact_id: a.artifact_id.clone(),
        name: a.name.clone(),
        bytes: a.bytes,
        sha256: a.sha256.clone(),
        media_type: a.media_type.clone(),
        path: a.path.clone(),
    }
}

/// How a final record ended. A record that is not final (which the engine never reports as
/// done) is reported as `FAILED`.
pub fn outcome_of(rec: &DelegationRecord) -> Done {
    Done {
        id: rec.id.clone(),
        state: rec.state.outcome().unwrap_or(Outcome::Failed),
        reason: rec.reason.clone(),
        task_id: rec.task_id.clone(),
        context_id: rec.context_id.clone(),
        message: rec.final_message.clone(),
        artifacts: rec
            .artifacts
            .iter()
            .filter(|a| a.committed)
            .map(done_artifact)
            .collect(),
    }
}
