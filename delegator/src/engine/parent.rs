//! Parent delegations: a request split into children, each delegated on its own with a share of
//! the budget, and the parent's outcome joined from theirs.

use super::{
    Control, Done, Engine, EngineError, Outcome, Running, instant_at, lock, outcome_of,
    parse_rfc3339,
};
use crate::request::DelegationRequest;
use crate::request::RequestExt;
use crate::store::{DelegationRecord, DelegationState, now_text};
use a2a_protocol::xdeleg::split_budget;
use std::sync::atomic::Ordering;
use std::time::Duration;
use time::OffsetDateTime;
use tokio::sync::mpsc;

impl Engine {
    /// Run a parent delegation (one split into children) in the background.
    pub(super) fn spawn_parent(&self, rec: DelegationRecord, recovering: bool) {
        let engine = self.clone();
        let inner = self.inner.clone();
        let (tx, mut rx) = mpsc::unbounded_channel();
        lock(&inner.running).insert(
            rec.id.clone(),
            Running {
                ctl: tx,
                push_token_sha256: Vec::new(),
                task_id: None,
                pending: None,
            },
        );
        inner.active.fetch_add(1, Ordering::SeqCst);
        tokio::spawn(async move {
            let id = rec.id.clone();
            engine.run_parent(rec, recovering, &mut rx).await;
            lock(&inner.running).remove(&id);
            if inner.active.fetch_sub(1, Ordering::SeqCst) == 1 {
                inner.idle.notify_waiters();
            }
        });
    }

    /// Start the children not started yet, wait for their outcomes (bounded by the deadline),
    /// and end the parent as COMPLETED when all completed, else FAILED.
    async fn run_parent(
        &self,
        mut rec: DelegationRecord,
        recovering: bool,
        ctl: &mut mpsc::UnboundedReceiver<Control>,
    ) {
        let inner = &self.inner;
        let children = rec.request.children.clone().unwrap_or_default();
        let shares = split_budget(
            rec.budget_usd,
            children.len(),
            inner.cfg.options.budget_reserve_fraction,
        );
        for (c, share) in children.iter().zip(shares) {
            let exists = matches!(inner.store.get(&c.id).await, Ok(Some(_)));
            if exists {
                // Recovery resumes open children on its own.
                continue;
            }
            let _ = recovering;
            let child = rec.request.child_request(c, share, &rec.deadline);
            if let Err(e) = self
                .clone()
                .delegate_boxed(child, Some(rec.id.clone()), Some(share))
                .await
            {
                tracing::warn!(parent = %rec.id, child = %c.id, "child not started: {e}");
                let mut failed = rec.clone();
                failed.id = c.id.clone();
                lock(&inner.finished).insert(
                    c.id.clone(),
                    Done {
                        id: c.id.clone(),
                        state: Outcome::Refused,
                        reason: Some(e.to_string()),
                        task_id: None,
                        context_id: None,
                        message: None,
                        artifacts: vec![],
                    },
                );
            }
        }
        let ids: Vec<String> = children.iter().map(|c| c.id.clone()).collect();
        let deadline =
            instant_at(parse_rfc3339(&rec.deadline).unwrap_or_else(OffsetDateTime::now_utc))
                + Duration::from_secs(30);
        let outcomes = loop {
            let notified = inner.finished_notify.notified();
            let mut all = Vec::new();
            for id in &ids {
                let from_map = lock(&inner.finished).get(id).cloned();
                let o = match from_map {
                    Some(o) => Some(o),
                    None => match inner.store.get(id).await {
                        Ok(Some(r)) if r.state.is_final() => Some(outcome_of(&r)),
                        _ => None,
                    },
                };
                if let Some(o) = o {
                    all.push(o);
                }
            }
            if all.len() == ids.len() {
                break all;
            }
            tokio::select! {
                _ = notified => {}
                c = ctl.recv() => {
                    if let Some(Control::Cancel) = c {
                        for id in &ids {
                            let _ = self.cancel(id);
                        }
                    }
                }
                _ = tokio::time::sleep_until(deadline) => break all,
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
        };
        let not_ok: Vec<String> = ids
            .iter()
            .map(|id| {
                let st = outcomes
                    .iter()
                    .find(|o| &o.id == id)
                    .map(|o| o.state.as_str())
                    .unwrap_or("UNFINISHED");
                (id, st)
            })
            .filter(|(_, st)| *st != "COMPLETED" && *st != "ANSWERED_DIRECT")
            .map(|(id, st)| format!("{id}={st}"))
            .collect();
        // The children's committed artifacts, with their provenance, from their records: the
        // parent's result only when every child completed (a FAILED parent commits nothing; each
        // completed child's `done` still carries its own).
        let mut artifacts = Vec::new();
        for o in &outcomes {
            if let Ok(Some(child)) = inner.store.get(&o.id).await {
                artifacts.extend(child.artifacts.into_iter().filter(|a| a.committed));
            }
        }
        if not_ok.is_empty() {
            rec.artifacts = artifacts;
            rec.state = DelegationState::Completed;
            rec.reason = Some(format!("all {} children completed", ids.len()));
        } else {
            rec.state = DelegationState::Failed;
            rec.reason = Some(format!("children not completed: {}", not_ok.join(", ")));
        }
        rec.terminal_at = Some(now_text());
        rec.updated_at = now_text();
        inner.report_final(&rec, None).await;
    }

    /// [`Engine::delegate_with_parent`], boxed (a child may itself be a parent).
    fn delegate_boxed(
        self,
        req: DelegationRequest,
        parent: Option<String>,
        share: Option<f64>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), EngineError>> + Send>> {
        Box::pin(async move { self.delegate_with_parent(req, parent, share).await })
    }
}
