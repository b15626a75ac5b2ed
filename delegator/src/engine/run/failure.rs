//! Failed calls: the one place that decides what a delegation does after a call to its agent
//! fails (retry at once with other settings, back off, read the task's state, end it as
//! `SEND_FAILED`, `LOST`, `FAILED` or `DEAD_LETTERED`, fail and cancel on a protocol violation).
//!
//! [`decide`] is the pure decision table (which call, which error ⇒ which [`Step`]), built on
//! [`policy::error_action`] for definite JSON-RPC errors; [`Run::on_call_failed`] records the
//! error, applies the step and tells the caller how to go on ([`Decision`]); [`Run::backoff`]
//! spends one of the three retry budgets (the first send, observation, continuation).

use super::{Final, Interrupt, Next, Run};
use crate::bugs::Bug;
use crate::client::ClientError;
use crate::policy::{self, ErrorAction, Op};
use crate::store::DelegationState;
use std::time::Duration;

/// The call that failed, with what the decision depends on.
#[derive(Debug, Clone, Copy)]
pub(super) enum Call<'a> {
    /// The first send (`SendMessage`, or `SendStreamingMessage` when `streaming`), before a task
    /// exists; `push`: the send carries a push-notification config.
    Send {
        /// Sent as `SendStreamingMessage`.
        streaming: bool,
        /// The send carries a push-notification config.
        push: bool,
    },
    /// Reading an open stream. `task`: a task exists already; `ended`: the task's final state
    /// was already received on it (the grace period after it).
    Stream {
        /// A task exists already.
        task: bool,
        /// The final state already received, if any.
        ended: Option<&'a Final>,
    },
    /// `GetTask` of our task.
    GetTask {
        /// Our task.
        task_id: &'a str,
    },
    /// `SubscribeToTask` of our task.
    Subscribe {
        /// Our task.
        task_id: &'a str,
    },
    /// A message continuing our task (an input answer or an auth continuation), try `attempt`
    /// (from 1).
    Continue {
        /// Which try this was, from 1.
        attempt: u32,
    },
    /// `CancelTask` at the local deadline or on the caller's cancel, try `attempt` (from 0).
    Cancel {
        /// Why the task is canceled.
        why: &'a str,
        /// Which try this was, from 0.
        attempt: u32,
    },
    /// `ListTasks` looking for the task of an ambiguous send during recovery.
    ListTasks,
    /// Reading the agent's card before the run starts.
    AgentCard,
}

impl Call<'_> {
    /// The operation name recorded with the error.
    fn label(&self) -> &'static str {
        match self {
            Call::Send {
                streaming: true, ..
            } => "SendStreamingMessage",
            Call::Send {
                streaming: false, ..
            } => "SendMessage",
            Call::Stream { .. } => "stream",
            Call::GetTask { .. } => "GetTask",
            Call::Subscribe { .. } => "SubscribeToTask",
            Call::Continue { .. } => "SendMessage(continue)",
            Call::Cancel { .. } => "CancelTask",
            Call::ListTasks => "ListTasks",
            Call::AgentCard => "agent-card",
        }
    }
}

/// Which retry budget a transient failure spends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Budget {
    /// The first send's attempts (`rec.attempts` against `max_retries`).
    Send,
    /// Observation failures in a row (against `max_retries`).
    Observe,
    /// Tries of one continuation message (against `max_retries`).
    Continue(u32),
}

/// What to do about a failed call (the pure decision).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Step {
    /// The agent broke the protocol: fail the delegation and cancel the task.
    FailAndCancel,
    /// End the delegation so.
    End(Final),
    /// Send again at once without the push config (not counted as an attempt).
    SendWithoutPush,
    /// Send again at once without streaming (not counted as an attempt).
    SendPolling,
    /// Stop streaming: observe the task by polling from now on.
    PollInstead,
    /// Back off on this budget, then go on (or dead-letter when it is spent).
    Backoff(Budget),
    /// Read the task's current state and go on from it.
    ReadState,
    /// Wait this long (not interruptible, bounded) and try again.
    Pause(Duration),
    /// Give up the lookup and resend with the same `messageId`.
    Resend,
}

/// How the caller goes on after [`Run::on_call_failed`].
pub(super) enum Decision {
    /// Make the call again (the backoff, if any, is over; for a stream or a subscription: read
    /// the task's state before following it again).
    Again,
    /// Read the task's current state and go on from it.
    ReadState,
    /// Stop: go on with this step.
    Next(Next),
}

