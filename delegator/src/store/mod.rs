//! The durable delegation store: one record per delegation, written before anything is sent.
//! It holds no secret (DLG-SECRET-01): no scoped credential, push tokens only as sha256.
//!
//! [`DelegationStore`] is the interface; [`SqliteStore`] (rusqlite, bundled SQLite, WAL,
//! `synchronous=FULL`, versioned migrations, group commit) is the default. Every write is atomic
//! (its own savepoint inside the batch's transaction), so a crash leaves each record as it was
//! before or after a change, never half-changed; a write returns only once the transaction that
//! holds it is committed and fsynced. The methods block: async callers queue writes with
//! [`DelegationStore::submit`] and run reads on the blocking pool (see [`StoreHandle`]).

mod sqlite;

pub use sqlite::{GroupCommitStats, SqliteStore};

use crate::request::DelegationRequest;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The delegation states, escalation kinds and the parts of a record the driver contract defines
/// (one definition, in `a2a-driver-contract`; stored by their wire names).
pub use a2a_driver_contract::{
    DelegationState, EscalationKind, InputRound, Outcome, RecordArtifact, RecordError,
    SnapshotRecord,
};

/// A store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite reported an error.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A stored JSON column could not be read back.
    #[error("stored record {id}: column {column}: {message}")]
    Corrupt {
        /// The delegation id.
        id: String,
        /// The column.
        column: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A record with this id already exists.
    #[error("delegation {0:?} already exists")]
    Duplicate(String),
    /// No record with this id exists.
    #[error("delegation {0:?} not found")]
    NotFound(String),
    /// The store directory could not be prepared.
    #[error("store directory {path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// What failed.
        message: String,
    },
    /// The database was written by a newer version of this program.
    #[error("store schema version {found} is newer than this program's {supported}")]
    TooNew {
        /// Version found in the file.
        found: i64,
        /// Newest version this program knows.
        supported: i64,
    },
    /// A blocking store task panicked or was cancelled.
    #[error("store task failed: {0}")]
    Join(String),
    /// The transaction of the batch that held this write failed to commit: nothing of it is
    /// durable.
    #[error("group commit failed: {0}")]
    Commit(String),
}

/// A write, owned, as it is queued for a group commit ([`DelegationStore::submit`]).
#[derive(Debug, Clone)]
pub enum WriteOp {
    /// [`DelegationStore::insert`].
    Insert(Box<DelegationRecord>),
    /// [`DelegationStore::save`].
    Save(Box<DelegationRecord>),
    /// [`DelegationStore::dead_letter`].
    DeadLetter(Box<DelegationRecord>, Box<DlqEntry>),
    /// [`DelegationStore::mark_reported`].
    MarkReported(String),
    /// [`DelegationStore::dlq_mark_resubmitted`].
    DlqMarkResubmitted {
        /// The dead-lettered delegation.
        id: String,
        /// The delegation that resubmitted it.
        new_id: String,
    },
}

impl WriteOp {
    /// Run the write through a store's blocking methods.
    pub fn apply_blocking(&self, store: &dyn DelegationStore) -> Result<(), StoreError> {
        match self {
            WriteOp::Insert(r) => store.insert(r),
            WriteOp::Save(r) => store.save(r),
            WriteOp::DeadLetter(r, e) => store.dead_letter(r, e),
            WriteOp::MarkReported(id) => store.mark_reported(id),
            WriteOp::DlqMarkResubmitted { id, new_id } => store.dlq_mark_resubmitted(id, new_id),
        }
    }
}

/// The answer to a queued write: `Ok` once the batch holding it is committed and durable.
pub type PendingWrite = tokio::sync::oneshot::Receiver<Result<(), StoreError>>;

/// Where a queued write's result goes: a blocked thread or an async task.
pub(crate) enum WriteReply {
    /// A thread blocked in a [`DelegationStore`] method.
    Blocking(std::sync::mpsc::SyncSender<Result<(), StoreError>>),
    /// A task awaiting a [`PendingWrite`].
    Async(tokio::sync::oneshot::Sender<Result<(), StoreError>>),
}

impl WriteReply {
    /// Deliver the result (a waiter that is gone is no error: the write stands).
    pub(crate) fn send(self, r: Result<(), StoreError>) {
        match self {
            WriteReply::Blocking(tx) => {
                let _ = tx.send(r);
            }
            WriteReply::Async(tx) => {
                let _ = tx.send(r);
            }
        }
    }
}

