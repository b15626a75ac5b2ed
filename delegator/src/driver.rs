//! The delegator side of the driver contract (`docs/driver-protocol.md`): newline-delimited JSON
//! on stdin/stdout, one object per line with a `type` field.
//!
//! Harness to delegator: `init`, `delegate`, `answer`, `credential`, `cancel`, `snapshot`
//! ([`ToDelegator`]). Delegator to harness: `init_ok`, `state`, `escalate`, `done`,
//! `snapshot_ok`, `error` ([`FromDelegator`]). Both are the types of `a2a-driver-contract`, the
//! one definition of the contract.
//! Stdout carries only protocol lines; logs go to stderr. At EOF on stdin the delegator finishes
//! its open delegations (each bounded by its deadline), flushes and exits 0.

#[cfg(feature = "planted-bugs")]
use crate::bugs::Bugs;
use crate::bugs::CrashPoint;
use crate::engine::{Engine, EngineConfig, EngineError, Event, Options};
use crate::request::RequestExt;
use crate::store::StoreHandle;
use a2a_driver_contract::{
    AgentStatus, Answer, Cancel, Credential, Delegate, DriverErrorCode, ErrorReply, Escalate,
    FromDelegator, Init, InitOk, MAX_LINE_BYTES, SnapshotOk, StateChange, ToDelegator,
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::PathBuf;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Feature names reported in `init_ok.supports`.
pub const SUPPORTS: &[&str] = &[
    "delegate",
    "answer",
    "credential",
    "cancel",
    "snapshot",
    "recovery",
    "streaming",
    "polling",
    "push",
    "fan_out",
    "refinement",
    "input_escalation",
    "auth_escalation",
    "limits",
    "dead_letter",
    "artifact_url",
    "artifact_schema",
    "a2a_0_3",
    "binding:jsonrpc",
    "binding:rest",
    "binding:grpc",
];

/// The driver loop failed (I/O on stdin/stdout).
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// Reading or writing failed.
    #[error("driver I/O: {0}")]
    Io(#[from] std::io::Error),
}

/// How `drive` was started.
#[derive(Debug, Clone, Default)]
pub struct DriveOptions {
    /// `--store`: used when `init.store_dir` is absent or null.
    pub store: Option<PathBuf>,
    /// Planted bugs (`--bug`, feature `planted-bugs` only).
    #[cfg(feature = "planted-bugs")]
    pub bugs: Bugs,
}

/// An `error` reply.
pub fn error_reply(
    id: Option<&str>,
    code: DriverErrorCode,
    message: impl Into<String>,
) -> ErrorReply {
    ErrorReply {
        id: id.map(str::to_owned),
        code,
        message: message.into(),
    }
}

fn bad_request(id: Option<&str>, message: impl Into<String>) -> ErrorReply {
    error_reply(id, DriverErrorCode::BadRequest, message)
}

/// The driver message for an engine event.
pub fn event_message(ev: &Event) -> FromDelegator {
    match ev {
        Event::State {
            id,
            state,
            task_id,
            context_id,
        } => FromDelegator::State(StateChange {
            id: id.clone(),
            state: *state,
            task_id: task_id.clone(),
            context_id: context_id.clone(),
        }),
        Event::Escalate {
            id,
            kind,
            question,
            agent,
            task_id,
        } => FromDelegator::Escalate(Escalate {
            id: id.clone(),
            kind: *kind,
            question: question.clone(),
            agent: agent.clone(),
            task_id: task_id.clone(),
        }),
        Event::Done(done) => FromDelegator::Done(done.clone()),
        Event::Error { id, message } => FromDelegator::Error(error_reply(
            Some(id),
            DriverErrorCode::Internal,
            message.clone(),
        )),
    }
}

fn engine_error(id: Option<&str>, e: &EngineError) -> ErrorReply {
    match e {
        EngineError::BadRequest(m) => bad_request(id, m.clone()),
        other => error_reply(id, DriverErrorCode::Internal, other.to_string()),
    }
}

/// A line's envelope: the parsed object, its `id` (when a string) and its `type`.
struct Envelope {
    value: Value,
    id: Option<String>,
    ty: String,
}

/// Read the envelope of one line; `Err` is the `error` reply (not JSON, or no string `type`).
fn envelope(line: &[u8]) -> Result<Envelope, ErrorReply> {
    let value: Value =
        serde_json::from_slice(line).map_err(|e| bad_request(None, format!("not JSON: {e}")))?;
    let id = value.get("id").and_then(Value::as_str).map(str::to_owned);
    let Some(ty) = value.get("type").and_then(Value::as_str) else {
        return Err(bad_request(id.as_deref(), "missing string field \"type\""));
    };
    let ty = ty.to_owned();
    Ok(Envelope { value, id, ty })
}

/// Decode the message of an envelope into the contract's [`ToDelegator`]. Each message body is
/// decoded on its own so that a shape error names the JSON path of the offending field (a
/// tagged enum would lose it). `Err` is the `error` reply: `bad_request` naming the field, or
/// `unsupported` for a `type` the contract does not know.
fn decode_message(env: &Envelope) -> Result<ToDelegator, ErrorReply> {
    fn body<T: DeserializeOwned>(env: &Envelope) -> Result<T, ErrorReply> {
        a2a_protocol::codec::decode_value(&env.value)
            .map_err(|e| bad_request(env.id.as_deref(), format!("{}: {e}", env.ty)))
    }
    Ok(match env.ty.as_str() {
        "init" => ToDelegator::Init(body::<Init>(env)?),
        "delegate" => ToDelegator::Delegate(body::<Delegate>(env)?),
        "answer" => ToDelegator::Answer(body::<Answer>(env)?),
        "credential" => ToDelegator::Credential(body::<Credential>(env)?),
        "cancel" => ToDelegator::Cancel(body::<Cancel>(env)?),
        "snapshot" => ToDelegator::Snapshot,
        other => {
            return Err(error_reply(
                env.id.as_deref(),
                DriverErrorCode::Unsupported,
                format!("message type {other:?} is not supported"),
            ));
        }
    })
}

/// Read one line of at most [`MAX_LINE_BYTES`]; `Ok(None)` at EOF. An over-long line is
/// consumed and returned as `Err` text.
async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
) -> Result<Option<Result<Vec<u8>, String>>, std::io::Error> {
    const MAX: u64 = MAX_LINE_BYTES as u64;
    let mut buf = Vec::new();
    let n = (&mut *r).take(MAX).read_until(b'\n', &mut buf).await?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() != Some(&b'\n') && n as u64 == MAX {
        // Skip the rest of the line.
        loop {
            let mut rest = Vec::new();
            let m = (&mut *r).take(MAX).read_until(b'\n', &mut rest).await?;
            if m == 0 || rest.last() == Some(&b'\n') {
                break;
            }
        }
        return Ok(Some(Err(format!(
            "line longer than {MAX_LINE_BYTES} bytes"
        ))));
    }
    Ok(Some(Ok(buf)))
}

