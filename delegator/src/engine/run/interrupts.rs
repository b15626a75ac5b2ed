//! Interrupted states: INPUT_REQUIRED answered from the delegation's inputs or escalated to
//! the caller (capped in rounds), AUTH_REQUIRED escalated for a credential scoped to the task;
//! each round durable before its answer is sent.

use super::{Control, Next, Run};
use crate::bugs::Bug;
use crate::engine::{EscalationKind, Event};
use crate::policy;
use crate::store::{DelegationState, InputRound, now_text};
use a2a_protocol::TaskStatus;
use std::time::Duration;
use tokio::time::Instant;

impl Run {
    /// INPUT_REQUIRED or AUTH_REQUIRED: answer (from the inputs, a resumed round, or the
    /// caller through an escalation), record the round durably, then continue the task.
    pub(super) async fn on_interrupted(
        &mut self,
        kind: EscalationKind,
        status: TaskStatus,
    ) -> Option<Next> {
        let question = status
            .message
            .as_ref()
            .map(|m| {
                let mut q = m.text();
                for p in &m.parts {
                    if let a2a_protocol::PartContent::Data(v) = &p.content {
                        if !q.is_empty() {
                            q.push('\n');
                        }
                        q.push_str(&v.to_string());
                    }
                }
                q
            })
            .unwrap_or_default();
        let qid = status
            .message
            .as_ref()
            .map(|m| m.message_id.clone())
            .filter(|s| !s.is_empty());
        let identity = format!("{kind:?}|{}|{question}", qid.clone().unwrap_or_default());
        if self.answered_question.as_deref() == Some(identity.as_str()) {
            // Our answer is on its way; the agent has not moved on yet.
            return None;
        }
        self.set_state(match kind {
            EscalationKind::Input => DelegationState::InputRequired,
            EscalationKind::Auth => DelegationState::AuthRequired,
        })
        .await;
        // Resume a round recorded before a restart, if this is the same question.
        let resumable = self.rec.input_rounds.last().filter(|r| {
            r.kind == kind
                && r.sent_at.is_none()
                && r.question == question
                && r.question_message_id == qid
        });
        let round_no = match resumable {
            Some(r) => r.round,
            None => {
                let used = self
                    .rec
                    .input_rounds
                    .iter()
                    .filter(|r| r.kind == EscalationKind::Input)
                    .count() as u32;
                if kind == EscalationKind::Input
                    && used >= self.opts().input_round_cap
                    && !self.bugs.has(Bug::NoInputCap)
                {
                    let cap = self.opts().input_round_cap;
                    return Some(
                        self.fail_and_cancel(format!(
                            "input round cap {cap} reached: the task asked for input again"
                        ))
                        .await,
                    );
                }
                if kind == EscalationKind::Auth {
                    // A new auth round (§7.6.4): the credential of an earlier round is not
                    // assumed to authorize it; it is no longer sent (the caller is asked again).
                    self.scoped_credential = None;
                }
                let n = self.rec.input_rounds.len() as u32 + 1;
                self.rec.input_rounds.push(InputRound {
                    round: n,
                    kind,
                    question: question.clone(),
                    question_message_id: qid.clone(),
                    answer: None,
                    source: None,
                    answer_message_id: None,
                    asked_at: Some(now_text()),
                    answered_at: None,
                    sent_at: None,
                });
                self.save().await;
                n
            }
        };
        let purpose = format!("{kind}-{round_no}");
        let idx = self
            .rec
            .input_rounds
            .iter()
            .position(|r| r.round == round_no)?;
        // Decide the answer (or reuse the one recorded before a restart). A credential lives in
        // memory only: an auth round answered before a restart is escalated again.
        let recorded = self.rec.input_rounds[idx]
            .answer
            .clone()
            .filter(|_| kind == EscalationKind::Input || self.scoped_credential.is_some());
        let (answer_text, data, auth) = if let Some(a) = recorded {
            let data = if kind == EscalationKind::Input {
                policy::answer_from_inputs(&question, &self.rec.request.inputs).map(|a| a.data)
            } else {
                None
            };
            (a, data, self.auth())
        } else {
            match kind {
                EscalationKind::Input => {
                    if let Some(a) = policy::answer_from_inputs(&question, &self.rec.request.inputs)
                    {
                        let r = &mut self.rec.input_rounds[idx];
                        r.answer = Some(a.text.clone());
                        r.source = Some(a.source());
                        r.answered_at = Some(now_text());
                        (a.text, Some(a.data), self.auth())
                    } else if self.bugs.has(Bug::GuessInputs) {
                        let r = &mut self.rec.input_rounds[idx];
                        r.answer = Some("yes".into());
                        r.source = Some("guess".into());
                        r.answered_at = Some(now_text());
                        ("yes".to_string(), None, self.auth())
                    } else {
                        match self.escalate(kind, &question).await {
                            Ok(text) => {
                                let r = &mut self.rec.input_rounds[idx];
                                r.answer = Some(text.clone());
                                r.source = Some("caller".into());
                                r.answered_at = Some(now_text());
                                (text, None, self.auth())
                            }
                            Err(n) => return Some(n),
                        }
                    }
                }
                EscalationKind::Auth => {
                    let cred = if self.bugs.has(Bug::ForwardOwnCredential)
                        && let Some(own) = self.inner.cfg.own_credential.clone()
                    {
                        own
                    } else {
                        match self.escalate(kind, &question).await {
                            Ok(c) => c,
                            Err(n) => return Some(n),
                        }
                    };
                    if self.bugs.has(Bug::PersistSecrets) {
                        crate::engine::persist_secret_bug(
                            &self.inner.cfg.store_dir,
                            &self.rec.id,
                            "scoped credential",
                            &cred,
                        );
                    }
                    self.scoped_credential = Some(cred);
                    let r = &mut self.rec.input_rounds[idx];
                    r.answer = Some("<credential supplied>".into());
                    r.source = Some("caller".into());
                    r.answered_at = Some(now_text());
                    (
                        "Credentials supplied for this task.".to_string(),
                        None,
                        self.auth(),
                    )
                }
            }
        };
        let mid = policy::message_id(&self.rec.id, &purpose);
        self.rec.input_rounds[idx].answer_message_id = Some(mid.clone());
        self.rec.message_ids.insert(purpose.clone(), mid);
        // The answer is durable before it is sent.
        self.save().await;
        let next = self
            .send_continuation(&purpose, answer_text, data, auth)
            .await;
        if matches!(next, Next::Finish(_)) {
            return Some(next);
        }
        if let Some(r) = self
            .rec
            .input_rounds
            .iter_mut()
            .find(|r| r.round == round_no)
        {
            r.sent_at = Some(now_text());
        }
        self.answered_question = Some(identity);
        self.set_state(DelegationState::Working).await;
        self.save().await;
        Some(next)
    }

