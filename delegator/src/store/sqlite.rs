//! [`SqliteStore`]: the default [`DelegationStore`] on a bundled SQLite file.
//!
//! `journal_mode=WAL`, `synchronous=FULL` (an acknowledged commit survives SIGKILL and power
//! loss), `foreign_keys=ON`, `secure_delete=ON` (deleted content is overwritten, not left in free
//! pages), a 5 s busy timeout. The schema is versioned with `PRAGMA user_version`: each entry of
//! `MIGRATIONS` moves the file one version up inside a transaction.
//!
//! No secret is ever written (DLG-SECRET-01): the file, its WAL and its shared-memory index are
//! files under the store directory, which the harness scans. Push tokens are kept as sha256
//! only; scoped credentials not at all (they live in memory).

use super::{
    ArtifactRecord, DelegationRecord, DelegationState, DelegationStore, DlqEntry, EscalationKind,
    InputRound, RecordError, StoreError,
};
use super::{WriteOp, WriteReply};
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};

/// Schema migrations; index `i` upgrades version `i` to `i + 1`. Only ever append: a store
/// written by an older version is migrated forward on open.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE delegations (
    id TEXT PRIMARY KEY,
    parent_id TEXT,
    request_json TEXT NOT NULL,
    agent_url TEXT,
    rpc_url TEXT,
    protocol_version TEXT,
    skill TEXT NOT NULL,
    instructions TEXT NOT NULL,
    inputs_json TEXT NOT NULL,
    message_ids_json TEXT NOT NULL,
    task_id TEXT,
    context_id TEXT,
    state TEXT NOT NULL,
    reason TEXT,
    budget_usd REAL NOT NULL,
    budget_share REAL NOT NULL,
    spend_usd REAL NOT NULL,
    deadline TEXT NOT NULL,
    depth INTEGER NOT NULL,
    chain_json TEXT NOT NULL,
    refine_of TEXT,
    reference_task_ids_json TEXT NOT NULL,
    streaming INTEGER NOT NULL,
    push_token TEXT,
    scoped_credential TEXT,
    attempts INTEGER NOT NULL,
    last_error TEXT,
    error_code INTEGER,
    final_message TEXT,
    priority TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    terminal_at TEXT,
    dlq INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX delegations_state ON delegations(state);
CREATE INDEX delegations_task ON delegations(task_id);
CREATE TABLE input_rounds (
    delegation_id TEXT NOT NULL REFERENCES delegations(id) ON DELETE CASCADE,
    round INTEGER NOT NULL,
    kind TEXT NOT NULL,
    question TEXT NOT NULL,
    question_message_id TEXT,
    answer TEXT,
    source TEXT,
    answer_message_id TEXT,
    asked_at TEXT NOT NULL,
    answered_at TEXT,
    sent_at TEXT,
    PRIMARY KEY (delegation_id, round)
);
CREATE TABLE artifacts (
    delegation_id TEXT NOT NULL REFERENCES delegations(id) ON DELETE CASCADE,
    artifact_id TEXT NOT NULL,
    name TEXT,
    media_type TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    path TEXT NOT NULL,
    agent_url TEXT NOT NULL,
    skill TEXT NOT NULL,
    task_id TEXT NOT NULL,
    committed INTEGER NOT NULL,
    PRIMARY KEY (delegation_id, artifact_id)
);
CREATE TABLE errors (
    delegation_id TEXT NOT NULL REFERENCES delegations(id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    at TEXT NOT NULL,
    op TEXT NOT NULL,
    code INTEGER,
    http_status INTEGER,
    transient INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (delegation_id, seq)
);
CREATE TABLE dlq (
    delegation_id TEXT PRIMARY KEY REFERENCES delegations(id),
    at TEXT NOT NULL,
    request_json TEXT NOT NULL,
    errors_json TEXT NOT NULL,
    partial_artifacts_json TEXT NOT NULL,
    chain_json TEXT NOT NULL,
    task_id TEXT,
    agent_url TEXT,
    resubmitted_as TEXT
);
"#,
    // 2: the outbox. `unreported` = 1 on a final record whose `done` line has not been written
    // and flushed yet. Records of a version-1 store count as reported (that version kept no
    // trace of it), so an upgrade does not report old delegations a second time.
    r#"
ALTER TABLE delegations ADD COLUMN unreported INTEGER NOT NULL DEFAULT 0;
CREATE INDEX delegations_unreported ON delegations(unreported) WHERE unreported = 1;
"#,
    // 3: an artifact is keyed by its task too. A fan-out parent holds its children's artifacts,
    // and two children's tasks may well name their artifacts alike; keyed by
    // (delegation, artifact id) alone, the parent's final save failed.
    r#"
CREATE TABLE artifacts_v3 (
    delegation_id TEXT NOT NULL REFERENCES delegations(id) ON DELETE CASCADE,
    artifact_id TEXT NOT NULL,
    name TEXT,
    media_type TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    path TEXT NOT NULL,
    agent_url TEXT NOT NULL,
    skill TEXT NOT NULL,
    task_id TEXT NOT NULL,
    committed INTEGER NOT NULL,
    PRIMARY KEY (delegation_id, task_id, artifact_id)
);
INSERT INTO artifacts_v3 (delegation_id, artifact_id, name, media_type, bytes, sha256, path,
    agent_url, skill, task_id, committed)
SELECT delegation_id, artifact_id, name, media_type, bytes, sha256, path, agent_url, skill,
    task_id, committed
FROM artifacts ORDER BY rowid;
DROP TABLE artifacts;
ALTER TABLE artifacts_v3 RENAME TO artifacts;
"#,
    // 4: no secret at rest. Push tokens are kept as sha256 only (hashed from the old column by
    // `hash_push_tokens` before it is dropped); scoped credentials are not kept at all (a
    // delegation that still needs one after a restart asks its caller again).
    r#"
ALTER TABLE delegations ADD COLUMN push_token_sha256_json TEXT NOT NULL DEFAULT '[]';
"#,
];

/// The version whose migration drops the secret columns (after [`hash_push_tokens`]).
const NO_SECRETS_VERSION: usize = 4;

