//! One delegation's run: a small state machine driven by one tokio task per delegation.
//!
//! ```text
//! (recovery.rs)  recover ─┐
//! (send.rs)      send ─┬─► Message ─► ANSWERED_DIRECT
//!                      └─► Task ─► observe ◄──────────────────────────────────────┐
//! (observe.rs)   observe = stream (SendStreamingMessage, then SubscribeToTask) or  │
//!                poll (GetTask, backing off; push notifications wake it early)     │
//! (interrupts.rs) INPUT_REQUIRED ─► answer from inputs, or escalate and wait ──────┤
//!                 AUTH_REQUIRED  ─► escalate for a scoped credential ──────────────┘
//! (deadline.rs)  local deadline or cancel ─► CancelTask (-32002 ⇒ GetTask); -32001 ⇒ LOST
//! (finish.rs)    COMPLETED ─► validate ─► commit artifacts; every end saved and reported
//! (failure.rs)   any failed call ─► one decision: retry, back off, read state, end
//! ```
//!
//! This module holds the run's state ([`Run`]), the steps between the parts ([`Next`]), how a
//! run ends ([`Final`]) and the loop that drives the steps.

mod deadline;
mod failure;
mod finish;
mod interrupts;
mod observe;
mod recovery;
mod send;

use super::{Control, Engine, Inner, Options, instant_at, lock, parse_rfc3339, seed_for};
use crate::agents::AgentInfo;
use crate::artifacts::Reassembler;
use crate::bugs::Bugs;
use crate::client::{ClientError, EventStream};
use crate::store::{DelegationRecord, DelegationState, RecordError, now_text};
use crate::webhook;
use failure::{Call, Decision};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use time::OffsetDateTime;
use tokio::sync::mpsc;
use tokio::time::Instant;

impl Engine {
    /// Run one (non-parent) delegation in the background. `push_token` is the token minted at
    /// admission (memory only: the record holds its hash); `None` after a restart. `agent` is the
    /// agent admission routed it to (`None` after a restart: its card is looked up, and
    /// revalidated when stale).
    pub(super) fn spawn_run(
        &self,
        rec: DelegationRecord,
        recovering: bool,
        push_token: Option<String>,
        agent: Option<Arc<AgentInfo>>,
    ) {
        let inner = self.inner.clone();
        let (tx, rx) = mpsc::unbounded_channel();
        lock(&inner.running).insert(
            rec.id.clone(),
            super::Running {
                ctl: tx,
                push_token_sha256: webhook::token_hashes(&rec.push_token_sha256),
                task_id: rec.task_id.clone(),
                pending: None,
            },
        );
        inner.active.fetch_add(1, Ordering::SeqCst);
        // The record and then the run live in their own allocations, so the task's future holds
        // pointers to them and no second copy (an `async` block keeps its captures and its
        // locals apart). The run is made in the task: it compiles the artifact schema.
        let id = rec.id.clone();
        let rec = Box::new(rec);
        let task = async move {
            let mut run = Box::new(Run::new(inner.clone(), *rec, rx));
            run.push_token = push_token;
            run.agent = agent;
            run.first_attempt_recorded = !recovering;
            // Its requests may wait for a connection to the agent up to its deadline.
            let deadline = run.deadline;
            crate::client::cap::waiting_until(deadline, run.run(recovering)).await;
            if let Some(ended) = lock(&inner.running).remove(&id)
                && !ended.push_token_sha256.is_empty()
            {
                lock(&inner.ended_push_tokens).insert(id, ended.push_token_sha256);
            }
            if inner.active.fetch_sub(1, Ordering::SeqCst) == 1 {
                inner.idle.notify_waiters();
            }
        };
        tokio::spawn(task);
    }
}

/// How a delegation ends.
#[derive(Debug, Clone, PartialEq)]
struct Final {
    state: DelegationState,
    reason: Option<String>,
    message: Option<String>,
    code: Option<i64>,
}

impl Final {
    fn new(state: DelegationState, reason: impl Into<String>) -> Self {
        Final {
            state,
            reason: Some(reason.into()),
            message: None,
            code: None,
        }
    }
}

