//! The delegator side of the driver contract (`docs/driver-protocol.md`): newline-delimited JSON
//! on stdin/stdout, one object per line with a `type` field.
//!
//! Harness to delegator: `init`, `delegate`, `answer`, `credential`, `cancel`, `snapshot`.
//! Delegator to harness: `init_ok`, `state`, `escalate`, `done`, `snapshot_ok`, `error`.
//! Stdout carries only protocol lines; logs go to stderr. At EOF on stdin the delegator finishes
//! its open delegations (each bounded by its deadline), flushes and exits 0.

#[cfg(feature = "planted-bugs")]
use crate::bugs::Bugs;
use crate::engine::{Engine, EngineConfig, EngineError, Event, Options};
use crate::request::DelegationRequest;
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::PathBuf;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// The longest accepted input line (16 MiB).
pub const MAX_LINE_BYTES: u64 = 16 * 1024 * 1024;

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

/// The `init` message.
#[derive(Debug, Clone, Deserialize)]
pub struct InitMsg {
    /// Store directory (falls back to `--store`).
    #[serde(default)]
    pub store_dir: Option<PathBuf>,
    /// Resume open delegations.
    #[serde(default)]
    pub recovering: bool,
    /// Agent card URLs.
    #[serde(default)]
    pub agents: Vec<String>,
    /// Push webhook base URL (`null`: no push).
    #[serde(default)]
    pub webhook_base_url: Option<String>,
    /// Where to bind the webhook receiver (default: host:port of `webhook_base_url`).
    #[serde(default)]
    pub webhook_listen: Option<String>,
    /// This delegator's URL.
    pub self_url: String,
    /// The delegator's own credential (never sent to agents).
    #[serde(default)]
    pub credential: Option<String>,
    /// Options.
    #[serde(default)]
    pub options: Options,
}

#[derive(Debug, Deserialize)]
struct IdText {
    id: String,
    text: String,
}

#[derive(Debug, Deserialize)]
struct IdCred {
    id: String,
    credential: String,
}

#[derive(Debug, Deserialize)]
struct IdOnly {
    id: String,
}

/// An `error` line.
pub fn error_line(id: Option<&str>, code: &str, message: impl Into<String>) -> Value {
    json!({"type": "error", "id": id, "code": code, "message": message.into()})
}

/// The JSON line for an engine event.
pub fn event_line(ev: &Event) -> Value {
    match ev {
        Event::State {
            id,
            state,
            task_id,
            context_id,
        } => json!({"type": "state", "id": id, "state": state.as_str(),
                    "task_id": task_id, "context_id": context_id}),
        Event::Escalate {
            id,
            kind,
            question,
            agent,
            task_id,
        } => json!({"type": "escalate", "id": id, "kind": kind, "question": question,
                    "agent": agent, "task_id": task_id}),
        Event::Done(o) => json!({
            "type": "done",
            "id": o.id,
            "state": o.state.as_str(),
            "reason": o.reason,
            "task_id": o.task_id,
            "context_id": o.context_id,
            "message": o.message,
            "artifacts": o.artifacts.iter().map(|a| json!({
                "artifact_id": a.artifact_id,
                "name": a.name,
                "bytes": a.bytes,
                "sha256": a.sha256,
                "media_type": a.media_type,
                "path": a.path,
            })).collect::<Vec<_>>(),
        }),
    }
}

fn engine_error(id: Option<&str>, e: &EngineError) -> Value {
    match e {
        EngineError::BadRequest(m) => error_line(id, "bad_request", m.clone()),
        other => error_line(id, "internal", other.to_string()),
    }
}

