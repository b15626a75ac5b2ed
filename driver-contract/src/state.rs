//! Delegation states ([`DelegationState`]) and the final ones a `done` carries ([`Outcome`]).

use serde::{Deserialize, Serialize};
use std::fmt;

/// The state of a delegation as `state` lines and snapshot records report it: the A2A task
/// states without their `TASK_STATE_` prefix, plus the local states of a delegator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(transform = crate::plain_enum)]
pub enum DelegationState {
    /// Local: the intent is recorded; the first send is in flight or being retried.
    Sending,
    /// A2A `TASK_STATE_SUBMITTED`.
    Submitted,
    /// A2A `TASK_STATE_WORKING`.
    Working,
    /// A2A `TASK_STATE_INPUT_REQUIRED`.
    InputRequired,
    /// A2A `TASK_STATE_AUTH_REQUIRED`.
    AuthRequired,
    /// A2A `TASK_STATE_COMPLETED` (final).
    Completed,
    /// A2A `TASK_STATE_FAILED`, or a local failure such as a rejected artifact (final).
    Failed,
    /// A2A `TASK_STATE_CANCELED` (final).
    Canceled,
    /// A2A `TASK_STATE_REJECTED` (final).
    Rejected,
    /// A2A `TASK_STATE_UNSPECIFIED`, also used for a state name the delegator does not know;
    /// the task is still observed.
    Unspecified,
    /// Local: the send got a definite error (final).
    SendFailed,
    /// Local: the agent replied with a message; no task exists (final).
    AnsweredDirect,
    /// Local: the agent does not know the task (-32001) (final).
    Lost,
    /// Local: retries exhausted; the delegation is in the dead-letter queue (final).
    DeadLettered,
    /// Local: refused before anything was sent (limits, routing) (final).
    Refused,
}

impl DelegationState {
    /// Every state, in the order of the schemas.
    pub const ALL: [DelegationState; 15] = [
        DelegationState::Sending,
        DelegationState::Submitted,
        DelegationState::Working,
        DelegationState::InputRequired,
        DelegationState::AuthRequired,
        DelegationState::Completed,
        DelegationState::Failed,
        DelegationState::Canceled,
        DelegationState::Rejected,
        DelegationState::Unspecified,
        DelegationState::SendFailed,
        DelegationState::AnsweredDirect,
        DelegationState::Lost,
        DelegationState::DeadLettered,
        DelegationState::Refused,
    ];

    /// The wire name, such as `INPUT_REQUIRED`.
    pub const fn as_str(self) -> &'static str {
        match self {
            DelegationState::Sending => "SENDING",
            DelegationState::Submitted => "SUBMITTED",
            DelegationState::Working => "WORKING",
            DelegationState::InputRequired => "INPUT_REQUIRED",
            DelegationState::AuthRequired => "AUTH_REQUIRED",
            DelegationState::Completed => "COMPLETED",
            DelegationState::Failed => "FAILED",
            DelegationState::Canceled => "CANCELED",
            DelegationState::Rejected => "REJECTED",
            DelegationState::Unspecified => "UNSPECIFIED",
            DelegationState::SendFailed => "SEND_FAILED",
            DelegationState::AnsweredDirect => "ANSWERED_DIRECT",
            DelegationState::Lost => "LOST",
            DelegationState::DeadLettered => "DEAD_LETTERED",
            DelegationState::Refused => "REFUSED",
        }
    }

    /// The state with this wire name (exact match).
    pub fn parse(name: &str) -> Option<DelegationState> {
        DelegationState::ALL
            .into_iter()
            .find(|s| s.as_str() == name)
    }

    /// The outcome when this state is final; `None` while the delegation is still open.
    pub const fn outcome(self) -> Option<Outcome> {
        Some(match self {
            DelegationState::Completed => Outcome::Completed,
            DelegationState::Failed => Outcome::Failed,
            DelegationState::Canceled => Outcome::Canceled,
            DelegationState::Rejected => Outcome::Rejected,
            DelegationState::AnsweredDirect => Outcome::AnsweredDirect,
            DelegationState::Lost => Outcome::Lost,
            DelegationState::DeadLettered => Outcome::DeadLettered,
            DelegationState::Refused => Outcome::Refused,
            DelegationState::SendFailed => Outcome::SendFailed,
            _ => return None,
        })
    }

    /// True for the nine final states (those an [`Outcome`] names).
    pub const fn is_final(self) -> bool {
        self.outcome().is_some()
    }
}

