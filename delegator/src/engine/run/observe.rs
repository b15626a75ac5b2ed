//! Observing a task until it is final: polling (`GetTask`, woken early by push notifications),
//! streams (`SendStreamingMessage`, `SubscribeToTask`) with their grace period after the final
//! state, and applying snapshots, status updates and artifact chunks.

use super::failure::{Call, Decision};
use super::{Control, Final, Interrupt, Next, Run};
use crate::bugs::Bug;
use crate::client::{ClientError, EventStream};
use crate::engine::EscalationKind;
use crate::policy::{self, StateAction};
use crate::store::{DelegationState, state_of_task};
use a2a_protocol::artifact_chunk::{ArtifactChunk, SharedStreamResponse};
use a2a_protocol::{Message, Method, StreamResponse, Task, TaskState, TaskStatus};
use serde_json::{Map, Value, json};
use std::time::Duration;
use tokio::time::Instant;

impl Run {
    /// Read our task (`GetTask`), backing off on failures; `Err`: the run goes on so instead.
    pub(super) async fn get_task(&mut self, task_id: &str) -> Result<Task, Next> {
        let Some(agent) = self.agent.clone() else {
            return Err(Next::Finish(Final::new(
                DelegationState::Failed,
                "no agent",
            )));
        };
        let params = json!({"id": task_id});
        loop {
            let got = match self
                .inner
                .client
                .call(
                    &agent.endpoint,
                    Method::GetTask,
                    params.clone(),
                    self.auth().as_deref(),
                    self.req_timeout(),
                )
                .await
            {
                Ok(r) => {
                    self.note_unknown(&r.unknown_states);
                    let lacks = r.task_lacks();
                    if lacks.is_empty() {
                        a2a_protocol::codec::decode_value::<Task>(&r.result)
                            .map_err(|e| ClientError::Protocol(format!("GetTask result: {e}")))
                    } else {
                        // Never taken as the task's state (§5.7): read it again.
                        let what = format!(
                            "GetTask answer rejected: the task lacks REQUIRED {}",
                            lacks.join(", ")
                        );
                        self.remember_problem(what.clone());
                        Err(ClientError::Protocol(what))
                    }
                }
                Err(e) => Err(e),
            };
            match got {
                Ok(t) => {
                    self.observe_failures = 0;
                    return Ok(t);
                }
                Err(e) => {
                    if let Decision::Next(n) =
                        self.on_call_failed(Call::GetTask { task_id }, &e).await
                    {
                        return Err(n);
                    }
                }
            }
        }
    }

    /// Read our task's current state and go on from it (an interrupted task needs an answer,
    /// a final one ends the run, anything else is observed further).
    pub(super) async fn read_state(&mut self, task_id: &str) -> Next {
        match self.get_task(task_id).await {
            Ok(t) => self
                .on_task_snapshot(t, true)
                .await
                .unwrap_or(Next::Observe),
            Err(n) => n,
        }
    }

    /// Observe by polling `GetTask`, backing off ×1.5 while nothing changes.
    pub(super) async fn poll(&mut self) -> Next {
        let base = Duration::from_millis(self.opts().poll_interval_ms.max(10));
        let cap = base * 10;
        let mut interval = base;
        let Some(task_id) = self.rec.task_id.clone() else {
            return Next::Send;
        };
        loop {
            if !self.pending_push_hint {
                match self.sleep_or_interrupt(interval).await {
                    None => {}
                    Some(Interrupt::Deadline) => {
                        return self.on_deadline("local deadline reached").await;
                    }
                    Some(Interrupt::Cancel) => {
                        return self.on_deadline("canceled by the caller").await;
                    }
                }
            }
            self.pending_push_hint = false;
            let before = self.rec.state;
            let task = match self.get_task(&task_id).await {
                Ok(t) => t,
                Err(n) => return n,
            };
            if let Some(n) = self.on_task_snapshot(task, false).await {
                return n;
            }
            interval = if self.rec.state != before || self.bugs.has(Bug::ConstantPollInterval) {
                base
            } else {
                interval.mul_f64(1.5).min(cap)
            };
        }
    }

    /// Observe by streaming: `SubscribeToTask`.
    pub(super) async fn resubscribe(&mut self) -> Next {
        let Some(task_id) = self.rec.task_id.clone() else {
            return Next::Send;
        };
        let Some(agent) = self.agent.clone() else {
            return Next::Finish(Final::new(DelegationState::Failed, "no agent"));
        };
        match self
            .inner
            .client
            .stream(
                &agent.endpoint,
                Method::SubscribeToTask,
                json!({"id": task_id}),
                self.auth().as_deref(),
                self.req_timeout(),
            )
            .await
        {
            Ok(s) => Next::Stream(Box::new(s)),
            Err(e) => match self
                .on_call_failed(Call::Subscribe { task_id: &task_id }, &e)
                .await
            {
                Decision::Next(n) => n,
                // After a backoff, read the state before subscribing again: the task may have
                // moved on.
                Decision::ReadState | Decision::Again => self.read_state(&task_id).await,
            },
        }
    }

