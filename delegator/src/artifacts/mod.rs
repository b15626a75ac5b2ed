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
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod dir_sync;
mod sink;

pub use dir_sync::DirSync;
use sink::{LazyFile, Sink};

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
    /// The directory the files go to, with its shared directory fsyncs.
    dir: Arc<DirSync>,
    /// Put before each file's name: the delegation's, when delegations share the directory.
    prefix: String,
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
            .field("dir", &self.dir.dir())
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
    /// `buffer_bytes` per open artifact (two while a write is in flight). Each artifact's file is
    /// `dir/<safe artifact id>.part` until commit renames it to `dir/<safe artifact id>`.
    pub fn new(dir: PathBuf, spec: &ArtifactSpec, buffer_bytes: usize, bugs: Bugs) -> Self {
        Self::sharing(Arc::new(DirSync::new(dir)), "", spec, buffer_bytes, bugs)
    }

    /// [`Reassembler::new`] for one of many delegations writing into the same directory: the
    /// files of delegation `delegation_id` are `<safe delegation id>~<safe artifact id>` (`~`
    /// occurs in no safe name, so the pair is never ambiguous), and the commits of all of them
    /// share the directory's fsyncs ([`DirSync`]).
    pub fn sharing(
        dir: Arc<DirSync>,
        delegation_id: &str,
        spec: &ArtifactSpec,
        buffer_bytes: usize,
        bugs: Bugs,
    ) -> Self {
        let validator = spec
            .schema
            .as_ref()
            .and_then(|s| jsonschema::validator_for(s).ok());
        Reassembler {
            dir,
            prefix: if delegation_id.is_empty() {
                String::new()
            } else {
                format!("{}~", safe_name(delegation_id))
            },
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
        let idx = match self.index_of(artifact_id) {
            Some(i) => i,
            None => {
                if self.artifacts.len() >= MAX_ARTIFACTS {
                    return Err(ArtifactError::TooMany);
                }
                let path =
                    self.dir
                        .dir()
                        .join(format!("{}{}.part", self.prefix, safe_name(artifact_id)));
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
            // Writes of the replaced content must land before the file is truncated (content
            // still in the buffer is dropped: it never reached the file).
            old.finish_writes().await;
        }
        a.file = Some(Sink::new(LazyFile::new(a.path.clone()), Sha256::new()));
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
                // After a commit (the run's end) the file is closed and a write reports it.
                Some(i) => i,
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
        if !self.artifacts.is_empty() {
            // The dead-letter entry names these files: their directory entries must last too.
            let _ = self.dir.sync().await;
        }
        self.artifacts
            .iter()
            .map(|a| Self::record(a, prov, &a.path, false))
            .collect()
    }

    /// Commit: flush and sync every file, move each to its final name (all on one blocking
    /// thread), sync the directory ([`DirSync`], shared with the other delegations writing
    /// there), return the records.
    pub async fn commit(
        &mut self,
        prov: &Provenance,
    ) -> Result<Vec<ArtifactRecord>, ArtifactError> {
        self.flush_all(true).await?;
        if self.artifacts.is_empty() {
            return Ok(Vec::new());
        }
        let moves: Vec<(PathBuf, PathBuf)> = self
            .artifacts
            .iter_mut()
            .map(|a| {
                a.file = None;
                (a.path.clone(), a.path.with_extension(""))
            })
            .collect();
        // The renames that were done, and the first that failed.
        let (done, failed) = tokio::task::spawn_blocking(move || {
            for (n, (from, to)) in moves.iter().enumerate() {
                if let Err(e) = std::fs::rename(from, to) {
                    return (
                        n,
                        Some(io_err(to, format!("rename from {}: {e}", from.display()))),
                    );
                }
            }
            (moves.len(), None)
        })
        .await
        .unwrap_or_else(|e| (0, Some(io_err(self.dir.dir(), e))));
        let mut out = Vec::new();
        for a in &mut self.artifacts[..done] {
            a.path = a.path.with_extension("");
        }
        if let Some(e) = failed {
            return Err(e);
        }
        for a in &self.artifacts {
            let mut rec = Self::record(a, prov, &a.path, true);
            if self.bugs.has(Bug::MisreportSha256) {
                let mut h = a.hasher.clone();
                h.update(b"\n");
                rec.sha256 = hex(&h.finalize());
            }
            out.push(rec);
        }
        self.dir
            .sync()
            .await
            .map_err(|e| io_err(self.dir.dir(), e))?;
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
mod tests;
