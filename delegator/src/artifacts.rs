//! Artifact reassembly: chunks joined by `artifactId` honouring `append` and `lastChunk`, written to
//! files under the store directory as they arrive, with the sha256 and byte length computed
//! incrementally. Memory is bounded by the write buffer and the size of one chunk, never by the
//! size of an artifact.
//!
//! An artifact's bytes are the concatenation of its parts' bytes: UTF-8 of a `text` part, the
//! decoded bytes of a `raw` part, the JSON text of a `data` part (as
//! [`a2a_protocol::Part::inline_bytes`] defines them), and the body of a `url` part, fetched on its
//! own path with the size bound enforced while reading. Media types and `data` schemas are
//! checked per part; problems are kept per artifact (a replacement clears them) and reported by
//! [`Reassembler::problems`] before commit. Crossing `max_size_bytes` is fatal at once.
//!
//! Nothing is committed until [`Reassembler::commit`], which the engine calls only for a
//! COMPLETED task.

use crate::bugs::{Bug, Bugs};
use crate::request::ArtifactSpec;
use crate::request::ArtifactSpecExt;
use crate::store::ArtifactRecord;
use a2a_protocol::artifact_chunk::{ArtifactChunk, ChunkContent, ChunkPart};
use a2a_protocol::{Artifact, Part, PartContent};
use bytes::Bytes;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The most distinct artifacts accepted per delegation.
pub const MAX_ARTIFACTS: usize = 256;

/// A fatal artifact problem: the delegation fails visibly.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ArtifactError {
    /// The artifact crossed `max_size_bytes`; reading stopped there.
    #[error("artifact {artifact_id:?} exceeds max_size_bytes {limit} (rejected once crossed)")]
    TooLarge {
        /// The artifact.
        artifact_id: String,
        /// The bound.
        limit: u64,
    },
    /// `append: true` for an artifact id never seen (agent protocol error).
    #[error("agent protocol error: append to unknown artifact {0:?}")]
    UnknownAppend(String),
    /// A chunk arrived after the task's final state (agent protocol error).
    #[error("agent protocol error: artifact chunk for {0:?} after the task's final state")]
    AfterTerminal(String),
    /// Too many distinct artifacts.
    #[error("agent sent more than {MAX_ARTIFACTS} artifacts")]
    TooMany,
    /// An artifact without an id.
    #[error("agent protocol error: artifact without artifactId")]
    NoId,
    /// Fetching a `url` part failed.
    #[error("fetching {url}: {message}")]
    Fetch {
        /// The URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// Local I/O failed.
    #[error("artifact file {path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
}

/// A file-system-safe name for an id: its safe characters (at most 40) plus a hash suffix, so
/// hostile ids such as `../x` cannot escape the directory and distinct ids never collide.
pub fn safe_name(id: &str) -> String {
    let mut out: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .take(40)
        .collect();
    out = out.trim_start_matches('.').to_string();
    let digest = Sha256::digest(id.as_bytes());
    let hex = hex(&digest);
    if !out.is_empty() {
        out.push('-');
    }
    out.push_str(&hex[..12]);
    out
}

/// Lowercase hex (the `hex` crate), as `done.artifacts[].sha256` carries it.
pub fn hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// The media type of a part: its `mediaType`, else `text/plain` for text, `application/json` for
/// data and `application/octet-stream` for raw and url parts. Borrowed: nothing is allocated per
/// chunk.
pub fn part_media_type(p: &Part) -> &str {
    media_type_or_default(
        p.media_type.as_deref(),
        match p.content {
            PartContent::Text(_) => DefaultMedia::Text,
            PartContent::Data(_) => DefaultMedia::Data,
            PartContent::Raw(_) | PartContent::Url(_) => DefaultMedia::Bytes,
        },
    )
}

/// [`part_media_type`] of a part of an [`ArtifactChunk`].
pub fn chunk_part_media_type(p: &ChunkPart) -> &str {
    media_type_or_default(
        p.media_type.as_deref(),
        match p.content {
            ChunkContent::Text(_) => DefaultMedia::Text,
            ChunkContent::Data(_) => DefaultMedia::Data,
            ChunkContent::Raw(_) | ChunkContent::Url(_) => DefaultMedia::Bytes,
        },
    )
}

