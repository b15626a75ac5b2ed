//! A task's events: state changes and artifact chunks recorded in the task, journaled and
//! broadcast to its stream subscribers and push worker; closing streams; waiting for
//! continuations.

use crate::agent::*;
use crate::journal::Event;
use a2a_protocol::*;
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Capacity of each subscriber's queue: a slow reader slows the task, like TCP backpressure.
pub(crate) const SUBSCRIBER_QUEUE: usize = 64;
/// Longest wait for a stalled subscriber to take an event before it is dropped (its stream
/// then ends), so one reader that stops reading cannot stop a task forever.
pub(crate) const SUBSCRIBER_SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// KiB of generated chunks of one `artifacts` step alive at once (generated, queued or being
/// encoded), so a stream's memory is bounded whatever the artifact size and queue depth: four
/// 64 KiB chunks. Chunks of 4 KiB or less are bounded by [`SUBSCRIBER_QUEUE`] first, as
/// before (a slow reader slows the task only once that many events wait).
pub(crate) const IN_FLIGHT_KIB: u32 = 256;
/// Longest wait for the task driver to take and acknowledge a continuation.
pub(crate) const CONTINUATION_TIMEOUT: Duration = Duration::from_secs(10);

/// Send an outgoing item to every subscriber (dropping the ones that left or stopped reading
/// for [`SUBSCRIBER_SEND_TIMEOUT`]) and, for events, to the webhooks.
pub(crate) async fn broadcast(entry: &TaskEntry, out: Outgoing) {
    let out = Arc::new(out);
    let (subs, push_tx) = {
        let g = entry.lock();
        (g.subscribers.clone(), g.push_tx.clone())
    };
    if let Some(tx) = push_tx {
        let ev = match out.as_ref() {
            Outgoing::Event(ev) => Some(ev.clone()),
            Outgoing::Chunk(c) => Some(Arc::new(c.event())),
            _ => None,
        };
        if let Some(ev) = ev {
            let _ =
                tokio::time::timeout(SUBSCRIBER_SEND_TIMEOUT, tx.send(PushItem::Event(ev))).await;
        }
    }
    let mut gone = Vec::new();
    for s in &subs {
        let sent = tokio::time::timeout(SUBSCRIBER_SEND_TIMEOUT, s.send(out.clone())).await;
        if !matches!(sent, Ok(Ok(()))) {
            gone.push(s.clone());
        }
    }
    if !gone.is_empty() {
        entry
            .lock()
            .subscribers
            .retain(|s| !s.is_closed() && !gone.iter().any(|g| g.same_channel(s)));
    }
}

pub(crate) async fn close_streams(entry: &TaskEntry, reason: &'static str) {
    broadcast(entry, Outgoing::Close(reason)).await;
    entry.lock().subscribers.clear();
}

/// The task's driver is done (or was stopped): close its streams and stop its push worker once
/// it has delivered what is queued.
pub(crate) async fn finish_task(entry: &TaskEntry, reason: &'static str) {
    close_streams(entry, reason).await;
    let mut g = entry.lock();
    g.driver_done = true;
    g.push_tx = None;
}

/// Set a task's state and broadcast the status update; `false` when the task was frozen by a
/// cancel (then nothing changes).
pub(crate) async fn set_state(
    st: &AgentState,
    entry: &TaskEntry,
    state: TaskState,
    text: Option<&str>,
) -> bool {
    apply_state(st, entry, state, text_parts(text), false).await
}

/// The parts of a status message with this text (none without one).
pub(crate) fn text_parts(text: Option<&str>) -> Vec<Part> {
    text.map(|t| vec![Part::text(t)]).unwrap_or_default()
}

