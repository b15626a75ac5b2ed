//! The delegation engine: accepts requests, enforces limits, routes, sends, observes every task
//! until it is final, handles interrupted states, reassembles artifacts, retries, dead-letters and
//! recovers after a restart.
//!
//! Each delegation runs as one tokio task driving a small state machine:
//!
//! ```text
//! accept ─► limits ─► route ─► record (SENDING) ─► send ─┬─► Message ─► ANSWERED_DIRECT
//!                                                        └─► Task ─► observe ◄──────────┐
//!   observe = stream (SendStreamingMessage, then SubscribeToTask) or poll (GetTask,      │
//!             backing off; push notifications wake it early)                           │
//!   INPUT_REQUIRED ─► answer from inputs, or escalate and wait ─► continue the task ──────┤
//!   AUTH_REQUIRED  ─► escalate for a scoped credential ─► continue with it ───────────────┘
//!   COMPLETED ─► validate ─► commit artifacts;  FAILED/CANCELED/REJECTED ─► final
//!   local deadline ─► CancelTask (-32002 ⇒ GetTask) ;  -32001 ⇒ LOST
//! ```
//!
//! Every change of a record is saved (one transaction) before the next request leaves, and is
//! reported as an [`Event`].

use crate::agents::{self, AgentInfo, CardError};
use crate::artifacts::{ArtifactError, Provenance, Reassembler, safe_name};
use crate::bugs::{Bug, Bugs};
use crate::client::{ClientError, EventStream, RpcClient};
use crate::policy::{self, ErrorAction, Op, StateAction};
use crate::request::{DelegationRequest, RequestError};
use crate::store::{
    ArtifactRecord, DelegationRecord, DelegationState, DlqEntry, ErrorRecord, InputRound,
    SqliteStore, StoreError, StoreHandle, now_text,
};
use crate::webhook::{self, Verdict, WebhookSink};
use a2a_protocol::xdeleg::{XDeleg, normalize_url, split_budget};
use a2a_protocol::{
    Message, Method, Part, Role, SendMessageConfiguration, SendMessageRequest, SendMessageResponse,
    StreamResponse, Task, TaskPushNotificationConfig, TaskState, TaskStatus,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

/// Tunable behaviour (the driver's `init.options`). Every field has a default.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    /// Incoming work deeper than this is refused.
    pub max_depth: u32,
    /// Input rounds per delegation; past it the delegation fails.
    pub input_round_cap: u32,
    /// Each child's deadline is this much earlier than ours.
    pub deadline_margin_ms: u64,
    /// Fraction of a budget kept back for retries.
    pub budget_reserve_fraction: f64,
    /// Retry backoff base.
    pub retry_base_ms: u64,
    /// Retry backoff cap.
    pub retry_cap_ms: u64,
    /// First polling interval (backs off ×1.5 up to 10× while nothing changes).
    pub poll_interval_ms: u64,
    /// Seed for the jitter (ChaCha8).
    pub seed: u64,
    /// Largest SSE event accepted.
    pub max_event_bytes: usize,
    /// Write buffer per artifact file.
    pub write_buffer_bytes: usize,
    /// Timeout of one unary request.
    pub request_timeout_ms: u64,
    /// How long a stream is still read after the final state, to catch protocol errors.
    pub terminal_grace_ms: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            max_depth: 3,
            input_round_cap: 3,
            deadline_margin_ms: 2000,
            budget_reserve_fraction: 0.1,
            retry_base_ms: 2000,
            retry_cap_ms: 60_000,
            poll_interval_ms: 500,
            seed: 0,
            max_event_bytes: 16 * 1024 * 1024,
            write_buffer_bytes: 64 * 1024,
            request_timeout_ms: 30_000,
            terminal_grace_ms: 1000,
        }
    }
}

/// How the engine is set up (the driver's `init`).
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Directory of the store and artifact files.
    pub store_dir: PathBuf,
    /// Agent card URLs, in routing preference order.
    pub agents: Vec<String>,
    /// Base URL agents post push notifications to (`None`: no push).
    pub webhook_base_url: Option<String>,
    /// Address the webhook receiver binds (default: host and port of `webhook_base_url`).
    pub webhook_listen: Option<String>,
    /// This delegator's own URL, appended to the chain.
    pub self_url: String,
    /// The delegator's own credential: never sent to an agent.
    pub own_credential: Option<String>,
    /// Options.
    pub options: Options,
    /// Planted bugs (test builds only).
    pub bugs: Bugs,
}

/// A request to the engine was refused outright (nothing recorded).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The request is malformed or conflicts with the store.
    #[error("{0}")]
    BadRequest(String),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// Something else failed.
    #[error("{0}")]
    Internal(String),
}

impl From<RequestError> for EngineError {
    fn from(e: RequestError) -> Self {
        EngineError::BadRequest(e.to_string())
    }
}

/// Which kind of escalation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EscalationKind {
    /// INPUT_REQUIRED that the delegation's data cannot answer.
    Input,
    /// AUTH_REQUIRED.
    Auth,
}

/// The outcome of a finished delegation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// Delegation id.
    pub id: String,
    /// Final state.
    pub state: DelegationState,
    /// Why.
    pub reason: Option<String>,
    /// Task id, if a task existed.
    pub task_id: Option<String>,
    /// Context id.
    pub context_id: Option<String>,
    /// The agent's final message text (data).
    pub message: Option<String>,
    /// Committed artifacts.
    pub artifacts: Vec<ArtifactRecord>,
}

/// What the engine reports.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A delegation changed state.
    State {
        /// Delegation id.
        id: String,
        /// New state.
        state: DelegationState,
        /// Task id.
        task_id: Option<String>,
        /// Context id.
        context_id: Option<String>,
    },
    /// The caller must answer.
    Escalate {
        /// Delegation id.
        id: String,
        /// Input or auth.
        kind: EscalationKind,
        /// The agent's question (data).
        question: String,
        /// The agent's card URL.
        agent: String,
        /// Task id.
        task_id: Option<String>,
    },
    /// A delegation is finished.
    Done(Outcome),
}

#[derive(Debug)]
enum Control {
    Answer(String),
    Credential(String),
    Cancel,
    PushHint,
}