/// Which default media type a part's kind has.
enum DefaultMedia {
    Text,
    Data,
    Bytes,
}

fn media_type_or_default(given: Option<&str>, kind: DefaultMedia) -> &str {
    if let Some(m) = given.filter(|m| !m.trim().is_empty()) {
        return m;
    }
    match kind {
        DefaultMedia::Text => "text/plain",
        DefaultMedia::Data => "application/json",
        DefaultMedia::Bytes => "application/octet-stream",
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
/// and directory fsync are done by [`Reassembler::commit`] after it.
struct Sink {
    /// The file, until the writer takes it.
    file: Option<File>,
    /// SHA-256 of the bytes written so far, until the writer takes it.
    hasher: Option<Sha256>,
    writer: Option<tokio::sync::mpsc::Sender<ToWriter>>,
    buf: Vec<u8>,
}

/// The state of a sink's writer: an async task that takes blocks from the sink's queue and
/// hashes and writes them on a blocking thread, holding that thread only while it works (an
/// idle writer holds none, however many artifacts are open).
struct Writer {
    /// The file and the SHA-256 of what was written to it (away while a write runs).
    open: Option<(File, Sha256)>,
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
            let mut written = 0u64;
            for b in &blocks {
                h.update(b.bytes());
                if let Err(e) = file.write_all(b.bytes()) {
                    return (file, h, written, Err(e));
                }
                written += b.bytes().len() as u64;
            }
            (file, h, written, Ok(()))
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
            && let Some((file, _)) = &self.open
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
            let r = file.sync_all();
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
    /// A sink appending to `file`, whose bytes so far hash to `hasher`.
    fn new(file: File, hasher: Sha256) -> Self {
        Sink {
            file: Some(file),
            hasher: Some(hasher),
            writer: None,
            buf: Vec::new(),
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
    async fn write(&mut self, bytes: &[u8], cap: usize) -> std::io::Result<()> {
        if !self.buf.is_empty() && self.buf.len() + bytes.len() > cap {
            let full = std::mem::take(&mut self.buf);
            self.hand(Block::Buf(full)).await?;
        }
        if self.buf.capacity() == 0 {
            self.buf.reserve_exact(cap.max(bytes.len()));
        }
        self.buf.extend_from_slice(bytes);
        Ok(())
    }

    /// Append shared bytes: a chunk at least as large as the buffer is not copied at all but
    /// handed to the writer as it is (after what is buffered before it); a smaller one is
    /// copied into the buffer, so small chunks still leave in large writes.
    async fn write_shared(&mut self, bytes: Bytes, cap: usize) -> std::io::Result<()> {
        if bytes.len() < cap {
            return self.write(&bytes, cap).await;
        }
        if !self.buf.is_empty() {
            let full = std::mem::take(&mut self.buf);
            self.hand(Block::Buf(full)).await?;
        }
        self.hand(Block::Shared(bytes)).await
    }

    /// Every byte written and hashed (and with `fsync`, synced to disk); the file stays open.
    /// Returns the SHA-256 state of everything written.
    async fn drain(&mut self, fsync: bool) -> std::io::Result<Sha256> {
        if !self.buf.is_empty() {
            let full = std::mem::take(&mut self.buf);
            self.hand(Block::Buf(full)).await?;
        }
        if self.writer.is_none()
            && !fsync
            && let Some(h) = &self.hasher
        {
            return Ok(h.clone());
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
}

struct Assembling {
    id: String,
    name: Option<String>,
    media_type: Option<String>,
    path: PathBuf,
    file: Option<Sink>,
    /// SHA-256 of the bytes written (brought up to date by [`Sink::drain`]).
    hasher: Sha256,
    len: u64,
    last_chunk: bool,
    problems: Vec<String>,
    /// Media types already reported as not accepted (one problem per type, not per chunk).
    rejected_media: Vec<String>,
}

/// Reassembles the artifacts of one delegation.
pub struct Reassembler {
    dir: PathBuf,
    spec: ArtifactSpec,
    validator: Option<jsonschema::Validator>,
    buffer_bytes: usize,
    artifacts: Vec<Assembling>,
    /// `artifactId` -> index in `artifacts` (O(1) lookup per chunk).
    index: HashMap<String, usize>,
    terminal: bool,
    bugs: Bugs,
    /// Fetches url parts under the origin policy (see [`Reassembler::with_fetcher`]).
    fetcher: Option<crate::fetch::UrlFetcher>,
}

impl std::fmt::Debug for Reassembler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reassembler")
            .field("dir", &self.dir)
            .field("artifacts", &self.artifacts.len())
            .finish()
    }
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> ArtifactError {
    ArtifactError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

impl Reassembler {
    /// A reassembler writing into `dir` (created on first use) with a write buffer of
    /// `buffer_bytes` per open artifact (two while a write is in flight).
    pub fn new(dir: PathBuf, spec: &ArtifactSpec, buffer_bytes: usize, bugs: Bugs) -> Self {
        let validator = spec
            .schema
            .as_ref()
            .and_then(|s| jsonschema::validator_for(s).ok());
        Reassembler {
            dir,
            spec: spec.clone(),
            validator,
            buffer_bytes: buffer_bytes.max(1024),
            artifacts: Vec::new(),
            index: HashMap::new(),
            terminal: false,
            bugs,
            fetcher: None,
        }
    }

    /// Fetch url parts with this fetcher (its origin policy and redirect checks) instead of the
    /// client passed to [`Reassembler::apply_chunk`] (which gets the scheme and userinfo checks
    /// only, no origin list).
    pub fn with_fetcher(mut self, fetcher: crate::fetch::UrlFetcher) -> Self {
        self.fetcher = Some(fetcher);
        self
    }

    /// Mark the task as final: any later chunk is an agent protocol error.
    pub fn set_terminal(&mut self) {
        self.terminal = true;
    }

    /// Number of artifacts seen.
    pub fn len(&self) -> usize {
        self.artifacts.len()
    }

    /// True when no artifact was seen.
    pub fn is_empty(&self) -> bool {
        self.artifacts.is_empty()
    }

    fn index_of(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    async fn start(
        &mut self,
        artifact_id: &str,
        name: &Option<String>,
    ) -> Result<usize, ArtifactError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| io_err(&self.dir, e))?;
        let idx = match self.index_of(artifact_id) {
            Some(i) => i,
            None => {
                if self.artifacts.len() >= MAX_ARTIFACTS {
                    return Err(ArtifactError::TooMany);
                }
                let path = self.dir.join(format!("{}.part", safe_name(artifact_id)));
                self.artifacts.push(Assembling {
                    id: artifact_id.to_string(),
                    name: None,
                    media_type: None,
                    path,
                    file: None,
                    hasher: Sha256::new(),
                    len: 0,
                    last_chunk: false,
                    problems: Vec::new(),
                    rejected_media: Vec::new(),
                });
                self.index
                    .insert(artifact_id.to_string(), self.artifacts.len() - 1);
                self.artifacts.len() - 1
            }
        };
        let a = &mut self.artifacts[idx];
        if let Some(mut old) = a.file.take() {
            // Writes of the replaced content must land before the file is truncated.
            let _ = old.drain(false).await;
        }
        let f = File::create(&a.path).map_err(|e| io_err(&a.path, e))?;
        a.file = Some(Sink::new(f, Sha256::new()));
        a.hasher = Sha256::new();
        a.len = 0;
        a.last_chunk = false;
        a.problems.clear();
        a.rejected_media.clear();
        a.media_type = None;
        a.name = name.clone();
        Ok(idx)
    }

    /// Apply one `artifactUpdate` given as its artifact and flags ([`Reassembler::apply_shared`]
    /// of it; the bytes of its `text` and `raw` parts move to the writer without a copy).
    pub async fn apply_chunk(
        &mut self,
        http: &reqwest::Client,
        art: Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Result<(), ArtifactError> {
        self.apply_shared(http, ArtifactChunk::from_artifact(art, append, last_chunk))
            .await
    }

    /// Apply one `artifactUpdate`. Its `text` and `raw` bytes are shared with the payload they
    /// were decoded from and reach the writer without a copy.
    pub async fn apply_shared(
        &mut self,
        http: &reqwest::Client,
        chunk: ArtifactChunk,
    ) -> Result<(), ArtifactError> {
        let ArtifactChunk {
            artifact_id,
            name,
            parts,
            append,
            last_chunk,
            ..
        } = chunk;
        if artifact_id.is_empty() {
            return Err(ArtifactError::NoId);
        }
        if self.terminal {
            return Err(ArtifactError::AfterTerminal(artifact_id));
        }
        let append = append && !self.bugs.has(Bug::IgnoreAppend);
        let idx = if append {
            match self.index_of(&artifact_id) {
                Some(_) if last_chunk && self.bugs.has(Bug::KeepLastChunkOnly) => {
                    self.start(&artifact_id, &name).await?
                }
                Some(i) => {
                    if self.artifacts[i].file.is_none() {
                        // Re-open after a commit-less flush (cannot happen in one run).
                        let path = self.artifacts[i].path.clone();
                        let f = std::fs::OpenOptions::new()
                            .append(true)
                            .open(&path)
                            .map_err(|e| io_err(&path, e))?;
                        let h = self.artifacts[i].hasher.clone();
                        self.artifacts[i].file = Some(Sink::new(f, h));
                    }
                    i
                }
                None => return Err(ArtifactError::UnknownAppend(artifact_id)),
            }
        } else {
            self.start(&artifact_id, &name).await?
        };
        if name.is_some() {
            self.artifacts[idx].name = name;
        }
        for part in parts {
            self.write_part(http, idx, part).await?;
        }
        if last_chunk {
            self.artifacts[idx].last_chunk = true;
        }
        Ok(())
    }

    /// Apply a task snapshot's artifacts: each replaces what was assembled under its id.
    pub async fn apply_snapshot(
        &mut self,
        http: &reqwest::Client,
        artifacts: &[Artifact],
    ) -> Result<(), ArtifactError> {
        let was_terminal = self.terminal;
        self.terminal = false;
        let mut r = Ok(());
        for a in artifacts {
            r = self.apply_chunk(http, a.clone(), false, true).await;
            if r.is_err() {
                break;
            }
        }
        self.terminal = was_terminal;
        r
    }

    async fn write_part(
        &mut self,
        http: &reqwest::Client,
        idx: usize,
        part: ChunkPart,
    ) -> Result<(), ArtifactError> {
        let limit = self.spec.max_size_bytes;
        let media = chunk_part_media_type(&part);
        {
            let a = &mut self.artifacts[idx];
            if a.media_type.is_none() {
                a.media_type = Some(media.to_string());
            }
            if !self.spec.accepts(media) && !a.rejected_media.iter().any(|m| m == media) {
                a.rejected_media.push(media.to_string());
                a.problems.push(format!(
                    "artifact {:?}: media type {media:?} is not accepted (accepted: {:?})",
                    a.id, self.spec.mime_types
                ));
            }
            if let (ChunkContent::Data(v), Some(validator)) = (&part.content, &self.validator)
                && let Some(err) = validator.iter_errors(v).next()
            {
                a.problems.push(format!(
                    "artifact {:?}: data part violates the schema at {}: {err}",
                    a.id,
                    err.instance_path()
                ));
            }
        }
        match part.content {
            ChunkContent::Url(url) => self.fetch_into(http, idx, &url, limit).await,
            ChunkContent::Text(b) | ChunkContent::Raw(b) => self.write_shared(idx, b, limit).await,
            ChunkContent::Data(v) => {
                let bytes = serde_json::to_vec(&v).unwrap_or_default();
                self.write_shared(idx, Bytes::from(bytes), limit).await
            }
        }
    }

    /// [`Reassembler::write_bytes`] for shared bytes (no copy when large).
    async fn write_shared(
        &mut self,
        idx: usize,
        bytes: Bytes,
        limit: u64,
    ) -> Result<(), ArtifactError> {
        let cap = self.buffer_bytes;
        let a = &mut self.artifacts[idx];
        if a.len + bytes.len() as u64 > limit {
            return Err(ArtifactError::TooLarge {
                artifact_id: a.id.clone(),
                limit,
            });
        }
        let Some(sink) = a.file.as_mut() else {
            return Err(io_err(&a.path, "file not open"));
        };
        let n = bytes.len() as u64;
        sink.write_shared(bytes, cap)
            .await
            .map_err(|e| io_err(&a.path, e))?;
        a.len += n;
        Ok(())
    }

    async fn write_bytes(
        &mut self,
        idx: usize,
        bytes: &[u8],
        limit: u64,
    ) -> Result<(), ArtifactError> {
        let cap = self.buffer_bytes;
        let a = &mut self.artifacts[idx];
        if a.len + bytes.len() as u64 > limit {
            // Keep exactly the bytes up to the bound: nothing past it is buffered.
            return Err(ArtifactError::TooLarge {
                artifact_id: a.id.clone(),
                limit,
            });
        }
        let Some(sink) = a.file.as_mut() else {
            return Err(io_err(&a.path, "file not open"));
        };
        sink.write(bytes, cap)
            .await
            .map_err(|e| io_err(&a.path, e))?;
        a.len += bytes.len() as u64;
        Ok(())
    }

    async fn fetch_into(
        &mut self,
        http: &reqwest::Client,
        idx: usize,
        url: &str,
        limit: u64,
    ) -> Result<(), ArtifactError> {
        let fail = |message: String| ArtifactError::Fetch {
            url: url.to_string(),
            message,
        };
        if let Some(bytes) = crate::fetch::open_other_scheme(self.bugs, url)
            .await
            .map_err(fail)?
        {
            return self.write_bytes(idx, &bytes, limit).await;
        }
        // Checked before any connection (A2A §14.1.1); no credentials ever go to an artifact
        // host.
        let mut resp = match &self.fetcher {
            Some(f) => f.get(url).await.map_err(fail)?,
            None => {
                let parsed = crate::fetch::UrlPolicy::default()
                    .with_bugs(self.bugs)
                    .check(url)
                    .map_err(|e| fail(e.to_string()))?;
                http.get(parsed)
                    .send()
                    .await
                    .map_err(|e| fail(e.to_string()))?
            }
        };
        if !resp.status().is_success() {
            return Err(fail(format!("HTTP {}", resp.status().as_u16())));
        }
        if let Some(declared) = resp.content_length()
            && self.artifacts[idx].len + declared > limit
        {
            return Err(ArtifactError::TooLarge {
                artifact_id: self.artifacts[idx].id.clone(),
                limit,
            });
        }
        while let Some(chunk) = resp.chunk().await.map_err(|e| fail(e.to_string()))? {
            self.write_bytes(idx, &chunk, limit).await?;
        }
        Ok(())
    }

    /// Problems found so far (media types, schema), across all artifacts.
    pub fn problems(&self) -> Vec<String> {
        self.artifacts
            .iter()
            .flat_map(|a| a.problems.iter().cloned())
            .collect()
    }

    /// Write out every buffer and bring the hashes up to date; with `fsync`, sync every file
    /// (all off the async workers). The files are drained and synced concurrently, so that
    /// their fsyncs can share the file system's journal commits instead of waiting in turn; the
    /// caller gets control back only once every one is done.
    async fn flush_all(&mut self, fsync: bool) -> Result<(), ArtifactError> {
        let drains = self.artifacts.iter_mut().map(|a| async move {
            if let Some(sink) = a.file.as_mut() {
                a.hasher = sink.drain(fsync).await.map_err(|e| io_err(&a.path, e))?;
            }
            Ok::<(), ArtifactError>(())
        });
        futures::future::join_all(drains)
            .await
            .into_iter()
            .collect()
    }

    fn record(a: &Assembling, prov: &Provenance, path: &Path, committed: bool) -> ArtifactRecord {
        ArtifactRecord {
            artifact_id: a.id.clone(),
            name: a.name.clone(),
            media_type: a
                .media_type
                .clone()
                .unwrap_or_else(|| "application/octet-stream".into()),
            bytes: a.len,
            sha256: hex(&a.hasher.clone().finalize()),
            path: path.display().to_string(),
            agent_url: prov.agent_url.clone(),
            skill: prov.skill.clone(),
            task_id: prov.task_id.clone(),
            committed,
        }
    }

    /// What was assembled so far, uncommitted (for the dead-letter queue).
    pub async fn partials(&mut self, prov: &Provenance) -> Vec<ArtifactRecord> {
        let _ = self.flush_all(true).await;
        self.artifacts
            .iter()
            .map(|a| Self::record(a, prov, &a.path, false))
            .collect()
    }

    /// Commit: flush and sync every file, move it to its final name, return the records.
    pub async fn commit(
        &mut self,
        prov: &Provenance,
    ) -> Result<Vec<ArtifactRecord>, ArtifactError> {
        self.flush_all(true).await?;
        let mut out = Vec::new();
        for a in &mut self.artifacts {
            a.file = None;
            let final_path = a.path.with_extension("");
            std::fs::rename(&a.path, &final_path).map_err(|e| io_err(&a.path, e))?;
            let mut rec = Self::record(a, prov, &final_path, true);
            if self.bugs.has(Bug::MisreportSha256) {
                let mut h = a.hasher.clone();
                h.update(b"\n");
                rec.sha256 = hex(&h.finalize());
            }
            a.path = final_path;
            out.push(rec);
        }
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(out)
    }
}

/// Who produced the artifacts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// Agent card URL.
    pub agent_url: String,
    /// Skill.
    pub skill: String,
    /// Task.
    pub task_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(types: &[&str], max: u64) -> ArtifactSpec {
        ArtifactSpec {
            mime_types: types.iter().map(|s| s.to_string()).collect(),
            max_size_bytes: max,
            streaming_preferred: true,
            schema: None,
        }
    }

    fn art(id: &str, parts: Vec<Part>) -> Artifact {
        Artifact {
            artifact_id: id.into(),
            parts,
            ..Default::default()
        }
    }

    fn prov() -> Provenance {
        Provenance {
            agent_url: "http://a".into(),
            skill: "s".into(),
            task_id: "t".into(),
        }
    }

    fn sha(b: &[u8]) -> String {
        hex(&Sha256::digest(b))
    }

    #[tokio::test]
    async fn appended_chunks_join_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let http = reqwest::Client::new();
        let mut r = Reassembler::new(
            dir.path().into(),
            &spec(&["text/plain"], 100),
            1024,
            Bugs::none(),
        );
        r.apply_chunk(&http, art("a", vec![Part::text("one ")]), false, false)
            .await
            .unwrap();
        r.apply_chunk(&http, art("a", vec![Part::text("two ")]), true, false)
            .await
            .unwrap();
        r.apply_chunk(&http, art("a", vec![Part::text("three")]), true, true)
            .await
            .unwrap();
        let recs = r.commit(&prov()).await.unwrap();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].bytes, 13);
        assert_eq!(recs[0].sha256, sha(b"one two three"));
        assert_eq!(std::fs::read(&recs[0].path).unwrap(), b"one two three");
        assert!(recs[0].committed);
    }

    #[tokio::test]
    async fn a_chunk_without_append_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let http = reqwest::Client::new();
        let mut r = Reassembler::new(
            dir.path().into(),
            &spec(&["text/plain"], 100),
            1024,
            Bugs::none(),
        );
        r.apply_chunk(&http, art("a", vec![Part::text("old")]), false, false)
            .await
            .unwrap();
        r.apply_chunk(&http, art("a", vec![Part::text("new")]), false, true)
            .await
            .unwrap();
        let recs = r.commit(&prov()).await.unwrap();
        assert_eq!(std::fs::read(&recs[0].path).unwrap(), b"new");
    }

    #[tokio::test]
    async fn append_to_unknown_and_after_terminal_fail() {
        let dir = tempfile::tempdir().unwrap();
        let http = reqwest::Client::new();
        let mut r = Reassembler::new(dir.path().into(), &spec(&["*/*"], 100), 1024, Bugs::none());
        let e = r
            .apply_chunk(&http, art("x", vec![Part::text("a")]), true, false)
            .await
            .unwrap_err();
        assert_eq!(e, ArtifactError::UnknownAppend("x".into()));
        r.set_terminal();
        let e = r
            .apply_chunk(&http, art("y", vec![Part::text("a")]), false, false)
            .await
            .unwrap_err();
        assert_eq!(e, ArtifactError::AfterTerminal("y".into()));
    }

    #[tokio::test]
    async fn oversize_is_rejected_once_crossed() {
        let dir = tempfile::tempdir().unwrap();
        let http = reqwest::Client::new();
        let mut r = Reassembler::new(dir.path().into(), &spec(&["*/*"], 5), 1024, Bugs::none());
        r.apply_chunk(&http, art("a", vec![Part::text("12345")]), false, false)
            .await
            .unwrap();
        let e = r
            .apply_chunk(&http, art("a", vec![Part::text("6")]), true, false)
            .await
            .unwrap_err();
        assert!(matches!(e, ArtifactError::TooLarge { limit: 5, .. }));
    }

    #[tokio::test]
    async fn media_type_and_schema_problems() {
        let dir = tempfile::tempdir().unwrap();
        let http = reqwest::Client::new();
        let mut s = spec(&["application/json"], 1000);
        s.schema = Some(json!({"type": "object", "required": ["n"]}));
        let mut r = Reassembler::new(dir.path().into(), &s, 1024, Bugs::none());
        r.apply_chunk(&http, art("a", vec![Part::text("hi")]), false, true)
            .await
            .unwrap();
        r.apply_chunk(
            &http,
            art("b", vec![Part::data(json!({"m": 1}))]),
            false,
            true,
        )
        .await
        .unwrap();
        let p = r.problems();
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(p[0].contains("text/plain"));
        assert!(p[1].contains("schema"));
        // Replacing the artifacts with good ones clears the problems.
        r.apply_chunk(
            &http,
            art("a", vec![Part::data(json!({"n": 1}))]),
            false,
            true,
        )
        .await
        .unwrap();
        r.apply_chunk(
            &http,
            art("b", vec![Part::data(json!({"n": 2}))]),
            false,
            true,
        )
        .await
        .unwrap();
        assert!(r.problems().is_empty());
        let recs = r.commit(&prov()).await.unwrap();
        assert_eq!(std::fs::read(&recs[0].path).unwrap(), br#"{"n":1}"#);
    }

    #[tokio::test]
    async fn snapshot_replaces_streamed_progress() {
        let dir = tempfile::tempdir().unwrap();
        let http = reqwest::Client::new();
        let mut r = Reassembler::new(dir.path().into(), &spec(&["*/*"], 100), 1024, Bugs::none());
        r.apply_chunk(&http, art("a", vec![Part::text("par")]), false, false)
            .await
            .unwrap();
        r.set_terminal();
        r.apply_snapshot(
            &http,
            &[art(
                "a",
                vec![Part::text("part1"), Part::raw(vec![0u8, 1, 2])],
            )],
        )
        .await
        .unwrap();
        let recs = r.commit(&prov()).await.unwrap();
        assert_eq!(std::fs::read(&recs[0].path).unwrap(), b"part1\x00\x01\x02");
    }

    #[tokio::test]
    async fn large_and_small_parts_keep_their_order() {
        // Parts larger than the write buffer go to the writer as they are, smaller ones are
        // buffered: the file must hold them in arrival order whatever the mix.
        let dir = tempfile::tempdir().unwrap();
        let http = reqwest::Client::new();
        let mut r = Reassembler::new(
            dir.path().into(),
            &spec(&["*/*"], 1 << 20),
            1024,
            Bugs::none(),
        );
        let mut want = Vec::new();
        for i in 0..40usize {
            let len = [10, 5000, 1023, 1024, 3, 70_000][i % 6];
            let bytes: Vec<u8> = (0..len).map(|k| (k + i) as u8).collect();
            want.extend_from_slice(&bytes);
            r.apply_chunk(&http, art("a", vec![Part::raw(bytes)]), i > 0, i == 39)
                .await
                .unwrap();
        }
        let recs = r.commit(&prov()).await.unwrap();
        assert_eq!(recs[0].bytes, want.len() as u64);
        assert_eq!(recs[0].sha256, sha(&want));
        assert!(std::fs::read(&recs[0].path).unwrap() == want);
    }

    #[test]
    fn safe_names_cannot_escape() {
        let n = safe_name("../../etc/passwd");
        assert!(!n.contains('/'));
        assert!(!n.starts_with('.'));
        assert_ne!(safe_name("a/b"), safe_name("ab"));
        assert_eq!(safe_name("").len(), 12);
    }
}
