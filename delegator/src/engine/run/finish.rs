//! How a run ends: the final record (artifacts committed or kept as partials, the dead-letter
//! entry), failing with a best-effort cancel of the remote task.

use super::{Final, Next, Run};
use crate::artifacts::{ArtifactError, Provenance};
use crate::store::{DelegationState, DlqEntry, RecordError, now_text};
use a2a_protocol::Method;
use serde_json::json;

impl Run {
    /// An artifact could not be assembled or validated: record it, fail and cancel.
    pub(super) async fn artifact_failure(&mut self, e: ArtifactError) -> Next {
        self.rec.push_error(RecordError {
            at: now_text(),
            op: "artifact".into(),
            code: None,
            http_status: None,
            transient: false,
            message: e.to_string(),
        });
        self.fail_and_cancel(e.to_string()).await
    }

    /// Fail the delegation and cancel the remote task so it stops spending (best effort).
    pub(super) async fn fail_and_cancel(&mut self, reason: String) -> Next {
        if let (Some(task_id), Some(agent)) = (self.rec.task_id.clone(), self.agent.clone())
            && !self.rec.state.is_final()
        {
            let r = self
                .inner
                .client
                .call(
                    &agent.endpoint,
                    Method::CancelTask,
                    json!({"id": task_id}),
                    self.auth().as_deref(),
                    self.req_timeout(),
                )
                .await;
            if let Err(e) = r {
                self.error("CancelTask", &e);
            }
        }
        Next::Finish(Final::new(DelegationState::Failed, reason))
    }

    /// End the run: validate and commit artifacts of a completed task (keep partial ones of a
    /// dead-lettered delegation), save the final record (with its dead-letter entry) and report
    /// it; a final record that cannot be saved is never reported as `done`.
    pub(super) async fn finish(mut self, mut f: Final) {
        let prov = Provenance {
            agent_url: self.rec.agent_url.clone().unwrap_or_default(),
            skill: self.rec.skill.clone(),
            task_id: self.rec.task_id.clone().unwrap_or_default(),
        };
        match f.state {
            DelegationState::Completed => {
                let problems = self.reassembler.problems();
                if !problems.is_empty() {
                    f = Final::new(
                        DelegationState::Failed,
                        format!("artifacts rejected: {}", problems.join("; ")),
                    );
                } else {
                    match self.reassembler.commit(&prov).await {
                        Ok(recs) => self.rec.artifacts = recs,
                        Err(e) => {
                            f = Final::new(DelegationState::Failed, format!("commit failed: {e}"));
                        }
                    }
                }
            }
            DelegationState::DeadLettered => {
                self.rec.artifacts = self.reassembler.partials(&prov).await;
            }
            _ => {}
        }
        if !self.problems.is_empty() {
            // What the agent sent that was rejected is part of the outcome (DLG-ART-09: a
            // result read afresh after an agent protocol error names the error).
            let rejected = self.problems.join("; ");
            f.reason = Some(match f.reason.take() {
                Some(r) if !r.contains(&rejected) => {
                    format!("{r} (agent protocol errors: {rejected})")
                }
                Some(r) => r,
                None => format!("agent protocol errors: {rejected}"),
            });
        }
        self.rec.state = f.state;
        self.rec.reason = f.reason.clone();
        self.rec.final_message = f.message.clone();
        if f.code.is_some() {
            self.rec.error_code = f.code;
        }
        self.rec.terminal_at = Some(now_text());
        self.rec.updated_at = now_text();
        let dlq = (f.state == DelegationState::DeadLettered).then(|| {
            self.rec.dlq = true;
            let mut chain = self.rec.chain.clone();
            chain.push(self.inner.cfg.self_url.clone());
            DlqEntry {
                delegation_id: self.rec.id.clone(),
                at: now_text(),
                request: self.rec.request.clone(),
                errors: self.rec.errors.clone(),
                partial_artifacts: self.rec.artifacts.clone(),
                chain,
                task_id: self.rec.task_id.clone(),
                agent_url: self.rec.agent_url.clone(),
                resubmitted_as: None,
            }
        });
        self.inner.report_final(&self.rec, dlq.as_ref()).await;
    }
}
