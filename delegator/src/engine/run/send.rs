//! Sending: the first message of a delegation (its deterministic `messageId`, the `x-deleg`
//! limits, push config, `returnImmediately`), adopting the task of the reply, and the messages
//! that continue a task after an interrupted state.

use super::failure::{Call, Decision};
use super::{Final, Next, Run, lock, parse_rfc3339};
use crate::bugs::Bug;
use crate::client::ClientError;
use crate::policy;
use crate::store::{DelegationState, RecordError, now_text, state_of_task};
use crate::webhook;
use a2a_protocol::xdeleg::XDeleg;
use a2a_protocol::{
    Message, Method, Part, Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse,
    Task, TaskPushNotificationConfig,
};
use serde_json::{Map, Value};
use time::OffsetDateTime;
use tokio::time::Instant;

impl Run {
    /// A user message with our deterministic `messageId` for `purpose` and the skill.
    fn base_message(&self, purpose: &str, attempt: u32) -> Message {
        let mid = if attempt > 1 && self.bugs.has(Bug::RandomMessageIdOnRetry) {
            uuid::Uuid::new_v4().to_string()
        } else {
            policy::message_id(&self.rec.id, purpose)
        };
        let mut md = Map::new();
        md.insert("skill".into(), Value::String(self.rec.skill.clone()));
        Message {
            message_id: mid,
            role: Role::User,
            metadata: Some(md),
            ..Default::default()
        }
    }

    /// The `x-deleg` metadata for the agent: our deadline less the margin, our budget share,
    /// depth + 1, the chain with us appended.
    fn xdeleg(&self) -> Value {
        let now = OffsetDateTime::now_utc();
        let deadline = parse_rfc3339(&self.rec.deadline).unwrap_or(now);
        let parent = XDeleg {
            deadline,
            budget_usd: self.rec.budget_usd,
            depth: self.rec.depth,
            chain: self.rec.chain.clone(),
        };
        let margin = time::Duration::milliseconds(self.opts().deadline_margin_ms as i64);
        let child = parent
            .child(now, margin, self.rec.budget_share, &self.inner.cfg.self_url)
            .unwrap_or_else(|_| {
                // Past the margin already (or a planted bug skipped the checks): send the
                // tightest honest values rather than nothing.
                let mut chain = self.rec.chain.clone();
                chain.push(self.inner.cfg.self_url.clone());
                XDeleg {
                    deadline: deadline - margin,
                    budget_usd: self.rec.budget_share.min(self.rec.budget_usd),
                    depth: self.rec.depth.saturating_add(1),
                    chain,
                }
            });
        child.to_value()
    }

    /// The params of the first send (`attempt` from 1).
    fn send_params(&mut self, attempt: u32) -> Value {
        let req = &self.rec.request;
        let mut msg = self.base_message("create", attempt);
        msg.message_id = if attempt > 1 && self.bugs.has(Bug::RandomMessageIdOnRetry) {
            msg.message_id
        } else {
            self.rec
                .message_ids
                .get("create")
                .cloned()
                .unwrap_or(msg.message_id)
        };
        if attempt > 1 && self.bugs.has(Bug::RandomMessageIdOnRetry) {
            self.rec
                .message_ids
                .insert(format!("create-retry-{attempt}"), msg.message_id.clone());
        }
        msg.parts.push(Part::text(req.text.clone()));
        if !req.inputs.is_empty() {
            msg.parts.push(
                Part::data(Value::Object(req.inputs.clone())).with_media_type("application/json"),
            );
        }
        msg.context_id = self.rec.context_id.clone();
        msg.reference_task_ids = self.rec.reference_task_ids.clone();
        if self.rec.refine_of.is_some() && self.bugs.has(Bug::MessageTerminalTask) {
            msg.task_id = self.rec.reference_task_ids.first().cloned();
        }
        let mut config = SendMessageConfiguration {
            accepted_output_modes: req.artifact_spec.mime_types.clone(),
            history_length: Some(0),
            return_immediately: !self.rec.streaming && !self.bugs.has(Bug::BlockingSend),
            ..Default::default()
        };
        let base = if self.push {
            lock(&self.inner.webhook_url).clone()
        } else {
            None
        };
        if let Some(base) = base {
            let token = self.push_token();
            config.task_push_notification_config = Some(TaskPushNotificationConfig {
                url: format!("{base}{}/{}", webhook::WEBHOOK_PATH, self.rec.id),
                token: Some(token.clone()),
                authentication: Some(a2a_protocol::AuthenticationInfo {
                    scheme: "Bearer".into(),
                    credentials: Some(token),
                }),
                ..Default::default()
            });
        }
        let mut md = Map::new();
        md.insert(a2a_protocol::xdeleg::XDELEG_KEY.into(), self.xdeleg());
        let params = SendMessageRequest {
            message: msg,
            configuration: Some(config),
            metadata: Some(md),
            ..Default::default()
        };
        serde_json::to_value(params).unwrap_or(Value::Null)
    }

