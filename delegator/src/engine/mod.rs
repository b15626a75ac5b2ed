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

pub use config::{AgentCredentials, EngineConfig, Options};
pub use events::{Done, DoneArtifact, EscalationKind, Event, Outcome, done_artifact, outcome_of};

use crate::agents::{AgentInfo, CardError};
use crate::bugs::{Bug, CrashPoint};
use crate::client::RpcClient;
use crate::request::{DelegationRequest, RequestError};
use crate::store::{
    DelegationRecord, DelegationStore, DlqEntry, SnapshotRecord, SqliteStore, StoreError,
    StoreHandle,
};
use crate::webhook::{self, WebhookSink};
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
    /// The sha256 of each push token its webhook accepts (the tokens are never kept).
    push_token_sha256: Vec<webhook::TokenHash>,
    /// The task the agent created for it, once known: a push about another task is ignored.
    task_id: Option<String>,
    pending: Option<EscalationKind>,
}

/// The state shared by the engine and every run.
struct Inner {
    cfg: EngineConfig,
    store: StoreHandle,
    client: RpcClient,
    /// Fetches url parts under the `init.fetch_origins` policy ([`crate::fetch`]).
    fetcher: crate::fetch::UrlFetcher,
    /// Shared with the delegations that use them: a delegation holds its agent, not a copy.
    agents: tokio::sync::RwLock<Vec<Arc<AgentInfo>>>,
    /// Held while a stale card is revalidated: one revalidation at a time.
    card_refresh: tokio::sync::Mutex<()>,
    card_errors: Mutex<Vec<CardError>>,
    events: mpsc::UnboundedSender<Event>,
    running: Mutex<HashMap<String, Running>>,
    /// The push token hashes of delegations that ended in this process life: an agent may still
    /// post (a duplicate, a late event) with a token it was given, and a genuine push is always
    /// acknowledged with a 2xx (A2A §4.3.3), though it changes nothing any more.
    ended_push_tokens: Mutex<HashMap<String, Vec<webhook::TokenHash>>>,
    finished: Mutex<HashMap<String, Done>>,
    finished_notify: Notify,
    active: AtomicUsize,
    idle: Notify,
    /// Set by [`Engine::recover`]: this process resumed a store a killed process left, so a
    /// `delegate` that process recorded but never acknowledged may come again.
    recovered: std::sync::atomic::AtomicBool,
    webhook_url: Mutex<Option<String>>,
    /// `store_dir/artifacts`, where every delegation's artifact files go, with the directory
    /// fsyncs their commits share.
    artifact_dir: Arc<crate::artifacts::DirSync>,
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
    fn expected_token_hashes(&self, id: &str) -> Vec<webhook::TokenHash> {
        if let Some(r) = lock(&self.running).get(id) {
            return r.push_token_sha256.clone();
        }
        lock(&self.ended_push_tokens)
            .get(id)
            .cloned()
            .unwrap_or_default()
    }

    /// A push with the delegation's token is a hint to read its task, unless it is about a
    /// task the delegation's agent never created for it (A2A §4.3.3): that one changes nothing
    /// (it was still acknowledged: the agent sent it with the right token).
    fn notify(&self, id: &str, event: StreamResponse) {
        if let Some(r) = lock(&self.running).get(id) {
            if !push_is_about(r.task_id.as_deref(), &event) {
                tracing::warn!(
                    delegation = id,
                    "push about task {:?}, not the delegation's task {:?}: ignored",
                    event.task_id(),
                    r.task_id
                );
                return;
            }
            let _ = r.ctl.send(Control::PushHint);
        }
    }
}

/// Whether a push `event` is about the delegation's task `task` (`None`: not known yet, so
/// any push may be; the hint only makes the delegation read its own task). A push without a task
/// id, or about another task, is not.
fn push_is_about(task: Option<&str>, event: &StreamResponse) -> bool {
    match (task, event.task_id()) {
        (None, _) => true,
        (Some(mine), Some(theirs)) => mine == theirs,
        (Some(_), None) => false,
    }
}

