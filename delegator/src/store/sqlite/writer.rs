//! The writer thread of the SQLite store: group commit (whatever is queued, each write in its
//! own savepoint inside one transaction, one commit, then every waiter answered; under load the
//! writer waits a little for more writes first, see [`gather_until`]).

use super::rows::{json, write_record};
use crate::store::{StoreError, WriteOp, WriteReply};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The most writes one group commit takes from the queue (the rest wait for the next batch).
pub(super) const MAX_BATCH: usize = 1024;

/// A write arriving within this long of the last commit finds the writer under load.
const BUSY_GAP: Duration = Duration::from_millis(2);

/// Under load, how long the writer waits for more writes before it commits a batch.
const GATHER: Duration = Duration::from_micros(300);

/// One queued write and where its result goes.
pub(super) struct Job {
    pub(super) op: Work,
    pub(super) reply: WriteReply,
}

/// What the writer thread does with a job.
pub(super) enum Work {
    Write(WriteOp),
    /// Test hook: run a closure on the writer's connection, between batches.
    #[cfg(test)]
    Inspect(Box<dyn FnOnce(&Connection) + Send>),
}

/// Counters of the writer thread.
#[derive(Debug, Default)]
pub(super) struct GroupStats {
    /// Writes queued so far.
    pub(super) queued: AtomicU64,
    /// Batches committed (one transaction, one fsync each).
    pub(super) batches: AtomicU64,
    /// Writes applied in those batches.
    pub(super) writes: AtomicU64,
}

/// The writer thread: take whatever is queued, apply it in one transaction, commit (one fsync),
/// answer every waiter; until the queue is closed.
pub(super) fn writer_loop(mut conn: Connection, rx: mpsc::Receiver<Job>, stats: &GroupStats) {
    // When the last batch was committed, and how many writes it held.
    let mut last_commit: Option<(Instant, usize)> = None;
    while let Ok(first) = rx.recv() {
        let gather_until = gather_until(last_commit, Instant::now());
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
                next = rx.try_recv().ok().or_else(|| {
                    let left = gather_until?.checked_duration_since(Instant::now())?;
                    rx.recv_timeout(left).ok()
                });
            }
        }
        let n = batch.len();
        commit_batch(&mut conn, batch, stats);
        last_commit = Some((Instant::now(), n));
    }
}

/// Until when the writer waits for more writes before committing the batch a write arriving
/// `now` starts: under load (the last batch, committed at `last_commit.0`, held more than one
/// write and the write came within [`BUSY_GAP`] of it) for [`GATHER`], so more writes share the
/// next fsync (in scale-1000, 963 commits of 5 writes on average became 469 of 11); otherwise
/// not at all, so a lone writer's writes are committed at once.
fn gather_until(last_commit: Option<(Instant, usize)>, now: Instant) -> Option<Instant> {
    last_commit
        .filter(|(t, n)| *n > 1 && now.saturating_duration_since(*t) < BUSY_GAP)
        .map(|_| now + GATHER)
}

/// Apply `batch` in one transaction, each write in its own savepoint, commit once, then answer.
fn commit_batch(conn: &mut Connection, batch: Vec<(WriteOp, WriteReply)>, stats: &GroupStats) {
    if batch.is_empty() {
        return;
    }
    let mut results: Vec<Result<(), StoreError>> = Vec::with_capacity(batch.len());
    let outcome = (|| -> Result<(), rusqlite::Error> {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        for (op, _) in &batch {
            // The savepoint's statements are prepared once per connection (cached), not parsed
            // again for every write of every batch.
            tx.prepare_cached("SAVEPOINT write")?.execute([])?;
            let r = apply(&tx, op);
            if r.is_err() {
                tx.prepare_cached("ROLLBACK TO write")?.execute([])?;
            }
            tx.prepare_cached("RELEASE write")?.execute([])?;
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
                .prepare_cached("SELECT 1 FROM delegations WHERE id = ?1")?
                .query_row(params![rec.id], |r| r.get(0))
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
            let n = conn
                .prepare_cached("UPDATE delegations SET unreported = 0 WHERE id = ?1")?
                .execute(params![id])?;
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

#[cfg(test)]
mod gather_tests {
    use super::*;

    #[test]
    fn a_write_right_after_a_commit_waits_for_company_and_a_lone_one_does_not() {
        let now = Instant::now() + Duration::from_secs(10);
        assert_eq!(gather_until(None, now), None, "the first write of all");
        let idle = now - BUSY_GAP - Duration::from_micros(1);
        assert_eq!(gather_until(Some((idle, 5)), now), None, "after a pause");
        let recent = now - Duration::from_micros(100);
        assert_eq!(gather_until(Some((recent, 5)), now), Some(now + GATHER));
        assert_eq!(
            gather_until(Some((recent, 1)), now),
            None,
            "one writer's writes, one after the other"
        );
    }
}