    /// Report an escalation and wait for the caller's answer. While an auth escalation waits,
    /// the task is still observed (A2A §7.6.2: the credential may arrive out of band, and the
    /// agent resume on its own): it is read with `GetTask` (first after [`FIRST_OUT_OF_BAND_READ`], then backing off like polling; a push
    /// notification reads it at once), and once it has left AUTH_REQUIRED the escalation is
    /// dropped and the task observed on.
    async fn escalate(&mut self, kind: EscalationKind, question: &str) -> Result<String, Next> {
        self.inner.set_pending(&self.rec.id, Some(kind));
        let _ = self.inner.events.send(Event::Escalate {
            id: self.rec.id.clone(),
            kind,
            question: question.to_string(),
            agent: self.rec.agent_url.clone().unwrap_or_default(),
            task_id: self.rec.task_id.clone(),
        });
        self.rec.reason = Some(format!(
            "waiting for the caller to answer an {} escalation",
            kind.as_str()
        ));
        self.save().await;
        let watch = kind == EscalationKind::Auth;
        let base = Duration::from_millis(self.opts().poll_interval_ms.max(10));
        let mut interval = base;
        // The first read waits for a caller that answers at once (the usual case): a credential
        // is for a person or a vault to give, and reading the task while it is on its way only
        // makes traffic (and makes two runs differ by whether the read won the race).
        let first_read = Instant::now() + interval.max(FIRST_OUT_OF_BAND_READ);
        let mut next_read = first_read;
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(self.deadline), if !self.deadline_ignored => {
                    if !self.deadline_applies() {
                        continue;
                    }
                    self.inner.set_pending(&self.rec.id, None);
                    return Err(self.on_deadline("local deadline reached while waiting for the caller").await);
                }
                _ = tokio::time::sleep_until(next_read), if watch => {
                    if let Some(n) = self.resumed_out_of_band().await {
                        return Err(n);
                    }
                    interval = interval.mul_f64(1.5).min(base * 10);
                    next_read = Instant::now() + interval;
                }
                c = self.ctl.recv() => match c {
                    Some(Control::Answer(t)) if kind == EscalationKind::Input => { self.rec.reason = None; return Ok(t) }
                    Some(Control::Credential(c)) if kind == EscalationKind::Auth => { self.rec.reason = None; return Ok(c) }
                    Some(Control::Cancel) => {
                        self.inner.set_pending(&self.rec.id, None);
                        return Err(self.on_deadline("canceled by the caller").await);
                    }
                    // A push reads the task at once, but not before the first read: the push
                    // of the AUTH_REQUIRED change itself often lands while the answer is on its
                    // way.
                    Some(Control::PushHint) if watch => next_read = Instant::now().max(first_read),
                    Some(_) => {}
                    None if watch => {
                        // The engine is gone: no answer comes; the task may still resume.
                        next_read = next_read.max(Instant::now() + interval);
                        tokio::time::sleep_until(next_read.min(self.deadline)).await;
                        if let Some(n) = self.resumed_out_of_band().await {
                            return Err(n);
                        }
                    }
                    None => {
                        // The engine is gone: wait for the deadline.
                        tokio::time::sleep_until(self.deadline).await;
                        return Err(self.on_deadline("local deadline reached while waiting for the caller").await);
                    }
                },
            }
        }
    }
}