/// Migration 4, in Rust: the sha256 of each stored push token goes to `push_token_sha256_json`,
/// then the columns that held secrets are dropped (their content is overwritten:
/// `secure_delete`).
fn hash_push_tokens(tx: &rusqlite::Transaction<'_>) -> Result<(), StoreError> {
    let tokens: Vec<(String, String)> = {
        let mut stmt =
            tx.prepare("SELECT id, push_token FROM delegations WHERE push_token IS NOT NULL")?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?
    };
    for (id, token) in tokens {
        tx.execute(
            "UPDATE delegations SET push_token_sha256_json = ?2 WHERE id = ?1",
            params![id, json(&vec![crate::webhook::token_sha256(&token)])],
        )?;
    }
    tx.execute_batch(
        "UPDATE delegations SET push_token = NULL, scoped_credential = NULL;
         ALTER TABLE delegations DROP COLUMN push_token;
         ALTER TABLE delegations DROP COLUMN scoped_credential;",
    )?;
    Ok(())
}

/// The most writes one group commit takes from the queue (the rest wait for the next batch).
const MAX_BATCH: usize = 1024;

/// The SQLite store: one **writer thread** that owns the writing connection and commits in
/// groups, and one reading connection behind a mutex (WAL lets it read while the writer writes).
///
/// Group commit: every write ([`WriteOp`]) is queued to the writer; the writer takes whatever is
/// queued (up to [`MAX_BATCH`]), applies each write in its own savepoint inside one
/// `BEGIN IMMEDIATE` transaction (a write that fails, say a duplicate insert, is rolled back
/// alone and fails alone), commits once (with `synchronous=FULL`, one WAL fsync for the whole
/// batch), and only then answers every waiter. A write is acknowledged only once the commit of
/// the batch that holds it has returned, so "durable before the first send" holds exactly as with
/// one transaction per write; writes that arrive during a commit's fsync form the next batch.
/// Callers on an async runtime go through [`super::StoreHandle`], which queues writes without
/// holding a thread ([`DelegationStore::submit`]) and runs reads on the blocking pool.
pub struct SqliteStore {
    conn: Mutex<Connection>,
    queue: Option<mpsc::Sender<Job>>,
    writer: Option<std::thread::JoinHandle<()>>,
    stats: Arc<GroupStats>,
}

/// One queued write and where its result goes.
struct Job {
    op: Work,
    reply: WriteReply,
}

/// What the writer thread does with a job.
enum Work {
    Write(WriteOp),
    /// Test hook: run a closure on the writer's connection, between batches.
    #[cfg(test)]
    Inspect(Box<dyn FnOnce(&Connection) + Send>),
}

/// Counters of the writer thread.
#[derive(Debug, Default)]
struct GroupStats {
    /// Writes queued so far.
    queued: AtomicU64,
    /// Batches committed (one transaction, one fsync each).
    batches: AtomicU64,
    /// Writes applied in those batches.
    writes: AtomicU64,
}

/// Group-commit counters: how many batches the writer committed and how many writes they held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupCommitStats {
    /// Writes queued so far (including those not committed yet).
    pub queued: u64,
    /// Transactions committed (one fsync each).
    pub batches: u64,
    /// Writes those transactions held.
    pub writes: u64,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SqliteStore")
    }
}

/// The file name of the database inside a store directory.
pub const DB_FILE: &str = "delegations.sqlite3";

impl SqliteStore {
    /// Open (creating if needed) the store in directory `dir`, migrating it to the current schema.
    pub fn open_dir(dir: &Path) -> Result<Self, StoreError> {
        std::fs::create_dir_all(dir).map_err(|e| StoreError::Io {
            path: dir.display().to_string(),
            message: e.to_string(),
        })?;
        Self::open_file(&dir.join(DB_FILE))
    }

    /// Open (creating if needed) the database file at `path`.
    pub fn open_file(path: &Path) -> Result<Self, StoreError> {
        let mut writer = open_connection(path)?;
        migrate(&mut writer)?;
        // The reader opens after the migration, so it never sees an older schema.
        let reader = open_connection(path)?;
        let (queue, rx) = mpsc::channel::<Job>();
        let stats = Arc::new(GroupStats::default());
        let thread_stats = stats.clone();
        let writer = std::thread::Builder::new()
            .name("store-writer".into())
            .spawn(move || writer_loop(writer, rx, &thread_stats))
            .map_err(|e| StoreError::Io {
                path: path.display().to_string(),
                message: format!("starting the store writer thread: {e}"),
            })?;
        Ok(SqliteStore {
            conn: Mutex::new(reader),
            queue: Some(queue),
            writer: Some(writer),
            stats,
        })
    }

    /// How many batches the writer thread committed and how many writes they held.
    pub fn group_commit_stats(&self) -> GroupCommitStats {
        GroupCommitStats {
            queued: self.stats.queued.load(Ordering::SeqCst),
            batches: self.stats.batches.load(Ordering::SeqCst),
            writes: self.stats.writes.load(Ordering::SeqCst),
        }
    }

    /// Queue a job for the writer thread.
    fn enqueue(&self, op: Work, reply: WriteReply) -> Result<(), StoreError> {
        let queue = self
            .queue
            .as_ref()
            .ok_or_else(|| StoreError::Join("the store writer has stopped".into()))?;
        self.stats.queued.fetch_add(1, Ordering::SeqCst);
        queue
            .send(Job { op, reply })
            .map_err(|_| StoreError::Join("the store writer has stopped".into()))
    }

    /// Queue a write and block until the batch holding it is committed.
    fn write_blocking(&self, op: WriteOp) -> Result<(), StoreError> {
        let (tx, rx) = mpsc::sync_channel(1);
        self.enqueue(Work::Write(op), WriteReply::Blocking(tx))?;
        rx.recv()
            .map_err(|_| StoreError::Join("the store writer stopped before answering".into()))?
    }

    /// The schema version this program writes.
    pub fn schema_version() -> i64 {
        MIGRATIONS.len() as i64
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves the connection usable: SQLite rolls back an
        // unfinished transaction when it is dropped.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        // Closing the queue ends the writer once it has committed what is queued; joining it
        // closes its connection before the store is gone (a reopen sees every write).
        self.queue.take();
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
    }
}

/// Open one connection with the store's settings.
fn open_connection(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "secure_delete", "ON")?;
    Ok(conn)
}