/// The mirror of an A2A task state (the contract's [`DelegationState`] knows nothing of A2A
/// types, so the mapping lives here).
pub fn state_of_task(s: a2a_protocol::TaskState) -> DelegationState {
    use a2a_protocol::TaskState as T;
    match s {
        T::Unspecified => DelegationState::Unspecified,
        T::Submitted => DelegationState::Submitted,
        T::Working => DelegationState::Working,
        T::Completed => DelegationState::Completed,
        T::Failed => DelegationState::Failed,
        T::Canceled => DelegationState::Canceled,
        T::InputRequired => DelegationState::InputRequired,
        T::Rejected => DelegationState::Rejected,
        T::AuthRequired => DelegationState::AuthRequired,
    }
}

/// An artifact received for a delegation, with its provenance: the contract's [`RecordArtifact`]
/// with the media type and file always known (a `done` line needs both).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactRecord {
    /// The agent's `artifactId`.
    pub artifact_id: String,
    /// The artifact's name, if given.
    pub name: Option<String>,
    /// Media type of its first part.
    pub media_type: String,
    /// Byte length.
    pub bytes: u64,
    /// Lowercase hex sha256 of the bytes.
    pub sha256: String,
    /// The file holding the bytes.
    pub path: String,
    /// Provenance: the agent's card URL.
    pub agent_url: String,
    /// Provenance: the skill.
    pub skill: String,
    /// Provenance: the task.
    pub task_id: String,
    /// True once committed from a COMPLETED task; false for partial (dead-lettered) artifacts.
    pub committed: bool,
}

impl From<&ArtifactRecord> for RecordArtifact {
    fn from(a: &ArtifactRecord) -> Self {
        RecordArtifact {
            artifact_id: a.artifact_id.clone(),
            name: a.name.clone(),
            media_type: Some(a.media_type.clone()),
            bytes: a.bytes,
            sha256: a.sha256.clone(),
            path: Some(a.path.clone()),
            agent_url: a.agent_url.clone(),
            skill: a.skill.clone(),
            task_id: a.task_id.clone(),
            committed: a.committed,
        }
    }
}

/// The durable record of one delegation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DelegationRecord {
    /// Delegation id.
    pub id: String,
    /// Parent delegation of a fan-out child.
    pub parent_id: Option<String>,
    /// The request as accepted.
    pub request: DelegationRequest,
    /// Card URL of the chosen agent (`None` until routed).
    pub agent_url: Option<String>,
    /// JSON-RPC endpoint of the chosen agent.
    pub rpc_url: Option<String>,
    /// Protocol version spoken to it (`1.0` or `0.3`).
    pub protocol_version: Option<String>,
    /// Skill id.
    pub skill: String,
    /// Every `messageId` sent, by purpose (`create`, `input-1`, `auth-1`, ...).
    pub message_ids: BTreeMap<String, String>,
    /// Remote task id, recorded as soon as it is known.
    pub task_id: Option<String>,
    /// Remote context id.
    pub context_id: Option<String>,
    /// State.
    pub state: DelegationState,
    /// Why the delegation ended as it did (or what it waits for).
    pub reason: Option<String>,
    /// Budget given by the caller.
    pub budget_usd: f64,
    /// Share sent to the agent in `x-deleg` (the rest is the reserve).
    pub budget_share: f64,
    /// Spend reported by the agent (task metadata `cost_usd`), 0 when unknown.
    pub spend_usd: f64,
    /// Local deadline (RFC 3339).
    pub deadline: String,
    /// Depth at which the work arrived.
    pub depth: u32,
    /// Chain as received.
    pub chain: Vec<String>,
    /// The delegation this one refines.
    pub refine_of: Option<String>,
    /// `referenceTaskIds` sent.
    pub reference_task_ids: Vec<String>,
    /// Observed by streaming (else polling, with push hints when configured).
    pub streaming: bool,
    /// Lowercase hex sha256 of each push token configured for this delegation, oldest first
    /// (empty: not observed by push). The tokens themselves live in memory only, like scoped
    /// credentials: nothing the delegator writes holds a secret (DLG-SECRET-01).
    pub push_token_sha256: Vec<String>,
    /// Send attempts made (the first send counts as 1).
    pub attempts: u32,
    /// The last error.
    pub last_error: Option<String>,
    /// JSON-RPC code of a definite error that ended the delegation.
    pub error_code: Option<i64>,
    /// The agent's final status message or direct reply (data).
    pub final_message: Option<String>,
    /// Priority (from the request).
    pub priority: String,
    /// Created.
    pub created_at: String,
    /// Last changed.
    pub updated_at: String,
    /// When it reached a final state.
    pub terminal_at: Option<String>,
    /// True when it is in the dead-letter queue.
    pub dlq: bool,
    /// Input and auth rounds.
    pub input_rounds: Vec<InputRound>,
    /// Artifacts (partial ones only for dead-lettered delegations).
    pub artifacts: Vec<ArtifactRecord>,
    /// Errors seen (the latest 50).
    pub errors: Vec<RecordError>,
}