/// What the run does next.
enum Next {
    /// Send (or resend) the first message.
    Send,
    /// Observe by stream or poll.
    Observe,
    /// Consume an open stream.
    Stream(Box<EventStream>),
    /// Finish.
    Finish(Final),
}

/// Why waiting was interrupted.
enum Interrupt {
    /// The local deadline passed.
    Deadline,
    /// The caller canceled.
    Cancel,
}

/// The state of one running delegation.
struct Run {
    inner: Arc<Inner>,
    rec: DelegationRecord,
    ctl: mpsc::UnboundedReceiver<Control>,
    agent: Option<Arc<AgentInfo>>,
    reassembler: Reassembler,
    rng: ChaCha8Rng,
    deadline: Instant,
    observe_failures: u32,
    /// The identity of the question last answered; repeated observations of it are ignored
    /// until the task moves on.
    answered_question: Option<String>,
    /// Observed with push notifications (the record holds push token hashes).
    push: bool,
    /// The push token minted at admission and not used yet (memory only; the record holds its
    /// sha256). Every push config gets its own token ([`Run::push_token`]).
    push_token: Option<String>,
    /// What the agent sent that this delegator rejected (an answer or event lacking a REQUIRED
    /// field): reported in the final reason.
    problems: Vec<String>,
    /// The credential the caller gave for this agent and task (memory only: never written;
    /// after a restart an auth round still open is escalated again).
    scoped_credential: Option<String>,
    pending_push_hint: bool,
    /// The record as admitted already counts the first send's attempt (durable before it):
    /// that send needs no save of its own. Taken by the first send.
    first_attempt_recorded: bool,
    /// Set once the local deadline has fired and been ignored (planted bug `no-local-deadline`
    /// only): its timer stays off from then on.
    deadline_ignored: bool,
    bugs: Bugs,
}

impl Run {
    fn new(
        inner: Arc<Inner>,
        rec: DelegationRecord,
        ctl: mpsc::UnboundedReceiver<Control>,
    ) -> Self {
        let bugs = inner.cfg.bugs;
        let reassembler = Reassembler::sharing(
            inner.artifact_dir.clone(),
            &rec.id,
            &rec.request.artifact_spec,
            inner.cfg.options.write_buffer_bytes,
            bugs,
        )
        .with_fetcher(inner.fetcher.clone());
        let rng = ChaCha8Rng::seed_from_u64(seed_for(inner.cfg.options.seed, &rec.id));
        let deadline =
            instant_at(parse_rfc3339(&rec.deadline).unwrap_or_else(OffsetDateTime::now_utc));
        let push = !rec.push_token_sha256.is_empty();
        Run {
            inner,
            rec,
            ctl,
            agent: None,
            reassembler,
            rng,
            deadline,
            observe_failures: 0,
            answered_question: None,
            push,
            push_token: None,
            problems: Vec::new(),
            scoped_credential: None,
            pending_push_hint: false,
            first_attempt_recorded: false,
            deadline_ignored: false,
            bugs,
        }
    }

    fn opts(&self) -> &Options {
        &self.inner.cfg.options
    }

    fn req_timeout(&self) -> Duration {
        let left = self.deadline.saturating_duration_since(Instant::now());
        Duration::from_millis(self.opts().request_timeout_ms).min(left.max(Duration::from_secs(1)))
    }

    async fn save(&mut self) {
        self.rec.updated_at = now_text();
        if let Err(e) = self.inner.store.save(self.rec.clone()).await {
            tracing::error!(delegation = %self.rec.id, "store: {e}");
        }
    }

    fn error(&mut self, op: &str, e: &ClientError) {
        self.rec.push_error(RecordError {
            at: now_text(),
            op: op.to_string(),
            code: e.code(),
            http_status: e.http_status(),
            transient: e.is_transient(),
            message: e.to_string(),
        });
    }

    async fn set_state(&mut self, state: DelegationState) {
        if self.rec.state != state {
            self.rec.state = state;
            self.save().await;
            self.inner.emit_state(&self.rec);
        }
    }