    /// Send the first message (retrying with the same `messageId`) until a reply says how the
    /// run goes on.
    pub(super) async fn send_initial(&mut self) -> Next {
        loop {
            let recorded = std::mem::take(&mut self.first_attempt_recorded);
            if !recorded {
                self.rec.attempts += 1;
            }
            let attempt = self.rec.attempts;
            let params = self.send_params(attempt);
            let mut lacks = Vec::new();
            // Durable before the send: the attempt, and a push token or message id minted for
            // it. The admission's insert already holds the first attempt, with the push token
            // and message id that attempt uses (minted at admission).
            if !recorded {
                self.save().await;
            }
            let agent = match self.agent.clone() {
                Some(a) => a,
                None => return Next::Finish(Final::new(DelegationState::Failed, "no agent")),
            };
            let auth = self.auth();
            let reply = if self.rec.streaming {
                match self
                    .inner
                    .client
                    .stream(
                        &agent.endpoint,
                        Method::SendStreamingMessage,
                        params,
                        auth.as_deref(),
                        self.req_timeout(),
                    )
                    .await
                {
                    Ok(s) => return Next::Stream(Box::new(s)),
                    Err(e) => Err(e),
                }
            } else {
                let timeout = if self.bugs.has(Bug::BlockingSend) {
                    self.deadline.saturating_duration_since(Instant::now())
                } else {
                    self.req_timeout()
                };
                match self
                    .inner
                    .client
                    .call(
                        &agent.endpoint,
                        Method::SendMessage,
                        params,
                        auth.as_deref(),
                        timeout,
                    )
                    .await
                {
                    Ok(r) => {
                        self.note_unknown(&r.unknown_states);
                        lacks = reply_task_lacks(&r);
                        a2a_protocol::codec::decode_value::<SendMessageResponse>(&r.result)
                            .map_err(|e| ClientError::Protocol(format!("SendMessage result: {e}")))
                    }
                    Err(e) => Err(e),
                }
            };
            match reply {
                Ok(SendMessageResponse::Message(m)) => return self.answered_direct(m),
                Ok(SendMessageResponse::Task(t)) if !lacks.is_empty() => {
                    // Never taken as a result (§5.7): with the task's id, read it afresh; without
                    // one there is nothing to follow.
                    let what = format!(
                        "SendMessage answer rejected: its task lacks REQUIRED {}",
                        lacks.join(", ")
                    );
                    self.problem("SendMessage", what.clone());
                    if t.id.is_empty() {
                        return Next::Finish(Final::new(
                            DelegationState::Failed,
                            format!("agent protocol error: {what}"),
                        ));
                    }
                    if let Some(n) = self.adopt_task(&t).await {
                        return n;
                    }
                    return Box::pin(self.read_state(&t.id)).await;
                }
                Ok(SendMessageResponse::Task(t)) => {
                    if let Some(n) = self.adopt_task(&t).await {
                        return n;
                    }
                    return Box::pin(self.on_task_snapshot(t, true))
                        .await
                        .unwrap_or(Next::Observe);
                }
                Err(e) => {
                    let call = Call::Send {
                        streaming: self.rec.streaming,
                        push: self.push,
                    };
                    // Boxed: this future is held by every delegation waiting for a connection.
                    if let Decision::Next(n) = Box::pin(self.on_call_failed(call, &e)).await {
                        return n;
                    }
                }
            }
        }
    }

    /// The agent answered with a message: no task, the delegation is answered directly.
    pub(super) fn answered_direct(&mut self, m: Message) -> Next {
        if self.bugs.has(Bug::AssumeTask) {
            return Next::Finish(Final::new(DelegationState::Failed, "reply has no task"));
        }
        if self.rec.context_id.is_none() {
            self.rec.context_id = m.context_id.clone();
        }
        let mut f = Final::new(
            DelegationState::AnsweredDirect,
            "the agent answered with a message",
        );
        f.message = Some(m.text());
        Next::Finish(f)
    }