/// The most errors kept per record.
pub const MAX_ERRORS_KEPT: usize = 50;

impl DelegationRecord {
    /// Append an error, keeping at most [`MAX_ERRORS_KEPT`], and set `last_error`.
    pub fn push_error(&mut self, e: RecordError) {
        self.last_error = Some(e.message.clone());
        self.errors.push(e);
        if self.errors.len() > MAX_ERRORS_KEPT {
            let extra = self.errors.len() - MAX_ERRORS_KEPT;
            self.errors.drain(..extra);
        }
    }

    /// The record as the driver's `snapshot_ok` reports it (it holds no secret: push tokens only
    /// as hashes).
    pub fn to_snapshot(&self) -> SnapshotRecord {
        let request = match serde_json::to_value(&self.request) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        SnapshotRecord {
            id: self.id.clone(),
            parent_id: self.parent_id.clone(),
            request,
            agent_url: self.agent_url.clone(),
            rpc_url: self.rpc_url.clone(),
            protocol_version: self.protocol_version.clone(),
            skill: self.skill.clone(),
            message_ids: self.message_ids.clone(),
            task_id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            state: self.state,
            reason: self.reason.clone(),
            budget_usd: self.budget_usd,
            budget_share: self.budget_share,
            spend_usd: self.spend_usd,
            deadline: self.deadline.clone(),
            depth: self.depth,
            chain: self.chain.clone(),
            refine_of: self.refine_of.clone(),
            reference_task_ids: self.reference_task_ids.clone(),
            streaming: self.streaming,
            push_token_sha256: self.push_token_sha256.clone(),
            attempts: self.attempts,
            last_error: self.last_error.clone(),
            error_code: self.error_code,
            final_message: self.final_message.clone(),
            priority: Some(self.priority.clone()),
            created_at: Some(self.created_at.clone()),
            updated_at: Some(self.updated_at.clone()),
            terminal_at: self.terminal_at.clone(),
            dlq: self.dlq,
            input_rounds: self.input_rounds.clone(),
            artifacts: self.artifacts.iter().map(RecordArtifact::from).collect(),
            errors: self.errors.clone(),
        }
    }
}

/// A dead-lettered delegation: everything needed to debug and resubmit it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DlqEntry {
    /// Delegation id.
    pub delegation_id: String,
    /// When it was dead-lettered.
    pub at: String,
    /// The original request.
    pub request: DelegationRequest,
    /// The errors that exhausted the retries.
    pub errors: Vec<RecordError>,
    /// Artifacts received before giving up (not committed).
    pub partial_artifacts: Vec<ArtifactRecord>,
    /// The chain, with this delegator's own URL appended (as it was sent).
    pub chain: Vec<String>,
    /// Task id, if one was created.
    pub task_id: Option<String>,
    /// Agent card URL.
    pub agent_url: Option<String>,
    /// Id of the delegation that resubmitted it, if any.
    pub resubmitted_as: Option<String>,
}