    /// The `Authorization` of a request to the agent about this delegation: the credential the
    /// caller scoped to this task (an auth escalation) wins; else the agent's credential when its
    /// card requires it on every request (`init.agent_credentials`, A2A §7.3); else none. The
    /// delegator's own credential never goes to an agent.
    fn auth(&self) -> Option<String> {
        self.scoped_credential.clone().or_else(|| {
            let agent = self.agent.as_ref()?;
            if !agent.credential_on_every_request {
                return None;
            }
            self.inner
                .agent_credential(&agent.card_url)
                .map(str::to_string)
        })
    }

    /// Note something the agent sent that was rejected (recorded as an error, and named in the
    /// final reason).
    fn problem(&mut self, op: &str, what: String) {
        tracing::warn!(delegation = %self.rec.id, "{op}: {what}");
        self.rec.push_error(RecordError {
            at: now_text(),
            op: op.to_string(),
            code: None,
            http_status: None,
            transient: false,
            message: what.clone(),
        });
        self.remember_problem(what);
    }

    /// Keep `what` for the final reason only (the caller records the error).
    fn remember_problem(&mut self, what: String) {
        if self.problems.len() < 8 && !self.problems.contains(&what) {
            self.problems.push(what);
        }
    }

    /// The push token for a push config sent now: the one minted at admission if it is still
    /// unused, else a new one whose hash is added to the record and to what the webhook accepts
    /// (each config gets its own token, A2A §13.2; after a restart only hashes are left). The
    /// caller saves the record before sending.
    fn push_token(&mut self) -> String {
        if let Some(t) = self.push_token.take() {
            return t;
        }
        let token = super::new_push_token();
        self.rec
            .push_token_sha256
            .push(webhook::token_sha256(&token));
        if let Some(r) = lock(&self.inner.running).get_mut(&self.rec.id) {
            r.push_token_sha256 = webhook::token_hashes(&self.rec.push_token_sha256);
        }
        if self.bugs.has(crate::bugs::Bug::PersistSecrets) {
            super::persist_secret_bug(
                &self.inner.cfg.store_dir,
                &self.rec.id,
                "push token",
                &token,
            );
        }
        token
    }

    /// The delegation from its agent to its end. Every step's future is boxed while it runs:
    /// this future, which every delegation holds from admission to its end (thousands at once,
    /// most waiting for a connection to their agent), stays a few hundred bytes instead of the
    /// size of its largest step (a stream's, about 12 KiB).
    async fn run(mut self: Box<Self>, recovering: bool) {
        let card_url = self.rec.agent_url.clone().unwrap_or_default();
        // The card may be unreachable for a while (an agent restarting with us): retry it like
        // any transient failure, then dead-letter.
        while self.agent.is_none() {
            self.agent = Box::pin(self.inner.agent_for(&card_url)).await;
            if self.agent.is_some() {
                break;
            }
            let e = ClientError::Transport(format!("agent card {card_url} could not be read"));
            if let Decision::Next(n) = Box::pin(self.on_call_failed(Call::AgentCard, &e)).await {
                let f = match n {
                    Next::Finish(f) => f,
                    _ => Final::new(DelegationState::DeadLettered, e.to_string()),
                };
                return Box::pin((*self).finish(f)).await;
            }
        }
        let mut next = if recovering {
            Box::pin(self.recover()).await
        } else {
            Next::Send
        };
        loop {
            next = match next {
                Next::Send => Box::pin(self.send_initial()).await,
                Next::Observe => {
                    if self.rec.streaming {
                        Box::pin(self.resubscribe()).await
                    } else {
                        Box::pin(self.poll()).await
                    }
                }
                Next::Stream(s) => Box::pin(self.consume_stream(*s)).await,
                Next::Finish(f) => return Box::pin((*self).finish(f)).await,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Run;

    /// The size of the future `f` returns, without calling it.
    fn future_size<A, B, F: Future>(_: impl FnOnce(A, B) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    /// Every delegation holds this future from admission to its end, thousands at once (most
    /// waiting for a connection): its steps are boxed, so it holds a pointer to its run and to
    /// the step under way, not the largest step inline (it was 13.5 KiB, and twice that with
    /// the task-local scope around it).
    #[test]
    fn a_delegations_own_future_stays_small() {
        let size = future_size(Run::run);
        assert!(size <= 512, "Run::run's future is {size} bytes");
    }
}