/// How long an auth escalation waits before the task is first read for an out-of-band resume
/// (then every polling interval, backing off).
const FIRST_OUT_OF_BAND_READ: Duration = Duration::from_secs(2);

impl Run {
    /// During an auth escalation: read the task once. `Some` when it has left AUTH_REQUIRED
    /// (the agent resumed without a message from us): the escalation is withdrawn and the task
    /// observed on. A failed read changes nothing (the next one may work).
    async fn resumed_out_of_band(&mut self) -> Option<Next> {
        let task_id = self.rec.task_id.clone()?;
        let agent = self.agent.clone()?;
        let r = self
            .inner
            .client
            .call(
                &agent.endpoint,
                a2a_protocol::Method::GetTask,
                serde_json::json!({"id": task_id}),
                self.auth().as_deref(),
                self.req_timeout(),
            )
            .await;
        let task = match r {
            Ok(r) if r.task_lacks().is_empty() => {
                a2a_protocol::codec::decode_value::<a2a_protocol::Task>(&r.result).ok()?
            }
            Ok(_) => return None,
            Err(e) => {
                tracing::debug!(delegation = %self.rec.id, "reading the task during an auth escalation: {e}");
                return None;
            }
        };
        if task.status.state == a2a_protocol::TaskState::AuthRequired {
            return None;
        }
        tracing::info!(
            delegation = %self.rec.id,
            "the task left AUTH_REQUIRED without our credential ({}): escalation withdrawn",
            task.status.state.as_str()
        );
        self.inner.set_pending(&self.rec.id, None);
        self.rec.reason = None;
        self.save().await;
        Some(Next::Observe)
    }
}