/// The line for a message; a message that cannot be serialized (never expected) is reported
/// as an `internal` error line instead.
fn line_of(msg: &FromDelegator) -> String {
    msg.to_line().unwrap_or_else(|e| {
        let reply = error_reply(
            None,
            DriverErrorCode::Internal,
            format!("{} line not serializable: {e}", msg.type_name()),
        );
        FromDelegator::Error(reply).to_line().unwrap_or_default()
    })
}

/// Start the engine for an `init`, answer `init_ok` (or an `error`) and start forwarding its
/// events. Returns the engine and the forwarder's stop handle when it started.
async fn start_engine(
    init: Init,
    opts: &DriveOptions,
    out_tx: &mpsc::UnboundedSender<FromDelegator>,
) -> Option<(Engine, Forwarder)> {
    let send = |m: ErrorReply| {
        let _ = out_tx.send(FromDelegator::Error(m));
    };
    let Some(store_dir) = init
        .store_dir
        .clone()
        .map(PathBuf::from)
        .or_else(|| opts.store.clone())
    else {
        send(bad_request(
            None,
            "init: store_dir is missing and drive was started without --store",
        ));
        return None;
    };
    let options = match Options::from_init(&init.options) {
        Ok(o) => o,
        Err(e) => {
            // Named as today: the path from the message's root.
            let e = match e {
                a2a_protocol::codec::DecodeError::Shape { path, message } => format!(
                    "$.options{}: {message}",
                    path.strip_prefix('$').unwrap_or(&path)
                ),
                other => other.to_string(),
            };
            send(bad_request(None, format!("init: {e}")));
            return None;
        }
    };
    let cfg = EngineConfig::new(store_dir, init.self_url.clone())
        .agents(init.agents.clone())
        .webhook_base_url(init.webhook_base_url.clone())
        .webhook_listen(init.webhook_listen.clone())
        .own_credential(init.credential.clone())
        .agent_credentials(init.agent_credentials.clone())
        .extensions(init.extensions.clone())
        .fetch_origins(init.fetch_origins.clone())
        .card_signatures(init.card_signatures.clone())
        .tls_roots(init.tls_roots.as_ref().map(std::path::PathBuf::from))
        .options(options);
    #[cfg(feature = "planted-bugs")]
    let cfg = cfg.with_bugs(opts.bugs);
    let (ev_tx, mut ev_rx) = mpsc::unbounded_channel();
    let e = match Engine::start(cfg, ev_tx).await {
        Ok(e) => e,
        Err(err) => {
            send(engine_error(None, &err));
            return None;
        }
    };
    let agents: Vec<AgentStatus> = {
        let ok = e.agents().await;
        let errs = e.card_errors();
        init.agents
            .iter()
            .map(|u| match ok.iter().find(|a| &a.card_url == u) {
                Some(a) => AgentStatus {
                    card_url: u.clone(),
                    ok: true,
                    name: Some(a.card.name.clone()),
                    protocol_version: Some(a.endpoint.version.as_str().to_owned()),
                    binding: Some(a.endpoint.binding.short_name().to_owned()),
                    error: None,
                },
                None => AgentStatus {
                    card_url: u.clone(),
                    ok: false,
                    name: None,
                    protocol_version: None,
                    binding: None,
                    error: Some(
                        errs.iter()
                            .find(|x| &x.url == u)
                            .map(|x| x.message.clone())
                            .unwrap_or_else(|| "card not read".into()),
                    ),
                },
            })
            .collect()
    };
    let _ = out_tx.send(FromDelegator::InitOk(InitOk {
        name: "a2a-delegator".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        supports: SUPPORTS.iter().map(|s| (*s).to_owned()).collect(),
        webhook_url: e.webhook_url(),
        agents,
    }));
    let tx = out_tx.clone();
    let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        loop {
            tokio::select! {
                ev = ev_rx.recv() => match ev {
                    Some(ev) => { let _ = tx.send(event_message(&ev)); }
                    None => return,
                },
                _ = &mut stop_rx => {
                    // Drain what was reported before the stop.
                    while let Ok(ev) = ev_rx.try_recv() {
                        let _ = tx.send(event_message(&ev));
                    }
                    return;
                }
            }
        }
    });
    if init.recovering
        && let Err(err) = e.recover().await
    {
        send(engine_error(None, &err));
    }
    Some((e, (stop_tx, task)))
}