/// The writer thread: take whatever is queued, apply it in one transaction, commit (one fsync),
/// answer every waiter; until the queue is closed.
fn writer_loop(mut conn: Connection, rx: mpsc::Receiver<Job>, stats: &GroupStats) {
    while let Ok(first) = rx.recv() {
        let mut batch = Vec::new();
        let mut next = Some(first);
        while let Some(job) = next.take() {
            match job.op {
                Work::Write(op) => batch.push((op, job.reply)),
                #[cfg(test)]
                Work::Inspect(f) => {
                    // Between batches: commit what was taken before it, then run it.
                    commit_batch(&mut conn, std::mem::take(&mut batch), stats);
                    f(&conn);
                    job.reply.send(Ok(()));
                }
            }
            if batch.len() < MAX_BATCH {
                next = rx.try_recv().ok();
            }
        }
        commit_batch(&mut conn, batch, stats);
    }
}

/// Apply `batch` in one transaction, each write in its own savepoint, commit once, then answer.
fn commit_batch(conn: &mut Connection, batch: Vec<(WriteOp, WriteReply)>, stats: &GroupStats) {
    if batch.is_empty() {
        return;
    }
    let mut results: Vec<Result<(), StoreError>> = Vec::with_capacity(batch.len());
    let outcome = (|| -> Result<(), rusqlite::Error> {
        let mut tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        for (op, _) in &batch {
            let mut sp = tx.savepoint()?;
            let r = apply(&sp, op);
            if r.is_ok() {
                sp.commit()?;
            } else {
                sp.rollback()?;
            }
            results.push(r);
        }
        tx.commit()
    })();
    if let Err(e) = outcome {
        // Nothing of this batch is durable: every write in it fails, with the commit's error.
        let message = e.to_string();
        results = batch
            .iter()
            .map(|_| Err(StoreError::Commit(message.clone())))
            .collect();
    } else {
        stats.batches.fetch_add(1, Ordering::SeqCst);
        stats.writes.fetch_add(batch.len() as u64, Ordering::SeqCst);
    }
    for ((_, reply), r) in batch.into_iter().zip(results) {
        reply.send(r);
    }
}

/// One write, inside the batch's transaction.
fn apply(conn: &Connection, op: &WriteOp) -> Result<(), StoreError> {
    match op {
        WriteOp::Insert(rec) => {
            let exists: Option<i64> = conn
                .query_row(
                    "SELECT 1 FROM delegations WHERE id = ?1",
                    params![rec.id],
                    |r| r.get(0),
                )
                .optional()?;
            if exists.is_some() {
                return Err(StoreError::Duplicate(rec.id.clone()));
            }
            write_record(conn, rec)
        }
        WriteOp::Save(rec) => write_record(conn, rec),
        WriteOp::DeadLetter(rec, e) => {
            write_record(conn, rec)?;
            conn.execute(
                "INSERT INTO dlq (delegation_id, at, request_json, errors_json,
                    partial_artifacts_json, chain_json, task_id, agent_url, resubmitted_as)
                 VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)
                 ON CONFLICT(delegation_id) DO UPDATE SET at=excluded.at,
                    request_json=excluded.request_json, errors_json=excluded.errors_json,
                    partial_artifacts_json=excluded.partial_artifacts_json,
                    chain_json=excluded.chain_json, task_id=excluded.task_id,
                    agent_url=excluded.agent_url, resubmitted_as=NULL",
                params![
                    e.delegation_id,
                    e.at,
                    json(&e.request),
                    json(&e.errors),
                    json(&e.partial_artifacts),
                    json(&e.chain),
                    e.task_id,
                    e.agent_url,
                    e.resubmitted_as
                ],
            )?;
            Ok(())
        }
        WriteOp::MarkReported(id) => {
            let n = conn.execute(
                "UPDATE delegations SET unreported = 0 WHERE id = ?1",
                params![id],
            )?;
            if n == 0 {
                return Err(StoreError::NotFound(id.clone()));
            }
            Ok(())
        }
        WriteOp::DlqMarkResubmitted { id, new_id } => {
            let n = conn.execute(
                "UPDATE dlq SET resubmitted_as = ?2 WHERE delegation_id = ?1",
                params![id, new_id],
            )?;
            if n == 0 {
                return Err(StoreError::NotFound(id.clone()));
            }
            Ok(())
        }
    }
}

fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let supported = SqliteStore::schema_version();
    if current > supported {
        return Err(StoreError::TooNew {
            found: current,
            supported,
        });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql)?;
        if i + 1 == NO_SECRETS_VERSION {
            hash_push_tokens(&tx)?;
        }
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
        tx.commit()?;
    }
    if (current as usize) < NO_SECRETS_VERSION && current > 0 {
        // An older store held secrets: rebuild the file and empty the WAL so that no old
        // page keeps them.
        conn.execute_batch("VACUUM")?;
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    }
    Ok(())
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".to_string())
}