struct Running {
    ctl: mpsc::UnboundedSender<Control>,
    push_token: Option<String>,
    pending: Option<EscalationKind>,
}

struct Inner {
    cfg: EngineConfig,
    store: StoreHandle,
    client: RpcClient,
    agents: tokio::sync::RwLock<Vec<AgentInfo>>,
    card_errors: Mutex<Vec<CardError>>,
    events: mpsc::UnboundedSender<Event>,
    running: Mutex<HashMap<String, Running>>,
    finished: Mutex<HashMap<String, Outcome>>,
    finished_notify: Notify,
    active: AtomicUsize,
    idle: Notify,
    webhook_url: Mutex<Option<String>>,
}

/// The engine. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl WebhookSink for Inner {
    fn notify(&self, id: &str, token: Option<&str>, _event: StreamResponse) -> Verdict {
        let running = lock(&self.running);
        match running.get(id) {
            None => Verdict::Unknown,
            Some(r) => match (&r.push_token, token) {
                (Some(expected), Some(got)) if expected == got => {
                    let _ = r.ctl.send(Control::PushHint);
                    Verdict::Accepted
                }
                _ => Verdict::BadToken,
            },
        }
    }
}

struct SinkRef(Arc<Inner>);
impl WebhookSink for SinkRef {
    fn notify(&self, id: &str, token: Option<&str>, event: StreamResponse) -> Verdict {
        self.0.notify(id, token, event)
    }
}

fn parse_rfc3339(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &Rfc3339).ok()
}

fn fmt_time(t: OffsetDateTime) -> String {
    a2a_protocol::Timestamp::from_datetime(t).to_rfc3339()
}

fn instant_at(t: OffsetDateTime) -> Instant {
    let left = t - OffsetDateTime::now_utc();
    let secs = left.as_seconds_f64().max(0.0);
    Instant::now() + Duration::from_secs_f64(secs.min(1e7))
}

fn seed_for(seed: u64, id: &str) -> u64 {
    // FNV-1a of the id, mixed with the seed: stable across versions and platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^ seed
}

impl Engine {
    /// Open the store in `cfg.store_dir`, read the agent cards, start the webhook receiver, and
    /// return the engine; events go to `events`. Cards that cannot be read are remembered
    /// ([`Engine::card_errors`]) and retried when routing needs them.
    pub async fn start(
        cfg: EngineConfig,
        events: mpsc::UnboundedSender<Event>,
    ) -> Result<Engine, EngineError> {
        let dir = cfg.store_dir.clone();
        let store = tokio::task::spawn_blocking(move || SqliteStore::open_dir(&dir))
            .await
            .map_err(|e| EngineError::Internal(e.to_string()))??;
        let client = RpcClient::new(cfg.options.max_event_bytes)
            .map_err(|e| EngineError::Internal(e.to_string()))?;
        let inner = Arc::new(Inner {
            store: StoreHandle::new(Arc::new(store)),
            client,
            agents: tokio::sync::RwLock::new(Vec::new()),
            card_errors: Mutex::new(Vec::new()),
            events,
            running: Mutex::new(HashMap::new()),
            finished: Mutex::new(HashMap::new()),
            finished_notify: Notify::new(),
            active: AtomicUsize::new(0),
            idle: Notify::new(),
            webhook_url: Mutex::new(None),
            cfg,
        });
        inner.load_cards(false).await;
        if let Some(base) = inner.cfg.webhook_base_url.clone() {
            let listen = match &inner.cfg.webhook_listen {
                Some(l) => l.clone(),
                None => listen_addr_of(&base).ok_or_else(|| {
                    EngineError::BadRequest(format!(
                        "webhook_base_url {base:?}: not an http URL with a host"
                    ))
                })?,
            };
            let addr: std::net::SocketAddr = listen.parse().map_err(|e| {
                EngineError::BadRequest(format!("webhook listen address {listen:?}: {e}"))
            })?;
            let (bound, _h) = webhook::serve(addr, Arc::new(SinkRef(inner.clone())))
                .await
                .map_err(|e| EngineError::Internal(format!("webhook bind {addr}: {e}")))?;
            let mut url = reqwest::Url::parse(&base)
                .map_err(|e| EngineError::BadRequest(format!("webhook_base_url: {e}")))?;
            if url.port() == Some(0) {
                let _ = url.set_port(Some(bound.port()));
            }
            *lock(&inner.webhook_url) = Some(url.to_string().trim_end_matches('/').to_string());
        }
        Ok(Engine { inner })
    }

    /// The webhook base URL in use (with the real port), if push is configured.
    pub fn webhook_url(&self) -> Option<String> {
        lock(&self.inner.webhook_url).clone()
    }

    /// Agent cards that could not be read.
    pub fn card_errors(&self) -> Vec<CardError> {
        lock(&self.inner.card_errors).clone()
    }

    /// The agents whose cards were read.
    pub async fn agents(&self) -> Vec<AgentInfo> {
        self.inner.agents.read().await.clone()
    }

    /// Resume every open delegation (after a restart). Returns how many were resumed.
    pub async fn recover(&self) -> Result<usize, EngineError> {
        if self.inner.cfg.bugs.has(Bug::NoRecovery) {
            return Ok(0);
        }
        let open = self.inner.store.open_delegations().await?;
        let n = open.len();
        // Parents first is not required: a parent waits for its children's outcomes.
        for rec in open {
            let is_parent = rec.request.children.is_some();
            if is_parent {
                self.spawn_parent(rec, true);
            } else {
                self.spawn_run(rec, true);
            }
        }
        Ok(n)
    }

    /// Accept a delegation. Invalid requests are an error (nothing recorded); refused ones are
    /// recorded and reported as `REFUSED`; accepted ones run in the background.
    pub async fn delegate(&self, req: DelegationRequest) -> Result<(), EngineError> {
        self.delegate_with_parent(req, None, None).await
    }