/// A final state with a reason and, for a JSON-RPC error, its code.
fn end(state: DelegationState, reason: String, e: &ClientError) -> Step {
    let mut f = Final::new(state, reason);
    f.code = e.code();
    Step::End(f)
}

/// The decision table: what to do when `call` failed with `e`.
pub(super) fn decide(call: Call<'_>, e: &ClientError) -> Step {
    let rpc = match e {
        ClientError::Rpc(err) => Some(err.error_code()),
        _ => None,
    };
    match call {
        Call::Send { streaming, push } => {
            if e.is_agent_protocol() {
                // The reply cannot be trusted, not even its task id: fail visibly.
                return Step::FailAndCancel;
            }
            let name = call.label();
            let op = if streaming { Op::StreamSend } else { Op::Send };
            match rpc.map(|c| policy::error_action(op, c)) {
                Some(ErrorAction::RetryWithoutPush) if push => Step::SendWithoutPush,
                Some(ErrorAction::Poll) if streaming => Step::SendPolling,
                Some(_) => end(
                    DelegationState::SendFailed,
                    format!("{name} failed: {e}"),
                    e,
                ),
                None if !e.is_transient() => end(
                    DelegationState::SendFailed,
                    format!("{name} failed: {e}"),
                    e,
                ),
                None => Step::Backoff(Budget::Send),
            }
        }
        Call::Stream { task, ended } => {
            if let Some(f) = ended {
                // The task is over (nothing to cancel); only a protocol violation changes that.
                return if e.is_agent_protocol() {
                    Step::End(Final::new(
                        DelegationState::Failed,
                        format!("{e} (after the task's final state)"),
                    ))
                } else {
                    Step::End(f.clone())
                };
            }
            if e.is_agent_protocol() {
                // Garbage, a foreign JSON-RPC id, an oversize or undecodable event.
                return Step::FailAndCancel;
            }
            match (task, rpc) {
                (false, Some(_)) => end(
                    DelegationState::SendFailed,
                    format!("SendStreamingMessage failed: {e}"),
                    e,
                ),
                (false, None) => Step::Backoff(Budget::Send),
                (true, _) => Step::Backoff(Budget::Observe),
            }
        }
        Call::GetTask { task_id } => {
            if e.is_agent_protocol() {
                return Step::FailAndCancel;
            }
            match rpc.map(|c| policy::error_action(Op::Get, c)) {
                Some(ErrorAction::Lost) => end(
                    DelegationState::Lost,
                    format!("the agent does not know task {task_id}: {e}"),
                    e,
                ),
                Some(ErrorAction::RetryObserve) | None => Step::Backoff(Budget::Observe),
                Some(_) => end(DelegationState::Failed, format!("GetTask failed: {e}"), e),
            }
        }
        Call::Subscribe { task_id } => {
            if e.is_agent_protocol() {
                return Step::FailAndCancel;
            }
            match rpc.map(|c| policy::error_action(Op::Subscribe, c)) {
                Some(ErrorAction::Lost) => end(
                    DelegationState::Lost,
                    format!("the agent does not know task {task_id}: {e}"),
                    e,
                ),
                Some(ErrorAction::ReadFinalState) => Step::ReadState,
                // Polling is the reconciliation path that always works.
                Some(_) => Step::PollInstead,
                None => Step::Backoff(Budget::Observe),
            }
        }
        Call::Continue { attempt } => {
            if e.is_agent_protocol() {
                return Step::FailAndCancel;
            }
            match rpc.map(|c| policy::error_action(Op::Continue, c)) {
                Some(ErrorAction::Lost) => end(
                    DelegationState::Lost,
                    format!("the agent does not know the task any more: {e}"),
                    e,
                ),
                Some(ErrorAction::ReadFinalState) => Step::ReadState,
                Some(ErrorAction::RetryObserve) => Step::Backoff(Budget::Continue(attempt)),
                Some(_) => end(
                    DelegationState::Failed,
                    format!("continuing the task failed: {e}"),
                    e,
                ),
                None if !e.is_transient() => end(
                    DelegationState::Failed,
                    format!("continuing the task failed: {e}"),
                    e,
                ),
                None => Step::Backoff(Budget::Continue(attempt)),
            }
        }
        Call::Cancel { why, attempt } => match rpc.map(|c| policy::error_action(Op::Cancel, c)) {
            Some(ErrorAction::Lost) => end(
                DelegationState::Lost,
                format!("{why}; CancelTask: the agent does not know the task: {e}"),
                e,
            ),
            // -32002 and others: read the final state.
            Some(_) => Step::ReadState,
            None => Step::Pause(Duration::from_millis(200 * u64::from(attempt + 1))),
        },
        Call::ListTasks => Step::Resend,
        // The card may be unreachable for a while (an agent restarting with us).
        Call::AgentCard => Step::Backoff(Budget::Observe),
    }
}