/// Set the task's state with a status message of these parts (none: no status message).
pub(crate) async fn apply_state(
    st: &AgentState,
    entry: &TaskEntry,
    state: TaskState,
    parts: Vec<Part>,
    by_cancel: bool,
) -> bool {
    let _emit = entry.emit.lock().await;
    let ev = {
        let mut g = entry.lock();
        if g.frozen && !by_cancel {
            return false;
        }
        let n = g.ordinal;
        let k = g.task.history.len() as u64 + 1000 * n;
        let s = status(
            state,
            parts,
            &g.task,
            st.make_id("status", k + u64::from(state.number().unsigned_abs())),
            st.clock.now(),
        );
        g.task.status = s.clone();
        g.waiting = state.is_interrupted();
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: g.task.id.clone(),
            context_id: g.task.context_id.clone(),
            status: s,
            metadata: None,
        })
    };
    st.journal(Event::TaskState {
        task_id: ev.task_id().unwrap_or_default().into(),
        state: state.as_str().into(),
    });
    entry.changed.notify_waiters();
    broadcast(entry, Outgoing::Event(Arc::new(ev))).await;
    true
}

pub(crate) fn frozen(entry: &TaskEntry) -> bool {
    entry.lock().frozen
}

/// Tracks the truth about each artifact as chunks go out (append/replace semantics): what
/// becomes its [`Event::ArtifactSent`].
#[derive(Default)]
pub(crate) struct ArtifactTruth {
    sent: std::collections::HashMap<String, SentSoFar>,
}

/// What has been sent of one artifact since its last replacement.
#[derive(Default)]
struct SentSoFar {
    sha256: Sha256,
    bytes: u64,
    chunks: u64,
}

impl ArtifactTruth {
    /// One chunk event of artifact `id` with these inline parts; returns its content bytes. A
    /// chunk with no inline part is not content: it changes nothing.
    pub(crate) fn chunk<B: AsRef<[u8]>>(
        &mut self,
        id: &str,
        append: bool,
        parts: impl IntoIterator<Item = B>,
    ) -> u64 {
        let mut parts = parts.into_iter().peekable();
        if parts.peek().is_none() {
            return 0;
        }
        let s = self.sent.entry(id.to_string()).or_default();
        if !append {
            *s = SentSoFar::default();
        }
        s.chunks += 1;
        let mut n = 0u64;
        for b in parts {
            let b = b.as_ref();
            s.sha256.update(b);
            n += b.len() as u64;
        }
        s.bytes += n;
        n
    }

    /// The artifact is complete (or will get no more chunks): its `artifact_sent` entry.
    pub(crate) fn finish(&mut self, task_id: &str, id: &str) -> Option<Event> {
        self.sent.remove(id).map(|s| Event::ArtifactSent {
            task_id: task_id.to_string(),
            artifact_id: id.to_string(),
            bytes: s.bytes,
            sha256: hex::encode(s.sha256.finalize()),
            chunks: s.chunks,
        })
    }
}

pub(crate) async fn emit_chunk(
    st: &AgentState,
    entry: &TaskEntry,
    truth: &mut ArtifactTruth,
    artifact: Artifact,
    append: bool,
    last_chunk: bool,
) {
    let _emit = entry.emit.lock().await;
    let (task_id, context_id) = {
        let mut g = entry.lock();
        if g.frozen {
            return;
        }
        // Keep the task's artifacts as a real agent would (GetTask shows them).
        match g
            .task
            .artifacts
            .iter_mut()
            .find(|a| a.artifact_id == artifact.artifact_id)
        {
            Some(a) if append => a.parts.extend(artifact.parts.iter().cloned()),
            Some(a) => *a = artifact.clone(),
            None => g.task.artifacts.push(artifact.clone()),
        }
        if !append {
            g.generated.remove(&artifact.artifact_id);
        }
        (g.task.id.clone(), g.task.context_id.clone())
    };
    let n = truth.chunk(
        &artifact.artifact_id,
        append,
        artifact.parts.iter().filter_map(|p| p.inline_bytes()),
    );
    st.journal(Event::ArtifactChunk {
        task_id: task_id.clone(),
        artifact_id: artifact.artifact_id.clone(),
        append,
        last_chunk,
        bytes: n,
    });
    let aid = artifact.artifact_id.clone();
    let ev = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: task_id.clone(),
        context_id,
        artifact,
        append,
        last_chunk,
        metadata: None,
    });
    broadcast(entry, Outgoing::Event(Arc::new(ev))).await;
    if last_chunk && let Some(sent) = truth.finish(&task_id, &aid) {
        st.journal(sent);
    }
}

