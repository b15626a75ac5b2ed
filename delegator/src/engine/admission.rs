//! Admission: accepting a delegation request. Validation, the limits checked before anything is
//! sent (deadline, depth, loop, budget), routing to an agent, and the durable intent recorded
//! before the first request leaves.

use super::{Engine, EngineError, fmt_time, lock, parse_rfc3339};
use crate::bugs::Bug;
use crate::policy;
use crate::request::DelegationRequest;
use crate::request::RequestExt;
use crate::store::{DelegationRecord, DelegationState, now_text};
use a2a_protocol::xdeleg::{XDeleg, normalize_url, split_budget};
use time::OffsetDateTime;

impl Engine {
    /// Accept `req` (a child of `parent` with budget `share_override`, if given): validate,
    /// check limits, route and record the intent, then start it.
    pub(super) async fn delegate_with_parent(
        &self,
        req: DelegationRequest,
        parent: Option<String>,
        share_override: Option<f64>,
    ) -> Result<(), EngineError> {
        req.validate()?;
        let inner = &self.inner;
        if let Some(existing) = inner.store.get(&req.id).await? {
            if parent.is_none()
                && existing.request == req
                && inner.recovered.load(std::sync::atomic::Ordering::SeqCst)
            {
                // The caller re-sends, after a restart, a `delegate` the killed process recorded
                // but died before acknowledging: it is that delegation, which recovery already
                // resumed (or reported). Nothing new is recorded or sent.
                tracing::info!(delegation = %req.id, "delegate re-sent after a restart: already recorded");
                return Ok(());
            }
            return Err(EngineError::BadRequest(format!(
                "delegation id {:?} already exists (state {})",
                req.id, existing.state
            )));
        }
        let mut refine_agent = None;
        let mut context_id = None;
        let mut reference_task_ids = Vec::new();
        if let Some(old_id) = &req.refine_of {
            let old = inner.store.get(old_id).await?.ok_or_else(|| {
                EngineError::BadRequest(format!("refine_of: delegation {old_id:?} is not known"))
            })?;
            refine_agent = old.agent_url.clone();
            context_id = old.context_id.clone();
            if let Some(t) = &old.task_id {
                reference_task_ids.push(t.clone());
            }
        }
        let now = OffsetDateTime::now_utc();
        let deadline = req.effective_deadline(now);
        let share = share_override.unwrap_or_else(|| {
            if req.children.is_some() {
                req.budget_usd
            } else {
                split_budget(req.budget_usd, 1, inner.cfg.options.budget_reserve_fraction)
                    .first()
                    .copied()
                    .unwrap_or(0.0)
            }
        });
        let mut rec = DelegationRecord {
            id: req.id.clone(),
            parent_id: parent,
            skill: req.capability.clone(),
            agent_url: None,
            rpc_url: None,
            protocol_version: None,
            message_ids: Default::default(),
            task_id: None,
            context_id,
            state: DelegationState::Sending,
            reason: None,
            budget_usd: req.budget_usd,
            budget_share: share,
            spend_usd: 0.0,
            deadline: fmt_time(deadline),
            depth: req.depth,
            chain: req.chain.clone(),
            refine_of: req.refine_of.clone(),
            reference_task_ids,
            streaming: false,
            push_token_sha256: Vec::new(),
            attempts: 0,
            last_error: None,
            error_code: None,
            final_message: None,
            priority: req.priority.as_str().to_string(),
            created_at: now_text(),
            updated_at: now_text(),
            terminal_at: None,
            dlq: false,
            input_rounds: Vec::new(),
            artifacts: Vec::new(),
            errors: Vec::new(),
            request: req.clone(),
        };
        // Limits: refuse before anything is sent.
        let violation = self
            .limit_violation(&rec, now, share)
            // The planted bug `no-limit-checks` is asked only about a delegation they refuse.
            .filter(|_| !self.inner.cfg.bugs.has(Bug::NoLimitChecks));
        if let Some(reason) = violation {
            return self.refuse(rec, reason).await;
        }
        if req.children.is_some() {
            rec.state = DelegationState::Working;
            inner.store.insert(rec.clone()).await?;
            inner.emit_state(&rec);
            self.spawn_parent(rec, false);
            return Ok(());
        }
        // Routing.
        let only = req.agent.clone().or(refine_agent);
        let agent = match inner.route(&req, only.as_deref()).await {
            Ok(a) => a,
            Err(e) => return self.refuse(rec, e.to_string()).await,
        };
        rec.agent_url = Some(agent.card_url.clone());
        rec.rpc_url = Some(agent.endpoint.url.clone());
        rec.protocol_version = Some(agent.endpoint.version.as_str().to_string());
        rec.streaming = agent.streaming() && req.artifact_spec.streaming_preferred;
        // The push token lives in memory; the record keeps its sha256 (DLG-SECRET-01).
        let mut push_token = None;
        if !rec.streaming && agent.push() && lock(&inner.webhook_url).is_some() {
            let token = super::new_push_token();
            rec.push_token_sha256
                .push(crate::webhook::token_sha256(&token));
            if inner.cfg.bugs.has(Bug::PersistSecrets) {
                super::persist_secret_bug(&inner.cfg.store_dir, &rec.id, "push token", &token);
            }
            push_token = Some(token);
        }
        rec.message_ids
            .insert("create".into(), policy::message_id(&rec.id, "create"));
        // The intent is durable before the first request leaves: the insert records the first
        // send's attempt too, so the run does not save again before it.
        rec.attempts = 1;
        inner.store.insert(rec.clone()).await?;
        inner.emit_state(&rec);
        self.spawn_run(rec, false, push_token, Some(agent));
        Ok(())
    }

    /// Why `rec` must be refused before anything is sent (deadline, loop, depth, budget).
    fn limit_violation(
        &self,
        rec: &DelegationRecord,
        now: OffsetDateTime,
        share: f64,
    ) -> Option<String> {
        let cfg = &self.inner.cfg;
        let deadline = parse_rfc3339(&rec.deadline).unwrap_or(now);
        if deadline <= now {
            return Some(format!("deadline {} has already passed", rec.deadline));
        }
        let own = normalize_url(&cfg.self_url);
        if rec.chain.iter().any(|u| normalize_url(u) == own) {
            return Some(format!(
                "delegation loop: own URL {} is already in the chain",
                cfg.self_url
            ));
        }
        if rec.depth > cfg.options.max_depth {
            return Some(format!(
                "depth {} exceeds the limit of {}",
                rec.depth, cfg.options.max_depth
            ));
        }
        let parent = XDeleg {
            deadline,
            budget_usd: rec.budget_usd,
            depth: rec.depth,
            chain: rec.chain.clone(),
        };
        let margin = time::Duration::milliseconds(cfg.options.deadline_margin_ms as i64);
        if let Err(v) = parent.child(now, margin, share, &cfg.self_url) {
            return Some(v.to_string());
        }
        None
    }

    /// Record and report `rec` as refused.
    async fn refuse(&self, mut rec: DelegationRecord, reason: String) -> Result<(), EngineError> {
        rec.state = DelegationState::Refused;
        rec.reason = Some(reason);
        rec.terminal_at = Some(now_text());
        self.inner.store.insert(rec.clone()).await?;
        self.inner.emit_state(&rec);
        self.inner.emit_done(&rec);
        Ok(())
    }
}
