//! An artifact's file, written off the async workers: the sink the reassembler hands bytes to,
//! and its writer, which hashes and writes them in order on a blocking thread and syncs them
//! early and at commit.

use bytes::Bytes;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

/// An artifact file created (or truncated) on first use, on the blocking thread that first
/// writes or syncs it: nothing touches the file system on an async worker, and a small artifact
/// is created, written and synced in one trip.
pub(super) struct LazyFile {
    path: PathBuf,
    file: Option<File>,
}

impl LazyFile {
    /// `path`, created when first needed.
    pub(super) fn new(path: PathBuf) -> Self {
        LazyFile { path, file: None }
    }

    /// The file, opened now if it was not (blocking; its directory is created if missing).
    fn get(&mut self) -> std::io::Result<&mut File> {
        if self.file.is_none() {
            let f = match File::create(&self.path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    if let Some(dir) = self.path.parent() {
                        std::fs::create_dir_all(dir)?;
                    }
                    File::create(&self.path)?
                }
                r => r?,
            };
            self.file = Some(f);
        }
        self.file
            .as_mut()
            .ok_or_else(|| std::io::Error::other("file not open"))
    }

    /// Write `blocks` in order, feeding each to `h` first: the bytes written.
    fn write(&mut self, h: &mut Sha256, blocks: &[Block]) -> (u64, std::io::Result<()>) {
        let mut written = 0u64;
        for b in blocks {
            if b.bytes().is_empty() {
                continue;
            }
            h.update(b.bytes());
            if let Err(e) = self.get().and_then(|f| f.write_all(b.bytes())) {
                return (written, Err(e));
            }
            written += b.bytes().len() as u64;
        }
        (written, Ok(()))
    }
}

/// What the writer writes: the write buffer, or a chunk's shared bytes as received.
enum Block {
    Buf(Vec<u8>),
    Shared(Bytes),
}

impl Block {
    fn bytes(&self) -> &[u8] {
        match self {
            Block::Buf(v) => v,
            Block::Shared(b) => b,
        }
    }
}

/// Blocks a sink's writer may have queued and not yet written: with the one it is writing, the
/// async side runs up to this many blocks ahead of the disk and the hash before it waits.
const WRITER_QUEUE: usize = 2;

/// Bytes a writer writes between early syncs: past this much unsynced data it starts an
/// `fdatasync` on a second thread while it goes on writing, so the disk writes back during the
/// stream instead of all at once in the commit's fsync (which the delegation would wait for).
const EARLY_SYNC_BYTES: u64 = 4 * 1024 * 1024;

/// What a sink sends its writer.
enum ToWriter {
    /// Hash and write these bytes (after everything sent before).
    Block(Block),
    /// Everything sent before is written (and with `fsync`, synced): reply with the hash state
    /// and the first error, if any.
    Drain {
        fsync: bool,
        reply: tokio::sync::oneshot::Sender<(Sha256, std::io::Result<()>)>,
    },
}

/// An artifact file written off the async workers.
///
/// A chunk at least as large as the write buffer (`buffer_bytes`) is written from where it was
/// received (a slice of the SSE payload, see [`a2a_protocol::artifact_chunk`]): not copied here.
/// Smaller chunks are copied once, into `buf`, so that they leave in large writes. A full buffer
/// or a large chunk goes to the file's [`Writer`], started with the first block: it feeds each
/// block to the artifact's SHA-256 and writes it with one `write(2)`, in order, on a blocking
/// thread ([`tokio::task::spawn_blocking`]; the blocks queued meanwhile go along in one trip).
/// The queue to it holds [`WRITER_QUEUE`] blocks, so decoding goes on while the writer hashes and
/// writes, and memory per open artifact is bounded by the buffer plus `WRITER_QUEUE + 1` blocks.
/// Every [`EARLY_SYNC_BYTES`] the writer starts an `fdatasync` on another blocking thread (at
/// most one at a time) and keeps writing, so that write-back overlaps the stream. [`Sink::drain`] waits until everything is written (and synced, for a commit); rename
/// and directory fsync are done by [`Reassembler::commit`](super::Reassembler::commit) after it.
pub(super) struct Sink {
    /// The file (opened on first use), until the writer takes it.
    file: Option<LazyFile>,
    /// SHA-256 of the bytes written so far, until the writer takes it.
    hasher: Option<Sha256>,
    writer: Option<tokio::sync::mpsc::Sender<ToWriter>>,
    buf: Vec<u8>,
    /// A buffer filled up before: the next one is reserved whole at once. Until then buffers
    /// start small and grow, so that a small artifact (most of them, thousands open at once)
    /// holds about its own size, not a whole write buffer.
    filled: bool,
    /// The first error of a drain done without a writer: every later drain reports it (the
    /// bytes it was writing are gone).
    failed: Option<std::io::Error>,
}

/// The smallest buffer reserved for a sink's first bytes.
const FIRST_BUFFER_BYTES: usize = 4096;

