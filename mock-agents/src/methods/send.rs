//! `SendMessage` and `SendStreamingMessage`: new work (direct replies, deduplication, `x-deleg`
//! limits, starting the step runner) and continuations of interrupted tasks.

use crate::agent::*;
use crate::builder::Step;
use crate::journal::Event;
use crate::methods::{ok, to_value};
use crate::push::add_push;
use crate::rpc::Call;
use crate::script::*;
use crate::sse::sse_response;
use crate::step_runner::run_task;
use crate::task_events::*;
use a2a_protocol::compat03::ObjectKind;
use a2a_protocol::*;
use axum::http::header;
use axum::response::Response;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

pub(crate) async fn new_work(
    st: &Arc<AgentState>,
    call: &Call,
    req: SendMessageRequest,
    streaming: bool,
    rule: Rule,
    fault: Option<&Fault>,
) -> Response {
    let msg = req.message.clone();
    // Direct answer: a Message, no task.
    if let [ScriptStep::Reply { text, parts }] = rule.steps.as_slice() {
        let n = st.ordinals.fetch_add(1, Ordering::Relaxed);
        let mut all = if text.is_empty() && !parts.is_empty() {
            Vec::new()
        } else {
            vec![Part::text(text.clone())]
        };
        all.extend(parts.iter().map(PartSpec::to_part));
        let reply = Message {
            context_id: Some(
                msg.context_id
                    .clone()
                    .filter(|c| !c.is_empty())
                    .unwrap_or_else(|| st.mint_id("ctx", n)),
            ),
            parts: all,
            ..Message::agent_text(st.make_id("msg", n), "")
        };
        if streaming {
            let (tx, rx) = mpsc::channel(1);
            let _ = tx.try_send(Arc::new(Outgoing::Event(Arc::new(
                StreamResponse::Message(reply),
            ))));
            drop(tx);
            return sse_response(st, call, rx, Vec::new(), &rule.mutate, fault);
        }
        return ok(
            st,
            call,
            ObjectKind::SendMessageResult,
            to_value(&SendMessageResponse::Message(reply)),
            &rule.mutate,
        );
    }
    // Deduplicate a resent messageId.
    if st.spec.dedup_message_id {
        let existing = crate::agent::lock_map(&st.dedup)
            .get(&msg.message_id)
            .cloned();
        if let Some(tid) = existing
            && let Some(e) = st.task(&tid)
        {
            let (tid, ctx) = {
                let g = e.lock();
                (g.task.id.clone(), g.task.context_id.clone())
            };
            st.journal(Event::TaskCreated {
                task_id: tid,
                context_id: ctx,
                message_id: msg.message_id.clone(),
                dedup: true,
            });
            if streaming {
                return stream_task(st, call, &e, fault);
            }
            return answer_with_task(st, call, &e, req.configuration.as_ref(), None).await;
        }
    }
    let n = st.ordinals.fetch_add(1, Ordering::Relaxed);
    let content_key = st.content_key(&msg.parts);
    let task_id = st.mint_id("task", n);
    let context_id = msg
        .context_id
        .clone()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| st.mint_id("ctx", n));
    let mut history_msg = msg.clone();
    history_msg.task_id = Some(task_id.clone());
    history_msg.context_id = Some(context_id.clone());
    let mut task = Task {
        id: task_id.clone(),
        context_id: context_id.clone(),
        history: vec![history_msg],
        ..Default::default()
    };
    task.status = a2a_protocol::TaskStatus {
        state: TaskState::Submitted,
        message: None,
        timestamp: Some(st.clock.now()),
    };
    // Incoming limits.
    let mut rejection = None;
    let x = req.x_deleg();
    if st.spec.enforce_x_deleg {
        match &x {
            Ok(Some(x)) => {
                // The chain may name this agent by its base URL or by its JSON-RPC URL.
                let rpc = a2a_protocol::xdeleg::normalize_url(&st.rpc_url());
                let checked = x
                    .check_incoming(
                        time::OffsetDateTime::now_utc(),
                        st.spec.max_depth,
                        &st.identity(),
                    )
                    .and_then(|()| {
                        if x.chain
                            .iter()
                            .any(|u| a2a_protocol::xdeleg::normalize_url(u) == rpc)
                        {
                            Err(a2a_protocol::xdeleg::LimitViolation::Loop { url: st.rpc_url() })
                        } else {
                            Ok(())
                        }
                    });
                if let Err(v) = checked {
                    rejection = Some(v.to_string());
                }
            }
            Ok(None) => {}
            Err(e) => rejection = Some(format!("malformed x-deleg: {e}")),
        }
    }
    let push_cfg = req
        .configuration
        .as_ref()
        .and_then(|c| c.task_push_notification_config.clone())
        .filter(|_| st.spec.push_notifications);
    let (cont_tx, cont_rx) = mpsc::channel(4);
    let entry = Arc::new(TaskEntry {
        inner: std::sync::Mutex::new(TaskInner {
            task,
            subscribers: Vec::new(),
            cont_tx: Some(cont_tx),
            waiting: false,
            push: Vec::new(),
            push_tx: None,
            mutations: rule.mutate.clone(),
            on_cancel: rule.on_cancel,
            driver: None,
            purged: false,
            frozen: false,
            driver_done: false,
            x_deleg: x.ok().flatten(),
            ordinal: n,
            content_key,
            generated: Default::default(),
        }),
        changed: tokio::sync::Notify::new(),
        emit: tokio::sync::Mutex::new(()),
    });
    crate::agent::lock_map(&st.tasks).insert(task_id.clone(), entry.clone());
    crate::agent::lock_map(&st.order).push(task_id.clone());
    crate::agent::lock_map(&st.dedup)
        .entry(msg.message_id.clone())
        .or_insert(task_id.clone());
    st.journal(Event::TaskCreated {
        task_id: task_id.clone(),
        context_id: context_id.clone(),
        message_id: msg.message_id.clone(),
        dedup: false,
    });
    st.journal(Event::TaskState {
        task_id: task_id.clone(),
        state: TaskState::Submitted.as_str().into(),
    });
    if let Some(mut cfg) = push_cfg {
        cfg.task_id = Some(task_id.clone());
        if cfg.id.is_none() {
            cfg.id = Some(task_id.clone());
        }
        add_push(st, &entry, cfg);
    }
    // Subscribe before the driver starts so a stream sees every event.
    let stream_rx = if streaming {
        Some(subscribe(st, &entry))
    } else {
        None
    };
    let steps = match rejection {
        Some(reason) => {
            st.journal(Event::LimitRejected {
                task_id: task_id.clone(),
                reason: reason.clone(),
            });
            vec![Step::state(TaskState::Rejected).message(&reason).into()]
        }
        // The default script: WORKING, one 64-byte text artifact, COMPLETED.
        None if rule.steps.is_empty() => vec![
            Step::state(TaskState::Working).into(),
            Step::artifacts(1).chunk_bytes(64).into(),
            Step::state(TaskState::Completed).into(),
        ],
        None => rule.steps.clone(),
    };
    let handle = tokio::spawn(run_task(st.clone(), entry.clone(), steps, cont_rx));
    entry.lock().driver = Some(handle.abort_handle());
    if let Some((rx, snapshot)) = stream_rx {
        return sse_response(st, call, rx, vec![snapshot], &rule.mutate, fault);
    }
    answer_with_task(st, call, &entry, req.configuration.as_ref(), None).await
}