/// Send a chunk of generated content (the hot path of large artifacts): the task keeps a
/// [`GenRecord`] to regenerate it, not its bytes; the truth hash is the one pass over them;
/// subscribers get it as an [`Outgoing::Chunk`] (pre-encoded per binding, [`crate::frames`]).
/// Same journal entries as [`emit_chunk`].
pub(crate) async fn emit_generated(
    st: &AgentState,
    entry: &TaskEntry,
    truth: &mut ArtifactTruth,
    chunk: GenChunk,
    record: &GenRecord,
) {
    let _emit = entry.emit.lock().await;
    let aid = chunk.artifact_id.clone();
    let task_id = {
        let mut g = entry.lock();
        if g.frozen {
            return;
        }
        let g = &mut *g;
        let pos = g.task.artifacts.iter().position(|a| a.artifact_id == aid);
        match pos {
            Some(i) if chunk.append => {
                let a = &mut g.task.artifacts[i];
                match g.generated.get_mut(&aid) {
                    // Generated chunks so far and nothing after them: one more.
                    Some(r) if a.parts.is_empty() => r.chunks += 1,
                    // Behind other parts (a script mixing steps on one id): kept as is.
                    _ => a.parts.push(chunk.part()),
                }
            }
            _ => {
                let a = Artifact {
                    artifact_id: aid.clone(),
                    name: chunk.name.clone(),
                    ..Default::default()
                };
                match pos {
                    Some(i) => g.task.artifacts[i] = a,
                    None => g.task.artifacts.push(a),
                }
                g.generated.insert(
                    aid.clone(),
                    GenRecord {
                        chunks: 1,
                        ..record.clone()
                    },
                );
            }
        }
        g.task.id.clone()
    };
    truth.chunk(&aid, chunk.append, [&chunk.payload]);
    st.journal(Event::ArtifactChunk {
        task_id: task_id.clone(),
        artifact_id: aid.clone(),
        append: chunk.append,
        last_chunk: chunk.last_chunk,
        bytes: chunk.payload.len() as u64,
    });
    let last = chunk.last_chunk;
    broadcast(entry, Outgoing::Chunk(Arc::new(chunk))).await;
    if last && let Some(sent) = truth.finish(&task_id, &aid) {
        st.journal(sent);
    }
}

/// Wait for the next continuation of an interrupted task, bounded by `timeout_ms`.
pub(crate) async fn next_continuation(
    cont_rx: &mut mpsc::Receiver<Continuation>,
    timeout_ms: u64,
) -> Option<Continuation> {
    tokio::time::timeout(Duration::from_millis(timeout_ms), cont_rx.recv())
        .await
        .ok()
        .flatten()
}

/// Fail the task with a reason and close its streams.
pub(crate) async fn fail_task(st: &AgentState, entry: &TaskEntry, reason: &str) {
    set_state(st, entry, TaskState::Failed, Some(reason)).await;
    close_streams(entry, "terminal").await;
}

/// Enter an interrupted state (INPUT_REQUIRED or AUTH_REQUIRED) and close the open streams if
/// the agent is configured to.
pub(crate) async fn interrupt(
    st: &AgentState,
    entry: &TaskEntry,
    state: TaskState,
    text: &str,
) -> bool {
    if !set_state(st, entry, state, Some(text)).await {
        return false;
    }
    if st.spec.close_stream_on_interrupt {
        close_streams(entry, "interrupted").await;
    }
    true
}
