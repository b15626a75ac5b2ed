//! Method dispatch and the task driver: what an agent does with each JSON-RPC method, and the
//! background run of a task's [`ScriptStep`]s (states, artifacts, input and auth rounds,
//! sub-delegation, violations), streaming every event to subscribers and webhooks.

use crate::agent::{
    AgentState, Call, Continuation, Outgoing, TaskEntry, TaskInner, hang, pre_fault, respond,
    select_rule, status, trickle,
};
use crate::content::{ContentStream, hex};
use crate::journal::Event;
use crate::script::{
    CancelBehaviour, ContentKind, Fault, Mutation, OnWrongAnswer, Rule, ScriptStep,
};
use a2a_protocol::compat03::{self, ObjectKind};
use a2a_protocol::xdeleg::XDeleg;
use a2a_protocol::{
    Artifact, ErrorCode, GetTaskRequest, Id, JsonRpcResponse,
    ListTaskPushNotificationConfigsRequest, ListTaskPushNotificationConfigsResponse,
    ListTasksRequest, ListTasksResponse, Message, Part, SendMessageRequest, SendMessageResponse,
    StreamResponse, SubscribeToTaskRequest, Task, TaskArtifactUpdateEvent,
    TaskPushNotificationConfig, TaskPushNotificationConfigRef, TaskState, TaskStatusUpdateEvent,
    codec,
};
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Capacity of each subscriber's queue: a slow reader slows the task, like TCP backpressure.
const SUBSCRIBER_QUEUE: usize = 64;
/// Longest wait for a stalled subscriber to take an event before it is dropped (its stream
/// then ends), so one reader that stops reading cannot stop a task forever.
const SUBSCRIBER_SEND_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for the task driver to take and acknowledge a continuation.
const CONTINUATION_TIMEOUT: Duration = Duration::from_secs(10);

/// Decode params; the error is the ready -32602 response.
#[allow(clippy::result_large_err)]
fn parse<T: serde::de::DeserializeOwned>(
    st: &AgentState,
    call: &Call,
    params: &Value,
) -> Result<T, Response> {
    codec::decode_value(params)
        .map_err(|e| call.error(st, ErrorCode::InvalidParams, Some(&e.to_string()), &[]))
}

fn ok(
    st: &AgentState,
    call: &Call,
    kind: ObjectKind,
    v: Value,
    mutations: &[Mutation],
) -> Response {
    let v = if call.v03 {
        compat03::to_v03(kind, &v).unwrap_or(v)
    } else {
        v
    };
    respond(st, call, Ok(v), mutations)
}

/// Dispatch one JSON-RPC call (already version-checked and translated to 1.0 names).
pub(crate) async fn dispatch(
    st: Arc<AgentState>,
    mut call: Call,
    method: String,
    params: Value,
) -> Response {
    let is_send = method == "SendMessage" || method == "SendStreamingMessage";
    let continues = is_send
        && params
            .pointer("/message/taskId")
            .and_then(Value::as_str)
            .is_some();
    let round = if is_send && !continues {
        st.sends.fetch_add(1, Ordering::Relaxed) + 1
    } else {
        0
    };
    let rule = select_rule(&st, &method, &params, round);
    let fault = rule.as_ref().and_then(|(_, r)| r.fault.clone());
    if let Some(resp) = pre_fault(&st, &call, fault.as_ref()).await {
        return resp;
    }
    call.dropping = matches!(fault, Some(Fault::DropResponse));
    let resp = handle(
        &st,
        &call,
        &method,
        params,
        continues,
        rule.map(|(_, r)| r),
        fault.as_ref(),
    )
    .await;
    match fault {
        Some(Fault::DropResponse) => {
            st.journal(Event::Fault {
                req: call.req,
                kind: "drop_response".into(),
            });
            st.journal(Event::ConnectionDropped {
                req: call.req,
                phase: "after_processing".into(),
            });
            drop(resp);
            call.ctl.abort();
            hang().await
        }
        Some(Fault::Trickle { bytes_per_sec }) if !is_event_stream(&resp) => {
            st.journal(Event::Fault {
                req: call.req,
                kind: "trickle".into(),
            });
            let (parts, body) = resp.into_parts();
            // A unary body is already in memory; re-send it slowly.
            match axum::body::to_bytes(body, usize::MAX).await {
                Ok(bytes) => Response::from_parts(parts, trickle(bytes.to_vec(), bytes_per_sec)),
                Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
            }
        }
        _ => resp,
    }
}

fn is_event_stream(resp: &Response) -> bool {
    resp.headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"))
}