/// Wait (bounded by `max_block_ms`) until the task is terminal or interrupted.
pub(crate) async fn wait_settled(st: &AgentState, entry: &TaskEntry) {
    let deadline = tokio::time::Instant::now() + Duration::from_millis(st.spec.max_block_ms);
    loop {
        let notified = entry.changed.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let (s, purged) = {
            let g = entry.lock();
            (g.task.status.state, g.purged)
        };
        if s.is_terminal() || s.is_interrupted() || purged {
            return;
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            return;
        }
    }
}

pub(crate) fn subscribe(
    st: &AgentState,
    entry: &TaskEntry,
) -> (mpsc::Receiver<Arc<Outgoing>>, Arc<Outgoing>) {
    let (tx, rx) = mpsc::channel(SUBSCRIBER_QUEUE);
    let mut g = entry.lock();
    g.subscribers.push(tx);
    let snap = Arc::new(Outgoing::Event(Arc::new(StreamResponse::Task(
        st.present(&g.snapshot(), None),
    ))));
    (rx, snap)
}

pub(crate) fn stream_task(
    st: &Arc<AgentState>,
    call: &Call,
    entry: &Arc<TaskEntry>,
    fault: Option<&Fault>,
) -> Response {
    let (rx, snap) = subscribe(st, entry);
    let m = entry.lock().mutations.clone();
    sse_response(st, call, rx, vec![snap], &m, fault)
}

