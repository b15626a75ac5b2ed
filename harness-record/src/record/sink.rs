//! The recording's journal: entries in the mock network's format ([`Entry`] JSON lines), written
//! to disk as they happen (a long recording costs no memory), with one sequence number and one
//! request counter across every upstream, as the mock network numbers them across its agents.
//!
//! The last [`RecordOptions::keep_in_memory`](super::RecordOptions::keep_in_memory) entries are
//! also kept in memory for [`JournalSink::wait_for`] (tests wait on entries, never on time).

use a2a_mock_agents::{AgentName, Entry, Event};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

struct Inner {
    out: BufWriter<File>,
    next_seq: u64,
    recent: VecDeque<Entry>,
    written: u64,
    /// The first write error (later entries are still counted, not written).
    error: Option<String>,
}

/// The shared journal writer of one recording. Cheap to clone.
#[derive(Clone)]
pub struct JournalSink {
    inner: Arc<Mutex<Inner>>,
    notify: Arc<Notify>,
    start: Instant,
    next_req: Arc<AtomicU64>,
    keep: usize,
    path: PathBuf,
}

/// The journal file could not be created.
#[derive(Debug, thiserror::Error)]
#[error("cannot create the journal {path}: {source}")]
pub struct SinkError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

impl JournalSink {
    /// Create (truncate) `path`; keep the last `keep` entries in memory.
    pub fn create(path: &Path, keep: usize) -> Result<Self, SinkError> {
        let f = File::create(path).map_err(|source| SinkError {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(JournalSink {
            inner: Arc::new(Mutex::new(Inner {
                out: BufWriter::new(f),
                next_seq: 1,
                recent: VecDeque::new(),
                written: 0,
                error: None,
            })),
            notify: Arc::new(Notify::new()),
            start: Instant::now(),
            next_req: Arc::new(AtomicU64::new(1)),
            keep,
            path: path.to_path_buf(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every mutation is one append: a panic elsewhere cannot leave it inconsistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The next request number (shared by every upstream, as in a mock network).
    pub fn next_req(&self) -> u64 {
        self.next_req.fetch_add(1, Ordering::Relaxed)
    }

    /// Append one entry and flush it to the file (a killed recorder loses nothing already seen).
    pub fn record(&self, agent: &AgentName, event: Event) -> u64 {
        let at_us = self.start.elapsed().as_micros() as u64;
        let seq = {
            let mut g = self.lock();
            let seq = g.next_seq;
            g.next_seq += 1;
            let entry = Entry {
                seq,
                at_us,
                agent: agent.clone(),
                event,
            };
            if g.error.is_none() {
                let r = serde_json::to_writer(&mut g.out, &entry)
                    .map_err(std::io::Error::from)
                    .and_then(|()| g.out.write_all(b"\n"))
                    .and_then(|()| g.out.flush());
                if let Err(e) = r {
                    g.error = Some(e.to_string());
                }
            }
            g.written += 1;
            if self.keep > 0 {
                if g.recent.len() == self.keep {
                    g.recent.pop_front();
                }
                g.recent.push_back(entry);
            }
            seq
        };
        self.notify.notify_waiters();
        seq
    }

    /// Entries recorded so far.
    pub fn len(&self) -> u64 {
        self.lock().written
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The first error writing the file, if any.
    pub fn write_error(&self) -> Option<String> {
        self.lock().error.clone()
    }

    /// A copy of the entries kept in memory (the last `keep`).
    pub fn recent(&self) -> Vec<Entry> {
        self.lock().recent.iter().cloned().collect()
    }

    /// Wait until `cond` holds over the entries kept in memory, or `timeout` passes; returns
    /// whether it held.
    pub async fn wait_for(
        &self,
        timeout: Duration,
        mut cond: impl FnMut(&[Entry]) -> bool,
    ) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let held = {
                let mut g = self.lock();
                cond(g.recent.make_contiguous())
            };
            if held {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                let mut g = self.lock();
                return cond(g.recent.make_contiguous());
            }
        }
    }
}
