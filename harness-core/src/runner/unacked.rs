//! The requests a delegator process has not acknowledged yet, re-sent to the restarted process
//! after a crash (docs/driver-protocol.md, "Restart on the same store").
//!
//! A `delegate` is acknowledged by the first message about its id (`state`, `escalate`, `done`,
//! or the `error` that declines it): the contract makes everything acknowledged by an event
//! durable. A `cancel` is acknowledged only by the delegation's end: its `done`, a `state` in a
//! final state, or an `error` about it; another `state` may have been on its way before the
//! cancel was read. Answers and credentials are
//! not tracked here: a pending escalation is reported again by the restarted process, and the
//! harness answers that one.

use a2a_driver_contract::{FromDelegator, ToDelegator};

/// Requests written to the current process and not acknowledged yet, in the order written.
#[derive(Debug, Default)]
pub(super) struct Unacknowledged {
    pending: Vec<ToDelegator>,
}

impl Unacknowledged {
    /// Note a request written to the delegator (only `delegate` and `cancel` are tracked).
    pub(super) fn sent(&mut self, msg: &ToDelegator) {
        if matches!(msg, ToDelegator::Delegate(_) | ToDelegator::Cancel(_)) {
            self.pending.push(msg.clone());
        }
    }

    /// Drop the requests `msg` acknowledges.
    pub(super) fn received(&mut self, msg: &FromDelegator) {
        let (id, ends) = match msg {
            FromDelegator::State(s) => (Some(s.id.as_str()), s.state.is_final()),
            FromDelegator::Escalate(e) => (Some(e.id.as_str()), false),
            FromDelegator::Done(d) => (Some(d.id.as_str()), true),
            FromDelegator::Error(e) => (e.id.as_deref(), true),
            _ => (None, false),
        };
        let Some(id) = id else {
            return;
        };
        self.pending.retain(|p| match p {
            ToDelegator::Delegate(d) => d.id != id,
            ToDelegator::Cancel(c) => !(ends && c.id == id),
            _ => true,
        });
    }

    /// The unacknowledged requests, in the order written; none are tracked afterwards (the
    /// caller writes them again, which tracks them anew).
    pub(super) fn take(&mut self) -> Vec<ToDelegator> {
        std::mem::take(&mut self.pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_driver_contract::{Cancel, Delegate};
    use serde_json::json;

    fn delegate(id: &str) -> ToDelegator {
        ToDelegator::Delegate(
            serde_json::from_value::<Delegate>(json!({"id": id, "capability": "s", "text": "t"}))
                .unwrap(),
        )
    }

    fn from(v: serde_json::Value) -> FromDelegator {
        serde_json::from_value(v).unwrap()
    }

    fn ids(u: &mut Unacknowledged) -> Vec<String> {
        u.take()
            .iter()
            .map(|m| match m {
                ToDelegator::Delegate(d) => format!("delegate {}", d.id),
                ToDelegator::Cancel(c) => format!("cancel {}", c.id),
                _ => "other".into(),
            })
            .collect()
    }

    #[test]
    fn a_delegate_is_acknowledged_by_any_message_about_it_a_cancel_only_by_its_end() {
        let mut u = Unacknowledged::default();
        u.sent(&delegate("d1"));
        u.sent(&delegate("d2"));
        u.sent(&delegate("d3"));
        u.sent(&ToDelegator::Cancel(Cancel { id: "d1".into() }));
        u.received(&from(
            json!({"type": "state", "id": "d1", "state": "SENDING"}),
        ));
        u.received(&from(
            json!({"type": "error", "id": "d3", "code": "bad_request", "message": "no"}),
        ));
        assert_eq!(ids(&mut u), ["delegate d2", "cancel d1"]);
        assert!(u.take().is_empty(), "taken once");

        let mut u = Unacknowledged::default();
        u.sent(&delegate("d1"));
        u.sent(&ToDelegator::Cancel(Cancel { id: "d1".into() }));
        u.received(&from(
            json!({"type": "done", "id": "d1", "state": "CANCELED", "artifacts": []}),
        ));
        assert!(u.take().is_empty());
    }
}
