//! What the delegator says during a case: state changes, escalations answered, outcomes noted,
//! a push forged once it configured one, time bounds and a stalled stdin.

use super::*;

impl<'a> CaseRun<'a> {
    /// `forge_push` cases: once the journal shows the push config the delegator gave an agent
    /// for a delegation's task, post one notification with a wrong token to that webhook.
    pub(super) async fn forge_when_push_configured(&mut self) {
        if !self.s.forge_push {
            return;
        }
        let s = self.s;
        for d in &s.delegations {
            if self
                .forged_for
                .get(&d.id)
                .is_some_and(|(_, reached)| *reached)
            {
                continue;
            }
            let Some(t) = self.journal.with_entries(|j| push_target(j, &d.text)) else {
                continue;
            };
            if self
                .forged_for
                .get(&d.id)
                .is_some_and(|(url, _)| *url == t.url)
            {
                continue;
            }
            let code = forge_push(&t.url, &t.task, &t.context).await;
            self.forged_for
                .insert(d.id.clone(), (t.url.clone(), code.is_some()));
            if let Some(code) = code {
                self.facts.forged.push(code);
            }
        }
    }

    /// Act on one message: forge a push and send cancels on `state`, answer an `escalate`,
    /// record a `done` (and start the delegations waiting for it), note an `error`.
    pub(super) async fn handle(&mut self, msg: Received, old_life: bool) {
        let Received::Message(msg) = msg else {
            // A snapshot_ok nobody asked for needs no action.
            return;
        };
        match msg {
            FromDelegator::State(st) if !old_life => self.on_state(&st).await,
            // An escalation of the killed process is reported again by the restarted one.
            FromDelegator::Escalate(e) if !old_life => {
                // The `input_round` (`auth_round`) crash point: the delegator has seen the
                // question (the auth request) and no answer (credential) has been given. The
                // restarted delegator reports it again.
                let round = match e.kind {
                    EscalationKind::Input => CrashTrigger::InputRound,
                    EscalationKind::Auth => CrashTrigger::AuthRound,
                };
                let at_crash_point = !self.crashed
                    && self.crash.as_ref().is_some_and(|c| {
                        c.trigger() == round
                            && c.kill_at_point(
                                "the delegator escalated it and the harness had not answered",
                            )
                    });
                if !at_crash_point {
                    self.on_escalate(&e).await;
                }
            }
            FromDelegator::Done(done) => {
                let id = done.id.clone();
                self.note_outcome_seq(&id);
                self.facts
                    .outcomes
                    .insert(id.clone(), FromDelegator::Done(done));
                let s = self.s;
                for d in s
                    .delegations
                    .iter()
                    .filter(|d| d.after.as_deref() == Some(id.as_str()))
                {
                    self.delegate(d).await;
                }
            }
            FromDelegator::Error(e) => {
                let line = serde_json::to_string(&e).unwrap_or_default();
                if e.code == DriverErrorCode::Unsupported {
                    self.facts.unsupported = true;
                    self.note_outcome_seq(e.id.as_deref().unwrap_or_default());
                    self.facts
                        .outcomes
                        .insert(e.id.clone().unwrap_or_default(), FromDelegator::Error(e));
                }
                self.intake.note(format!("delegator error: {line}"));
            }
            // Other types need no action.
            _ => {}
        }
    }

    /// Evidence: the journal as it stood when the outcome of `id` arrived (only what is in it
    /// can have caused that outcome).
    pub(super) fn note_outcome_seq(&mut self, id: &str) {
        let last = self.journal.with_entries(|j| j.last().map_or(0, |e| e.seq));
        self.facts.done_at.insert(id.to_string(), last);
    }

    pub(super) async fn on_state(&mut self, msg: &StateChange) {
        let id = msg.id.as_str();
        let bare = |x: &str| x.trim_start_matches("TASK_STATE_").to_ascii_uppercase();
        let s = self.s;
        for c in &s.cancels {
            if c.id == id
                && !self.canceled.contains(&c.id)
                && c.when_state
                    .as_deref()
                    .is_none_or(|w| bare(w) == msg.state.as_str())
            {
                self.canceled.push(c.id.clone());
                let cancel = ToDelegator::Cancel(Cancel { id: id.to_string() });
                self.send(&cancel).await;
            }
        }
    }

    pub(super) async fn on_escalate(&mut self, msg: &Escalate) {
        let (id, kind) = (msg.id.as_str(), msg.kind);
        let used = self
            .facts
            .given
            .iter()
            .filter(|(i, k, _)| i == id && *k == kind)
            .count();
        let answers: Vec<&Answer> = self
            .s
            .answers
            .iter()
            .filter(|a| a.id == id && a.kind == kind)
            .collect();
        if let Some(a) = answers.get(used).or(answers.last()) {
            let reply = match kind {
                EscalationKind::Auth => ToDelegator::Credential(Credential {
                    id: id.to_string(),
                    credential: a.value.clone(),
                }),
                EscalationKind::Input => ToDelegator::Answer(a2a_driver_contract::Answer {
                    id: id.to_string(),
                    text: a.value.clone(),
                }),
            };
            self.facts
                .given
                .push((id.to_string(), kind, a.value.clone()));
            self.send(&reply).await;
        }
    }

    /// Note the delegations without an outcome when the case deadline passed.
    pub(super) fn note_time_bound(&mut self) {
        if let Some(c) = self.crash.as_ref().filter(|c| c.record().is_none()) {
            let journal_end = self.journal.with_entries(|j| j.last().map_or(0, |e| e.seq));
            self.intake.note(format!(
                "crash trigger {:?} never reached its point: no crash was injected (the journal ended at seq {journal_end})",
                c.trigger()
            ));
        }
        if self.facts.inited && !self.flooded && !self.all_done() {
            let missing = self
                .s
                .delegations
                .iter()
                .filter(|d| !self.facts.outcomes.contains_key(&d.id))
                .count();
            self.intake.note(format!(
                "time bound: {missing} of {} delegations had no outcome after {} ms",
                self.s.delegations.len(),
                self.s.timeout_ms
            ));
        }
    }

    /// A delegator whose stdin has stayed full does not read its requests: a contract break.
    /// True when it stalled.
    pub(super) fn note_stdin_stall(&mut self) -> bool {
        let stalled = self
            .proc
            .write_blocked()
            .filter(|(blocked, _)| *blocked >= STDIN_STALL);
        if let Some((blocked, queued)) = stalled
            && !self.intake.stalled_noted
        {
            self.intake.stalled_noted = true;
            self.intake.note(format!(
                "contract: the delegator did not read its stdin: a write blocked for {} ms, {queued} more messages queued",
                blocked.as_millis()
            ));
        }
        stalled.is_some()
    }
}