fn write_record(tx: &Connection, r: &DelegationRecord) -> Result<(), StoreError> {
    tx.prepare_cached(
        "INSERT INTO delegations (id, parent_id, request_json, agent_url, rpc_url,
            protocol_version, skill, instructions, inputs_json, message_ids_json, task_id,
            context_id, state, reason, budget_usd, budget_share, spend_usd, deadline, depth,
            chain_json, refine_of, reference_task_ids_json, streaming, push_token_sha256_json,
            attempts, last_error, error_code, final_message, priority,
            created_at, updated_at, terminal_at, dlq, unreported)
         VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,
                 ?23,?24,?25,?26,?27,?28,?29,?30,?31,?32,?33,?34)
         ON CONFLICT(id) DO UPDATE SET parent_id=excluded.parent_id,
            request_json=excluded.request_json, agent_url=excluded.agent_url,
            rpc_url=excluded.rpc_url, protocol_version=excluded.protocol_version,
            skill=excluded.skill, instructions=excluded.instructions,
            inputs_json=excluded.inputs_json, message_ids_json=excluded.message_ids_json,
            task_id=excluded.task_id, context_id=excluded.context_id, state=excluded.state,
            reason=excluded.reason, budget_usd=excluded.budget_usd,
            budget_share=excluded.budget_share, spend_usd=excluded.spend_usd,
            deadline=excluded.deadline, depth=excluded.depth, chain_json=excluded.chain_json,
            refine_of=excluded.refine_of, reference_task_ids_json=excluded.reference_task_ids_json,
            streaming=excluded.streaming,
            push_token_sha256_json=excluded.push_token_sha256_json, attempts=excluded.attempts,
            last_error=excluded.last_error, error_code=excluded.error_code,
            final_message=excluded.final_message, priority=excluded.priority,
            updated_at=excluded.updated_at, terminal_at=excluded.terminal_at, dlq=excluded.dlq,
            unreported=excluded.unreported",
    )?
    .execute(params![
        r.id,
        r.parent_id,
        json(&r.request),
        r.agent_url,
        r.rpc_url,
        r.protocol_version,
        r.skill,
        r.request.text,
        json(&r.request.inputs),
        json(&r.message_ids),
        r.task_id,
        r.context_id,
        r.state.as_str(),
        r.reason,
        r.budget_usd,
        r.budget_share,
        r.spend_usd,
        r.deadline,
        r.depth,
        json(&r.chain),
        r.refine_of,
        json(&r.reference_task_ids),
        r.streaming,
        json(&r.push_token_sha256),
        r.attempts,
        r.last_error,
        r.error_code,
        r.final_message,
        r.priority,
        r.created_at,
        r.updated_at,
        r.terminal_at,
        r.dlq,
        // Every write of a final state owes its `done` until `mark_reported`.
        r.state.is_final(),
    ])?;
    tx.prepare_cached("DELETE FROM input_rounds WHERE delegation_id = ?1")?
        .execute(params![r.id])?;
    for q in &r.input_rounds {
        tx.prepare_cached(
            "INSERT INTO input_rounds (delegation_id, round, kind, question, question_message_id,
                answer, source, answer_message_id, asked_at, answered_at, sent_at)
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
        )?
        .execute(params![
            r.id,
            q.round,
            q.kind.as_str(),
            q.question,
            q.question_message_id,
            q.answer,
            q.source,
            q.answer_message_id,
            q.asked_at.as_deref().unwrap_or_default(),
            q.answered_at,
            q.sent_at
        ])?;
    }
    tx.prepare_cached("DELETE FROM artifacts WHERE delegation_id = ?1")?
        .execute(params![r.id])?;
    for a in &r.artifacts {
        tx.prepare_cached(
            "INSERT INTO artifacts (delegation_id, artifact_id, name, media_type, bytes, sha256,
                path, agent_url, skill, task_id, committed)
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
        )?
        .execute(params![
            r.id,
            a.artifact_id,
            a.name,
            a.media_type,
            a.bytes as i64,
            a.sha256,
            a.path,
            a.agent_url,
            a.skill,
            a.task_id,
            a.committed
        ])?;
    }
    tx.prepare_cached("DELETE FROM errors WHERE delegation_id = ?1")?
        .execute(params![r.id])?;
    for (seq, e) in r.errors.iter().enumerate() {
        tx.prepare_cached(
            "INSERT INTO errors (delegation_id, seq, at, op, code, http_status, transient, message)
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8)",
        )?
        .execute(params![
            r.id,
            seq as i64,
            e.at,
            e.op,
            e.code,
            e.http_status,
            e.transient,
            e.message
        ])?;
    }
    Ok(())
}

fn parse_json<T: serde::de::DeserializeOwned>(
    id: &str,
    column: &'static str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt {
        id: id.to_string(),
        column,
        message: e.to_string(),
    })
}

/// Scalar columns of a `delegations` row, before the JSON columns are parsed.
struct RawRow {
    id: String,
    parent_id: Option<String>,
    request_json: String,
    agent_url: Option<String>,
    rpc_url: Option<String>,
    protocol_version: Option<String>,
    skill: String,
    message_ids_json: String,
    task_id: Option<String>,
    context_id: Option<String>,
    state: String,
    reason: Option<String>,
    budget_usd: f64,
    budget_share: f64,
    spend_usd: f64,
    deadline: String,
    depth: u32,
    chain_json: String,
    refine_of: Option<String>,
    reference_task_ids_json: String,
    streaming: bool,
    push_token_sha256_json: String,
    attempts: u32,
    last_error: Option<String>,
    error_code: Option<i64>,
    final_message: Option<String>,
    priority: String,
    created_at: String,
    updated_at: String,
    terminal_at: Option<String>,
    dlq: bool,
}

const SELECT_COLUMNS: &str = "id, parent_id, request_json, agent_url, rpc_url, protocol_version,
    skill, message_ids_json, task_id, context_id, state, reason, budget_usd, budget_share,
    spend_usd, deadline, depth, chain_json, refine_of, reference_task_ids_json, streaming,
    push_token_sha256_json, attempts, last_error, error_code, final_message, priority,
    created_at, updated_at, terminal_at, dlq";

fn raw_row(r: &Row<'_>) -> rusqlite::Result<RawRow> {
    Ok(RawRow {
        id: r.get(0)?,
        parent_id: r.get(1)?,
        request_json: r.get(2)?,
        agent_url: r.get(3)?,
        rpc_url: r.get(4)?,
        protocol_version: r.get(5)?,
        skill: r.get(6)?,
        message_ids_json: r.get(7)?,
        task_id: r.get(8)?,
        context_id: r.get(9)?,
        state: r.get(10)?,
        reason: r.get(11)?,
        budget_usd: r.get(12)?,
        budget_share: r.get(13)?,
        spend_usd: r.get(14)?,
        deadline: r.get(15)?,
        depth: r.get(16)?,
        chain_json: r.get(17)?,
        refine_of: r.get(18)?,
        reference_task_ids_json: r.get(19)?,
        streaming: r.get(20)?,
        push_token_sha256_json: r.get(21)?,
        attempts: r.get(22)?,
        last_error: r.get(23)?,
        error_code: r.get(24)?,
        final_message: r.get(25)?,
        priority: r.get(26)?,
        created_at: r.get(27)?,
        updated_at: r.get(28)?,
        terminal_at: r.get(29)?,
        dlq: r.get(30)?,
    })
}