/// Run one method (after pre-faults) and produce its response.
async fn handle(
    st: &Arc<AgentState>,
    call: &Call,
    method: &str,
    params: Value,
    continues: bool,
    rule: Option<Rule>,
    fault: Option<&Fault>,
) -> Response {
    // A scripted error answers whatever the rule matched, before anything is processed.
    if let Some(ScriptStep::Error { code, message }) = rule
        .as_ref()
        .and_then(|r| r.steps.first())
        .filter(|_| rule.as_ref().is_some_and(|r| r.steps.len() == 1))
    {
        let e = ErrorCode::from_code(*code).to_error(message.as_deref(), &[]);
        let m = rule.as_ref().map(|r| r.mutate.clone()).unwrap_or_default();
        return respond(st, call, Err(e), &m);
    }
    match method {
        "SendMessage" | "SendStreamingMessage" => {
            let streaming = method == "SendStreamingMessage";
            if streaming && !st.spec.streaming {
                return call.error(
                    st,
                    ErrorCode::UnsupportedOperation,
                    Some("streaming is not supported"),
                    &[],
                );
            }
            let req: SendMessageRequest = match parse(st, call, &params) {
                Ok(r) => r,
                Err(resp) => return resp,
            };
            if req.message.message_id.is_empty() || req.message.parts.is_empty() {
                return call.error(
                    st,
                    ErrorCode::InvalidParams,
                    Some("message.messageId and message.parts are required"),
                    &[],
                );
            }
            if continues {
                continue_task(st, call, req, streaming, fault).await
            } else {
                new_work(st, call, req, streaming, rule.unwrap_or_default(), fault).await
            }
        }
        "GetTask" => {
            let req: GetTaskRequest = match parse(st, call, &params) {
                Ok(r) => r,
                Err(resp) => return resp,
            };
            if req.history_length.is_some_and(|h| h < 0) {
                return call.error(
                    st,
                    ErrorCode::InvalidParams,
                    Some("historyLength must not be negative"),
                    &[],
                );
            }
            match st.task(&req.id) {
                None => call.error(st, ErrorCode::TaskNotFound, None, &[("taskId", &req.id)]),
                Some(e) => {
                    let (t, m) = {
                        let g = e.lock();
                        (
                            with_history(&g.task, req.history_length),
                            g.mutations.clone(),
                        )
                    };
                    ok(st, call, ObjectKind::Task, to_value(&t), &m)
                }
            }
        }
        "ListTasks" => list_tasks(st, call, &params),
        "CancelTask" => cancel_task(st, call, &params).await,
        "SubscribeToTask" => {
            if !st.spec.streaming {
                return call.error(
                    st,
                    ErrorCode::UnsupportedOperation,
                    Some("streaming is not supported"),
                    &[],
                );
            }
            let req: SubscribeToTaskRequest = match parse(st, call, &params) {
                Ok(r) => r,
                Err(resp) => return resp,
            };
            let id = req.id;
            match st.task(&id) {
                None => call.error(st, ErrorCode::TaskNotFound, None, &[("taskId", &id)]),
                Some(e) => {
                    if e.lock().task.status.state.is_terminal() {
                        return call.error(
                            st,
                            ErrorCode::UnsupportedOperation,
                            Some("task is in a terminal state"),
                            &[("taskId", &id)],
                        );
                    }
                    stream_task(st, call, &e, fault)
                }
            }
        }
        "CreateTaskPushNotificationConfig"
        | "GetTaskPushNotificationConfig"
        | "ListTaskPushNotificationConfigs"
        | "DeleteTaskPushNotificationConfig" => push_config(st, call, method, &params),
        "GetExtendedAgentCard" => call.error(
            st,
            ErrorCode::UnsupportedOperation,
            Some("no extended agent card"),
            &[],
        ),
        other => call.error(
            st,
            ErrorCode::MethodNotFound,
            Some(&format!("unknown method {other:?}")),
            &[],
        ),
    }
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn with_history(t: &Task, n: Option<i32>) -> Task {
    let mut t = t.clone();
    if let Some(n) = n {
        let n = n.max(0) as usize;
        let len = t.history.len();
        t.history = t.history.split_off(len.saturating_sub(n));
    }
    t
}

async fn new_work(
    st: &Arc<AgentState>,
    call: &Call,
    req: SendMessageRequest,
    streaming: bool,
    rule: Rule,
    fault: Option<&Fault>,
) -> Response {
    let msg = req.message.clone();
    // Direct answer: a Message, no task.
    if let [ScriptStep::Reply { text }] = rule.steps.as_slice() {
        let n = st.ordinals.fetch_add(1, Ordering::Relaxed);
        let reply = Message {
            context_id: Some(
                msg.context_id
                    .clone()
                    .filter(|c| !c.is_empty())
                    .unwrap_or_else(|| st.make_id("ctx", n)),
            ),
            ..Message::agent_text(st.make_id("msg", n), text.clone())
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
            let configuration = req.configuration.as_ref();
            if !configuration.is_some_and(|c| c.return_immediately) {
                wait_settled(st, &e).await;
            }
            let (t, m) = {
                let g = e.lock();
                (
                    with_history(&g.task, configuration.and_then(|c| c.history_length)),
                    g.mutations.clone(),
                )
            };
            return ok(
                st,
                call,
                ObjectKind::SendMessageResult,
                to_value(&SendMessageResponse::Task(t)),
                &m,
            );
        }
    }
    let n = st.ordinals.fetch_add(1, Ordering::Relaxed);
    let task_id = st.make_id("task", n);
    let context_id = msg
        .context_id
        .clone()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| st.make_id("ctx", n));
    let mut history_msg = msg.clone();
    history_msg.task_id = Some(task_id.clone());
    history_msg.context_id = Some(context_id.clone());
    let mut task = Task {
        id: task_id.clone(),
        context_id: context_id.clone(),
        history: vec![history_msg],
        ..Default::default()
    };
    task.status = a2a_protocol::TaskStatus::new(TaskState::Submitted);
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
        }),
        changed: tokio::sync::Notify::new(),
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
        Some(subscribe(&entry))
    } else {
        None
    };
    let steps = match rejection {
        Some(reason) => {
            st.journal(Event::LimitRejected {
                task_id: task_id.clone(),
                reason: reason.clone(),
            });
            vec![ScriptStep::State {
                state: "TASK_STATE_REJECTED".into(),
                message: Some(reason),
                delay_ms: 0,
            }]
        }
        None if rule.steps.is_empty() => vec![
            ScriptStep::State {
                state: "TASK_STATE_WORKING".into(),
                message: None,
                delay_ms: 0,
            },
            ScriptStep::Artifacts {
                count: 1,
                chunks: 1,
                chunk_bytes: 64,
                content: ContentKind::Text,
                text: None,
                interleave: false,
                media_type: None,
                omit_last_chunk: false,
                delay_ms: 0,
            },
            ScriptStep::State {
                state: "TASK_STATE_COMPLETED".into(),
                message: None,
                delay_ms: 0,
            },
        ],
        None => rule.steps.clone(),
    };
    let handle = tokio::spawn(run_task(st.clone(), entry.clone(), steps, cont_rx));
    entry.lock().driver = Some(handle.abort_handle());
    if let Some((rx, snapshot)) = stream_rx {
        return sse_response(st, call, rx, vec![snapshot], &rule.mutate, fault);
    }
    let return_immediately = req
        .configuration
        .as_ref()
        .is_some_and(|c| c.return_immediately);
    if !return_immediately {
        wait_settled(st, &entry).await;
    }
    let (t, m) = {
        let g = entry.lock();
        (
            with_history(
                &g.task,
                req.configuration.as_ref().and_then(|c| c.history_length),
            ),
            g.mutations.clone(),
        )
    };
    ok(
        st,
        call,
        ObjectKind::SendMessageResult,
        to_value(&SendMessageResponse::Task(t)),
        &m,
    )
}