impl Run {
    /// A call to the agent failed with `e`: record the error, decide ([`decide`]), apply the
    /// decision, and tell the caller how to go on.
    pub(super) async fn on_call_failed(&mut self, call: Call<'_>, e: &ClientError) -> Decision {
        self.error(call.label(), e);
        match decide(call, e) {
            Step::FailAndCancel => Decision::Next(self.fail_and_cancel(e.to_string()).await),
            Step::End(f) => Decision::Next(Next::Finish(f)),
            Step::SendWithoutPush => {
                self.push = false;
                self.rec.attempts -= 1;
                Decision::Again
            }
            Step::SendPolling => {
                self.rec.streaming = false;
                self.rec.attempts -= 1;
                Decision::Again
            }
            Step::PollInstead => {
                self.rec.streaming = false;
                self.save().await;
                Decision::Next(Next::Observe)
            }
            Step::Backoff(budget) => match self.backoff(budget, e).await {
                Some(n) => Decision::Next(n),
                None => Decision::Again,
            },
            Step::ReadState => Decision::ReadState,
            Step::Pause(d) => {
                tokio::time::sleep(d).await;
                Decision::Again
            }
            Step::Resend => Decision::Next(Next::Send),
        }
    }

    /// After a transient failure: spend one try of `budget`, wait (backoff with jitter, or a
    /// `Retry-After`) and return `None` to try again; or end the delegation (budget spent,
    /// deadline, cancel).
    pub(super) async fn backoff(&mut self, budget: Budget, e: &ClientError) -> Option<Next> {
        let max = self.rec.request.max_retries;
        let tries = match budget {
            Budget::Send => self.rec.attempts,
            Budget::Observe => {
                self.observe_failures += 1;
                self.observe_failures
            }
            Budget::Continue(attempt) => attempt,
        };
        if tries > max {
            let reason = match budget {
                Budget::Send => format!("{tries} attempts failed (max_retries {max}): {e}"),
                Budget::Observe => {
                    format!("observation failed {tries} times in a row (max_retries {max}): {e}")
                }
                Budget::Continue(_) => format!("{tries} attempts to continue the task failed: {e}"),
            };
            return Some(Next::Finish(Final::new(
                DelegationState::DeadLettered,
                reason,
            )));
        }
        let d = if self.bugs.has(Bug::FixedRetryBackoff) {
            Duration::from_millis(self.opts().retry_base_ms)
                .max(e.retry_after().unwrap_or_default())
        } else {
            policy::retry_delay(
                tries - 1,
                self.opts().retry_base_ms,
                self.opts().retry_cap_ms,
                e.retry_after(),
                &mut self.rng,
            )
        };
        self.save().await;
        // A push does not cut a resend's backoff short (DLG-RETRY-02): it proves the agent
        // processed something, not that resending at once is welcome, and a send or a
        // continuation whose response was dropped is resent (same messageId) only after its
        // backoff. A failed read of the task, on the other hand, may follow the push at once:
        // that read is the agent's pace (the push is remembered either way).
        let wake_on_push = budget == Budget::Observe;
        let interrupt = self.sleep_or_interrupt_with(d, wake_on_push).await?;
        Some(match (budget, interrupt) {
            // No task yet: nothing to cancel.
            (Budget::Send, Interrupt::Deadline) => Next::Finish(Final::new(
                DelegationState::DeadLettered,
                format!("deadline reached while retrying the send: {e}"),
            )),
            (Budget::Send, Interrupt::Cancel) => Next::Finish(Final::new(
                DelegationState::Canceled,
                "canceled by the caller before a task existed",
            )),
            // Boxed: cancelling at the deadline can fail and come back here.
            (_, Interrupt::Deadline) => Box::pin(self.on_deadline("local deadline reached")).await,
            (_, Interrupt::Cancel) => Box::pin(self.on_deadline("canceled by the caller")).await,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_protocol::JsonRpcError;

    fn rpc(code: i64) -> ClientError {
        ClientError::Rpc(JsonRpcError {
            code,
            message: "m".into(),
            data: None,
        })
    }

    fn transport() -> ClientError {
        ClientError::Transport("reset".into())
    }

    fn agent_protocol() -> ClientError {
        ClientError::AgentProtocol("garbage".into())
    }

    fn ended(step: Step) -> (DelegationState, Option<i64>) {
        match step {
            Step::End(f) => (f.state, f.code),
            other => panic!("expected an end, got {other:?}"),
        }
    }

    const SEND: Call<'static> = Call::Send {
        streaming: false,
        push: true,
    };

    #[test]
    fn first_send() {
        // -32003: push not supported ⇒ again without push, once.
        assert_eq!(decide(SEND, &rpc(-32003)), Step::SendWithoutPush);
        let no_push = Call::Send {
            streaming: false,
            push: false,
        };
        assert_eq!(
            ended(decide(no_push, &rpc(-32003))),
            (DelegationState::SendFailed, Some(-32003))
        );
        // -32004 on a stream ⇒ again by polling.
        let stream = Call::Send {
            streaming: true,
            push: false,
        };
        assert_eq!(decide(stream, &rpc(-32004)), Step::SendPolling);
        assert_eq!(
            ended(decide(SEND, &rpc(-32602))),
            (DelegationState::SendFailed, Some(-32602))
        );
        assert_eq!(decide(SEND, &transport()), Step::Backoff(Budget::Send));
        assert_eq!(decide(SEND, &agent_protocol()), Step::FailAndCancel);
        let http400 = ClientError::Http {
            status: 400,
            retry_after: None,
        };
        assert_eq!(
            ended(decide(SEND, &http400)),
            (DelegationState::SendFailed, None)
        );
    }

    #[test]
    fn observation() {
        let get = Call::GetTask { task_id: "t" };
        assert_eq!(
            ended(decide(get, &rpc(-32001))),
            (DelegationState::Lost, Some(-32001))
        );
        assert_eq!(decide(get, &rpc(-32603)), Step::Backoff(Budget::Observe));
        assert_eq!(
            ended(decide(get, &rpc(-32602))),
            (DelegationState::Failed, Some(-32602))
        );
        assert_eq!(decide(get, &transport()), Step::Backoff(Budget::Observe));
        let sub = Call::Subscribe { task_id: "t" };
        assert_eq!(decide(sub, &rpc(-32004)), Step::ReadState);
        assert_eq!(decide(sub, &rpc(-32602)), Step::PollInstead);
        assert_eq!(decide(sub, &transport()), Step::Backoff(Budget::Observe));
        assert_eq!(decide(sub, &agent_protocol()), Step::FailAndCancel);
    }

    #[test]
    fn streams() {
        let first = Call::Stream {
            task: false,
            ended: None,
        };
        assert_eq!(
            ended(decide(first, &rpc(-32602))),
            (DelegationState::SendFailed, Some(-32602))
        );
        assert_eq!(decide(first, &transport()), Step::Backoff(Budget::Send));
        let later = Call::Stream {
            task: true,
            ended: None,
        };
        assert_eq!(decide(later, &transport()), Step::Backoff(Budget::Observe));
        let done = Final::new(DelegationState::Completed, "the task completed");
        let after = Call::Stream {
            task: true,
            ended: Some(&done),
        };
        assert_eq!(decide(after, &transport()), Step::End(done.clone()));
        assert_eq!(
            ended(decide(after, &agent_protocol())),
            (DelegationState::Failed, None)
        );
    }

    #[test]
    fn continuation_and_cancel() {
        let c = Call::Continue { attempt: 2 };
        assert_eq!(
            ended(decide(c, &rpc(-32001))),
            (DelegationState::Lost, Some(-32001))
        );
        assert_eq!(decide(c, &rpc(-32004)), Step::ReadState);
        assert_eq!(decide(c, &rpc(-32603)), Step::Backoff(Budget::Continue(2)));
        assert_eq!(decide(c, &transport()), Step::Backoff(Budget::Continue(2)));
        let cancel = Call::Cancel {
            why: "local deadline reached",
            attempt: 1,
        };
        assert_eq!(
            ended(decide(cancel, &rpc(-32001))),
            (DelegationState::Lost, Some(-32001))
        );
        assert_eq!(decide(cancel, &rpc(-32002)), Step::ReadState);
        assert_eq!(
            decide(cancel, &transport()),
            Step::Pause(Duration::from_millis(400))
        );
        // A broken CancelTask reply is retried like a transport failure.
        assert_eq!(
            decide(cancel, &agent_protocol()),
            Step::Pause(Duration::from_millis(400))
        );
        assert_eq!(decide(Call::ListTasks, &transport()), Step::Resend);
        assert_eq!(
            decide(Call::AgentCard, &transport()),
            Step::Backoff(Budget::Observe)
        );
    }
}