    /// Consume an open stream until the final state (plus a grace period to catch protocol
    /// errors after it), an interrupted state, or its end.
    pub(super) async fn consume_stream(&mut self, mut stream: EventStream) -> Next {
        let mut pending_final: Option<Final> = None;
        let grace = Duration::from_millis(self.opts().terminal_grace_ms);
        let mut grace_until: Option<Instant> = None;
        loop {
            let item = tokio::select! {
                i = stream.next() => i,
                _ = tokio::time::sleep_until(grace_until.unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400))), if grace_until.is_some() => {
                    // The agent did not close the stream after the final state: fine.
                    return Next::Finish(pending_final.take().unwrap_or_else(|| Final::new(DelegationState::Failed, "stream ended")));
                }
                _ = tokio::time::sleep_until(self.deadline), if pending_final.is_none() && !self.deadline_ignored => {
                    if !self.deadline_applies() {
                        continue;
                    }
                    return self.on_deadline("local deadline reached").await;
                }
                c = self.ctl.recv(), if pending_final.is_none() => match c {
                    Some(Control::Cancel) => return self.on_deadline("canceled by the caller").await,
                    _ => continue,
                },
            };
            match item {
                None => {
                    if let Some(f) = pending_final {
                        return Next::Finish(f);
                    }
                    if self.rec.task_id.is_none() {
                        // Closed before any task event: the send may or may not have landed.
                        let e =
                            ClientError::Transport("stream closed before the first event".into());
                        let call = Call::Send {
                            streaming: true,
                            push: self.push,
                        };
                        return match self.on_call_failed(call, &e).await {
                            Decision::Next(n) => n,
                            Decision::Again | Decision::ReadState => Next::Send,
                        };
                    }
                    // Closed before a final state (dropped, or at an interrupted state): follow
                    // up with SubscribeToTask / GetTask, never take it as an outcome.
                    return self.after_stream_end().await;
                }
                Some(Err(e)) => {
                    let call = Call::Stream {
                        task: self.rec.task_id.is_some(),
                        ended: pending_final.as_ref(),
                    };
                    return match self.on_call_failed(call, &e).await {
                        Decision::Next(n) => n,
                        // No task yet: send again; else follow up on the task.
                        Decision::Again | Decision::ReadState => self.after_stream_end().await,
                    };
                }
                Some(Ok(item)) => {
                    self.note_unknown(&item.unknown_states);
                    if !item.lacks.is_empty() && pending_final.is_none() {
                        return self
                            .on_incomplete_event(item.event.key(), &item.lacks)
                            .await;
                    }
                    if let Some(f) = &pending_final {
                        // After the final state only a repeated final snapshot is acceptable.
                        let ok = match &item.event {
                            SharedStreamResponse::Other(StreamResponse::Task(t)) => {
                                state_of_task(t.status.state) == f.state
                                    || t.status.state.is_terminal()
                            }
                            SharedStreamResponse::Other(StreamResponse::StatusUpdate(u)) => {
                                state_of_task(u.status.state) == self.rec.state
                            }
                            _ => false,
                        };
                        if !ok {
                            return Next::Finish(Final::new(
                                DelegationState::Failed,
                                format!(
                                    "agent protocol error: {} event after the task's final state",
                                    item.event.key()
                                ),
                            ));
                        }
                        continue;
                    }
                    match self.on_stream_event(item.event).await {
                        Some(Next::Finish(f)) if is_task_final(&f) => {
                            pending_final = Some(f);
                            self.reassembler.set_terminal();
                            grace_until = Some(Instant::now() + grace);
                        }
                        Some(n) => return n,
                        None => {}
                    }
                }
            }
        }
    }

    /// A stream event lacks REQUIRED fields (§5.7, §14.1.1): it is never applied. The problem
    /// is recorded (and named in the final reason), the stream is left (from now on the task is
    /// observed by polling, which reads it whole) and the task is read afresh with `GetTask`.
    /// Without a task id yet there is nothing to read: the delegation fails visibly.
    async fn on_incomplete_event(&mut self, key: &str, lacks: &[String]) -> Next {
        let what = format!(
            "a {key} stream event was rejected: it lacks REQUIRED {}",
            lacks.join(", ")
        );
        self.problem("stream", what.clone());
        let Some(task_id) = self.rec.task_id.clone() else {
            return Next::Finish(Final::new(
                DelegationState::Failed,
                format!("agent protocol error: {what}"),
            ));
        };
        self.rec.streaming = false;
        self.save().await;
        self.read_state(&task_id).await
    }

    /// The stream ended before a final state: read the current state first (an interrupted task
    /// needs an answer, not a subscription).
    async fn after_stream_end(&mut self) -> Next {
        let Some(task_id) = self.rec.task_id.clone() else {
            return Next::Send;
        };
        self.read_state(&task_id).await
    }

    /// Apply one stream event.
    async fn on_stream_event(&mut self, ev: SharedStreamResponse) -> Option<Next> {
        let ev = match ev {
            SharedStreamResponse::ArtifactChunk(c) => return self.on_artifact_chunk(c).await,
            SharedStreamResponse::Other(ev) => ev,
        };
        match ev {
            StreamResponse::Message(m) => {
                if self.rec.task_id.is_none() {
                    return Some(self.answered_direct(m));
                }
                // R34: once a task exists, replies about it are Task-based.
                let e = ClientError::AgentProtocol(
                    "a Message event after the task existed (replies for a task are Task-based)"
                        .into(),
                );
                self.error("stream", &e);
                Some(self.fail_and_cancel(e.to_string()).await)
            }
            StreamResponse::Task(t) => {
                if let Some(n) = self.adopt_task(&t).await {
                    return Some(n);
                }
                self.on_task_snapshot(t, true).await
            }
            StreamResponse::StatusUpdate(u) => {
                let pseudo = Task {
                    id: u.task_id.clone(),
                    context_id: u.context_id.clone(),
                    status: u.status.clone(),
                    ..Default::default()
                };
                if let Some(n) = self.adopt_task(&pseudo).await {
                    return Some(n);
                }
                self.on_status(u.status, u.metadata.as_ref()).await
            }
            StreamResponse::ArtifactUpdate(a) => self.on_artifact_chunk(a.into()).await,
        }
    }

    /// Apply one artifact chunk (its bytes go to the reassembler without a copy).
    async fn on_artifact_chunk(&mut self, a: ArtifactChunk) -> Option<Next> {
        if let Some(mine) = &self.rec.task_id
            && !a.task_id.is_empty()
            && &a.task_id != mine
        {
            return Some(Next::Finish(Final::new(
                DelegationState::Failed,
                format!(
                    "agent protocol error: artifact for task {:?}, expected {mine:?}",
                    a.task_id
                ),
            )));
        }
        let http = self.inner.client.http().clone();
        match self.reassembler.apply_shared(&http, a).await {
            Ok(()) => None,
            Err(e) => Some(self.artifact_failure(e).await),
        }
    }

    /// Apply a full task snapshot. `with_artifacts`: replace assembled artifacts with the
    /// snapshot's (streams: always; polling: only when COMPLETED, to avoid rewriting files).
    pub(super) async fn on_task_snapshot(&mut self, t: Task, with_artifacts: bool) -> Option<Next> {
        if let Some(n) = self.adopt_task(&t).await {
            return Some(n);
        }
        if let Some(cost) = t
            .metadata
            .as_ref()
            .and_then(|m| m.get("cost_usd"))
            .and_then(Value::as_f64)
            .filter(|c| c.is_finite() && *c >= 0.0)
        {
            self.rec.spend_usd = cost;
        }
        if (with_artifacts || t.status.state == TaskState::Completed) && !t.artifacts.is_empty() {
            let http = self.inner.client.http().clone();
            if let Err(e) = self.reassembler.apply_snapshot(&http, &t.artifacts).await {
                return Some(self.artifact_failure(e).await);
            }
        }
        self.on_status(t.status, None).await
    }

    /// Apply a task status: observe on, go to an interrupted state, or end.
    async fn on_status(
        &mut self,
        status: TaskStatus,
        _md: Option<&Map<String, Value>>,
    ) -> Option<Next> {
        let state = status.state;
        let text = status.message.as_ref().map(Message::text);
        match policy::state_action(state) {
            StateAction::Observe => {
                self.answered_question = None;
                self.set_state(state_of_task(state)).await;
                None
            }
            StateAction::Unknown => {
                if self.bugs.has(Bug::IgnoreUnknownState) {
                    tracing::error!("planted bug: exiting on TASK_STATE_UNSPECIFIED");
                    std::process::exit(70);
                }
                self.set_state(DelegationState::Unspecified).await;
                None
            }
            StateAction::Input => self.on_interrupted(EscalationKind::Input, status).await,
            StateAction::Auth => self.on_interrupted(EscalationKind::Auth, status).await,
            StateAction::Complete => {
                let mut f = Final::new(DelegationState::Completed, "the task completed");
                f.message = text;
                Some(Next::Finish(f))
            }
            StateAction::Final => {
                let st = state_of_task(state);
                let mut f = Final::new(
                    st,
                    format!("the agent ended the task as {}", state.as_str()),
                );
                f.message = text;
                Some(Next::Finish(f))
            }
        }
    }
}

fn is_task_final(f: &Final) -> bool {
    matches!(
        f.state,
        DelegationState::Completed
            | DelegationState::Failed
            | DelegationState::Canceled
            | DelegationState::Rejected
    ) && f
        .reason
        .as_deref()
        .is_some_and(|r| r.starts_with("the agent ended") || r == "the task completed")
}