    /// Record the task id and context id of a reply at once. Returns `Some` to stop on a
    /// mismatch (a task other than ours).
    pub(super) async fn adopt_task(&mut self, t: &Task) -> Option<Next> {
        match &self.rec.task_id {
            Some(mine) if mine != &t.id => {
                return Some(Next::Finish(Final::new(
                    DelegationState::Failed,
                    format!(
                        "agent protocol error: event for task {:?}, expected {mine:?}",
                        t.id
                    ),
                )));
            }
            Some(_) => {}
            None => {
                if t.id.is_empty() {
                    return Some(Next::Finish(Final::new(
                        DelegationState::Failed,
                        "agent protocol error: task without id",
                    )));
                }
                self.rec.task_id = Some(t.id.clone());
                if let Some(r) = lock(&self.inner.running).get_mut(&self.rec.id) {
                    r.task_id = Some(t.id.clone());
                }
                if !t.context_id.is_empty() {
                    self.rec.context_id = Some(t.context_id.clone());
                }
                // A task first seen already final (a resend after a restart that the agent
                // deduplicated onto its finished task) keeps the delegation open here: only
                // `finish` may make a final state durable, together with the committed artifacts
                // and the `done`. Saving it now would let a fan-out parent join a child whose
                // `done` is never written.
                let state = state_of_task(t.status.state);
                if !state.is_final() {
                    self.rec.state = state;
                }
                self.save().await;
                self.inner.emit_state(&self.rec);
            }
        }
        if self.rec.context_id.is_none() && !t.context_id.is_empty() {
            self.rec.context_id = Some(t.context_id.clone());
        }
        None
    }

    /// Record task states this delegator does not know (treated as UNSPECIFIED).
    pub(super) fn note_unknown(&mut self, unknown: &[String]) {
        for u in unknown {
            self.rec.push_error(RecordError {
                at: now_text(),
                op: "state".into(),
                code: None,
                http_status: None,
                transient: true,
                message: format!("unknown task state {u}, treated as UNSPECIFIED"),
            });
        }
    }

    /// Send a message continuing our task (same taskId and contextId, new messageId).
    pub(super) async fn send_continuation(
        &mut self,
        purpose: &str,
        text: String,
        data: Option<Map<String, Value>>,
        auth: Option<String>,
    ) -> Next {
        let Some(agent) = self.agent.clone() else {
            return Next::Finish(Final::new(DelegationState::Failed, "no agent"));
        };
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let mut msg = self.base_message(purpose, attempt);
            msg.task_id = self.rec.task_id.clone();
            msg.context_id = self.rec.context_id.clone();
            msg.parts.push(Part::text(text.clone()));
            if let Some(d) = &data {
                msg.parts
                    .push(Part::data(Value::Object(d.clone())).with_media_type("application/json"));
            }
            let config = SendMessageConfiguration {
                accepted_output_modes: self.rec.request.artifact_spec.mime_types.clone(),
                history_length: Some(0),
                return_immediately: !self.rec.streaming && !self.bugs.has(Bug::BlockingSend),
                ..Default::default()
            };
            let mut md = Map::new();
            md.insert(a2a_protocol::xdeleg::XDELEG_KEY.into(), self.xdeleg());
            let params = serde_json::to_value(SendMessageRequest {
                message: msg,
                configuration: Some(config),
                metadata: Some(md),
                ..Default::default()
            })
            .unwrap_or(Value::Null);
            let r = if self.rec.streaming {
                match self
                    .inner
                    .client
                    .stream(
                        &agent.endpoint,
                        Method::SendStreamingMessage,
                        params,
                        auth.as_deref(),
                        self.req_timeout(),
                    )
                    .await
                {
                    Ok(s) => return Next::Stream(Box::new(s)),
                    Err(e) => Err(e),
                }
            } else {
                self.inner
                    .client
                    .call(
                        &agent.endpoint,
                        Method::SendMessage,
                        params,
                        auth.as_deref(),
                        self.req_timeout(),
                    )
                    .await
            };
            match r {
                Ok(r) => {
                    self.note_unknown(&r.unknown_states);
                    let lacks = reply_task_lacks(&r);
                    if !lacks.is_empty() {
                        // Not adopted; the observer reads the task afresh.
                        self.problem(
                            "SendMessage(continue)",
                            format!(
                                "SendMessage answer rejected: its task lacks REQUIRED {}",
                                lacks.join(", ")
                            ),
                        );
                    } else if let Ok(SendMessageResponse::Task(t)) =
                        a2a_protocol::codec::decode_value(&r.result)
                    {
                        // Only adopt the ids; the state is read by the observer, so an
                        // INPUT_REQUIRED snapshot taken before the agent processed the answer
                        // does not start a new round.
                        if let Some(n) = self.adopt_task(&t).await {
                            return n;
                        }
                    }
                    return Next::Observe;
                }
                Err(e) => match self.on_call_failed(Call::Continue { attempt }, &e).await {
                    Decision::Next(n) => return n,
                    Decision::ReadState => {
                        let Some(task_id) = self.rec.task_id.clone() else {
                            return Next::Observe;
                        };
                        // Boxed: snapshot handling can lead back here.
                        return Box::pin(self.read_state(&task_id)).await;
                    }
                    Decision::Again => {}
                },
            }
        }
    }
}

/// The REQUIRED fields the task of a `SendMessage` answer lacks (none for a message answer).
fn reply_task_lacks(r: &crate::client::CallResult) -> Vec<String> {
    let Some(task) = r.result.get("task") else {
        return Vec::new();
    };
    crate::client::required::task(task, r.binding != a2a_protocol::Binding::Grpc)
}
