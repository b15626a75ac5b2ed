//! What the engine reports: state changes, escalations the caller must answer, and the outcome
//! of each finished delegation.

use crate::store::{ArtifactRecord, DelegationRecord, DelegationState};
use serde::{Deserialize, Serialize};

/// Which kind of escalation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EscalationKind {
    /// INPUT_REQUIRED that the delegation's data cannot answer.
    Input,
    /// AUTH_REQUIRED.
    Auth,
}

/// The outcome of a finished delegation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Delegation id.
    pub id: String,
    /// Final state.
    pub state: DelegationState,
    /// Why.
    pub reason: Option<String>,
    /// Task id, if a task existed.
    pub task_id: Option<String>,
    /// Context id.
    pub context_id: Option<String>,
    /// The agent's final message text (data).
    pub message: Option<String>,
    /// Committed artifacts.
    pub artifacts: Vec<ArtifactRecord>,
}

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
    /// A delegation is finished.
    Done(Outcome),
}

/// The outcome recorded in a final record.
pub fn outcome_of(rec: &DelegationRecord) -> Outcome {
    Outcome {
        id: rec.id.clone(),
        state: rec.state,
        reason: rec.reason.clone(),
        task_id: rec.task_id.clone(),
        context_id: rec.context_id.clone(),
        message: rec.final_message.clone(),
        artifacts: rec
            .artifacts
            .iter()
            .filter(|a| a.committed)
            .cloned()
            .collect(),
    }
}