    async fn delegate_with_parent(
        &self,
        req: DelegationRequest,
        parent: Option<String>,
        share_override: Option<f64>,
    ) -> Result<(), EngineError> {
        req.validate()?;
        let inner = &self.inner;
        if let Some(existing) = inner.store.get(&req.id).await? {
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
            push_token: None,
            scoped_credential: None,
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
        if let Some(reason) = self.limit_violation(&rec, now, share) {
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
        if !rec.streaming && agent.push() && lock(&inner.webhook_url).is_some() {
            rec.push_token = Some(uuid::Uuid::new_v4().simple().to_string());
        }
        rec.message_ids
            .insert("create".into(), policy::message_id(&rec.id, "create"));
        // The intent is durable before the first request leaves.
        inner.store.insert(rec.clone()).await?;
        inner.emit_state(&rec);
        self.spawn_run(rec, false);
        Ok(())
    }

    fn limit_violation(
        &self,
        rec: &DelegationRecord,
        now: OffsetDateTime,
        share: f64,
    ) -> Option<String> {
        let cfg = &self.inner.cfg;
        if cfg.bugs.has(Bug::NoLimitChecks) {
            return None;
        }
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

    async fn refuse(&self, mut rec: DelegationRecord, reason: String) -> Result<(), EngineError> {
        rec.state = DelegationState::Refused;
        rec.reason = Some(reason);
        rec.terminal_at = Some(now_text());
        self.inner.store.insert(rec.clone()).await?;
        self.inner.emit_state(&rec);
        self.inner.emit_done(&rec);
        Ok(())
    }

    fn spawn_run(&self, rec: DelegationRecord, recovering: bool) {
        let inner = self.inner.clone();
        let (tx, rx) = mpsc::unbounded_channel();
        lock(&inner.running).insert(
            rec.id.clone(),
            Running {
                ctl: tx,
                push_token: rec.push_token.clone(),
                pending: None,
            },
        );
        inner.active.fetch_add(1, Ordering::SeqCst);
        tokio::spawn(async move {
            let id = rec.id.clone();
            let run = Run::new(inner.clone(), rec, rx);
            run.run(recovering).await;
            lock(&inner.running).remove(&id);
            if inner.active.fetch_sub(1, Ordering::SeqCst) == 1 {
                inner.idle.notify_waiters();
            }
        });
    }

    fn spawn_parent(&self, rec: DelegationRecord, recovering: bool) {
        let engine = self.clone();
        let inner = self.inner.clone();
        let (tx, mut rx) = mpsc::unbounded_channel();
        lock(&inner.running).insert(
            rec.id.clone(),
            Running {
                ctl: tx,
                push_token: None,
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
                    Outcome {
                        id: c.id.clone(),
                        state: DelegationState::Refused,
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
        rec.artifacts = outcomes.iter().flat_map(|o| o.artifacts.clone()).collect();
        if not_ok.is_empty() {
            rec.state = DelegationState::Completed;
            rec.reason = Some(format!("all {} children completed", ids.len()));
        } else {
            rec.state = DelegationState::Failed;
            rec.reason = Some(format!("children not completed: {}", not_ok.join(", ")));
        }
        rec.terminal_at = Some(now_text());
        rec.updated_at = now_text();
        if let Err(e) = inner.store.save(rec.clone()).await {
            tracing::error!("store: {e}");
        }
        inner.emit_state(&rec);
        inner.emit_done(&rec);
    }

    fn delegate_boxed(
        self,
        req: DelegationRequest,
        parent: Option<String>,
        share: Option<f64>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), EngineError>> + Send>> {
        Box::pin(async move { self.delegate_with_parent(req, parent, share).await })
    }

    fn control(
        &self,
        id: &str,
        c: Control,
        expect: Option<EscalationKind>,
    ) -> Result<(), EngineError> {
        let mut running = lock(&self.inner.running);
        let r = running
            .get_mut(id)
            .ok_or_else(|| EngineError::BadRequest(format!("delegation {id:?} is not running")))?;
        if let Some(kind) = expect {
            if r.pending != Some(kind) {
                return Err(EngineError::BadRequest(format!(
                    "delegation {id:?} has no pending {} escalation",
                    match kind {
                        EscalationKind::Input => "input",
                        EscalationKind::Auth => "auth",
                    }
                )));
            }
            r.pending = None;
        }
        r.ctl
            .send(c)
            .map_err(|_| EngineError::BadRequest(format!("delegation {id:?} is finishing")))
    }

    /// Answer an escalated input question.
    pub fn answer(&self, id: &str, text: String) -> Result<(), EngineError> {
        self.control(id, Control::Answer(text), Some(EscalationKind::Input))
    }

    /// Supply a credential scoped to the delegation's agent and task.
    pub fn credential(&self, id: &str, credential: String) -> Result<(), EngineError> {
        self.control(
            id,
            Control::Credential(credential),
            Some(EscalationKind::Auth),
        )
    }

    /// Cancel a running delegation.
    pub fn cancel(&self, id: &str) -> Result<(), EngineError> {
        self.control(id, Control::Cancel, None)
    }

    /// Every durable record, as JSON.
    pub async fn snapshot(&self) -> Result<Vec<Value>, EngineError> {
        Ok(self
            .inner
            .store
            .list()
            .await?
            .iter()
            .map(DelegationRecord::to_json)
            .collect())
    }

    /// Number of delegations still running.
    pub fn active(&self) -> usize {
        self.inner.active.load(Ordering::SeqCst)
    }

    /// Wait until no delegation is running.
    pub async fn wait_idle(&self) {
        loop {
            let n = self.inner.idle.notified();
            if self.active() == 0 {
                return;
            }
            n.await;
        }
    }

    /// The store handle.
    pub fn store(&self) -> StoreHandle {
        self.inner.store.clone()
    }
}

fn listen_addr_of(base: &str) -> Option<String> {
    let url = reqwest::Url::parse(base).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = url.host_str()?;
    let host = if host.starts_with('[') || host.parse::<std::net::IpAddr>().is_ok() {
        host.to_string()
    } else {
        "127.0.0.1".to_string()
    };
    Some(format!(
        "{host}:{}",
        url.port_or_known_default().unwrap_or(0)
    ))
}

/// The outcome recorded in a final record.
pub fn outcome_of(rec: &DelegationRecord) -> Outcome {
    Outcome {
        id: rec.id.clone(),
        state: rec.state,
        reason: rec.reason.clone(),
        task_id: rec.task_id.clone(),
        context_id: rec.context_id.clone(),
        message: rec.final_message.clone(),
        artifacts: rec
            .artifacts
            .iter()
            .filter(|a| a.committed)
            .cloned()
            .collect(),
    }
}

impl Inner {
    async fn load_cards(&self, only_missing: bool) {
        let known: Vec<String> = self
            .agents
            .read()
            .await
            .iter()
            .map(|a| a.card_url.clone())
            .collect();
        let wanted: Vec<String> = self
            .cfg
            .agents
            .iter()
            .filter(|u| !only_missing || !known.contains(u))
            .cloned()
            .collect();
        if wanted.is_empty() {
            return;
        }
        let futs = wanted
            .iter()
            .map(|u| agents::fetch_card(self.client.http(), u, Duration::from_secs(10)));
        let results = futures::future::join_all(futs).await;
        let mut agents = self.agents.write().await;
        let mut errors = lock(&self.card_errors);
        errors.clear();
        for r in results {
            match r {
                Ok(a) => {
                    if !agents.iter().any(|x| x.card_url == a.card_url) {
                        agents.push(a);
                    }
                }
                Err(e) => {
                    tracing::warn!("{e}");
                    errors.push(e);
                }
            }
        }
        // Keep configuration order.
        let order = &self.cfg.agents;
        agents.sort_by_key(|a| {
            order
                .iter()
                .position(|u| u == &a.card_url)
                .unwrap_or(usize::MAX)
        });
    }

    async fn route(
        &self,
        req: &DelegationRequest,
        only: Option<&str>,
    ) -> Result<AgentInfo, agents::RouteError> {
        if let Some(o) = only
            && !self.cfg.agents.iter().any(|u| u == o)
            && !self.agents.read().await.iter().any(|a| a.card_url == o)
        {
            // An agent named directly (CLI, refinement of an old record) is read on demand.
            if let Ok(a) = agents::fetch_card(self.client.http(), o, Duration::from_secs(10)).await
            {
                self.agents.write().await.push(a);
            }
        }
        {
            let agents = self.agents.read().await;
            if let Ok(a) = agents::route(&agents, &req.capability, &req.artifact_spec, only) {
                return Ok(a.clone());
            }
        }
        self.load_cards(true).await;
        let agents = self.agents.read().await;
        agents::route(&agents, &req.capability, &req.artifact_spec, only).cloned()
    }

    async fn agent_for(&self, card_url: &str) -> Option<AgentInfo> {
        if let Some(a) = self
            .agents
            .read()
            .await
            .iter()
            .find(|a| a.card_url == card_url)
        {
            return Some(a.clone());
        }
        match agents::fetch_card(self.client.http(), card_url, Duration::from_secs(10)).await {
            Ok(a) => {
                self.agents.write().await.push(a.clone());
                Some(a)
            }
            Err(e) => {
                tracing::warn!("{e}");
                None
            }
        }
    }

    fn emit_state(&self, rec: &DelegationRecord) {
        let _ = self.events.send(Event::State {
            id: rec.id.clone(),
            state: rec.state,
            task_id: rec.task_id.clone(),
            context_id: rec.context_id.clone(),
        });
    }

    fn emit_done(&self, rec: &DelegationRecord) {
        let o = outcome_of(rec);
        lock(&self.finished).insert(rec.id.clone(), o.clone());
        let _ = self.events.send(Event::Done(o));
        self.finished_notify.notify_waiters();
    }

    fn set_pending(&self, id: &str, kind: Option<EscalationKind>) {
        if let Some(r) = lock(&self.running).get_mut(id) {
            r.pending = kind;
        }
    }
}

/// How a delegation ends.
#[derive(Debug, Clone)]
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
    Deadline,
    Cancel,
}

struct Run {
    inner: Arc<Inner>,
    rec: DelegationRecord,
    ctl: mpsc::UnboundedReceiver<Control>,
    agent: Option<AgentInfo>,
    reassembler: Reassembler,
    rng: ChaCha8Rng,
    deadline: Instant,
    observe_failures: u32,
    /// The identity of the question last answered; repeated observations of it are ignored
    /// until the task moves on.
    answered_question: Option<String>,
    push: bool,
    pending_push_hint: bool,
    bugs: Bugs,
}

impl Run {
    fn new(
        inner: Arc<Inner>,
        rec: DelegationRecord,
        ctl: mpsc::UnboundedReceiver<Control>,
    ) -> Self {
        let dir = inner
            .cfg
            .store_dir
            .join("artifacts")
            .join(safe_name(&rec.id));
        let bugs = inner.cfg.bugs;
        let reassembler = Reassembler::new(
            dir,
            &rec.request.artifact_spec,
            inner.cfg.options.write_buffer_bytes,
            bugs,
        );
        let rng = ChaCha8Rng::seed_from_u64(seed_for(inner.cfg.options.seed, &rec.id));
        let deadline =
            instant_at(parse_rfc3339(&rec.deadline).unwrap_or_else(OffsetDateTime::now_utc));
        let push = rec.push_token.is_some();
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
            pending_push_hint: false,
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
        self.rec.push_error(ErrorRecord {
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

    fn auth(&self) -> Option<String> {
        self.rec.scoped_credential.clone()
    }

    async fn run(mut self, recovering: bool) {
        let card_url = self.rec.agent_url.clone().unwrap_or_default();
        // The card may be unreachable for a while (an agent restarting with us): retry it like
        // any transient failure, then dead-letter.
        loop {
            self.agent = self.inner.agent_for(&card_url).await;
            if self.agent.is_some() {
                break;
            }
            let e = ClientError::Transport(format!("agent card {card_url} could not be read"));
            self.error("agent-card", &e);
            if let Some(n) = self.observe_failure(&e).await {
                let f = match n {
                    Next::Finish(f) => f,
                    _ => Final::new(DelegationState::DeadLettered, e.to_string()),
                };
                return self.finish(f).await;
            }
        }
        let mut next = if recovering {
            self.recover().await
        } else {
            Next::Send
        };
        loop {
            next = match next {
                Next::Send => self.send_initial().await,
                Next::Observe => {
                    if self.rec.streaming {
                        self.resubscribe().await
                    } else {
                        self.poll().await
                    }
                }
                Next::Stream(s) => self.consume_stream(*s).await,
                Next::Finish(f) => return self.finish(f).await,
            };
        }
    }

    // ----- recovery -------------------------------------------------------------------------

    async fn recover(&mut self) -> Next {
        self.inner.emit_state(&self.rec);
        let Some(task_id) = self.rec.task_id.clone() else {
            // An ambiguous send: find the task in its context, else resend the same messageId.
            if let Some(ctx) = self.rec.context_id.clone()
                && let Some(task) = self.find_in_context(&ctx).await
            {
                return match self.adopt_task(&task).await {
                    Some(n) => n,
                    None => self
                        .on_task_snapshot(task, true)
                        .await
                        .unwrap_or(Next::Observe),
                };
            }
            return Next::Send;
        };
        match self.get_task(&task_id).await {
            Ok(task) => self
                .on_task_snapshot(task, true)
                .await
                .unwrap_or(Next::Observe),
            Err(n) => n,
        }
    }

    async fn find_in_context(&mut self, ctx: &str) -> Option<Task> {
        let agent = self.agent.clone()?;
        let params = json!({"contextId": ctx, "historyLength": 20, "pageSize": 100});
        let mid = self.rec.message_ids.get("create").cloned()?;
        match self
            .inner
            .client
            .call(
                &agent.endpoint,
                Method::ListTasks,
                params,
                self.auth().as_deref(),
                self.req_timeout(),
            )
            .await
        {
            Ok(r) => {
                let list: a2a_protocol::ListTasksResponse =
                    a2a_protocol::codec::decode_value(&r.result).ok()?;
                list.tasks
                    .into_iter()
                    .find(|t| t.history.iter().any(|m| m.message_id == mid))
            }
            Err(e) => {
                self.error("ListTasks", &e);
                None
            }
        }
    }

    // ----- sending --------------------------------------------------------------------------

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
        if self.bugs.has(Bug::MessageTerminalTask) && self.rec.refine_of.is_some() {
            msg.task_id = self.rec.reference_task_ids.first().cloned();
        }
        let mut config = SendMessageConfiguration {
            accepted_output_modes: req.artifact_spec.mime_types.clone(),
            history_length: Some(0),
            return_immediately: !self.rec.streaming && !self.bugs.has(Bug::BlockingSend),
            ..Default::default()
        };
        if self.push
            && let (Some(base), Some(token)) = (
                lock(&self.inner.webhook_url).clone(),
                self.rec.push_token.clone(),
            )
        {
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

    /// Sleep until `until`, or a control message / the deadline interrupts.
    async fn sleep_or_interrupt(&mut self, d: Duration) -> Option<Interrupt> {
        let until = Instant::now() + d;
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(until) => return None,
                _ = tokio::time::sleep_until(self.deadline), if !self.bugs.has(Bug::NoLocalDeadline) => {
                    return Some(Interrupt::Deadline)
                }
                c = self.ctl.recv() => match c {
                    Some(Control::Cancel) => return Some(Interrupt::Cancel),
                    Some(Control::PushHint) => { self.pending_push_hint = true; return None; }
                    Some(other) => tracing::debug!("ignored control {other:?}"),
                    None => return None,
                },
            }
        }
    }

    async fn send_initial(&mut self) -> Next {
        loop {
            self.rec.attempts += 1;
            let attempt = self.rec.attempts;
            let params = self.send_params(attempt);
            self.save().await;
            let agent = match self.agent.clone() {
                Some(a) => a,
                None => return Next::Finish(Final::new(DelegationState::Failed, "no agent")),
            };
            let result = if self.rec.streaming {
                match self
                    .inner
                    .client
                    .stream(
                        &agent.endpoint,
                        Method::SendStreamingMessage,
                        params,
                        None,
                        self.req_timeout(),
                    )
                    .await
                {
                    Ok(s) => return Next::Stream(Box::new(s)),
                    Err(e) => Err((Op::StreamSend, e)),
                }
            } else {
                let timeout = if self.bugs.has(Bug::BlockingSend) {
                    self.deadline.saturating_duration_since(Instant::now())
                } else {
                    self.req_timeout()
                };
                self.inner
                    .client
                    .call(&agent.endpoint, Method::SendMessage, params, None, timeout)
                    .await
                    .map_err(|e| (Op::Send, e))
            };
            match result {
                Ok(r) => {
                    self.note_unknown(&r.unknown_states);
                    let resp: SendMessageResponse =
                        match a2a_protocol::codec::decode_value(&r.result) {
                            Ok(v) => v,
                            Err(e) => {
                                let ce = ClientError::Protocol(format!("SendMessage result: {e}"));
                                self.error("SendMessage", &ce);
                                if let Some(n) = self.retry_or_dlq(&ce).await {
                                    return n;
                                }
                                continue;
                            }
                        };
                    return match resp {
                        SendMessageResponse::Message(m) => self.answered_direct(m),
                        SendMessageResponse::Task(t) => {
                            if let Some(n) = self.adopt_task(&t).await {
                                return n;
                            }
                            self.on_task_snapshot(t, true)
                                .await
                                .unwrap_or(Next::Observe)
                        }
                    };
                }
                Err((op, e)) => {
                    let name = if op == Op::StreamSend {
                        "SendStreamingMessage"
                    } else {
                        "SendMessage"
                    };
                    self.error(name, &e);
                    if e.is_agent_protocol() {
                        // The reply cannot be trusted, not even its task id: fail visibly.
                        return self.fail_and_cancel(e.to_string()).await;
                    }
                    if let ClientError::Rpc(err) = &e {
                        match policy::error_action(op, err.error_code()) {
                            ErrorAction::RetryWithoutPush if self.push => {
                                self.push = false;
                                self.rec.attempts -= 1;
                                continue;
                            }
                            ErrorAction::Poll if self.rec.streaming => {
                                self.rec.streaming = false;
                                self.rec.attempts -= 1;
                                continue;
                            }
                            _ => {
                                let mut f = Final::new(
                                    DelegationState::SendFailed,
                                    format!("{name} failed: {e}"),
                                );
                                f.code = Some(err.code);
                                return Next::Finish(f);
                            }
                        }
                    }
                    if !e.is_transient() {
                        return Next::Finish(Final::new(
                            DelegationState::SendFailed,
                            format!("{name} failed: {e}"),
                        ));
                    }
                    if let Some(n) = self.retry_or_dlq(&e).await {
                        return n;
                    }
                }
            }
        }
    }

    /// After a transient failure of the first send: wait and return `None` to retry, or end.
    async fn retry_or_dlq(&mut self, e: &ClientError) -> Option<Next> {
        if self.rec.attempts > self.rec.request.max_retries {
            return Some(Next::Finish(Final::new(
                DelegationState::DeadLettered,
                format!(
                    "{} attempts failed (max_retries {}): {e}",
                    self.rec.attempts, self.rec.request.max_retries
                ),
            )));
        }
        let d = policy::retry_delay(
            self.rec.attempts - 1,
            self.opts().retry_base_ms,
            self.opts().retry_cap_ms,
            e.retry_after(),
            &mut self.rng,
        );
        self.save().await;
        match self.sleep_or_interrupt(d).await {
            None => None,
            Some(Interrupt::Deadline) => Some(Next::Finish(Final::new(
                DelegationState::DeadLettered,
                format!("deadline reached while retrying the send: {e}"),
            ))),
            Some(Interrupt::Cancel) => Some(Next::Finish(Final::new(
                DelegationState::Canceled,
                "canceled by the caller before a task existed",
            ))),
        }
    }

    fn answered_direct(&mut self, m: Message) -> Next {
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
    async fn adopt_task(&mut self, t: &Task) -> Option<Next> {
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
                if !t.context_id.is_empty() {
                    self.rec.context_id = Some(t.context_id.clone());
                }
                self.rec.state = DelegationState::from_task_state(t.status.state);
                self.save().await;
                self.inner.emit_state(&self.rec);
            }
        }
        if self.rec.context_id.is_none() && !t.context_id.is_empty() {
            self.rec.context_id = Some(t.context_id.clone());
        }
        None
    }

    fn note_unknown(&mut self, unknown: &[String]) {
        for u in unknown {
            self.rec.push_error(ErrorRecord {
                at: now_text(),
                op: "state".into(),
                code: None,
                http_status: None,
                transient: true,
                message: format!("unknown task state {u}, treated as UNSPECIFIED"),
            });
        }
    }

    // ----- observing ------------------------------------------------------------------------

    async fn get_task(&mut self, task_id: &str) -> Result<Task, Next> {
        let Some(agent) = self.agent.clone() else {
            return Err(Next::Finish(Final::new(
                DelegationState::Failed,
                "no agent",
            )));
        };
        let params = json!({"id": task_id});
        loop {
            match self
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
                    match a2a_protocol::codec::decode_value::<Task>(&r.result) {
                        Ok(t) => {
                            self.observe_failures = 0;
                            return Ok(t);
                        }
                        Err(e) => {
                            let ce = ClientError::Protocol(format!("GetTask result: {e}"));
                            self.error("GetTask", &ce);
                            if let Some(n) = self.observe_failure(&ce).await {
                                return Err(n);
                            }
                        }
                    }
                }
                Err(e) => {
                    self.error("GetTask", &e);
                    if e.is_agent_protocol() {
                        return Err(self.fail_and_cancel(e.to_string()).await);
                    }
                    if let ClientError::Rpc(err) = &e {
                        match policy::error_action(Op::Get, err.error_code()) {
                            ErrorAction::Lost => {
                                let mut f = Final::new(
                                    DelegationState::Lost,
                                    format!("the agent does not know task {task_id}: {e}"),
                                );
                                f.code = Some(err.code);
                                return Err(Next::Finish(f));
                            }
                            ErrorAction::RetryObserve => {}
                            _ => {
                                let mut f = Final::new(
                                    DelegationState::Failed,
                                    format!("GetTask failed: {e}"),
                                );
                                f.code = Some(err.code);
                                return Err(Next::Finish(f));
                            }
                        }
                    }
                    if let Some(n) = self.observe_failure(&e).await {
                        return Err(n);
                    }
                }
            }
        }
    }

    /// A transient observation failure: back off, or dead-letter past `max_retries` in a row.
    async fn observe_failure(&mut self, e: &ClientError) -> Option<Next> {
        self.observe_failures += 1;
        if self.observe_failures > self.rec.request.max_retries {
            return Some(Next::Finish(Final::new(
                DelegationState::DeadLettered,
                format!(
                    "observation failed {} times in a row (max_retries {}): {e}",
                    self.observe_failures, self.rec.request.max_retries
                ),
            )));
        }
        let d = policy::retry_delay(
            self.observe_failures - 1,
            self.opts().retry_base_ms,
            self.opts().retry_cap_ms,
            e.retry_after(),
            &mut self.rng,
        );
        self.save().await;
        match self.sleep_or_interrupt(d).await {
            None => None,
            Some(Interrupt::Deadline) => Some(self.on_deadline("local deadline reached").await),
            Some(Interrupt::Cancel) => Some(self.on_deadline("canceled by the caller").await),
        }
    }

    async fn poll(&mut self) -> Next {
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
            interval = if self.rec.state != before {
                base
            } else {
                interval.mul_f64(1.5).min(cap)
            };
        }
    }

    async fn resubscribe(&mut self) -> Next {
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
            Err(e) => {
                self.error("SubscribeToTask", &e);
                if e.is_agent_protocol() {
                    return self.fail_and_cancel(e.to_string()).await;
                }
                if let ClientError::Rpc(err) = &e {
                    match policy::error_action(Op::Subscribe, err.error_code()) {
                        ErrorAction::Lost => {
                            let mut f = Final::new(
                                DelegationState::Lost,
                                format!("the agent does not know task {task_id}: {e}"),
                            );
                            f.code = Some(err.code);
                            return Next::Finish(f);
                        }
                        ErrorAction::ReadFinalState => {
                            return match self.get_task(&task_id).await {
                                Ok(t) => self
                                    .on_task_snapshot(t, true)
                                    .await
                                    .unwrap_or(Next::Observe),
                                Err(n) => n,
                            };
                        }
                        _ => {
                            // Polling is the reconciliation path that always works.
                            self.rec.streaming = false;
                            self.save().await;
                            return Next::Observe;
                        }
                    }
                }
                if let Some(n) = self.observe_failure(&e).await {
                    return n;
                }
                // Read the state before trying again: the task may have moved on.
                match self.get_task(&task_id).await {
                    Ok(t) => self
                        .on_task_snapshot(t, true)
                        .await
                        .unwrap_or(Next::Observe),
                    Err(n) => n,
                }
            }
        }
    }

    async fn consume_stream(&mut self, mut stream: EventStream) -> Next {
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
                _ = tokio::time::sleep_until(self.deadline), if pending_final.is_none() && !self.bugs.has(Bug::NoLocalDeadline) => {
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
                        self.error("SendStreamingMessage", &e);
                        return match self.retry_or_dlq(&e).await {
                            Some(n) => n,
                            None => Next::Send,
                        };
                    }
                    // Closed before a final state (dropped, or at an interrupted state): follow
                    // up with SubscribeToTask / GetTask, never take it as an outcome.
                    return self.after_stream_end().await;
                }
                Some(Err(e)) => {
                    self.error("stream", &e);
                    if e.is_agent_protocol() {
                        // Garbage, a foreign JSON-RPC id, an oversize or undecodable event: the
                        // stream can no longer be trusted, even after the final state (then the
                        // task is over: nothing to cancel).
                        if pending_final.is_some() {
                            return Next::Finish(Final::new(
                                DelegationState::Failed,
                                format!("{e} (after the task's final state)"),
                            ));
                        }
                        return self.fail_and_cancel(e.to_string()).await;
                    }
                    if let Some(f) = pending_final {
                        return Next::Finish(f);
                    }
                    if self.rec.task_id.is_none() {
                        if let ClientError::Rpc(err) = &e {
                            let mut f = Final::new(
                                DelegationState::SendFailed,
                                format!("SendStreamingMessage failed: {e}"),
                            );
                            f.code = Some(err.code);
                            return Next::Finish(f);
                        }
                        return match self.retry_or_dlq(&e).await {
                            Some(n) => n,
                            None => Next::Send,
                        };
                    }
                    if let Some(n) = self.observe_failure(&e).await {
                        return n;
                    }
                    return self.after_stream_end().await;
                }
                Some(Ok(item)) => {
                    self.note_unknown(&item.unknown_states);
                    if let Some(f) = &pending_final {
                        // After the final state only a repeated final snapshot is acceptable.
                        let ok = match &item.event {
                            StreamResponse::Task(t) => {
                                DelegationState::from_task_state(t.status.state) == f.state
                                    || t.status.state.is_terminal()
                            }
                            StreamResponse::StatusUpdate(u) => {
                                DelegationState::from_task_state(u.status.state) == self.rec.state
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

    async fn after_stream_end(&mut self) -> Next {
        let Some(task_id) = self.rec.task_id.clone() else {
            return Next::Send;
        };
        // Read the current state first: an interrupted task needs an answer, not a subscription.
        match self.get_task(&task_id).await {
            Ok(t) => self
                .on_task_snapshot(t, true)
                .await
                .unwrap_or(Next::Observe),
            Err(n) => n,
        }
    }

    async fn on_stream_event(&mut self, ev: StreamResponse) -> Option<Next> {
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
            StreamResponse::ArtifactUpdate(a) => {
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
                match self
                    .reassembler
                    .apply_chunk(&http, &a.artifact, a.append, a.last_chunk)
                    .await
                {
                    Ok(()) => None,
                    Err(e) => Some(self.artifact_failure(e).await),
                }
            }
        }
    }

    async fn artifact_failure(&mut self, e: ArtifactError) -> Next {
        self.rec.push_error(ErrorRecord {
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
    async fn fail_and_cancel(&mut self, reason: String) -> Next {
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

    /// Apply a full task snapshot. `with_artifacts`: replace assembled artifacts with the
    /// snapshot's (streams: always; polling: only when COMPLETED, to avoid rewriting files).
    async fn on_task_snapshot(&mut self, t: Task, with_artifacts: bool) -> Option<Next> {
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
                self.set_state(DelegationState::from_task_state(state))
                    .await;
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
                let st = DelegationState::from_task_state(state);
                let mut f = Final::new(
                    st,
                    format!("the agent ended the task as {}", state.as_str()),
                );
                f.message = text;
                Some(Next::Finish(f))
            }
        }
    }

    // ----- interrupted states ---------------------------------------------------------------

    async fn on_interrupted(&mut self, kind: EscalationKind, status: TaskStatus) -> Option<Next> {
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
        let kind_name = match kind {
            EscalationKind::Input => "input",
            EscalationKind::Auth => "auth",
        };
        // Resume a round recorded before a restart, if this is the same question.
        let resumable = self.rec.input_rounds.last().filter(|r| {
            r.kind == kind_name
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
                    .filter(|r| r.kind == "input")
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
                let n = self.rec.input_rounds.len() as u32 + 1;
                self.rec.input_rounds.push(InputRound {
                    round: n,
                    kind: kind_name.into(),
                    question: question.clone(),
                    question_message_id: qid.clone(),
                    answer: None,
                    source: None,
                    answer_message_id: None,
                    asked_at: now_text(),
                    answered_at: None,
                    sent_at: None,
                });
                self.save().await;
                n
            }
        };
        let purpose = format!("{kind_name}-{round_no}");
        let idx = self
            .rec
            .input_rounds
            .iter()
            .position(|r| r.round == round_no)?;
        // Decide the answer (or reuse the one recorded before a restart).
        let (answer_text, data, auth) = if let Some(a) = self.rec.input_rounds[idx].answer.clone() {
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
                    self.rec.scoped_credential = Some(cred);
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

    /// Report an escalation and wait for the caller's answer.
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
            match kind {
                EscalationKind::Input => "input",
                EscalationKind::Auth => "auth",
            }
        ));
        self.save().await;
        loop {
            tokio::select! {
                _ = tokio::time::sleep_until(self.deadline), if !self.bugs.has(Bug::NoLocalDeadline) => {
                    self.inner.set_pending(&self.rec.id, None);
                    return Err(self.on_deadline("local deadline reached while waiting for the caller").await);
                }
                c = self.ctl.recv() => match c {
                    Some(Control::Answer(t)) if kind == EscalationKind::Input => { self.rec.reason = None; return Ok(t) }
                    Some(Control::Credential(c)) if kind == EscalationKind::Auth => { self.rec.reason = None; return Ok(c) }
                    Some(Control::Cancel) => {
                        self.inner.set_pending(&self.rec.id, None);
                        return Err(self.on_deadline("canceled by the caller").await);
                    }
                    Some(_) => {}
                    None => {
                        // The engine is gone: wait for the deadline.
                        tokio::time::sleep_until(self.deadline).await;
                        return Err(self.on_deadline("local deadline reached while waiting for the caller").await);
                    }
                },
            }
        }
    }

    /// Send a message continuing our task (same taskId and contextId, new messageId).
    async fn send_continuation(
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
                    if let Ok(SendMessageResponse::Task(t)) =
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
                Err(e) => {
                    self.error("SendMessage(continue)", &e);
                    if e.is_agent_protocol() {
                        return self.fail_and_cancel(e.to_string()).await;
                    }
                    if let ClientError::Rpc(err) = &e {
                        match policy::error_action(Op::Continue, err.error_code()) {
                            ErrorAction::Lost => {
                                let mut f = Final::new(
                                    DelegationState::Lost,
                                    format!("the agent does not know the task any more: {e}"),
                                );
                                f.code = Some(err.code);
                                return Next::Finish(f);
                            }
                            ErrorAction::ReadFinalState => {
                                let Some(task_id) = self.rec.task_id.clone() else {
                                    return Next::Observe;
                                };
                                return match self.get_task(&task_id).await {
                                    // Boxed: snapshot handling can lead back here.
                                    Ok(t) => Box::pin(self.on_task_snapshot(t, true))
                                        .await
                                        .unwrap_or(Next::Observe),
                                    Err(n) => n,
                                };
                            }
                            ErrorAction::RetryObserve => {}
                            _ => {
                                let mut f = Final::new(
                                    DelegationState::Failed,
                                    format!("continuing the task failed: {e}"),
                                );
                                f.code = Some(err.code);
                                return Next::Finish(f);
                            }
                        }
                    } else if !e.is_transient() {
                        return Next::Finish(Final::new(
                            DelegationState::Failed,
                            format!("continuing the task failed: {e}"),
                        ));
                    }
                    if attempt > self.rec.request.max_retries {
                        return Next::Finish(Final::new(
                            DelegationState::DeadLettered,
                            format!("{attempt} attempts to continue the task failed: {e}"),
                        ));
                    }
                    let d = policy::retry_delay(
                        attempt - 1,
                        self.opts().retry_base_ms,
                        self.opts().retry_cap_ms,
                        e.retry_after(),
                        &mut self.rng,
                    );
                    self.save().await;
                    match self.sleep_or_interrupt(d).await {
                        None => {}
                        Some(Interrupt::Deadline) => {
                            return self.on_deadline("local deadline reached").await;
                        }
                        Some(Interrupt::Cancel) => {
                            return self.on_deadline("canceled by the caller").await;
                        }
                    }
                }
            }
        }
    }

    // ----- deadline and cancel --------------------------------------------------------------

    /// The local deadline passed or the caller canceled: CancelTask, then read the final state.
    async fn on_deadline(&mut self, why: &str) -> Next {
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
                    last = a2a_protocol::codec::decode_value::<Task>(&r.result).ok();
                    break;
                }
                Err(e) => {
                    self.error("CancelTask", &e);
                    if let ClientError::Rpc(err) = &e {
                        match policy::error_action(Op::Cancel, err.error_code()) {
                            ErrorAction::Lost => {
                                let mut f = Final::new(
                                    DelegationState::Lost,
                                    format!(
                                        "{why}; CancelTask: the agent does not know the task: {e}"
                                    ),
                                );
                                f.code = Some(err.code);
                                return Next::Finish(f);
                            }
                            _ => break, // -32002 and others: read the final state.
                        }
                    }
                    tokio::time::sleep(Duration::from_millis(200 * u64::from(attempt + 1))).await;
                }
            }
        }
        // Cancel's success is not guaranteed: read the state (a bounded number of times).
        for i in 0..4u32 {
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
                    DelegationState::from_task_state(st),
                    format!("{why}; the agent reports {}", st.as_str()),
                );
                f.message = msg;
                return Next::Finish(f);
            }
            tokio::time::sleep(Duration::from_millis(250 * u64::from(i + 1))).await;
        }
        Next::Finish(Final::new(
            DelegationState::Canceled,
            format!("{why}; CancelTask sent, the agent did not confirm a final state"),
        ))
    }

    // ----- finishing ------------------------------------------------------------------------

    async fn finish(mut self, mut f: Final) {
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
                    match self.reassembler.commit(&prov) {
                        Ok(recs) => self.rec.artifacts = recs,
                        Err(e) => {
                            f = Final::new(DelegationState::Failed, format!("commit failed: {e}"));
                        }
                    }
                }
            }
            DelegationState::DeadLettered => {
                self.rec.artifacts = self.reassembler.partials(&prov);
            }
            _ => {}
        }
        self.rec.state = f.state;
        self.rec.reason = f.reason.clone();
        self.rec.final_message = f.message.clone();
        if f.code.is_some() {
            self.rec.error_code = f.code;
        }
        self.rec.terminal_at = Some(now_text());
        self.rec.updated_at = now_text();
        let saved = if f.state == DelegationState::DeadLettered {
            self.rec.dlq = true;
            let mut chain = self.rec.chain.clone();
            chain.push(self.inner.cfg.self_url.clone());
            let entry = DlqEntry {
                delegation_id: self.rec.id.clone(),
                at: now_text(),
                request: self.rec.request.clone(),
                errors: self.rec.errors.clone(),
                partial_artifacts: self.rec.artifacts.clone(),
                chain,
                task_id: self.rec.task_id.clone(),
                agent_url: self.rec.agent_url.clone(),
                resubmitted_as: None,
            };
            self.inner.store.dead_letter(self.rec.clone(), entry).await
        } else {
            self.inner.store.save(self.rec.clone()).await
        };
        if let Err(e) = saved {
            tracing::error!(delegation = %self.rec.id, "store: {e}");
        }
        self.inner.emit_state(&self.rec);
        self.inner.emit_done(&self.rec);
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
