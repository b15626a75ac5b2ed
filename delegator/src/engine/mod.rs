//! The delegation engine: accepts requests, enforces limits, routes, sends, observes every task
//! until it is final, handles interrupted states, reassembles artifacts, retries, dead-letters and
//! recovers after a restart.
//!
//! This module is the engine's public face ([`Engine`], [`EngineError`]) and the state shared by
//! every delegation; the parts:
//!
//! - `config`: [`EngineConfig`] and the tunable [`Options`];
//! - `events`: what the engine reports ([`Event`], [`Outcome`], [`EscalationKind`]);
//! - `admission`: accepting a request (validation, limits, routing, the durable intent);
//! - `routing`: agent cards and choosing the agent for a request;
//! - `parent`: delegations split into children, and their joint outcome;
//! - `run`: one delegation's state machine (send, observe, interrupts, deadline, recovery,
//!   finish, and the one decision taken after any failed call).
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

mod admission;
mod config;
mod events;
mod parent;
mod routing;
mod run;

pub use config::{EngineConfig, Options};
pub use events::{Done, DoneArtifact, EscalationKind, Event, Outcome, done_artifact, outcome_of};

use crate::agents::{AgentInfo, CardError};
use crate::bugs::Bug;
use crate::client::RpcClient;
use crate::request::{DelegationRequest, RequestError};
use crate::store::{DelegationRecord, SnapshotRecord, SqliteStore, StoreError, StoreHandle};
use crate::webhook::{self, Verdict, WebhookSink};
use a2a_protocol::StreamResponse;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

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

/// A message from the caller to a running delegation.
#[derive(Debug)]
enum Control {
    Answer(String),
    Credential(String),
    Cancel,
    PushHint,
}

/// A running delegation, as the engine sees it.
struct Running {
    ctl: mpsc::UnboundedSender<Control>,
    push_token: Option<String>,
    pending: Option<EscalationKind>,
}

/// The state shared by the engine and every run.
struct Inner {
    cfg: EngineConfig,
    store: StoreHandle,
    client: RpcClient,
    agents: tokio::sync::RwLock<Vec<AgentInfo>>,
    card_errors: Mutex<Vec<CardError>>,
    events: mpsc::UnboundedSender<Event>,
    running: Mutex<HashMap<String, Running>>,
    finished: Mutex<HashMap<String, Done>>,
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
                    kind.as_str()
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

    /// Every durable record, as `snapshot_ok` reports it.
    pub async fn snapshot(&self) -> Result<Vec<SnapshotRecord>, EngineError> {
        Ok(self
            .inner
            .store
            .list()
            .await?
            .iter()
            .map(DelegationRecord::to_snapshot)
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

impl Inner {
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