/// Wait (bounded by `max_block_ms`) until the task is terminal or interrupted.
async fn wait_settled(st: &AgentState, entry: &TaskEntry) {
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

fn subscribe(entry: &TaskEntry) -> (mpsc::Receiver<Arc<Outgoing>>, Arc<Outgoing>) {
    let (tx, rx) = mpsc::channel(SUBSCRIBER_QUEUE);
    let mut g = entry.lock();
    g.subscribers.push(tx);
    let snap = Arc::new(Outgoing::Event(Arc::new(StreamResponse::Task(
        g.task.clone(),
    ))));
    (rx, snap)
}

fn stream_task(
    st: &Arc<AgentState>,
    call: &Call,
    entry: &Arc<TaskEntry>,
    fault: Option<&Fault>,
) -> Response {
    let (rx, snap) = subscribe(entry);
    let m = entry.lock().mutations.clone();
    sse_response(st, call, rx, vec![snap], &m, fault)
}

async fn continue_task(
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
    let stream = streaming.then(|| subscribe(&entry));
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
                let _ = tokio::time::timeout(CONTINUATION_TIMEOUT, ack_rx).await;
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
    let return_immediately = req
        .configuration
        .as_ref()
        .is_some_and(|c| c.return_immediately);
    if !return_immediately {
        wait_settled(st, &entry).await;
    }
    let (t, m) = {
        let g = entry.lock();
        (
            with_history(
                &g.task,
                req.configuration.as_ref().and_then(|c| c.history_length),
            ),
            g.mutations.clone(),
        )
    };
    ok(
        st,
        call,
        ObjectKind::SendMessageResult,
        to_value(&SendMessageResponse::Task(t)),
        &m,
    )
}

fn list_tasks(st: &AgentState, call: &Call, params: &Value) -> Response {
    let req: ListTasksRequest = match parse(st, call, params) {
        Ok(r) => r,
        Err(resp) => return resp,
    };
    let page_size = req.page_size.unwrap_or(50);
    if !(1..=100).contains(&page_size) {
        return call.error(
            st,
            ErrorCode::InvalidParams,
            Some("pageSize must be between 1 and 100"),
            &[],
        );
    }
    if req.history_length.is_some_and(|h| h < 0) {
        return call.error(
            st,
            ErrorCode::InvalidParams,
            Some("historyLength must not be negative"),
            &[],
        );
    }
    let offset: usize = match req.page_token.as_deref().filter(|t| !t.is_empty()) {
        None => 0,
        Some(t) => match t.strip_prefix("offset-").and_then(|n| n.parse().ok()) {
            Some(n) => n,
            None => {
                return call.error(st, ErrorCode::InvalidParams, Some("invalid pageToken"), &[]);
            }
        },
    };
    let ids = crate::agent::lock_map(&st.order).clone();
    let mut tasks: Vec<Task> = ids
        .iter()
        .filter_map(|id| st.task(id))
        .map(|e| e.lock().task.clone())
        .filter(|t| req.context_id.as_ref().is_none_or(|c| *c == t.context_id))
        .filter(|t| {
            req.status
                .filter(|s| *s != TaskState::Unspecified)
                .is_none_or(|s| s == t.status.state)
        })
        .filter(|t| {
            req.status_timestamp_after
                .is_none_or(|after| t.status.timestamp.is_some_and(|ts| ts >= after))
        })
        .collect();
    // Newest status first; ties keep creation order reversed for stability.
    tasks.reverse();
    tasks.sort_by_key(|t| std::cmp::Reverse(t.status.timestamp));
    let total = tasks.len();
    let page: Vec<Task> = tasks
        .into_iter()
        .skip(offset)
        .take(page_size as usize)
        .map(|mut t| {
            if req.include_artifacts != Some(true) {
                t.artifacts.clear();
            }
            with_history(&t, req.history_length)
        })
        .collect();
    let next = offset + page.len();
    let resp = ListTasksResponse {
        tasks: page,
        next_page_token: if next < total {
            format!("offset-{next}")
        } else {
            String::new()
        },
        page_size,
        total_size: total as i32,
    };
    // ListTasksResponse fields are all required: emit them even when empty.
    let mut v = to_value(&resp);
    if let Some(o) = v.as_object_mut() {
        o.entry("tasks").or_insert(json!([]));
    }
    respond(st, call, Ok(v), &[])
}

async fn cancel_task(st: &Arc<AgentState>, call: &Call, params: &Value) -> Response {
    let req: a2a_protocol::CancelTaskRequest = match parse(st, call, params) {
        Ok(r) => r,
        Err(resp) => return resp,
    };
    let id = req.id;
    let Some(entry) = st.task(&id) else {
        return call.error(st, ErrorCode::TaskNotFound, None, &[("taskId", &id)]);
    };
    // Check and claim the task in one critical section, so a driver that completes at the same
    // moment cannot be overwritten (terminal states never change, R23).
    let (behaviour, m) = {
        let mut g = entry.lock();
        if g.task.status.state.is_terminal() {
            drop(g);
            return call.error(st, ErrorCode::TaskNotCancelable, None, &[("taskId", &id)]);
        }
        if g.on_cancel != CancelBehaviour::Ignore {
            g.frozen = true;
            if let Some(h) = g.driver.take() {
                h.abort();
            }
        }
        (g.on_cancel, g.mutations.clone())
    };
    match behaviour {
        CancelBehaviour::Cancel => {
            apply_state(
                st,
                &entry,
                TaskState::Canceled,
                Some("canceled by client"),
                true,
            )
            .await;
            finish_task(&entry, "terminal").await;
            let t = entry.lock().task.clone();
            ok(st, call, ObjectKind::Task, to_value(&t), &m)
        }
        CancelBehaviour::CompleteFirst => {
            apply_state(
                st,
                &entry,
                TaskState::Completed,
                Some("completed before the cancel arrived"),
                true,
            )
            .await;
            finish_task(&entry, "terminal").await;
            call.error(
                st,
                ErrorCode::TaskNotCancelable,
                Some("task completed before it could be canceled"),
                &[("taskId", &id)],
            )
        }
        CancelBehaviour::Ignore => {
            let t = entry.lock().task.clone();
            ok(st, call, ObjectKind::Task, to_value(&t), &m)
        }
    }
}

fn push_config(st: &Arc<AgentState>, call: &Call, method: &str, params: &Value) -> Response {
    if !st.spec.push_notifications {
        return call.error(st, ErrorCode::PushNotificationNotSupported, None, &[]);
    }
    match method {
        "CreateTaskPushNotificationConfig" => {
            let mut cfg: TaskPushNotificationConfig = match parse(st, call, params) {
                Ok(c) => c,
                Err(r) => return r,
            };
            let tid = cfg.task_id.clone().unwrap_or_default();
            let Some(entry) = st.task(&tid) else {
                return call.error(st, ErrorCode::TaskNotFound, None, &[("taskId", &tid)]);
            };
            if cfg.url.is_empty() {
                return call.error(st, ErrorCode::InvalidParams, Some("url is required"), &[]);
            }
            if cfg.id.as_deref().is_none_or(str::is_empty) {
                cfg.id = Some(tid.clone());
            }
            add_push(st, &entry, cfg.clone());
            ok(st, call, ObjectKind::PushConfig, to_value(&cfg), &[])
        }
        "GetTaskPushNotificationConfig" | "DeleteTaskPushNotificationConfig" => {
            let r: TaskPushNotificationConfigRef = match parse(st, call, params) {
                Ok(c) => c,
                Err(r) => return r,
            };
            let Some(entry) = st.task(&r.task_id) else {
                return call.error(st, ErrorCode::TaskNotFound, None, &[("taskId", &r.task_id)]);
            };
            let mut g = entry.lock();
            if method == "DeleteTaskPushNotificationConfig" {
                g.push.retain(|c| c.id.as_deref() != Some(r.id.as_str()));
                drop(g);
                return ok(st, call, ObjectKind::Empty, json!({}), &[]);
            }
            match g
                .push
                .iter()
                .find(|c| c.id.as_deref() == Some(r.id.as_str()))
                .cloned()
            {
                Some(c) => {
                    drop(g);
                    ok(st, call, ObjectKind::PushConfig, to_value(&c), &[])
                }
                None => {
                    drop(g);
                    call.error(
                        st,
                        ErrorCode::TaskNotFound,
                        Some("push notification config not found"),
                        &[("taskId", &r.task_id)],
                    )
                }
            }
        }
        _ => {
            let r: ListTaskPushNotificationConfigsRequest = match parse(st, call, params) {
                Ok(c) => c,
                Err(r) => return r,
            };
            let Some(entry) = st.task(&r.task_id) else {
                return call.error(st, ErrorCode::TaskNotFound, None, &[("taskId", &r.task_id)]);
            };
            let configs = entry.lock().push.clone();
            let resp = ListTaskPushNotificationConfigsResponse {
                configs,
                next_page_token: None,
            };
            ok(st, call, ObjectKind::PushConfigList, to_value(&resp), &[])
        }
    }
}

fn add_push(st: &Arc<AgentState>, entry: &Arc<TaskEntry>, cfg: TaskPushNotificationConfig) {
    let mut g = entry.lock();
    let id = cfg.id.clone();
    g.push.retain(|c| c.id != id);
    g.push.push(cfg);
    // A worker delivers the task's future events; a finished task has none left.
    if g.push_tx.is_none() && !g.driver_done {
        let (tx, rx) = mpsc::channel(1024);
        g.push_tx = Some(tx);
        let task_id = g.task.id.clone();
        tokio::spawn(push_worker(st.clone(), entry.clone(), task_id, rx));
    }
}

fn is_loopback(url: &str) -> bool {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .unwrap_or("");
    let host = rest.split(['/', '?']).next().unwrap_or("");
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    if host.starts_with("[::1]") {
        return true;
    }
    let name = host.split(':').next().unwrap_or("");
    name == "localhost"
        || name
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

async fn push_worker(
    st: Arc<AgentState>,
    entry: Arc<TaskEntry>,
    task_id: String,
    mut rx: mpsc::Receiver<Arc<StreamResponse>>,
) {
    while let Some(ev) = rx.recv().await {
        let (configs, mutations) = {
            let g = entry.lock();
            (g.push.clone(), g.mutations.clone())
        };
        let mut body = to_value(ev.as_ref());
        mutate(&mut body, &mutations);
        for cfg in configs {
            for _ in 0..=st.spec.push_duplicates {
                if !is_loopback(&cfg.url) {
                    st.journal(Event::Push {
                        task_id: task_id.clone(),
                        url: cfg.url.clone(),
                        status: None,
                        error: Some(
                            "refused: webhook URL is not loopback (SSRF guard, R53)".into(),
                        ),
                    });
                    continue;
                }
                let mut rb = st
                    .net
                    .http
                    .post(&cfg.url)
                    .header(header::CONTENT_TYPE, "application/a2a+json")
                    .timeout(Duration::from_secs(10))
                    .json(&body);
                if let Some(a) = &cfg.authentication {
                    rb = rb.header(
                        header::AUTHORIZATION,
                        format!("{} {}", a.scheme, a.credentials.clone().unwrap_or_default()),
                    );
                }
                if let Some(t) = &cfg.token {
                    rb = rb.header("X-A2A-Notification-Token", t);
                }
                let (status, error) = match rb.send().await {
                    Ok(r) => (Some(r.status().as_u16()), None),
                    Err(e) => (None, Some(e.to_string())),
                };
                st.journal(Event::Push {
                    task_id: task_id.clone(),
                    url: cfg.url.clone(),
                    status,
                    error,
                });
            }
        }
    }
}

/// Encode one SSE frame for a JSON-RPC response around `result`.
fn frame(id: &Id, result: &Value, mutations: &[Mutation]) -> (Vec<u8>, Value) {
    let mut v = json!({"jsonrpc": "2.0", "id": id, "result": result});
    mutate(&mut v, mutations);
    let text = serde_json::to_string(&v).unwrap_or_default();
    let mut out = Vec::with_capacity(text.len() + 8);
    a2a_protocol::sse::encode_event(&mut out, None, &text);
    (out, v)
}

struct StreamState {
    st: Arc<AgentState>,
    req: u64,
    id: Id,
    v03: bool,
    mutations: Vec<Mutation>,
    first: std::vec::IntoIter<Arc<Outgoing>>,
    rx: mpsc::Receiver<Arc<Outgoing>>,
    index: u32,
    close_after: Option<u32>,
    reset_after: Option<u32>,
    ctl: crate::server::ConnControl,
    /// Half an event went out: reset the connection at the next poll.
    resetting: bool,
    /// The end of the stream is journaled (otherwise dropping it means the client went away).
    closed: bool,
}

impl StreamState {
    fn close(&mut self, reason: &str) {
        self.closed = true;
        self.st.journal(Event::StreamClosed {
            req: self.req,
            events: self.index,
            reason: reason.into(),
        });
    }
}

impl Drop for StreamState {
    fn drop(&mut self) {
        if !self.closed {
            self.close("client_gone");
        }
    }
}

/// Encode the next item of a stream, or `None` when it closes.
async fn next_frame(s: &mut StreamState) -> Option<Vec<u8>> {
    if s.close_after == Some(s.index) {
        s.st.journal(Event::Fault {
            req: s.req,
            kind: "close_after".into(),
        });
        s.close("fault");
        return None;
    }
    let next = match s.first.next() {
        Some(o) => Some(o),
        None => s.rx.recv().await,
    };
    let Some(out) = next else {
        s.close("task_ended");
        return None;
    };
    let bytes = match out.as_ref() {
        Outgoing::Close(reason) => {
            s.close(reason);
            return None;
        }
        Outgoing::Event(ev) => {
            let mut result = to_value(ev.as_ref());
            if s.v03 {
                result = compat03::to_v03(ObjectKind::StreamResult, &result).unwrap_or(result);
            }
            let (b, v) = frame(&s.id, &result, &s.mutations);
            s.st.journal(Event::SseEvent {
                req: s.req,
                index: s.index,
                data: s.st.net.journal.summarise(&v),
            });
            b
        }
        Outgoing::Raw(result) => {
            let (b, v) = frame(&s.id, result, &s.mutations);
            s.st.journal(Event::SseEvent {
                req: s.req,
                index: s.index,
                data: s.st.net.journal.summarise(&v),
            });
            b
        }
        Outgoing::RawText(text) => {
            let mut b = Vec::new();
            a2a_protocol::sse::encode_event(&mut b, None, text);
            s.st.journal(Event::SseEvent {
                req: s.req,
                index: s.index,
                data: s.st.net.journal.summarise(&json!(text)),
            });
            b
        }
        Outgoing::Huge(n) => {
            let mut b = Vec::with_capacity(n + 16);
            b.extend_from_slice(b"data: ");
            b.resize(n + 6, b'x');
            b.extend_from_slice(b"\n\n");
            s.st.journal(Event::SseEvent {
                req: s.req,
                index: s.index,
                data: json!(format!("<huge event of {n} bytes>")),
            });
            b
        }
    };
    if s.reset_after == Some(s.index) {
        s.st.journal(Event::Fault {
            req: s.req,
            kind: "reset_after".into(),
        });
        s.st.journal(Event::ConnectionDropped {
            req: s.req,
            phase: "mid_event".into(),
        });
        s.closed = true;
        s.resetting = true;
        return Some(bytes[..bytes.len() / 2].to_vec());
    }
    s.index += 1;
    Some(bytes)
}

fn sse_response(
    st: &Arc<AgentState>,
    call: &Call,
    rx: mpsc::Receiver<Arc<Outgoing>>,
    first: Vec<Arc<Outgoing>>,
    mutations: &[Mutation],
    fault: Option<&Fault>,
) -> Response {
    let (close_after, reset_after) = match fault {
        Some(Fault::CloseAfter { events }) => (Some(*events), None),
        Some(Fault::ResetAfter { events }) => (None, Some(*events)),
        _ => (None, None),
    };
    let state = StreamState {
        st: st.clone(),
        req: call.req,
        id: call.id.clone(),
        v03: call.v03,
        mutations: mutations.to_vec(),
        first: first.into_iter(),
        rx,
        index: 0,
        close_after,
        reset_after,
        ctl: call.ctl.clone(),
        resetting: false,
        // A response that will be dropped is never seen: journal nothing about it.
        closed: call.dropping,
    };
    if !call.dropping {
        st.journal(Event::Response {
            req: call.req,
            status: 200,
            rpc_error: None,
            body: json!("<text/event-stream>"),
        });
    }
    let stream = futures::stream::unfold(state, |mut s| async move {
        if s.resetting {
            // Give the half event time to reach the socket, then reset the connection; the
            // reset drops this stream, so the wait below ends either way.
            tokio::time::sleep(Duration::from_millis(50)).await;
            s.ctl.abort();
            tokio::time::sleep(Duration::from_secs(30)).await;
            return None;
        }
        let b = next_frame(&mut s).await?;
        Some((Ok::<Bytes, std::io::Error>(Bytes::from(b)), s))
    });
    let body = match fault {
        Some(Fault::Trickle { bytes_per_sec }) => {
            st.journal(Event::Fault {
                req: call.req,
                kind: "trickle".into(),
            });
            let slice = usize::try_from(*bytes_per_sec / 20)
                .unwrap_or(usize::MAX)
                .max(1);
            use futures::StreamExt;
            Body::from_stream(stream.flat_map(move |r| {
                let chunks: Vec<Result<Bytes, std::io::Error>> = match r {
                    Ok(b) => b
                        .chunks(slice)
                        .map(|c| Ok(Bytes::copy_from_slice(c)))
                        .collect(),
                    Err(e) => vec![Err(e)],
                };
                futures::stream::iter(chunks).then(|c| async move {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    c
                })
            }))
        }
        _ => Body::from_stream(stream),
    };
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-store")
        .body(body)
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Apply deliberate wire mutations to an outgoing JSON-RPC response or event.
pub(crate) fn mutate(v: &mut Value, mutations: &[Mutation]) {
    for m in mutations {
        match m {
            Mutation::WrongRpcId => {
                if let Some(o) = v.as_object_mut()
                    && o.contains_key("jsonrpc")
                {
                    o.insert("id".into(), json!("wrong-id-from-mock"));
                }
            }
            Mutation::UnknownField => {
                if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut) {
                    r.insert("mockExtraField".into(), json!(true));
                }
            }
            Mutation::LegacyFields => {
                // A bare Task result (GetTask, CancelTask) carries its own `kind`.
                if let Some(r) = v.get_mut("result").and_then(Value::as_object_mut)
                    && r.contains_key("id")
                    && r.contains_key("status")
                {
                    r.insert("kind".into(), json!("task"));
                }
                legacy(v)
            }
            Mutation::LowercaseEnums => lowercase(v),
        }
    }
}

/// Add 0.3 `kind` discriminators (and `final`, `index`) to every wrapped object.
fn legacy(v: &mut Value) {
    walk(v, &mut |k, o| match k {
        "task" => {
            o.insert("kind".into(), json!("task"));
        }
        "message" => {
            o.insert("kind".into(), json!("message"));
        }
        "statusUpdate" => {
            o.insert("kind".into(), json!("status-update"));
            let fin = o
                .get("status")
                .and_then(|s| s.get("state"))
                .and_then(Value::as_str)
                .is_some_and(compat03::is_final_state);
            o.insert("final".into(), json!(fin));
        }
        "artifactUpdate" => {
            o.insert("kind".into(), json!("artifact-update"));
            o.insert("index".into(), json!(0));
        }
        _ => {}
    });
}

fn walk(v: &mut Value, f: &mut impl FnMut(&str, &mut serde_json::Map<String, Value>)) {
    if let Value::Object(o) = v {
        for (k, x) in o.iter_mut() {
            if let Value::Object(inner) = x {
                f(k, inner);
            }
            walk(x, f);
        }
    } else if let Value::Array(a) = v {
        for x in a {
            walk(x, f);
        }
    }
}

fn lowercase(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if k == "state" {
                    if let Some(s) = x.as_str().and_then(compat03::state_to_v03) {
                        *x = json!(s);
                    }
                } else if k == "role" {
                    if let Some(s) = x.as_str().and_then(compat03::role_to_v03) {
                        *x = json!(s);
                    }
                } else {
                    lowercase(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(lowercase),
        _ => {}
    }
}

/// Send an outgoing item to every subscriber (dropping the ones that left or stopped reading
/// for [`SUBSCRIBER_SEND_TIMEOUT`]) and, for events, to the webhooks.
async fn broadcast(entry: &TaskEntry, out: Outgoing) {
    let out = Arc::new(out);
    let (subs, push_tx) = {
        let g = entry.lock();
        (g.subscribers.clone(), g.push_tx.clone())
    };
    if let (Outgoing::Event(ev), Some(tx)) = (out.as_ref(), push_tx) {
        let _ = tokio::time::timeout(SUBSCRIBER_SEND_TIMEOUT, tx.send(ev.clone())).await;
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

async fn close_streams(entry: &TaskEntry, reason: &'static str) {
    broadcast(entry, Outgoing::Close(reason)).await;
    entry.lock().subscribers.clear();
}

/// The task's driver is done (or was stopped): close its streams and stop its push worker once
/// it has delivered what is queued.
async fn finish_task(entry: &TaskEntry, reason: &'static str) {
    close_streams(entry, reason).await;
    let mut g = entry.lock();
    g.driver_done = true;
    g.push_tx = None;
}

/// Set a task's state and broadcast the status update; `false` when the task was frozen by a
/// cancel (then nothing changes).
async fn set_state(
    st: &AgentState,
    entry: &TaskEntry,
    state: TaskState,
    text: Option<&str>,
) -> bool {
    apply_state(st, entry, state, text, false).await
}

async fn apply_state(
    st: &AgentState,
    entry: &TaskEntry,
    state: TaskState,
    text: Option<&str>,
    by_cancel: bool,
) -> bool {
    let ev = {
        let mut g = entry.lock();
        if g.frozen && !by_cancel {
            return false;
        }
        let n = g.ordinal;
        let k = g.task.history.len() as u64 + 1000 * n;
        let s = status(
            state,
            text,
            &g.task,
            st.make_id("status", k + u64::from(state.number().unsigned_abs())),
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

fn frozen(entry: &TaskEntry) -> bool {
    entry.lock().frozen
}

/// Tracks the truth about each artifact as chunks go out (append/replace semantics).
#[derive(Default)]
struct ArtifactTruth {
    hashers: std::collections::HashMap<String, (Sha256, u64)>,
}

impl ArtifactTruth {
    fn chunk(&mut self, id: &str, append: bool, bytes: &[u8]) {
        let e = self
            .hashers
            .entry(id.to_string())
            .or_insert_with(|| (Sha256::new(), 0));
        if !append {
            *e = (Sha256::new(), 0);
        }
        e.0.update(bytes);
        e.1 += bytes.len() as u64;
    }

    fn finish(&mut self, id: &str) -> Option<(u64, String)> {
        self.hashers
            .remove(id)
            .map(|(h, n)| (n, hex(&h.finalize())))
    }
}

async fn emit_chunk(
    st: &AgentState,
    entry: &TaskEntry,
    truth: &mut ArtifactTruth,
    artifact: Artifact,
    append: bool,
    last_chunk: bool,
) {
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
        (g.task.id.clone(), g.task.context_id.clone())
    };
    let mut n = 0u64;
    for p in &artifact.parts {
        if let Some(b) = p.inline_bytes() {
            truth.chunk(&artifact.artifact_id, append || n > 0, &b);
            n += b.len() as u64;
        }
    }
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
    if last_chunk && let Some((bytes, sha256)) = truth.finish(&aid) {
        st.journal(Event::ArtifactSent {
            task_id,
            artifact_id: aid,
            bytes,
            sha256,
        });
    }
}

/// Wait for the next continuation of an interrupted task, bounded by `timeout_ms`.
async fn next_continuation(
    cont_rx: &mut mpsc::Receiver<Continuation>,
    timeout_ms: u64,
) -> Option<Continuation> {
    tokio::time::timeout(Duration::from_millis(timeout_ms), cont_rx.recv())
        .await
        .ok()
        .flatten()
}

/// Fail the task with a reason and close its streams.
async fn fail_task(st: &AgentState, entry: &TaskEntry, reason: &str) {
    set_state(st, entry, TaskState::Failed, Some(reason)).await;
    close_streams(entry, "terminal").await;
}

/// Enter an interrupted state (INPUT_REQUIRED or AUTH_REQUIRED) and close the open streams if
/// the agent is configured to.
async fn interrupt(st: &AgentState, entry: &TaskEntry, state: TaskState, text: &str) -> bool {
    if !set_state(st, entry, state, Some(text)).await {
        return false;
    }
    if st.spec.close_stream_on_interrupt {
        close_streams(entry, "interrupted").await;
    }
    true
}

/// Run a task's steps in order.
pub(crate) async fn run_task(
    st: Arc<AgentState>,
    entry: Arc<TaskEntry>,
    steps: Vec<ScriptStep>,
    mut cont_rx: mpsc::Receiver<Continuation>,
) {
    let reason = run_steps(&st, &entry, steps, &mut cont_rx).await;
    let reason = reason.unwrap_or_else(|| {
        if entry.lock().task.status.state.is_terminal() {
            "terminal"
        } else {
            "script_end"
        }
    });
    finish_task(&entry, reason).await;
}

/// The steps of [`run_task`]; `Some(reason)` when they stopped early.
async fn run_steps(
    st: &Arc<AgentState>,
    entry: &Arc<TaskEntry>,
    steps: Vec<ScriptStep>,
    cont_rx: &mut mpsc::Receiver<Continuation>,
) -> Option<&'static str> {
    let mut truth = ArtifactTruth::default();
    let (task_id, ordinal) = {
        let g = entry.lock();
        (g.task.id.clone(), g.ordinal)
    };
    let mut artifact_no = 0u32;
    let mut delegations = 0u64;
    for step in steps {
        if frozen(entry) {
            return Some("terminal");
        }
        match step {
            ScriptStep::Reply { .. } | ScriptStep::Error { .. } => {}
            ScriptStep::State {
                state,
                message,
                delay_ms,
            } => {
                if delay_ms > 0 {
                    tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                }
                let s = TaskState::parse_lenient(&state).unwrap_or_default();
                set_state(st, entry, s, message.as_deref()).await;
            }
            ScriptStep::Wait { ms } => tokio::time::sleep(Duration::from_millis(ms)).await,
            ScriptStep::Artifacts {
                count,
                chunks,
                chunk_bytes,
                content,
                text,
                interleave,
                media_type,
                omit_last_chunk,
                delay_ms,
            } => {
                let mut gens: Vec<(String, ContentStream)> = (0..count)
                    .map(|i| {
                        let n = artifact_no + i;
                        let seed = crate::content::derive_seed(&[
                            &st.net.seed.to_le_bytes(),
                            st.spec.name.as_bytes(),
                            &ordinal.to_le_bytes(),
                            &n.to_le_bytes(),
                        ]);
                        (
                            format!("artifact-{}", n + 1),
                            ContentStream::new(seed, content == ContentKind::Text),
                        )
                    })
                    .collect();
                artifact_no += count;
                let literal: Option<Vec<String>> = text.map(|t| split_literal(&t, chunks as usize));
                let mut order: Vec<(usize, u32)> = Vec::new();
                if interleave {
                    for c in 0..chunks {
                        for a in 0..count as usize {
                            order.push((a, c));
                        }
                    }
                } else {
                    for a in 0..count as usize {
                        for c in 0..chunks {
                            order.push((a, c));
                        }
                    }
                }
                let mut buf = vec![0u8; chunk_bytes];
                for (a, c) in order {
                    if delay_ms > 0 && c > 0 {
                        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
                    }
                    if frozen(entry) {
                        return Some("terminal");
                    }
                    let Some((id, gen_)) = gens.get_mut(a) else {
                        continue;
                    };
                    let bytes: &[u8] = match &literal {
                        Some(l) => l.get(c as usize).map(String::as_bytes).unwrap_or(&[]),
                        None => {
                            gen_.fill(&mut buf);
                            &buf
                        }
                    };
                    let part = match content {
                        ContentKind::Text => {
                            Part::text(String::from_utf8_lossy(bytes).into_owned())
                        }
                        ContentKind::Raw => Part::raw(bytes.to_vec()),
                    };
                    let part = match &media_type {
                        Some(m) => part.with_media_type(m.clone()),
                        None => part,
                    };
                    let artifact = Artifact {
                        artifact_id: id.clone(),
                        name: (c == 0).then(|| id.clone()),
                        parts: vec![part],
                        ..Default::default()
                    };
                    let last = c + 1 == chunks && !omit_last_chunk;
                    emit_chunk(st, entry, &mut truth, artifact, c > 0, last).await;
                }
                // Artifacts whose lastChunk was withheld: still record what was sent.
                for (id, _) in &gens {
                    if let Some((bytes, sha256)) = truth.finish(id) {
                        st.journal(Event::ArtifactSent {
                            task_id: task_id.clone(),
                            artifact_id: id.clone(),
                            bytes,
                            sha256,
                        });
                    }
                }
            }
            ScriptStep::ArtifactUrl { bytes, media_type } => {
                artifact_no += 1;
                let key = format!("{}-{}", task_id, artifact_no);
                let seed =
                    crate::content::derive_seed(&[&st.net.seed.to_le_bytes(), key.as_bytes()]);
                crate::agent::lock_map(&st.blobs).insert(key.clone(), (bytes, seed, false));
                let (len, sha) = crate::content::expected(seed, false, bytes);
                let part = Part::url(format!("{}/blobs/{}", st.base_url, key)).with_media_type(
                    media_type.unwrap_or_else(|| "application/octet-stream".into()),
                );
                let aid = format!("artifact-{artifact_no}");
                let artifact = Artifact {
                    artifact_id: aid.clone(),
                    name: Some(aid.clone()),
                    parts: vec![part],
                    ..Default::default()
                };
                emit_chunk(st, entry, &mut truth, artifact, false, true).await;
                st.journal(Event::ArtifactSent {
                    task_id: task_id.clone(),
                    artifact_id: aid,
                    bytes: len,
                    sha256: sha,
                });
            }
            ScriptStep::DataArtifact { data, media_type } => {
                artifact_no += 1;
                let aid = format!("artifact-{artifact_no}");
                let part = Part::data(data)
                    .with_media_type(media_type.unwrap_or_else(|| "application/json".into()));
                let artifact = Artifact {
                    artifact_id: aid.clone(),
                    name: Some(aid),
                    parts: vec![part],
                    ..Default::default()
                };
                emit_chunk(st, entry, &mut truth, artifact, false, true).await;
            }
            ScriptStep::InputRequired {
                question,
                expect,
                rounds,
                on_wrong,
                max_wrong,
                timeout_ms,
            } => {
                let mut answered = 0u32;
                let mut wrong = 0u32;
                if !interrupt(st, entry, TaskState::InputRequired, &question).await {
                    return Some("terminal");
                }
                while answered < rounds {
                    let Some(c) = next_continuation(cont_rx, timeout_ms).await else {
                        fail_task(st, entry, "no answer to the input request in time").await;
                        return Some("terminal");
                    };
                    let good = expect
                        .as_ref()
                        .is_none_or(|m| crate::agent::message_matches(m, &c.message));
                    st.journal(Event::Continued {
                        task_id: task_id.clone(),
                        message_id: c.message.message_id.clone(),
                        outcome: if good { "accepted" } else { "wrong_answer" }.into(),
                    });
                    if good {
                        answered += 1;
                        set_state(st, entry, TaskState::Working, None).await;
                        if answered < rounds {
                            interrupt(st, entry, TaskState::InputRequired, &question).await;
                        }
                    } else {
                        wrong += 1;
                        if on_wrong == OnWrongAnswer::Fail || wrong > max_wrong {
                            let reason = if on_wrong == OnWrongAnswer::Fail {
                                "the answer to the input request was wrong"
                            } else {
                                "too many wrong answers to the input request"
                            };
                            fail_task(st, entry, reason).await;
                            let _ = c.ack.send(());
                            return Some("terminal");
                        }
                        // Ask again: the same question, a new INPUT_REQUIRED status.
                        interrupt(st, entry, TaskState::InputRequired, &question).await;
                    }
                    // Acknowledge once the state this answer leads to is set, so a blocking
                    // continuation answers with it.
                    let _ = c.ack.send(());
                }
            }
            ScriptStep::AuthRequired {
                credential,
                message,
                max_wrong,
                timeout_ms,
            } => {
                let text = message.unwrap_or_else(|| {
                    "This task needs a credential scoped to this agent and task".into()
                });
                if !interrupt(st, entry, TaskState::AuthRequired, &text).await {
                    return Some("terminal");
                }
                let mut wrong = 0u32;
                loop {
                    let Some(c) = next_continuation(cont_rx, timeout_ms).await else {
                        fail_task(st, entry, "no credential in time").await;
                        return Some("terminal");
                    };
                    let good = c.authorization.as_deref() == Some(credential.as_str());
                    st.journal(Event::Continued {
                        task_id: task_id.clone(),
                        message_id: c.message.message_id.clone(),
                        outcome: if good { "accepted" } else { "wrong_credential" }.into(),
                    });
                    if good {
                        set_state(st, entry, TaskState::Working, None).await;
                        let _ = c.ack.send(());
                        break;
                    }
                    wrong += 1;
                    if wrong > max_wrong {
                        fail_task(st, entry, "too many attempts without the right credential")
                            .await;
                        let _ = c.ack.send(());
                        return Some("terminal");
                    }
                    interrupt(st, entry, TaskState::AuthRequired, &text).await;
                    let _ = c.ack.send(());
                }
            }
            ScriptStep::Delegate {
                to,
                text,
                skill,
                margin_ms,
                budget_share,
            } => {
                delegations += 1;
                if !delegate(
                    st,
                    entry,
                    &task_id,
                    delegations,
                    &to,
                    &text,
                    skill,
                    margin_ms,
                    budget_share,
                )
                .await
                {
                    return Some("terminal");
                }
            }
            ScriptStep::RawEvent { result } => broadcast(entry, Outgoing::Raw(result)).await,
            ScriptStep::RawSse { data } => broadcast(entry, Outgoing::RawText(data)).await,
            ScriptStep::HugeEvent { bytes } => broadcast(entry, Outgoing::Huge(bytes)).await,
            ScriptStep::AppendUnknown => {
                let artifact = Artifact {
                    artifact_id: "artifact-never-started".into(),
                    parts: vec![Part::text("orphan chunk")],
                    ..Default::default()
                };
                let (tid, ctx) = {
                    let g = entry.lock();
                    (g.task.id.clone(), g.task.context_id.clone())
                };
                st.journal(Event::ArtifactChunk {
                    task_id: tid.clone(),
                    artifact_id: artifact.artifact_id.clone(),
                    append: true,
                    last_chunk: true,
                    bytes: 12,
                });
                let ev = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                    task_id: tid,
                    context_id: ctx,
                    artifact,
                    append: true,
                    last_chunk: true,
                    metadata: None,
                });
                broadcast(entry, Outgoing::Event(Arc::new(ev))).await;
            }
            ScriptStep::Purge => {
                entry.lock().purged = true;
                entry.changed.notify_waiters();
                st.journal(Event::TaskPurged {
                    task_id: task_id.clone(),
                });
                return Some("purged");
            }
            ScriptStep::CloseStreams => close_streams(entry, "script").await,
        }
    }
    None
}

/// Split literal text into `n` chunks of about equal byte size, never inside a UTF-8 character.
fn split_literal(t: &str, n: usize) -> Vec<String> {
    let n = n.max(1);
    let size = t.len().div_ceil(n).max(1);
    let mut out = Vec::with_capacity(n);
    let mut cur = String::new();
    for ch in t.chars() {
        if cur.len() >= size && out.len() + 1 < n {
            out.push(std::mem::take(&mut cur));
        }
        cur.push(ch);
    }
    out.push(cur);
    out.resize(n, String::new());
    out
}

#[allow(clippy::too_many_arguments)]
async fn delegate(
    st: &Arc<AgentState>,
    entry: &TaskEntry,
    task_id: &str,
    k: u64,
    to: &str,
    text: &str,
    skill: Option<String>,
    margin_ms: u64,
    share: f64,
) -> bool {
    let fail = |reason: String| async move {
        set_state(st, entry, TaskState::Failed, Some(&reason)).await;
        false
    };
    let Some(base) = st.net.urls.get(to).cloned() else {
        return fail(format!("no agent named {to}")).await;
    };
    let now = time::OffsetDateTime::now_utc();
    let parent = entry
        .lock()
        .x_deleg
        .clone()
        .unwrap_or_else(|| XDeleg::root(now + time::Duration::seconds(60), 1.0));
    let child = match parent.child(
        now,
        time::Duration::milliseconds(margin_ms as i64),
        parent.budget_usd * share,
        &st.identity(),
    ) {
        Ok(c) => c,
        Err(v) => {
            st.journal(Event::Delegated {
                task_id: task_id.into(),
                to: to.into(),
                child_task_id: None,
                outcome: format!("not sent: {v}"),
            });
            return fail(format!("cannot delegate to {to}: {v}")).await;
        }
    };
    let n = entry.lock().ordinal;
    // One messageId per delegation of this task, so two sends to one agent are not deduplicated.
    let mut msg = Message::user_text(st.make_id("sub", n * 1000 + k), text);
    if let Some(s) = skill {
        msg.metadata = Some([("skill".to_string(), json!(s))].into_iter().collect());
    }
    let mut req = SendMessageRequest {
        message: msg,
        configuration: Some(a2a_protocol::SendMessageConfiguration {
            return_immediately: true,
            ..Default::default()
        }),
        ..Default::default()
    };
    req.set_x_deleg(&child);
    let rpc = format!("{base}{}", crate::agent::RPC_PATH);
    let call = |method: &'static str, params: Value| {
        let http = st.net.http.clone();
        let rpc = rpc.clone();
        async move {
            let body = json!({"jsonrpc": "2.0", "id": format!("sub-{method}"), "method": method, "params": params});
            let r = http
                .post(&rpc)
                .header(a2a_protocol::VERSION_HEADER, "1.0")
                .timeout(Duration::from_secs(10))
                .json(&body)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let v: JsonRpcResponse<Value> = r.json().await.map_err(|e| e.to_string())?;
            v.payload.map_err(|e| e.to_string())
        }
    };
    let created = match call("SendMessage", to_value(&req)).await {
        Ok(v) => v,
        Err(e) => {
            st.journal(Event::Delegated {
                task_id: task_id.into(),
                to: to.into(),
                child_task_id: None,
                outcome: format!("error: {e}"),
            });
            return fail(format!("delegation to {to} failed: {e}")).await;
        }
    };
    let Some(child_id) = created
        .pointer("/task/id")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        st.journal(Event::Delegated {
            task_id: task_id.into(),
            to: to.into(),
            child_task_id: None,
            outcome: "answered_direct".into(),
        });
        return true;
    };
    let deadline = tokio::time::Instant::now()
        + Duration::try_from(child.remaining(now))
            .unwrap_or(Duration::ZERO)
            .min(Duration::from_secs(60));
    let mut interval = Duration::from_millis(5);
    loop {
        let t = call("GetTask", json!({"id": child_id})).await;
        let state = t
            .as_ref()
            .ok()
            .and_then(|v| v.pointer("/status/state"))
            .and_then(Value::as_str)
            .and_then(TaskState::parse_lenient);
        if let Some(s) = state.filter(|s| s.is_terminal() || s.is_interrupted()) {
            st.journal(Event::Delegated {
                task_id: task_id.into(),
                to: to.into(),
                child_task_id: Some(child_id.clone()),
                outcome: s.as_str().into(),
            });
            if s == TaskState::Completed {
                return true;
            }
            let reason = t
                .ok()
                .and_then(|v| v.pointer("/status/message").cloned())
                .and_then(|m| serde_json::from_value::<Message>(m).ok())
                .map(|m| m.text())
                .unwrap_or_default();
            return fail(format!("sub-delegation to {to} ended in {s}: {reason}")).await;
        }
        if tokio::time::Instant::now() >= deadline {
            st.journal(Event::Delegated {
                task_id: task_id.into(),
                to: to.into(),
                child_task_id: Some(child_id.clone()),
                outcome: "deadline".into(),
            });
            return fail(format!("sub-delegation to {to} passed its deadline")).await;
        }
        tokio::time::sleep(interval).await;
        interval = (interval * 2).min(Duration::from_millis(100));
    }
}

/// Serve a by-reference artifact: generated bytes, streamed without storing them.
pub(crate) async fn blob_handler(
    State(st): State<Arc<AgentState>>,
    Path(key): Path<String>,
    headers: axum::http::HeaderMap,
) -> Response {
    let req = st.net.next_req.fetch_add(1, Ordering::Relaxed);
    st.journal(Event::Request {
        req,
        http_method: "GET".into(),
        path: format!("/blobs/{key}"),
        method: None,
        rpc_id: None,
        params: Value::Null,
        headers: crate::agent::header_map(&headers),
    });
    let Some((size, seed, text)) = crate::agent::lock_map(&st.blobs).get(&key).copied() else {
        st.journal(Event::Response {
            req,
            status: 404,
            rpc_error: None,
            body: Value::Null,
        });
        return (StatusCode::NOT_FOUND, "no such blob").into_response();
    };
    st.journal(Event::Response {
        req,
        status: 200,
        rpc_error: None,
        body: json!(format!("<{size} bytes>")),
    });
    let (_, sha) = crate::content::expected(seed, text, size);
    st.journal(Event::BlobServed {
        key,
        bytes: size,
        sha256: sha,
    });
    let stream = futures::stream::unfold(
        (ContentStream::new(seed, text), size),
        |(mut g, left)| async move {
            if left == 0 {
                return None;
            }
            let n = left.min(64 * 1024) as usize;
            let mut b = vec![0u8; n];
            g.fill(&mut b);
            Some((
                Ok::<Bytes, std::io::Error>(Bytes::from(b)),
                (g, left - n as u64),
            ))
        },
    );
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/octet-stream")
        .header(header::CONTENT_LENGTH, size)
        .body(Body::from_stream(stream))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