/// Read one line of at most [`MAX_LINE_BYTES`]; `Ok(None)` at EOF. An over-long line is
/// consumed and returned as `Err` text.
async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
) -> Result<Option<Result<Vec<u8>, String>>, std::io::Error> {
    let mut buf = Vec::new();
    let n = (&mut *r)
        .take(MAX_LINE_BYTES)
        .read_until(b'\n', &mut buf)
        .await?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() != Some(&b'\n') && n as u64 == MAX_LINE_BYTES {
        // Skip the rest of the line.
        loop {
            let mut rest = Vec::new();
            let m = (&mut *r)
                .take(MAX_LINE_BYTES)
                .read_until(b'\n', &mut rest)
                .await?;
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

/// Run the driver protocol on `input`/`output` until EOF.
pub async fn drive<R, W>(mut input: R, output: W, opts: DriveOptions) -> Result<(), DriverError>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(v) = out_rx.recv().await {
            let mut line = serde_json::to_vec(&v).unwrap_or_else(|_| b"{}".to_vec());
            line.push(b'\n');
            output.write_all(&line).await?;
            output.flush().await?;
        }
        Ok::<(), std::io::Error>(())
    });
    let mut engine: Option<Engine> = None;
    let mut forwarder: Option<(
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<()>,
    )> = None;
    let send = |v: Value| {
        let _ = out_tx.send(v);
    };
    while let Some(line) = read_line(&mut input).await? {
        let line = match line {
            Ok(l) => l,
            Err(msg) => {
                send(error_line(None, "bad_request", msg));
                continue;
            }
        };
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let v: Value = match serde_json::from_slice(&line) {
            Ok(v) => v,
            Err(e) => {
                send(error_line(None, "bad_request", format!("not JSON: {e}")));
                continue;
            }
        };
        let id = v.get("id").and_then(Value::as_str).map(str::to_string);
        let Some(ty) = v.get("type").and_then(Value::as_str) else {
            send(error_line(
                id.as_deref(),
                "bad_request",
                "missing string field \"type\"",
            ));
            continue;
        };
        match (ty, &engine) {
            ("init", Some(_)) => send(error_line(None, "bad_request", "init was already received")),
            ("init", None) => {
                let init: InitMsg = match a2a_protocol::codec::decode_value(&v) {
                    Ok(i) => i,
                    Err(e) => {
                        send(error_line(None, "bad_request", format!("init: {e}")));
                        continue;
                    }
                };
                let Some(store_dir) = init.store_dir.clone().or_else(|| opts.store.clone()) else {
                    send(error_line(
                        None,
                        "bad_request",
                        "init: store_dir is missing and drive was started without --store",
                    ));
                    continue;
                };
                let cfg = EngineConfig::new(store_dir, init.self_url.clone())
                    .agents(init.agents.clone())
                    .webhook_base_url(init.webhook_base_url.clone())
                    .webhook_listen(init.webhook_listen.clone())
                    .own_credential(init.credential.clone())
                    .options(init.options.clone());
                #[cfg(feature = "planted-bugs")]
                let cfg = cfg.with_bugs(opts.bugs);
                let (ev_tx, mut ev_rx) = mpsc::unbounded_channel();
                match Engine::start(cfg, ev_tx).await {
                    Ok(e) => {
                        let agents: Vec<Value> = {
                            let ok = e.agents().await;
                            let errs = e.card_errors();
                            init.agents
                                .iter()
                                .map(|u| {
                                    if let Some(a) = ok.iter().find(|a| &a.card_url == u) {
                                        json!({"card_url": u, "ok": true, "name": a.card.name,
                                               "protocol_version": a.endpoint.version.as_str()})
                                    } else {
                                        let msg = errs
                                            .iter()
                                            .find(|x| &x.url == u)
                                            .map(|x| x.message.clone())
                                            .unwrap_or_else(|| "card not read".into());
                                        json!({"card_url": u, "ok": false, "error": msg})
                                    }
                                })
                                .collect()
                        };
                        send(json!({
                            "type": "init_ok",
                            "name": "a2a-delegator",
                            "version": env!("CARGO_PKG_VERSION"),
                            "supports": SUPPORTS,
                            "webhook_url": e.webhook_url(),
                            "agents": agents,
                        }));
                        let tx = out_tx.clone();
                        let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
                        forwarder = Some((
                            stop_tx,
                            tokio::spawn(async move {
                                loop {
                                    tokio::select! {
                                        ev = ev_rx.recv() => match ev {
                                            Some(ev) => { let _ = tx.send(event_line(&ev)); }
                                            None => return,
                                        },
                                        _ = &mut stop_rx => {
                                            // Drain what was reported before the stop.
                                            while let Ok(ev) = ev_rx.try_recv() {
                                                let _ = tx.send(event_line(&ev));
                                            }
                                            return;
                                        }
                                    }
                                }
                            }),
                        ));
                        if init.recovering
                            && let Err(err) = e.recover().await
                        {
                            send(engine_error(None, &err));
                        }
                        engine = Some(e);
                    }
                    Err(err) => send(engine_error(None, &err)),
                }
            }
            (_, None) => send(error_line(
                id.as_deref(),
                "bad_request",
                format!("{ty:?} before init"),
            )),
            ("delegate", Some(e)) => {
                let mut body = v.clone();
                if let Value::Object(m) = &mut body {
                    m.remove("type");
                }
                match a2a_protocol::codec::decode_value::<DelegationRequest>(&body) {
                    Ok(req) => {
                        if let Err(err) = e.delegate(req).await {
                            send(engine_error(id.as_deref(), &err));
                        }
                    }
                    Err(err) => send(error_line(
                        id.as_deref(),
                        "bad_request",
                        format!("delegate: {err}"),
                    )),
                }
            }
            ("answer", Some(e)) => match a2a_protocol::codec::decode_value::<IdText>(&v) {
                Ok(m) => {
                    if let Err(err) = e.answer(&m.id, m.text) {
                        send(engine_error(Some(&m.id), &err));
                    }
                }
                Err(err) => send(error_line(
                    id.as_deref(),
                    "bad_request",
                    format!("answer: {err}"),
                )),
            },
            ("credential", Some(e)) => match a2a_protocol::codec::decode_value::<IdCred>(&v) {
                Ok(m) => {
                    if let Err(err) = e.credential(&m.id, m.credential) {
                        send(engine_error(Some(&m.id), &err));
                    }
                }
                Err(err) => send(error_line(
                    id.as_deref(),
                    "bad_request",
                    format!("credential: {err}"),
                )),
            },
            ("cancel", Some(e)) => match a2a_protocol::codec::decode_value::<IdOnly>(&v) {
                Ok(m) => {
                    if let Err(err) = e.cancel(&m.id) {
                        send(engine_error(Some(&m.id), &err));
                    }
                }
                Err(err) => send(error_line(
                    id.as_deref(),
                    "bad_request",
                    format!("cancel: {err}"),
                )),
            },
            ("snapshot", Some(e)) => match e.snapshot().await {
                Ok(records) => send(json!({"type": "snapshot_ok", "records": records})),
                Err(err) => send(engine_error(None, &err)),
            },
            (other, Some(_)) => send(error_line(
                id.as_deref(),
                "unsupported",
                format!("message type {other:?} is not supported"),
            )),
        }
    }
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
    match writer.await {
        Ok(r) => r?,
        Err(e) => return Err(DriverError::Io(std::io::Error::other(e.to_string()))),
    }
    Ok(())
}
