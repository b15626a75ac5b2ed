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

mod rows;
mod schema;
#[cfg(test)]
mod tests;
mod writer;

use super::{DelegationRecord, DelegationState, DelegationStore, DlqEntry, StoreError};
use super::{WriteOp, WriteReply};
use rows::{parse_json, query_records};
use rusqlite::Connection;
use schema::{MIGRATIONS, migrate, open_connection};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, mpsc};
use writer::{GroupStats, Job, Work, writer_loop};

/// The SQLite store: one **writer thread** that owns the writing connection and commits in
/// groups, and one reading connection behind a mutex (WAL lets it read while the writer writes).
///
/// Group commit: every write ([`WriteOp`]) is queued to the writer; the writer takes whatever is
/// queued (up to `MAX_BATCH`, 1,024), applies each write in its own savepoint inside one
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
        // Every statement the writer runs stays prepared (about a dozen).
        writer.set_prepared_statement_cache_capacity(32);
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