fn finish_record(conn: &Connection, raw: RawRow) -> Result<DelegationRecord, StoreError> {
    let id = raw.id.clone();
    let state = DelegationState::parse(&raw.state).ok_or_else(|| StoreError::Corrupt {
        id: id.clone(),
        column: "state",
        message: format!("unknown state {:?}", raw.state),
    })?;
    let mut stmt = conn.prepare_cached(
        "SELECT round, kind, question, question_message_id, answer, source, answer_message_id,
                asked_at, answered_at, sent_at
         FROM input_rounds WHERE delegation_id = ?1 ORDER BY round",
    )?;
    let input_rounds = stmt
        .query_map(params![id], |r| {
            let kind: String = r.get(1)?;
            let kind = EscalationKind::parse(&kind).ok_or_else(|| {
                rusqlite::Error::FromSqlConversionFailure(
                    1,
                    rusqlite::types::Type::Text,
                    format!("unknown escalation kind {kind:?}").into(),
                )
            })?;
            let asked_at: String = r.get(7)?;
            Ok(InputRound {
                round: r.get(0)?,
                kind,
                question: r.get(2)?,
                question_message_id: r.get(3)?,
                answer: r.get(4)?,
                source: r.get(5)?,
                answer_message_id: r.get(6)?,
                asked_at: Some(asked_at).filter(|a| !a.is_empty()),
                answered_at: r.get(8)?,
                sent_at: r.get(9)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT artifact_id, name, media_type, bytes, sha256, path, agent_url, skill, task_id,
                committed
         FROM artifacts WHERE delegation_id = ?1 ORDER BY rowid",
    )?;
    let artifacts = stmt
        .query_map(params![id], |r| {
            Ok(ArtifactRecord {
                artifact_id: r.get(0)?,
                name: r.get(1)?,
                media_type: r.get(2)?,
                bytes: r.get::<_, i64>(3)?.max(0) as u64,
                sha256: r.get(4)?,
                path: r.get(5)?,
                agent_url: r.get(6)?,
                skill: r.get(7)?,
                task_id: r.get(8)?,
                committed: r.get(9)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT at, op, code, http_status, transient, message
         FROM errors WHERE delegation_id = ?1 ORDER BY seq",
    )?;
    let errors = stmt
        .query_map(params![id], |r| {
            Ok(RecordError {
                at: r.get(0)?,
                op: r.get(1)?,
                code: r.get(2)?,
                http_status: r.get(3)?,
                transient: r.get(4)?,
                message: r.get(5)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(DelegationRecord {
        request: parse_json(&id, "request_json", &raw.request_json)?,
        message_ids: parse_json(&id, "message_ids_json", &raw.message_ids_json)?,
        chain: parse_json(&id, "chain_json", &raw.chain_json)?,
        reference_task_ids: parse_json(
            &id,
            "reference_task_ids_json",
            &raw.reference_task_ids_json,
        )?,
        push_token_sha256: parse_json(&id, "push_token_sha256_json", &raw.push_token_sha256_json)?,
        id,
        parent_id: raw.parent_id,
        agent_url: raw.agent_url,
        rpc_url: raw.rpc_url,
        protocol_version: raw.protocol_version,
        skill: raw.skill,
        task_id: raw.task_id,
        context_id: raw.context_id,
        state,
        reason: raw.reason,
        budget_usd: raw.budget_usd,
        budget_share: raw.budget_share,
        spend_usd: raw.spend_usd,
        deadline: raw.deadline,
        depth: raw.depth,
        refine_of: raw.refine_of,
        streaming: raw.streaming,
        attempts: raw.attempts,
        last_error: raw.last_error,
        error_code: raw.error_code,
        final_message: raw.final_message,
        priority: raw.priority,
        created_at: raw.created_at,
        updated_at: raw.updated_at,
        terminal_at: raw.terminal_at,
        dlq: raw.dlq,
        input_rounds,
        artifacts,
        errors,
    })
}

fn query_records(
    conn: &Connection,
    where_clause: &str,
    args: &[&dyn rusqlite::ToSql],
) -> Result<Vec<DelegationRecord>, StoreError> {
    let sql = format!("SELECT {SELECT_COLUMNS} FROM delegations {where_clause} ORDER BY rowid ASC");
    let mut stmt = conn.prepare(&sql)?;
    let raws = stmt
        .query_map(args, raw_row)?
        .collect::<Result<Vec<_>, _>>()?;
    raws.into_iter().map(|r| finish_record(conn, r)).collect()
}

impl DelegationStore for SqliteStore {
    fn insert(&self, rec: &DelegationRecord) -> Result<(), StoreError> {
        self.write_blocking(WriteOp::Insert(Box::new(rec.clone())))
    }

    fn save(&self, rec: &DelegationRecord) -> Result<(), StoreError> {
        self.write_blocking(WriteOp::Save(Box::new(rec.clone())))
    }

    fn dead_letter(&self, rec: &DelegationRecord, e: &DlqEntry) -> Result<(), StoreError> {
        self.write_blocking(WriteOp::DeadLetter(
            Box::new(rec.clone()),
            Box::new(e.clone()),
        ))
    }

    fn submit(&self, op: WriteOp) -> Result<super::PendingWrite, WriteOp> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        match self.enqueue(Work::Write(op), WriteReply::Async(tx)) {
            Ok(()) => Ok(rx),
            Err(e) => {
                // The writer is gone: answer through the same receiver.
                let (tx, rx) = tokio::sync::oneshot::channel();
                let _ = tx.send(Err(e));
                Ok(rx)
            }
        }
    }

    fn get(&self, id: &str) -> Result<Option<DelegationRecord>, StoreError> {
        let conn = self.lock();
        Ok(query_records(&conn, "WHERE id = ?1", &[&id])?
            .into_iter()
            .next())
    }

    fn list(&self) -> Result<Vec<DelegationRecord>, StoreError> {
        let conn = self.lock();
        query_records(&conn, "", &[])
    }

    fn open_delegations(&self) -> Result<Vec<DelegationRecord>, StoreError> {
        let conn = self.lock();
        let finals: Vec<String> = DelegationState::ALL
            .iter()
            .filter(|s| s.is_final())
            .map(|s| format!("'{}'", s.as_str()))
            .collect();
        query_records(
            &conn,
            &format!("WHERE state NOT IN ({})", finals.join(",")),
            &[],
        )
    }

    fn unreported(&self) -> Result<Vec<DelegationRecord>, StoreError> {
        let conn = self.lock();
        query_records(&conn, "WHERE unreported = 1", &[])
    }

    fn mark_reported(&self, id: &str) -> Result<(), StoreError> {
        self.write_blocking(WriteOp::MarkReported(id.to_string()))
    }

    fn dlq_list(&self) -> Result<Vec<DlqEntry>, StoreError> {
        let conn = self.lock();
        let mut stmt = conn.prepare(
            "SELECT delegation_id, at, request_json, errors_json, partial_artifacts_json,
                    chain_json, task_id, agent_url, resubmitted_as
             FROM dlq ORDER BY rowid",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, Option<String>>(6)?,
                    r.get::<_, Option<String>>(7)?,
                    r.get::<_, Option<String>>(8)?,
                ))
            })?
            .collect::<Result<Vec<_>, _>>()?;
        rows.into_iter()
            .map(
                |(id, at, req, errs, arts, chain, task_id, agent_url, resub)| {
                    Ok(DlqEntry {
                        request: parse_json(&id, "dlq.request_json", &req)?,
                        errors: parse_json(&id, "dlq.errors_json", &errs)?,
                        partial_artifacts: parse_json(&id, "dlq.partial_artifacts_json", &arts)?,
                        chain: parse_json(&id, "dlq.chain_json", &chain)?,
                        delegation_id: id,
                        at,
                        task_id,
                        agent_url,
                        resubmitted_as: resub,
                    })
                },
            )
            .collect()
    }

    fn dlq_mark_resubmitted(&self, id: &str, new_id: &str) -> Result<(), StoreError> {
        self.write_blocking(WriteOp::DlqMarkResubmitted {
            id: id.to_string(),
            new_id: new_id.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::DelegationRequest;
    use crate::store::now_text;

    pub(crate) fn sample(id: &str) -> DelegationRecord {
        let req = DelegationRequest::new(id, "skill", "text");
        DelegationRecord {
            id: id.to_string(),
            parent_id: None,
            skill: req.capability.clone(),
            request: req,
            agent_url: Some("http://a/.well-known/agent-card.json".into()),
            rpc_url: None,
            protocol_version: Some("1.0".into()),
            message_ids: [("create".to_string(), "m1".to_string())].into(),
            task_id: None,
            context_id: None,
            state: DelegationState::Sending,
            reason: None,
            budget_usd: 1.0,
            budget_share: 0.9,
            spend_usd: 0.0,
            deadline: now_text(),
            depth: 0,
            chain: vec![],
            refine_of: None,
            reference_task_ids: vec![],
            streaming: false,
            push_token_sha256: vec!["ab".repeat(32)],
            attempts: 0,
            last_error: None,
            error_code: None,
            final_message: None,
            priority: "normal".into(),
            created_at: now_text(),
            updated_at: now_text(),
            terminal_at: None,
            dlq: false,
            input_rounds: vec![],
            artifacts: vec![],
            errors: vec![],
        }
    }

    #[test]
    fn round_trip_and_open_filter() {
        let dir = tempfile::tempdir().unwrap();
        let s = SqliteStore::open_dir(dir.path()).unwrap();
        let mut a = sample("a");
        s.insert(&a).unwrap();
        assert!(matches!(s.insert(&a), Err(StoreError::Duplicate(_))));
        a.state = DelegationState::Completed;
        a.task_id = Some("t1".into());
        a.input_rounds.push(InputRound {
            round: 1,
            kind: EscalationKind::Input,
            question: "which?".into(),
            question_message_id: None,
            answer: Some("x".into()),
            source: Some("inputs.k".into()),
            answer_message_id: Some("m2".into()),
            asked_at: Some(now_text()),
            answered_at: None,
            sent_at: None,
        });
        a.artifacts.push(ArtifactRecord {
            artifact_id: "art".into(),
            name: None,
            media_type: "text/plain".into(),
            bytes: 3,
            sha256: "00".into(),
            path: "/p".into(),
            agent_url: "u".into(),
            skill: "skill".into(),
            task_id: "t1".into(),
            committed: true,
        });
        a.push_error(RecordError {
            at: now_text(),
            op: "SendMessage".into(),
            code: Some(-32001),
            http_status: None,
            transient: false,
            message: "nope".into(),
        });
        s.save(&a).unwrap();
        s.insert(&sample("b")).unwrap();
        let got = s.get("a").unwrap().unwrap();
        assert_eq!(got, a);
        let open = s.open_delegations().unwrap();
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].id, "b");
        assert_eq!(s.list().unwrap().len(), 2);
        // No secret is kept: push tokens as hashes only.
        let snap = serde_json::to_value(got.to_snapshot()).unwrap();
        assert!(snap.get("scoped_credential").is_none());
        assert!(snap.get("push_token").is_none());
        assert_eq!(snap["push_token_sha256"][0], "ab".repeat(32));
        assert_eq!(snap["input_rounds"][0]["kind"], "input");
        assert_eq!(snap["state"], "COMPLETED");
    }

    #[test]
    fn reopen_keeps_records_and_schema_version() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = SqliteStore::open_dir(dir.path()).unwrap();
            s.insert(&sample("a")).unwrap();
        }
        let s = SqliteStore::open_dir(dir.path()).unwrap();
        assert!(s.get("a").unwrap().is_some());
        let settings = |conn: &Connection| -> (i64, String, i64) {
            (
                conn.query_row("PRAGMA user_version", [], |r| r.get(0))
                    .unwrap(),
                conn.query_row("PRAGMA journal_mode", [], |r| r.get(0))
                    .unwrap(),
                conn.query_row("PRAGMA synchronous", [], |r| r.get(0))
                    .unwrap(),
            )
        };
        let want = (SqliteStore::schema_version(), "wal".to_string(), 2);
        assert_eq!(settings(&s.lock()), want, "reader: WAL, synchronous=FULL");
        let (tx, rx) = mpsc::sync_channel(1);
        on_writer(&s, move |c| {
            let _ = tx.send(settings(c));
        });
        assert_eq!(rx.recv().unwrap(), want, "writer: WAL, synchronous=FULL");
    }

    /// Run `f` on the writer thread's connection, between batches, and wait for it.
    fn on_writer(s: &SqliteStore, f: impl FnOnce(&Connection) + Send + 'static) {
        let (tx, rx) = mpsc::sync_channel(1);
        s.enqueue(Work::Inspect(Box::new(f)), WriteReply::Blocking(tx))
            .unwrap();
        rx.recv().unwrap().unwrap();
    }

    /// Hold the writer thread until the returned sender is dropped (bounded: 30 s).
    fn hold_writer(s: &SqliteStore) -> mpsc::Sender<()> {
        let (release, held) = mpsc::channel::<()>();
        let (tx, _rx) = mpsc::sync_channel(1);
        s.enqueue(
            Work::Inspect(Box::new(move |_| {
                let _ = held.recv_timeout(std::time::Duration::from_secs(30));
            })),
            WriteReply::Blocking(tx),
        )
        .unwrap();
        release
    }

    #[test]
    fn writes_queued_together_commit_in_one_batch_and_fail_alone() {
        let dir = tempfile::tempdir().unwrap();
        let s = SqliteStore::open_dir(dir.path()).unwrap();
        s.insert(&sample("a")).unwrap();
        let release = hold_writer(&s);
        let before = s.group_commit_stats();
        let mut pending = Vec::new();
        for i in 0..20 {
            pending.push(
                s.submit(WriteOp::Insert(Box::new(sample(&format!("b{i}")))))
                    .unwrap(),
            );
        }
        let dup = s.submit(WriteOp::Insert(Box::new(sample("a")))).unwrap();
        let unknown = s.submit(WriteOp::MarkReported("zz".into())).unwrap();
        let mut done = sample("c");
        done.state = DelegationState::Completed;
        let last = s.submit(WriteOp::Insert(Box::new(done))).unwrap();
        drop(release);
        for p in pending {
            p.blocking_recv().unwrap().unwrap();
        }
        assert!(matches!(
            dup.blocking_recv().unwrap(),
            Err(StoreError::Duplicate(_))
        ));
        assert!(matches!(
            unknown.blocking_recv().unwrap(),
            Err(StoreError::NotFound(_))
        ));
        last.blocking_recv().unwrap().unwrap();
        let after = s.group_commit_stats();
        assert_eq!(after.batches - before.batches, 1, "one transaction for all");
        assert_eq!(after.writes - before.writes, 23);
        // The failed writes changed nothing; the others are all there, and durable: a reopen
        // (a fresh writer and reader) sees them.
        drop(s);
        let s = SqliteStore::open_dir(dir.path()).unwrap();
        assert_eq!(s.list().unwrap().len(), 22);
        assert_eq!(
            s.get("a").unwrap().unwrap().state,
            DelegationState::Sending,
            "the duplicate insert changed nothing"
        );
        assert_eq!(s.unreported().unwrap().len(), 1);
    }

    #[test]
    fn a_write_is_answered_only_after_its_batch_commits() {
        let dir = tempfile::tempdir().unwrap();
        let s = SqliteStore::open_dir(dir.path()).unwrap();
        let release = hold_writer(&s);
        let mut pending = s.submit(WriteOp::Insert(Box::new(sample("a")))).unwrap();
        // The writer is held: the write is queued, not committed, and not answered.
        assert!(matches!(
            pending.try_recv(),
            Err(tokio::sync::oneshot::error::TryRecvError::Empty)
        ));
        assert!(
            s.get("a").unwrap().is_none(),
            "not visible before its commit"
        );
        drop(release);
        pending.blocking_recv().unwrap().unwrap();
        assert!(s.get("a").unwrap().is_some(), "visible once answered");
    }

    #[test]
    fn many_threads_writing_at_once_share_commits() {
        let dir = tempfile::tempdir().unwrap();
        let s = std::sync::Arc::new(SqliteStore::open_dir(dir.path()).unwrap());
        let release = hold_writer(&s);
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let s = s.clone();
                std::thread::spawn(move || s.insert(&sample(&format!("t{i}"))))
            })
            .collect();
        // Release once every thread has queued its write (bounded wait on the counter).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while s.group_commit_stats().queued < 17 && std::time::Instant::now() < deadline {
            std::thread::yield_now();
        }
        drop(release);
        for t in threads {
            t.join().unwrap().unwrap();
        }
        let st = s.group_commit_stats();
        assert_eq!(st.writes, 16);
        assert_eq!(st.batches, 1, "16 blocked writers, one commit");
        assert_eq!(s.list().unwrap().len(), 16);
    }

    #[test]
    fn too_new_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        {
            let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
            conn.pragma_update(None, "user_version", 99).unwrap();
        }
        assert!(matches!(
            SqliteStore::open_dir(dir.path()),
            Err(StoreError::TooNew { found: 99, .. })
        ));
    }

    #[test]
    fn final_writes_are_unreported_until_marked() {
        let dir = tempfile::tempdir().unwrap();
        let s = SqliteStore::open_dir(dir.path()).unwrap();
        let mut a = sample("a");
        s.insert(&a).unwrap();
        assert!(
            s.unreported().unwrap().is_empty(),
            "an open record owes nothing"
        );
        let mut r = sample("r");
        r.state = DelegationState::Refused;
        s.insert(&r).unwrap();
        a.state = DelegationState::Completed;
        s.save(&a).unwrap();
        let ids = |v: Vec<DelegationRecord>| v.into_iter().map(|r| r.id).collect::<Vec<_>>();
        assert_eq!(ids(s.unreported().unwrap()), vec!["a", "r"]);
        s.mark_reported("a").unwrap();
        assert_eq!(ids(s.unreported().unwrap()), vec!["r"]);
        // The mark survives a reopen; an unknown id is an error.
        drop(s);
        let s = SqliteStore::open_dir(dir.path()).unwrap();
        assert_eq!(ids(s.unreported().unwrap()), vec!["r"]);
        assert!(matches!(
            s.mark_reported("zz"),
            Err(StoreError::NotFound(_))
        ));
        // Writing the final record again owes its `done` again.
        s.save(&a).unwrap();
        assert_eq!(ids(s.unreported().unwrap()), vec!["a", "r"]);
    }

    #[test]
    fn a_version_1_store_migrates_with_its_records_reported() {
        let dir = tempfile::tempdir().unwrap();
        {
            let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
            conn.execute_batch(MIGRATIONS[0]).unwrap();
            conn.pragma_update(None, "user_version", 1).unwrap();
            let req = serde_json::to_string(&DelegationRequest::new("old", "s", "t")).unwrap();
            conn.execute(
                "INSERT INTO delegations (id, request_json, skill, instructions, inputs_json,
                    message_ids_json, state, budget_usd, budget_share, spend_usd, deadline, depth,
                    chain_json, reference_task_ids_json, streaming, attempts, priority,
                    created_at, updated_at)
                 VALUES ('old', ?1, 's', 't', '{}', '{}', 'COMPLETED', 1.0, 0.9, 0.0,
                    '2030-01-01T00:00:00Z', 0, '[]', '[]', 0, 1, 'normal',
                    '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z')",
                params![req],
            )
            .unwrap();
            for a in ["b", "a"] {
                conn.execute(
                    "INSERT INTO artifacts (delegation_id, artifact_id, media_type, bytes, sha256,
                        path, agent_url, skill, task_id, committed)
                     VALUES ('old', ?1, 'text/plain', 1, '00', '/p', 'u', 's', 't', 1)",
                    params![a],
                )
                .unwrap();
            }
        }
        let s = SqliteStore::open_dir(dir.path()).unwrap();
        assert_eq!(SqliteStore::schema_version(), 4);
        let old = s.get("old").unwrap().unwrap();
        assert_eq!(old.state, DelegationState::Completed);
        assert_eq!(
            old.artifacts
                .iter()
                .map(|a| a.artifact_id.as_str())
                .collect::<Vec<_>>(),
            vec!["b", "a"],
            "artifacts kept, in order"
        );
        assert!(s.unreported().unwrap().is_empty());
    }

    /// Every byte of every file in `dir` (the database, its WAL and shared-memory index).
    fn bytes_under(dir: &Path) -> Vec<u8> {
        let mut all = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            all.extend(std::fs::read(e.unwrap().path()).unwrap());
        }
        all
    }

    fn holds(hay: &[u8], needle: &str) -> bool {
        hay.windows(needle.len()).any(|w| w == needle.as_bytes())
    }

    #[test]
    fn a_version_3_store_keeps_push_tokens_as_hashes_and_forgets_credentials() {
        let dir = tempfile::tempdir().unwrap();
        let (token, cred) = ("push-token-0123456789abcdef", "Bearer scoped-secret-42");
        {
            let conn = Connection::open(dir.path().join(DB_FILE)).unwrap();
            conn.pragma_update(None, "journal_mode", "WAL").unwrap();
            for m in &MIGRATIONS[..3] {
                conn.execute_batch(m).unwrap();
            }
            conn.pragma_update(None, "user_version", 3).unwrap();
            let req = serde_json::to_string(&DelegationRequest::new("old", "s", "t")).unwrap();
            conn.execute(
                "INSERT INTO delegations (id, request_json, skill, instructions, inputs_json,
                    message_ids_json, state, budget_usd, budget_share, spend_usd, deadline, depth,
                    chain_json, reference_task_ids_json, streaming, push_token, scoped_credential,
                    attempts, priority, created_at, updated_at)
                 VALUES ('old', ?1, 's', 't', '{}', '{}', 'WORKING', 1.0, 0.9, 0.0,
                    '2030-01-01T00:00:00Z', 0, '[]', '[]', 0, ?2, ?3, 1, 'normal',
                    '2030-01-01T00:00:00Z', '2030-01-01T00:00:00Z')",
                params![req, token, cred],
            )
            .unwrap();
            assert!(
                holds(&bytes_under(dir.path()), token),
                "the old store held it"
            );
        }
        let s = SqliteStore::open_dir(dir.path()).unwrap();
        let old = s.get("old").unwrap().unwrap();
        assert_eq!(
            old.push_token_sha256,
            vec![crate::webhook::token_sha256(token)]
        );
        s.insert(&sample("new")).unwrap();
        let all = bytes_under(dir.path());
        for secret in [token, cred, "scoped-secret-42"] {
            assert!(!holds(&all, secret), "{secret} is still in the store files");
        }
    }

    #[test]
    fn artifacts_of_different_tasks_may_share_an_id() {
        let dir = tempfile::tempdir().unwrap();
        let s = SqliteStore::open_dir(dir.path()).unwrap();
        let mut p = sample("parent");
        s.insert(&p).unwrap();
        p.state = DelegationState::Completed;
        for task in ["t-child-1", "t-child-2"] {
            p.artifacts.push(ArtifactRecord {
                artifact_id: "a-1".into(),
                name: None,
                media_type: "text/plain".into(),
                bytes: 1,
                sha256: "00".into(),
                path: format!("/p/{task}"),
                agent_url: "u".into(),
                skill: "skill".into(),
                task_id: task.into(),
                committed: true,
            });
        }
        s.save(&p).unwrap();
        assert_eq!(s.get("parent").unwrap().unwrap(), p);
    }

    #[test]
    fn dlq_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let s = SqliteStore::open_dir(dir.path()).unwrap();
        let mut a = sample("a");
        s.insert(&a).unwrap();
        a.state = DelegationState::DeadLettered;
        a.dlq = true;
        let e = DlqEntry {
            delegation_id: "a".into(),
            at: now_text(),
            request: a.request.clone(),
            errors: vec![],
            partial_artifacts: vec![],
            chain: vec!["http://me".into()],
            task_id: None,
            agent_url: a.agent_url.clone(),
            resubmitted_as: None,
        };
        s.dead_letter(&a, &e).unwrap();
        assert_eq!(s.dlq_list().unwrap(), vec![e]);
        assert_eq!(
            s.unreported().unwrap().len(),
            1,
            "a dead letter owes its done"
        );
        s.dlq_mark_resubmitted("a", "a.r1").unwrap();
        assert_eq!(
            s.dlq_list().unwrap()[0].resubmitted_as.as_deref(),
            Some("a.r1")
        );
        assert!(s.dlq_mark_resubmitted("zz", "x").is_err());
        assert!(s.get("a").unwrap().unwrap().dlq);
    }
}