/// The state of a sink's writer: an async task that takes blocks from the sink's queue and
/// hashes and writes them on a blocking thread, holding that thread only while it works (an
/// idle writer holds none, however many artifacts are open).
struct Writer {
    /// The file and the SHA-256 of what was written to it (away while a write runs).
    open: Option<(LazyFile, Sha256)>,
    /// The first error: later blocks are dropped, every drain reports it.
    failed: Option<std::io::Error>,
    /// Bytes written since the last early sync started.
    unsynced: u64,
    /// The early sync in progress.
    syncing: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

fn copy_err(e: &std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), e.to_string())
}

impl Writer {
    /// Keep the first error of a finished early sync: the kernel reports a write-back error
    /// once per open file, so the commit's fsync might not see it again.
    fn keep(&mut self, r: Result<std::io::Result<()>, tokio::task::JoinError>) {
        let r = r.unwrap_or_else(|e| Err(std::io::Error::other(e)));
        if let (Err(e), None) = (r, &self.failed) {
            self.failed = Some(e);
        }
    }

    /// Hash and write `blocks` in order on a blocking thread; start an early sync when due.
    async fn write(&mut self, blocks: Vec<Block>) {
        if self.failed.is_some() {
            return;
        }
        let Some((mut file, mut h)) = self.open.take() else {
            return;
        };
        let job = tokio::task::spawn_blocking(move || {
            let (written, r) = file.write(&mut h, &blocks);
            (file, h, written, r)
        })
        .await;
        match job {
            Ok((file, h, written, r)) => {
                self.open = Some((file, h));
                self.unsynced += written;
                if let Err(e) = r {
                    self.failed = Some(e);
                }
            }
            Err(e) => self.failed = Some(std::io::Error::other(e)),
        }
        if self.failed.is_none()
            && self.unsynced >= EARLY_SYNC_BYTES
            && self.syncing.as_ref().is_none_or(|t| t.is_finished())
            && let Some((
                LazyFile {
                    file: Some(file), ..
                },
                _,
            )) = &self.open
            && let Ok(clone) = file.try_clone()
        {
            if let Some(t) = self.syncing.take() {
                let r = t.await;
                self.keep(r);
            }
            self.syncing = Some(tokio::task::spawn_blocking(move || clone.sync_data()));
            self.unsynced = 0;
        }
    }

    /// Everything sent before is written (and with `fsync`, synced): the hash state and the
    /// outcome.
    async fn drain(&mut self, fsync: bool) -> (Sha256, std::io::Result<()>) {
        if fsync && let Some(t) = self.syncing.take() {
            let r = t.await;
            self.keep(r);
        }
        let h = self
            .open
            .as_ref()
            .map(|(_, h)| h.clone())
            .unwrap_or_default();
        if let Some(e) = &self.failed {
            return (h, Err(copy_err(e)));
        }
        if !fsync {
            return (h, Ok(()));
        }
        let Some((file, hh)) = self.open.take() else {
            return (h, Err(std::io::Error::other("file not open")));
        };
        match tokio::task::spawn_blocking(move || {
            let mut file = file;
            let r = file.get().and_then(|f| f.sync_all());
            (file, hh, r)
        })
        .await
        {
            Ok((file, hh, r)) => {
                self.open = Some((file, hh));
                if let Err(e) = &r {
                    self.failed = Some(copy_err(e));
                }
                (h, r)
            }
            Err(e) => {
                self.failed = Some(std::io::Error::other(e));
                (h, Err(std::io::Error::other("fsync task failed")))
            }
        }
    }
}

impl Sink {
    /// A sink writing to `file`, whose bytes so far hash to `hasher` (nothing is opened until
    /// bytes leave the buffer or the sink is drained).
    pub(super) fn new(file: LazyFile, hasher: Sha256) -> Self {
        Sink {
            file: Some(file),
            hasher: Some(hasher),
            writer: None,
            buf: Vec::new(),
            filled: false,
            failed: None,
        }
    }

    /// The writer's queue, starting the writer on first use.
    fn writer(&mut self) -> std::io::Result<tokio::sync::mpsc::Sender<ToWriter>> {
        if let Some(tx) = &self.writer {
            return Ok(tx.clone());
        }
        let (Some(file), Some(h)) = (self.file.take(), self.hasher.take()) else {
            return Err(std::io::Error::other("file not open"));
        };
        let (tx, mut rx) = tokio::sync::mpsc::channel::<ToWriter>(WRITER_QUEUE);
        let mut w = Writer {
            open: Some((file, h)),
            failed: None,
            unsynced: 0,
            syncing: None,
        };
        tokio::spawn(async move {
            while let Some(msg) = rx.recv().await {
                match msg {
                    ToWriter::Block(first) => {
                        // What else is queued goes along: one trip to a blocking thread.
                        let mut blocks = vec![first];
                        let mut then = None;
                        while let Ok(m) = rx.try_recv() {
                            match m {
                                ToWriter::Block(b) => blocks.push(b),
                                drain @ ToWriter::Drain { .. } => {
                                    then = Some(drain);
                                    break;
                                }
                            }
                        }
                        w.write(blocks).await;
                        if let Some(ToWriter::Drain { fsync, reply }) = then {
                            let _ = reply.send(w.drain(fsync).await);
                        }
                    }
                    ToWriter::Drain { fsync, reply } => {
                        let _ = reply.send(w.drain(fsync).await);
                    }
                }
            }
            if let Some(t) = w.syncing.take() {
                let _ = t.await;
            }
        });
        self.writer = Some(tx.clone());
        Ok(tx)
    }