/// The store interface. Each write is atomic and durable when it returns (a group commit may
/// hold several writes in one transaction; see [`SqliteStore`]).
///
/// The store is also the outbox of `done` lines: every write of a record in a final state
/// ([`insert`](Self::insert), [`save`](Self::save), [`dead_letter`](Self::dead_letter)) marks it
/// *unreported* in the same transaction, and it stays so until
/// [`mark_reported`](Self::mark_reported), which the driver calls only once the `done` line was
/// written and flushed. After a restart, [`unreported`](Self::unreported) lists the `done` lines
/// still owed.
pub trait DelegationStore: Send + Sync {
    /// Insert a new record (with its rounds, artifacts and errors); fails with
    /// [`StoreError::Duplicate`] when the id exists. A final record is marked unreported.
    fn insert(&self, rec: &DelegationRecord) -> Result<(), StoreError>;
    /// Write the whole record, replacing its rounds, artifacts and errors. A final record is
    /// marked unreported.
    fn save(&self, rec: &DelegationRecord) -> Result<(), StoreError>;
    /// Write the record and its dead-letter entry together (the record is marked unreported).
    fn dead_letter(&self, rec: &DelegationRecord, entry: &DlqEntry) -> Result<(), StoreError>;
    /// Final records whose `done` was not reported yet, oldest first.
    fn unreported(&self) -> Result<Vec<DelegationRecord>, StoreError>;
    /// Note that the `done` of delegation `id` was written and flushed; fails with
    /// [`StoreError::NotFound`] when the id is unknown.
    fn mark_reported(&self, id: &str) -> Result<(), StoreError>;
    /// One record.
    fn get(&self, id: &str) -> Result<Option<DelegationRecord>, StoreError>;
    /// Every record, oldest first.
    fn list(&self) -> Result<Vec<DelegationRecord>, StoreError>;
    /// Records not in a final state, oldest first.
    fn open_delegations(&self) -> Result<Vec<DelegationRecord>, StoreError>;
    /// The dead-letter queue, oldest first.
    fn dlq_list(&self) -> Result<Vec<DlqEntry>, StoreError>;
    /// Note that a dead-lettered delegation was resubmitted as `new_id`.
    fn dlq_mark_resubmitted(&self, id: &str, new_id: &str) -> Result<(), StoreError>;
    /// Queue a write without blocking a thread: the receiver gets its result once the
    /// transaction holding it is committed (durable), exactly what the blocking method would
    /// have returned. `Err(op)`: this store has no queue; the caller runs `op` through the
    /// blocking methods ([`WriteOp::apply_blocking`]). The default has no queue.
    fn submit(&self, op: WriteOp) -> Result<PendingWrite, WriteOp> {
        Err(op)
    }
}

/// An async handle that runs store calls on the blocking pool.
#[derive(Clone)]
pub struct StoreHandle {
    inner: Arc<dyn DelegationStore>,
}

impl StoreHandle {
    /// Wrap a store.
    pub fn new(inner: Arc<dyn DelegationStore>) -> Self {
        StoreHandle { inner }
    }

    /// The wrapped store, for synchronous callers.
    pub fn blocking(&self) -> &Arc<dyn DelegationStore> {
        &self.inner
    }

    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&dyn DelegationStore) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || f(inner.as_ref()))
            .await
            .map_err(|e| StoreError::Join(e.to_string()))?
    }

    /// Queue a write (group commit) and wait until it is durable; stores without a queue run it
    /// on the blocking pool.
    async fn write(&self, op: WriteOp) -> Result<(), StoreError> {
        match self.inner.submit(op) {
            Ok(pending) => pending.await.map_err(|_| {
                StoreError::Join("the store writer stopped before answering".into())
            })?,
            Err(op) => self.run(move |s| op.apply_blocking(s)).await,
        }
    }

    /// See [`DelegationStore::insert`].
    pub async fn insert(&self, rec: DelegationRecord) -> Result<(), StoreError> {
        self.write(WriteOp::Insert(Box::new(rec))).await
    }

    /// See [`DelegationStore::save`].
    pub async fn save(&self, rec: DelegationRecord) -> Result<(), StoreError> {
        self.write(WriteOp::Save(Box::new(rec))).await
    }

    /// See [`DelegationStore::dead_letter`].
    pub async fn dead_letter(
        &self,
        rec: DelegationRecord,
        entry: DlqEntry,
    ) -> Result<(), StoreError> {
        self.write(WriteOp::DeadLetter(Box::new(rec), Box::new(entry)))
            .await
    }

    /// See [`DelegationStore::get`].
    pub async fn get(&self, id: &str) -> Result<Option<DelegationRecord>, StoreError> {
        let id = id.to_string();
        self.run(move |s| s.get(&id)).await
    }

    /// See [`DelegationStore::list`].
    pub async fn list(&self) -> Result<Vec<DelegationRecord>, StoreError> {
        self.run(|s| s.list()).await
    }

    /// See [`DelegationStore::unreported`].
    pub async fn unreported(&self) -> Result<Vec<DelegationRecord>, StoreError> {
        self.run(|s| s.unreported()).await
    }

    /// See [`DelegationStore::mark_reported`].
    pub async fn mark_reported(&self, id: &str) -> Result<(), StoreError> {
        self.write(WriteOp::MarkReported(id.to_string())).await
    }

    /// See [`DelegationStore::open_delegations`].
    pub async fn open_delegations(&self) -> Result<Vec<DelegationRecord>, StoreError> {
        self.run(|s| s.open_delegations()).await
    }
}

/// The current time as RFC 3339 UTC text with milliseconds.
pub fn now_text() -> String {
    a2a_protocol::Timestamp::now().to_rfc3339()
}