impl fmt::Display for DelegationState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a delegation ended: the `state` of a `done` line, one of the nine final
/// [`DelegationState`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[schemars(transform = crate::plain_enum)]
pub enum Outcome {
    /// The task completed and its artifacts were validated and committed.
    Completed,
    /// The task failed, or the delegator failed it (for example a rejected artifact, the input
    /// round cap, the deadline).
    Failed,
    /// The task was canceled.
    Canceled,
    /// The agent rejected the task.
    Rejected,
    /// The agent replied with a message instead of a task.
    AnsweredDirect,
    /// The agent no longer knows the task (-32001).
    Lost,
    /// Retries exhausted; the delegation is in the dead-letter queue.
    DeadLettered,
    /// Refused before anything was sent (limits, routing).
    Refused,
    /// The send got a definite error.
    SendFailed,
}

impl Outcome {
    /// Every outcome, in the order of the schemas.
    pub const ALL: [Outcome; 9] = [
        Outcome::Completed,
        Outcome::Failed,
        Outcome::Canceled,
        Outcome::Rejected,
        Outcome::AnsweredDirect,
        Outcome::Lost,
        Outcome::DeadLettered,
        Outcome::Refused,
        Outcome::SendFailed,
    ];

    /// The state this outcome is.
    pub const fn state(self) -> DelegationState {
        match self {
            Outcome::Completed => DelegationState::Completed,
            Outcome::Failed => DelegationState::Failed,
            Outcome::Canceled => DelegationState::Canceled,
            Outcome::Rejected => DelegationState::Rejected,
            Outcome::AnsweredDirect => DelegationState::AnsweredDirect,
            Outcome::Lost => DelegationState::Lost,
            Outcome::DeadLettered => DelegationState::DeadLettered,
            Outcome::Refused => DelegationState::Refused,
            Outcome::SendFailed => DelegationState::SendFailed,
        }
    }

    /// The wire name, such as `DEAD_LETTERED`.
    pub const fn as_str(self) -> &'static str {
        self.state().as_str()
    }

    /// The outcome with this wire name (exact match).
    pub fn parse(name: &str) -> Option<Outcome> {
        DelegationState::parse(name).and_then(DelegationState::outcome)
    }
}

impl From<Outcome> for DelegationState {
    fn from(o: Outcome) -> Self {
        o.state()
    }
}

impl PartialEq<DelegationState> for Outcome {
    fn eq(&self, other: &DelegationState) -> bool {
        self.state() == *other
    }
}

impl PartialEq<Outcome> for DelegationState {
    fn eq(&self, other: &Outcome) -> bool {
        *self == other.state()
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde_and_parse() {
        for s in DelegationState::ALL {
            let json = serde_json::to_value(s).unwrap();
            assert_eq!(json, s.as_str());
            assert_eq!(DelegationState::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::from_value::<DelegationState>(json).unwrap(), s);
        }
        assert_eq!(DelegationState::parse("working"), None);
    }

    #[test]
    fn outcomes_are_exactly_the_final_states() {
        let finals: Vec<DelegationState> = DelegationState::ALL
            .into_iter()
            .filter(|s| s.is_final())
            .collect();
        assert_eq!(finals.len(), Outcome::ALL.len());
        for o in Outcome::ALL {
            assert_eq!(o.state().outcome(), Some(o));
            assert_eq!(Outcome::parse(o.as_str()), Some(o));
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
        }
        assert_eq!(Outcome::parse("WORKING"), None);
    }
}