/// Stops the task that forwards engine events to stdout (after draining them).
type Forwarder = (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
);

/// Act on one message after `init`.
async fn handle(e: &Engine, msg: ToDelegator) -> Option<FromDelegator> {
    match msg {
        ToDelegator::Init(_) => Some(bad_request(None, "init was already received").into()),
        ToDelegator::Delegate(req) => {
            let id = req.id.clone();
            e.delegate(req)
                .await
                .err()
                .map(|err| engine_error(Some(&id), &err).into())
        }
        ToDelegator::Answer(m) => e
            .answer(&m.id, m.text)
            .err()
            .map(|err| engine_error(Some(&m.id), &err).into()),
        ToDelegator::Credential(m) => e
            .credential(&m.id, m.credential)
            .err()
            .map(|err| engine_error(Some(&m.id), &err).into()),
        ToDelegator::Cancel(m) => e
            .cancel(&m.id)
            .err()
            .map(|err| engine_error(Some(&m.id), &err).into()),
        ToDelegator::Snapshot => Some(match e.snapshot().await {
            Ok(records) => FromDelegator::SnapshotOk(SnapshotOk { records }),
            Err(err) => engine_error(None, &err).into(),
        }),
    }
}

/// The most `delegate` requests admitted at once: the next waits until one of them is done.
/// A few hundred fill every group commit; more only hold memory (each admission is a task).
const MAX_ADMITTING: usize = 256;

