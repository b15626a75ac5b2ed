//! Crash injection: triggers evaluated over the journal, the tripwire that SIGKILLs the
//! delegator's process group at the trigger, and finding a trigger by polling.

use crate::scenario::CrashTrigger;
use a2a_mock_agents::{Entry, Event};

/// A crash trigger evaluated one journal entry at a time.
#[derive(Debug, Clone)]
pub(super) struct TriggerState {
    trigger: CrashTrigger,
    k: u64,
    chunks: u64,
}

impl TriggerState {
    pub(super) fn new(trigger: CrashTrigger, k: u64) -> Self {
        TriggerState {
            trigger,
            k,
            chunks: 0,
        }
    }

    /// True when `e` fires the trigger.
    pub(super) fn observe(&mut self, e: &Entry) -> bool {
        match (&e.event, self.trigger) {
            (
                Event::Request {
                    method: Some(m), ..
                },
                CrashTrigger::FirstRequest,
            ) => m.contains("Message") || m.starts_with("message/"),
            (Event::ConnectionDropped { phase, .. }, CrashTrigger::IndefiniteSend) => {
                phase == "after_processing"
            }
            (Event::ArtifactChunk { .. }, CrashTrigger::AfterChunks) => {
                self.chunks += 1;
                self.chunks >= self.k.max(1)
            }
            (Event::TaskState { state, .. }, CrashTrigger::InputRound) => {
                state == "TASK_STATE_INPUT_REQUIRED"
            }
            (Event::Fault { kind, .. }, CrashTrigger::RetryBackoff) => {
                kind.starts_with("http_status")
            }
            _ => false,
        }
    }
}

/// True for crash triggers that must strike before the delegator sees the agent's next
/// output (the request reached the agent; the response was dropped; the K-th chunk left), so
/// they are injected synchronously by a journal tripwire. The other two (an input round, a
/// retry backoff) mean that the delegator has seen the question or the error and waits: a kill
/// before it could see them would test the first request again. They keep the journal polling
/// (up to 50 ms after the event).
pub(super) fn at_the_agent(trigger: CrashTrigger) -> bool {
    matches!(
        trigger,
        CrashTrigger::FirstRequest | CrashTrigger::IndefiniteSend | CrashTrigger::AfterChunks
    )
}

pub(super) fn crash_fired(trigger: CrashTrigger, k: u64, j: &[Entry]) -> Option<u64> {
    let mut t = TriggerState::new(trigger, k);
    j.iter().find(|e| t.observe(e)).map(|e| e.seq)
}