    /// Queue `block` for the writer (waiting while its queue is full).
    async fn hand(&mut self, block: Block) -> std::io::Result<()> {
        let tx = self.writer()?;
        tx.send(ToWriter::Block(block))
            .await
            .map_err(|_| std::io::Error::other("artifact writer stopped"))
    }

    /// Append `bytes`, handing the buffer to the writer first when they would overflow it.
    pub(super) async fn write(&mut self, bytes: &[u8], cap: usize) -> std::io::Result<()> {
        if !self.buf.is_empty() && self.buf.len() + bytes.len() > cap {
            let full = std::mem::take(&mut self.buf);
            self.filled = true;
            self.hand(Block::Buf(full)).await?;
        }
        if self.buf.capacity() == 0 {
            let first = if self.filled {
                cap
            } else {
                (bytes.len() * 4).clamp(FIRST_BUFFER_BYTES, cap.max(FIRST_BUFFER_BYTES))
            };
            self.buf.reserve_exact(first.max(bytes.len()));
        }
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    /// Append shared bytes: a chunk at least as large as the buffer is not copied at all but
    /// handed to the writer as it is (after what is buffered before it); a smaller one is
    /// copied into the buffer, so small chunks still leave in large writes.
    pub(super) async fn write_shared(&mut self, bytes: Bytes, cap: usize) -> std::io::Result<()> {
        if bytes.len() < cap {
            return self.write(&bytes, cap).await;
        }
        if !self.buf.is_empty() {
            let full = std::mem::take(&mut self.buf);
            self.hand(Block::Buf(full)).await?;
        }
        self.hand(Block::Shared(bytes)).await
    }

    /// What was handed to the writer is written (a sink about to be replaced: what is still
    /// buffered is dropped, and a sink that never started its writer has nothing on disk to
    /// wait for).
    pub(super) async fn finish_writes(&mut self) {
        if self.writer.is_some() {
            let _ = self.drain(false).await;
        }
    }

    /// Every byte written and hashed (and with `fsync`, synced to disk); the file, once opened,
    /// stays open.
    /// Returns the SHA-256 state of everything written. A sink whose writer never started (a
    /// small artifact: everything still in the buffer) is opened, written and synced in one
    /// trip to a blocking thread.
    pub(super) async fn drain(&mut self, fsync: bool) -> std::io::Result<Sha256> {
        if self.writer.is_none() {
            return self.drain_here(fsync).await;
        }
        if !self.buf.is_empty() {
            let full = std::mem::take(&mut self.buf);
            self.hand(Block::Buf(full)).await?;
        }
        let tx = self.writer()?;
        let (reply, answer) = tokio::sync::oneshot::channel();
        tx.send(ToWriter::Drain { fsync, reply })
            .await
            .map_err(|_| std::io::Error::other("artifact writer stopped"))?;
        let (h, r) = answer
            .await
            .map_err(|_| std::io::Error::other("artifact writer stopped"))?;
        r.map(|()| h)
    }

    /// [`Sink::drain`] without a writer: the buffer written and the file synced on one blocking
    /// thread, no task started.
    async fn drain_here(&mut self, fsync: bool) -> std::io::Result<Sha256> {
        if let Some(e) = &self.failed {
            return Err(copy_err(e));
        }
        let (Some(mut file), Some(mut h)) = (self.file.take(), self.hasher.take()) else {
            return Err(std::io::Error::other("file not open"));
        };
        if self.buf.is_empty() && !fsync {
            let out = h.clone();
            (self.file, self.hasher) = (Some(file), Some(h));
            return Ok(out);
        }
        let buf = Block::Buf(std::mem::take(&mut self.buf));
        let (file, h, r) = tokio::task::spawn_blocking(move || {
            let (_, mut r) = file.write(&mut h, std::slice::from_ref(&buf));
            if r.is_ok() && fsync {
                r = file.get().and_then(|f| f.sync_all());
            }
            (file, h, r)
        })
        .await
        .map_err(std::io::Error::other)?;
        let out = h.clone();
        (self.file, self.hasher) = (Some(file), Some(h));
        if let Err(e) = &r {
            self.failed = Some(copy_err(e));
        }
        r.map(|()| out)
    }
}