/// `delegate` requests being admitted concurrently.
///
/// Admission (validation, routing, the durable insert before the first send) of independent
/// delegations overlaps, so that their inserts share group commits instead of each waiting for its
/// own fsync in turn. Requests are still handled in order where order can matter: a `delegate`
/// whose id is being admitted, one that refines another (`refine_of`), and every other request
/// (`answer`, `credential`, `cancel`, `snapshot`, EOF) first wait for every earlier admission.
/// A finished admission is reaped as soon as the next request comes (its id is free again), so
/// neither its task nor its id outlives it for long.
#[derive(Default)]
struct Admissions {
    /// Each admission's task; it returns its delegation id.
    tasks: tokio::task::JoinSet<String>,
    ids: std::collections::HashSet<String>,
}

impl Admissions {
    /// May `req` be admitted alongside the admissions under way? Not when it is malformed: its
    /// `error` is then written in order, before anything about later requests.
    fn may_overlap(&mut self, req: &Delegate) -> bool {
        while let Some(r) = self.tasks.try_join_next() {
            self.reap(r);
        }
        req.refine_of.is_none() && !self.ids.contains(&req.id) && req.validate().is_ok()
    }

    /// Admit `req` in its own task; a refusal of the request itself is written as `error`.
    async fn spawn(&mut self, e: Engine, req: Delegate, out: mpsc::UnboundedSender<FromDelegator>) {
        while self.tasks.len() >= MAX_ADMITTING {
            match self.tasks.join_next().await {
                Some(r) => self.reap(r),
                None => break,
            }
        }
        self.ids.insert(req.id.clone());
        self.tasks.spawn(async move {
            let id = req.id.clone();
            if let Err(err) = e.delegate(req).await {
                let _ = out.send(engine_error(Some(&id), &err).into());
            }
            id
        });
    }

    /// A finished admission: its id may be admitted again.
    fn reap(&mut self, r: Result<String, tokio::task::JoinError>) {
        match r {
            Ok(id) => {
                self.ids.remove(&id);
            }
            // Its id stays taken until `wait_all`: the next request with it waits for that.
            Err(e) => tracing::error!("admission task failed: {e}"),
        }
    }

    /// Wait until every admission under way has finished.
    async fn wait_all(&mut self) {
        while let Some(r) = self.tasks.join_next().await {
            self.reap(r);
        }
        self.ids.clear();
    }
}

/// Write each message as one line and flush it. Once a `done` line is flushed, its delegation
/// id goes to `written`, so that the store marks it reported (the outbox): a `done` is marked
/// only after it really reached stdout, and one lost to a crash is reported again after the
/// restart. The lines queued meanwhile (up to [`MAX_WRITE_BATCH`] bytes) go in one write and
/// one flush: with thousands of delegations each write is a trip to another thread.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut output: W,
    mut out_rx: mpsc::UnboundedReceiver<FromDelegator>,
    written: mpsc::UnboundedSender<String>,
) -> std::io::Result<()> {
    let mut done_ids = Vec::new();
    while let Some(first) = out_rx.recv().await {
        // The first line is the batch (never copied); the lines queued meanwhile join it.
        let mut batch = String::new();
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            let line = line_of(&msg);
            if batch.is_empty() {
                batch = line;
            } else {
                batch.push_str(&line);
            }
            if let FromDelegator::Done(done) = msg {
                done_ids.push(done.id);
            }
            if batch.len() < MAX_WRITE_BATCH {
                next = out_rx.try_recv().ok();
            }
        }
        output.write_all(batch.as_bytes()).await?;
        output.flush().await?;
        for id in done_ids.drain(..) {
            CrashPoint::AfterDoneWritten.hit(&id);
            let _ = written.send(id);
        }
    }
    Ok(())
}

