//! The local deadline and the caller's cancel: interruptible waits, and ending a task at the
//! deadline (`CancelTask`, then reading the final state a bounded number of times).

use super::failure::{Call, Decision};
use super::{Control, Final, Interrupt, Next, Run};
use crate::bugs::Bug;
use crate::store::{DelegationState, state_of_task};
use a2a_protocol::{Message, Method, Task, TaskState};
use serde_json::json;
use std::time::Duration;
use tokio::time::Instant;

/// How many times the state is read after a `CancelTask`.
const POLL_AFTER_CANCEL: u32 = 7;
/// The first wait before reading the state again after a `CancelTask`; it doubles up to
/// [`POLL_CAP`].
const POLL_FIRST: Duration = Duration::from_millis(20);
/// The longest wait between two reads of the state after a `CancelTask`.
const POLL_CAP: Duration = Duration::from_millis(500);

/// The wait after the `i`-th read (from 0) of the state after a `CancelTask`.
fn poll_after_cancel_delay(i: u32) -> Duration {
    POLL_FIRST.saturating_mul(1u32 << i.min(16)).min(POLL_CAP)
}

impl Run {
    /// The local deadline fired: true when it is acted on, which is always but for the planted
    /// bug `no-local-deadline` (asked only here, when the deadline has come, so that a run whose
    /// deadline never fires never reaches the bug's site).
    pub(super) fn deadline_applies(&mut self) -> bool {
        if self.bugs.has(Bug::NoLocalDeadline) {
            self.deadline_ignored = true;
            return false;
        }
        true
    }

    /// Sleep for `d`, unless a control message or the local deadline interrupts (a push
    /// notification ends the sleep early, remembered in `pending_push_hint`).
    pub(super) async fn sleep_or_interrupt(&mut self, d: Duration) -> Option<Interrupt> {
        self.sleep_or_interrupt_with(d, true).await
    }

    /// [`Self::sleep_or_interrupt`], where `wake_on_push` says whether a push notification
    /// ends the sleep early; without it the push is only remembered (`pending_push_hint`) and
    /// the sleep goes on: a retry backoff is not cut short by a push (DLG-RETRY-02).
    pub(super) async fn sleep_or_interrupt_with(
        &mut self,
        d: Duration,
        wake_on_push: bool,
    ) -> Option<Interrupt> {
        let until = Instant::now() + d;
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(until) => return None,
                _ = tokio::time::sleep_until(self.deadline), if !self.deadline_ignored => {
                    if self.deadline_applies() {
                        return Some(Interrupt::Deadline);
                    }
                }
                c = self.ctl.recv() => match c {
                    Some(Control::Cancel) => return Some(Interrupt::Cancel),
                    Some(Control::PushHint) => {
                        self.pending_push_hint = true;
                        if wake_on_push {
                            return None;
                        }
                    }
                    Some(other) => tracing::debug!("ignored control {other:?}"),
                    None => return None,
                },
            }
        }
    }

    /// The local deadline passed or the caller canceled: CancelTask, then read the final state.
    pub(super) async fn on_deadline(&mut self, why: &str) -> Next {
        let Some(task_id) = self.rec.task_id.clone() else {
            return Next::Finish(if why.starts_with("canceled") {
                Final::new(
                    DelegationState::Canceled,
                    format!("{why} before a task existed"),
                )
            } else {
                Final::new(
                    DelegationState::DeadLettered,
                    format!("{why} before a task existed"),
                )
            });
        };
        let Some(agent) = self.agent.clone() else {
            return Next::Finish(Final::new(DelegationState::Failed, "no agent"));
        };
        let mut last: Option<Task> = None;
        for attempt in 0..3u32 {
            match self
                .inner
                .client
                .call(
                    &agent.endpoint,
                    Method::CancelTask,
                    json!({"id": task_id}),
                    self.auth().as_deref(),
                    Duration::from_millis(self.opts().request_timeout_ms.min(10_000)),
                )
                .await
            {
                Ok(r) => {
                    // An answer lacking REQUIRED fields is not read (the state is read below).
                    last = r
                        .task_lacks()
                        .is_empty()
                        .then(|| a2a_protocol::codec::decode_value::<Task>(&r.result).ok())
                        .flatten();
                    break;
                }
                Err(e) => match self.on_call_failed(Call::Cancel { why, attempt }, &e).await {
                    Decision::Next(n) => return n,
                    Decision::ReadState => break,
                    Decision::Again => {}
                },
            }
        }
        // Cancel's success is not guaranteed: read the state a bounded number of times, promptly
        // at first (an agent that honours the cancel is final within milliseconds), backing off
        // to at most POLL_CAP: in all about 1.6 s before the task is left as canceled locally.
        for i in 0..POLL_AFTER_CANCEL {
            let t = match last.take() {
                Some(t) => t,
                None => {
                    let r = self
                        .inner
                        .client
                        .call(
                            &agent.endpoint,
                            Method::GetTask,
                            json!({"id": task_id}),
                            self.auth().as_deref(),
                            Duration::from_secs(5),
                        )
                        .await;
                    match r
                        .ok()
                        .filter(|r| r.task_lacks().is_empty())
                        .and_then(|r| a2a_protocol::codec::decode_value::<Task>(&r.result).ok())
                    {
                        Some(t) => t,
                        None => break,
                    }
                }
            };
            if t.status.state.is_terminal() {
                let st = t.status.state;
                let msg = t.status.message.as_ref().map(Message::text);
                if st == TaskState::Completed {
                    // Completion won the race: commit what the completed task delivered.
                    let http = self.inner.client.http().clone();
                    if !t.artifacts.is_empty()
                        && let Err(e) = self.reassembler.apply_snapshot(&http, &t.artifacts).await
                    {
                        return self.artifact_failure(e).await;
                    }
                }
                let mut f = Final::new(
                    state_of_task(st),
                    format!("{why}; the agent reports {}", st.as_str()),
                );
                f.message = msg;
                return Next::Finish(f);
            }
            tokio::time::sleep(poll_after_cancel_delay(i)).await;
        }
        Next::Finish(Final::new(
            DelegationState::Canceled,
            format!("{why}; CancelTask sent, the agent did not confirm a final state"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_cancel_polling_starts_prompt_and_is_bounded() {
        assert_eq!(poll_after_cancel_delay(0), Duration::from_millis(20));
        assert_eq!(poll_after_cancel_delay(1), Duration::from_millis(40));
        assert_eq!(poll_after_cancel_delay(30), POLL_CAP);
        let total: Duration = (0..POLL_AFTER_CANCEL).map(poll_after_cancel_delay).sum();
        assert!(total <= Duration::from_secs(2), "{total:?}");
    }
}