pub(crate) async fn continue_task(
    st: &Arc<AgentState>,
    call: &Call,
    req: SendMessageRequest,
    streaming: bool,
    fault: Option<&Fault>,
) -> Response {
    let msg = req.message;
    let tid = msg.task_id.clone().unwrap_or_default();
    let Some(entry) = st.task(&tid) else {
        return call.error(st, ErrorCode::TaskNotFound, None, &[("taskId", &tid)]);
    };
    let (state, ctx, waiting, cont_tx) = {
        let g = entry.lock();
        (
            g.task.status.state,
            g.task.context_id.clone(),
            g.waiting,
            g.cont_tx.clone(),
        )
    };
    if state.is_terminal() {
        return call.error(
            st,
            ErrorCode::UnsupportedOperation,
            Some("task is in a terminal state"),
            &[("taskId", &tid)],
        );
    }
    if let Some(c) = &msg.context_id
        && !c.is_empty()
        && *c != ctx
    {
        return call.error(
            st,
            ErrorCode::InvalidParams,
            Some("contextId does not match the task's context"),
            &[("taskId", &tid)],
        );
    }
    {
        let mut g = entry.lock();
        let mut h = msg.clone();
        h.context_id = Some(ctx.clone());
        g.task.history.push(h);
    }
    let authorization = call
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string);
    // A stream subscribes before the answer is handed over, so it sees every event it causes.
    let stream = streaming.then(|| subscribe(st, &entry));
    let mut acked = None;
    match (waiting, cont_tx) {
        (true, Some(tx)) => {
            let (ack_tx, ack_rx) = oneshot::channel();
            let sent = tokio::time::timeout(
                CONTINUATION_TIMEOUT,
                tx.send(Continuation {
                    message: msg.clone(),
                    authorization,
                    ack: ack_tx,
                }),
            )
            .await
            .is_ok_and(|r| r.is_ok());
            if sent {
                acked = tokio::time::timeout(CONTINUATION_TIMEOUT, ack_rx)
                    .await
                    .ok()
                    .and_then(Result::ok);
            }
        }
        _ => {
            st.journal(Event::Continued {
                task_id: tid.clone(),
                message_id: msg.message_id.clone(),
                outcome: "ignored".into(),
            });
        }
    }
    if let Some((rx, snap)) = stream {
        let m = entry.lock().mutations.clone();
        return sse_response(st, call, rx, vec![snap], &m, fault);
    }
    answer_with_task(st, call, &entry, req.configuration.as_ref(), acked).await
}

/// Answer a non-streaming send with its task: once it settled (terminal or interrupted, bounded
/// by `max_block_ms`) unless the client asked to `returnImmediately`, with the history it asked for.
/// An immediate answer to a continuation shows `acked`, the task as the task driver left it when
/// it took the message (later steps race the answer otherwise).
async fn answer_with_task(
    st: &AgentState,
    call: &Call,
    entry: &TaskEntry,
    configuration: Option<&a2a_protocol::SendMessageConfiguration>,
    acked: Option<Task>,
) -> Response {
    let immediate = configuration.is_some_and(|c| c.return_immediately);
    if !immediate {
        wait_settled(st, entry).await;
    }
    let history = configuration.and_then(|c| c.history_length);
    let (t, m) = {
        let g = entry.lock();
        let task = match acked {
            Some(t) if immediate => t,
            _ => g.snapshot(),
        };
        (st.present(&task, history), g.mutations.clone())
    };
    ok(
        st,
        call,
        ObjectKind::SendMessageResult,
        to_value(&SendMessageResponse::Task(t)),
        &m,
    )
}