struct SinkRef(Arc<Inner>);
impl WebhookSink for SinkRef {
    fn expected_token_hashes(&self, id: &str) -> Vec<webhook::TokenHash> {
        self.0.expected_token_hashes(id)
    }

    fn notify(&self, id: &str, event: StreamResponse) {
        self.0.notify(id, event)
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

/// A fresh push token: 128 random bits, unguessable (never derived from the seed). Kept in
/// memory only; records hold its sha256.
fn new_push_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// Planted bug `persist-secrets`: a secret written in plaintext to a debug log under the store
/// directory (what DLG-SECRET-01 catches).
fn persist_secret_bug(store_dir: &std::path::Path, id: &str, what: &str, secret: &str) {
    use std::io::Write;
    let line = format!("{id}: {what} {secret}\n");
    let _ = std::fs::create_dir_all(store_dir);
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(store_dir.join("debug.log"))
    {
        let _ = f.write_all(line.as_bytes());
    }
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
        Self::start_with_store(cfg, Arc::new(store), events).await
    }

    /// [`Engine::start`] on a store of the caller's choosing instead of the SQLite store in
    /// `cfg.store_dir` (artifact files still go under `cfg.store_dir`).
    pub async fn start_with_store(
        cfg: EngineConfig,
        store: Arc<dyn DelegationStore>,
        events: mpsc::UnboundedSender<Event>,
    ) -> Result<Engine, EngineError> {
        let trust = match &cfg.tls_roots {
            Some(path) => Some(
                crate::tls::Trust::from_pem_file(path, cfg.bugs)
                    .map_err(|e| EngineError::BadRequest(format!("init: {e}")))?,
            ),
            None => None,
        };
        let client = RpcClient::new(cfg.options.max_event_bytes, trust.as_ref())
            .map_err(|e| EngineError::Internal(e.to_string()))?
            .with_max_per_agent(cfg.options.max_requests_per_agent);
        let policy = crate::fetch::UrlPolicy::new(&cfg.fetch_origins)
            .map_err(EngineError::BadRequest)?
            .with_bugs(cfg.bugs);
        let fetcher =
            crate::fetch::UrlFetcher::new(policy, trust.as_ref()).map_err(EngineError::Internal)?;
        let inner = Arc::new(Inner {
            store: StoreHandle::new(store),
            client,
            fetcher,
            agents: tokio::sync::RwLock::new(Vec::new()),
            card_refresh: tokio::sync::Mutex::new(()),
            card_errors: Mutex::new(Vec::new()),
            events,
            running: Mutex::new(HashMap::new()),
            ended_push_tokens: Mutex::new(HashMap::new()),
            finished: Mutex::new(HashMap::new()),
            finished_notify: Notify::new(),
            active: AtomicUsize::new(0),
            idle: Notify::new(),
            recovered: std::sync::atomic::AtomicBool::new(false),
            webhook_url: Mutex::new(None),
            artifact_dir: Arc::new(crate::artifacts::DirSync::new(
                cfg.store_dir.join("artifacts"),
            )),
            cfg,
        });
        let artifact_dir = inner.artifact_dir.clone();
        tokio::task::spawn_blocking(move || artifact_dir.create())
            .await
            .map_err(|e| EngineError::Internal(e.to_string()))?
            .map_err(|e| {
                EngineError::Internal(format!("{}: {e}", inner.artifact_dir.dir().display()))
            })?;
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
        let agents = self.inner.agents.read().await;
        agents.iter().map(|a| AgentInfo::clone(a)).collect()
    }

    /// After a restart: report again the `done` of every final record whose `done` was never
    /// acknowledged as written (the outbox, [`DelegationStore::unreported`]), then resume every
    /// open delegation. Returns how many were resumed.
    pub async fn recover(&self) -> Result<usize, EngineError> {
        let unreported = self.inner.store.unreported().await?;
        let open = self.inner.store.open_delegations().await?;
        // The planted bug `no-recovery` is asked only when there is something to recover.
        if !(unreported.is_empty() && open.is_empty()) && self.inner.cfg.bugs.has(Bug::NoRecovery) {
            return Ok(0);
        }
        self.inner.recovered.store(true, Ordering::SeqCst);
        for rec in unreported {
            self.inner.emit_done(&rec);
        }
        let n = open.len();
        // Parents first is not required: a parent waits for its children's outcomes.
        for rec in open {
            let is_parent = rec.request.children.is_some();
            if is_parent {
                self.spawn_parent(rec, true);
            } else {
                // Secrets do not survive a restart: no push token (a resend mints a new one),
                // no scoped credential (an auth round still open is escalated again).
                self.spawn_run(rec, true, None, None);
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

/// Attempts at saving a final record before the delegation is reported as an internal error.
const FINAL_SAVE_ATTEMPTS: u32 = 3;

/// The pause before the second attempt at a final save (×4 before each further one).
const FINAL_SAVE_RETRY: Duration = Duration::from_millis(50);

impl Inner {
    /// Make the final record `rec` durable (with its dead-letter entry, if any), then report its
    /// state and `done`. The save is tried [`FINAL_SAVE_ATTEMPTS`] times; when it still fails,
    /// no `done` is reported (it would not be durable): an [`Event::Error`] is, and the record
    /// stays as last saved, so a restart resumes the delegation.
    async fn report_final(&self, rec: &DelegationRecord, dlq: Option<&DlqEntry>) {
        let mut pause = FINAL_SAVE_RETRY;
        let mut attempt = 1;
        loop {
            let saved = match dlq {
                Some(entry) => self.store.dead_letter(rec.clone(), entry.clone()).await,
                None => self.store.save(rec.clone()).await,
            };
            match saved {
                Ok(()) => break,
                Err(e) if attempt < FINAL_SAVE_ATTEMPTS => {
                    tracing::warn!(delegation = %rec.id, attempt, "store: final save: {e}");
                    tokio::time::sleep(pause).await;
                    pause *= 4;
                    attempt += 1;
                }
                Err(e) => {
                    tracing::error!(delegation = %rec.id, attempt, "store: final save: {e}");
                    let _ = self.events.send(Event::Error {
                        id: rec.id.clone(),
                        message: format!(
                            "the final state {} could not be saved ({attempt} attempts, last: \
                             {e}); no done is reported, a restart resumes the delegation",
                            rec.state
                        ),
                    });
                    return;
                }
            }
        }
        CrashPoint::AfterFinalSave.hit(&rec.id);
        self.emit_state(rec);
        self.emit_done(rec);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::DelegationRequest;
    use crate::store::DelegationState;
    use a2a_mock_agents::{MockAgent, Network, Step};
    use std::sync::atomic::AtomicU32;

    /// A SQLite store whose writes of a final record always fail (a full disk, say).
    struct FailingFinalSaves {
        inner: SqliteStore,
        failed: AtomicU32,
    }

    impl FailingFinalSaves {
        fn check(&self, rec: &DelegationRecord) -> Result<(), StoreError> {
            if rec.state.is_final() {
                self.failed.fetch_add(1, Ordering::SeqCst);
                return Err(StoreError::Io {
                    path: "delegations.sqlite3".into(),
                    message: "no space left on device".into(),
                });
            }
            Ok(())
        }
    }

    impl DelegationStore for FailingFinalSaves {
        fn insert(&self, rec: &DelegationRecord) -> Result<(), StoreError> {
            self.check(rec)?;
            self.inner.insert(rec)
        }
        fn save(&self, rec: &DelegationRecord) -> Result<(), StoreError> {
            self.check(rec)?;
            self.inner.save(rec)
        }
        fn dead_letter(&self, rec: &DelegationRecord, e: &DlqEntry) -> Result<(), StoreError> {
            self.check(rec)?;
            self.inner.dead_letter(rec, e)
        }
        fn get(&self, id: &str) -> Result<Option<DelegationRecord>, StoreError> {
            self.inner.get(id)
        }
        fn list(&self) -> Result<Vec<DelegationRecord>, StoreError> {
            self.inner.list()
        }
        fn open_delegations(&self) -> Result<Vec<DelegationRecord>, StoreError> {
            self.inner.open_delegations()
        }
        fn unreported(&self) -> Result<Vec<DelegationRecord>, StoreError> {
            self.inner.unreported()
        }
        fn mark_reported(&self, id: &str) -> Result<(), StoreError> {
            self.inner.mark_reported(id)
        }
        fn dlq_list(&self) -> Result<Vec<DlqEntry>, StoreError> {
            self.inner.dlq_list()
        }
        fn dlq_mark_resubmitted(&self, id: &str, new_id: &str) -> Result<(), StoreError> {
            self.inner.dlq_mark_resubmitted(id, new_id)
        }
    }

    #[test]
    fn a_push_about_another_task_is_not_a_hint() {
        let status = |task: &str| {
            a2a_protocol::codec::decode_value::<StreamResponse>(&serde_json::json!({
                "statusUpdate": {"taskId": task, "contextId": "c",
                    "status": {"state": "TASK_STATE_COMPLETED"}}}))
            .unwrap()
        };
        assert!(push_is_about(Some("t-1"), &status("t-1")));
        assert!(!push_is_about(Some("t-1"), &status("t-foreign")));
        assert!(!push_is_about(Some("t-1"), &status("")));
        assert!(push_is_about(None, &status("t-foreign")));
        let message = a2a_protocol::codec::decode_value::<StreamResponse>(&serde_json::json!({
            "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}}))
        .unwrap();
        assert!(!push_is_about(Some("t-1"), &message));
    }

    #[tokio::test]
    async fn a_final_record_that_cannot_be_saved_is_never_reported_done() {
        let net = Network::start(MockAgent::network(
            1,
            vec![
                MockAgent::builder("echo")
                    .skill("work")
                    .mount(MockAgent::when().step(Step::reply("answered")).expect(1))
                    .build(),
            ],
        ))
        .await
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(FailingFinalSaves {
            inner: SqliteStore::open_dir(dir.path()).unwrap(),
            failed: AtomicU32::new(0),
        });
        let (tx, mut rx) = mpsc::unbounded_channel();
        let cfg = EngineConfig::new(dir.path(), "http://127.0.0.1:1/delegator")
            .agents(vec![net.card_url("echo").unwrap()]);
        let engine = Engine::start_with_store(cfg, store.clone(), tx)
            .await
            .unwrap();
        let mut req = DelegationRequest::new("d1", "work", "go");
        req.artifact_spec.mime_types = vec!["text/plain".into()];
        engine.delegate(req).await.unwrap();
        let mut events = Vec::new();
        let message = loop {
            let ev = tokio::time::timeout(Duration::from_secs(20), rx.recv())
                .await
                .expect("an event in time")
                .expect("the engine runs");
            if let Event::Error { id, message } = &ev {
                assert_eq!(id, "d1");
                break message.clone();
            }
            events.push(ev);
        };
        tokio::time::timeout(Duration::from_secs(20), engine.wait_idle())
            .await
            .expect("the run ends");
        while let Ok(ev) = rx.try_recv() {
            events.push(ev);
        }
        assert!(
            !events.iter().any(|e| matches!(e, Event::Done(_))),
            "no done for a final state that is not durable: {events:?}"
        );
        assert!(
            message.contains("ANSWERED_DIRECT") && message.contains("no space left"),
            "{message}"
        );
        // Every attempt was made, the record is as last saved (open, so a restart resumes it)
        // and nothing is owed by the outbox.
        assert_eq!(store.failed.load(Ordering::SeqCst), FINAL_SAVE_ATTEMPTS);
        let rec = store.get("d1").unwrap().unwrap();
        assert!(!rec.state.is_final(), "{:?}", rec.state);
        assert_ne!(rec.state, DelegationState::AnsweredDirect);
        assert!(store.unreported().unwrap().is_empty());
        net.shutdown().await;
    }
}