/// At most this many bytes of lines are gathered for one write (one line may exceed it).
const MAX_WRITE_BATCH: usize = 256 * 1024;

/// Mark each written `done` reported in the store. The ids written meanwhile are marked
/// together (they share a group commit); each group after the one before it.
async fn mark_reported(store: StoreHandle, mut written: mpsc::UnboundedReceiver<String>) {
    let mut group = tokio::task::JoinSet::new();
    while let Some(first) = written.recv().await {
        let mut next = Some(first);
        while let Some(id) = next.take() {
            let store = store.clone();
            group.spawn(async move {
                if let Err(e) = store.mark_reported(&id).await {
                    // Still unreported: the `done` is reported again after a restart (harmless).
                    tracing::warn!(delegation = %id, "store: marking done reported: {e}");
                }
            });
            if group.len() < MAX_ADMITTING {
                next = written.try_recv().ok();
            }
        }
        while group.join_next().await.is_some() {}
    }
}

/// Run the driver protocol on `input`/`output` until EOF.
pub async fn drive<R, W>(mut input: R, output: W, opts: DriveOptions) -> Result<(), DriverError>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, out_rx) = mpsc::unbounded_channel::<FromDelegator>();
    let (written_tx, written_rx) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(write_lines(output, out_rx, written_tx));
    let mut written_rx = Some(written_rx);
    let mut marker: Option<tokio::task::JoinHandle<()>> = None;
    let mut engine: Option<Engine> = None;
    let mut forwarder: Option<Forwarder> = None;
    let mut admitting = Admissions::default();
    let send = |m: FromDelegator| {
        let _ = out_tx.send(m);
    };
    while let Some(line) = read_line(&mut input).await? {
        let line = match line {
            Ok(l) => l,
            Err(msg) => {
                send(bad_request(None, msg).into());
                continue;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let env = match envelope(&line) {
            Ok(env) => env,
            Err(reply) => {
                send(reply.into());
                continue;
            }
        };
        let Some(e) = &engine else {
            if env.ty != "init" {
                send(bad_request(env.id.as_deref(), format!("{:?} before init", env.ty)).into());
                continue;
            }
            match decode_message(&env) {
                Ok(ToDelegator::Init(init)) => {
                    if let Some((e, f)) = start_engine(init, &opts, &out_tx).await {
                        if let Some(rx) = written_rx.take() {
                            marker = Some(tokio::spawn(mark_reported(e.store(), rx)));
                        }
                        engine = Some(e);
                        forwarder = Some(f);
                    }
                }
                Ok(_) => {}
                Err(reply) => send(reply.into()),
            }
            continue;
        };
        if env.ty == "init" {
            // Not decoded: a second init is refused whatever it holds.
            send(bad_request(None, "init was already received").into());
            continue;
        }
        match decode_message(&env) {
            Ok(ToDelegator::Delegate(req)) if admitting.may_overlap(&req) => {
                admitting.spawn(e.clone(), req, out_tx.clone()).await;
            }
            Ok(msg) => {
                // Anything else sees every earlier `delegate` admitted (handled in order).
                admitting.wait_all().await;
                if let Some(reply) = handle(e, msg).await {
                    send(reply);
                }
            }
            Err(reply) => send(reply.into()),
        }
    }
    admitting.wait_all().await;
    // EOF: finish open work (each delegation is bounded by its deadline), then flush.
    if let Some(e) = &engine {
        e.wait_idle().await;
    }
    drop(engine);
    if let Some((stop, f)) = forwarder {
        // Every event of the finished work was reported before the engine went idle.
        let _ = stop.send(());
        let _ = f.await;
    }
    drop(out_tx);
    let written = writer.await;
    // The writer is gone, so is the sender of written ids: the marker finishes its queue.
    if let Some(m) = marker {
        let _ = m.await;
    }
    match written {
        Ok(r) => r?,
        Err(e) => return Err(DriverError::Io(std::io::Error::other(e.to_string()))),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_driver_contract::{Done, Outcome};
    use serde_json::json;

    /// An output that counts its writes and flushes; `fail_writes` / `fail_flush` make those
    /// fail.
    #[derive(Default)]
    struct CountingOutput {
        bytes: Vec<u8>,
        writes: usize,
        flushes: usize,
        fail_writes: bool,
        fail_flush: bool,
    }

    impl AsyncWrite for CountingOutput {
        fn poll_write(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            if self.fail_writes {
                return std::task::Poll::Ready(Err(std::io::Error::other("stdout closed")));
            }
            self.writes += 1;
            self.bytes.extend_from_slice(buf);
            std::task::Poll::Ready(Ok(buf.len()))
        }
        fn poll_flush(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            self.flushes += 1;
            if self.fail_flush {
                return std::task::Poll::Ready(Err(std::io::Error::other("flush failed")));
            }
            std::task::Poll::Ready(Ok(()))
        }
        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    fn done(id: &str) -> FromDelegator {
        done_with_message(id, None)
    }

    fn done_with_message(id: &str, message: Option<String>) -> FromDelegator {
        FromDelegator::Done(Done {
            id: id.into(),
            state: Outcome::Completed,
            reason: None,
            task_id: None,
            context_id: None,
            message,
            artifacts: Vec::new(),
        })
    }

    /// `write_lines` over `msgs` into `out`: its result, the output, and the ids it released
    /// to the outbox.
    async fn write_through(
        msgs: Vec<FromDelegator>,
        mut out: CountingOutput,
    ) -> (std::io::Result<()>, CountingOutput, Vec<String>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let (written_tx, mut written_rx) = mpsc::unbounded_channel();
        for m in msgs {
            tx.send(m).unwrap();
        }
        drop(tx);
        let r = write_lines(&mut out, rx, written_tx).await;
        let released = std::iter::from_fn(|| written_rx.try_recv().ok()).collect();
        (r, out, released)
    }

    /// The `id` of each line written, in order.
    fn ids_written(out: &CountingOutput) -> Vec<Value> {
        String::from_utf8_lossy(&out.bytes)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["id"].clone())
            .collect()
    }

    #[tokio::test]
    async fn lines_queued_together_go_in_one_write_and_dones_are_released_after_it() {
        let msgs = ["d1", "d2", "d3"].map(done).to_vec();
        let (r, out, released) = write_through(msgs, CountingOutput::default()).await;
        r.unwrap();
        assert_eq!(
            (out.writes, out.flushes),
            (1, 1),
            "three queued lines, one write"
        );
        assert_eq!(ids_written(&out), [json!("d1"), json!("d2"), json!("d3")]);
        assert_eq!(released, ["d1", "d2", "d3"]);
    }

    #[tokio::test]
    async fn a_batch_stops_at_its_size_and_the_rest_follows_in_order() {
        let big = "x".repeat(MAX_WRITE_BATCH / 2 + 1);
        let msgs = ["d1", "d2", "d3"].map(|id| done_with_message(id, Some(big.clone())));
        let (r, out, released) = write_through(msgs.to_vec(), CountingOutput::default()).await;
        r.unwrap();
        assert_eq!((out.writes, out.flushes), (2, 2), "two lines fill a batch");
        assert_eq!(ids_written(&out), [json!("d1"), json!("d2"), json!("d3")]);
        assert_eq!(released, ["d1", "d2", "d3"]);
    }

    #[tokio::test]
    async fn a_done_whose_write_or_flush_failed_is_not_released() {
        for (out, what) in [
            (
                CountingOutput {
                    fail_writes: true,
                    ..CountingOutput::default()
                },
                "a done that never reached stdout",
            ),
            (
                CountingOutput {
                    fail_flush: true,
                    ..CountingOutput::default()
                },
                "a done written but never flushed",
            ),
        ] {
            let (r, _, released) = write_through(vec![done("d1")], out).await;
            assert!(r.is_err());
            assert!(released.is_empty(), "{what} must stay unreported");
        }
    }

    fn env(v: Value) -> Result<Envelope, ErrorReply> {
        envelope(v.to_string().as_bytes())
    }

    #[test]
    fn every_contract_message_decodes_by_its_type_name() {
        let mut d = Delegate::new("d1", "c", "t");
        d.max_retries = 5;
        for msg in [
            ToDelegator::Init(Init {
                agents: vec!["http://127.0.0.1:1/card".into()],
                self_url: "http://127.0.0.1:2/".into(),
                ..Init::default()
            }),
            ToDelegator::Delegate(d),
            ToDelegator::Answer(Answer {
                id: "d1".into(),
                text: "x".into(),
            }),
            ToDelegator::Credential(Credential {
                id: "d1".into(),
                credential: "Bearer y".into(),
            }),
            ToDelegator::Cancel(Cancel { id: "d1".into() }),
            ToDelegator::Snapshot,
        ] {
            let line = msg.to_line().unwrap();
            let e = envelope(line.as_bytes()).unwrap();
            assert_eq!(e.ty, msg.type_name());
            assert_eq!(decode_message(&e).unwrap(), msg);
        }
    }

    #[test]
    fn malformed_messages_name_the_field_or_the_type() {
        let e = envelope(b"nope").err().unwrap();
        assert_eq!((e.code, e.id), (DriverErrorCode::BadRequest, None));
        assert!(e.message.starts_with("not JSON"), "{}", e.message);
        let e = env(json!({"id": "x"})).err().unwrap();
        assert_eq!(e.id.as_deref(), Some("x"));
        assert_eq!(e.message, "missing string field \"type\"");
        let bad = env(
            json!({"type": "delegate", "id": "b", "capability": "c", "text": "t",
                             "max_retries": "many"}),
        )
        .unwrap();
        let e = decode_message(&bad).unwrap_err();
        assert_eq!(
            (e.code, e.id.as_deref()),
            (DriverErrorCode::BadRequest, Some("b"))
        );
        assert!(
            e.message.starts_with("delegate: $.max_retries"),
            "{}",
            e.message
        );
        let bad = env(json!({"type": "answer", "id": "b"})).unwrap();
        let e = decode_message(&bad).unwrap_err();
        assert!(
            e.message.starts_with("answer: ") && e.message.contains("text"),
            "{}",
            e.message
        );
        let unknown = env(json!({"type": "teleport", "id": "t"})).unwrap();
        let e = decode_message(&unknown).unwrap_err();
        assert_eq!(
            (e.code, e.id.as_deref()),
            (DriverErrorCode::Unsupported, Some("t"))
        );
    }

    #[test]
    fn init_options_keep_defaults_and_extras() {
        let init: Init = serde_json::from_value(json!({
            "agents": [], "self_url": "http://127.0.0.1:1/",
            "options": {"poll_interval_ms": 20, "request_timeout_ms": 700, "unknown": true}
        }))
        .unwrap();
        let o = Options::from_init(&init.options).unwrap();
        assert_eq!((o.poll_interval_ms, o.request_timeout_ms), (20, 700));
        assert_eq!(o.max_depth, Options::default().max_depth);
        let init: Init = serde_json::from_value(json!({
            "agents": [], "self_url": "http://127.0.0.1:1/",
            "options": {"max_event_bytes": "big"}
        }))
        .unwrap();
        let e = Options::from_init(&init.options).unwrap_err();
        assert!(e.to_string().starts_with("$.max_event_bytes"), "{e}");
    }
}
