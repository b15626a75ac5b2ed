//! A small in-test A2A agent (axum on 127.0.0.1:0) with scripted tasks, a request journal,
//! `messageId` deduplication, fault injection, streaming, push notifications and a 0.3 mode.
//! Tests wait on journal events (with a bound), never on sleeps.

#![allow(dead_code)]

use a2a_protocol::compat03::{self, ObjectKind};
use a2a_protocol::sse::encode_event;
use a2a_protocol::{
    Artifact, ErrorCode, Message, Part, StreamResponse, Task, TaskArtifactUpdateEvent, TaskState,
    TaskStatus, TaskStatusUpdateEvent,
};
use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, watch};

/// One scripted behaviour step.
#[derive(Debug, Clone)]
pub enum Step {
    /// Reply to the send with a direct Message (only as the first step).
    Reply(String),
    /// Move to a state with an optional status message text.
    State(TaskState, Option<String>),
    /// Emit an artifact chunk.
    Artifact {
        id: String,
        parts: Vec<Part>,
        append: bool,
        last: bool,
    },
    /// INPUT_REQUIRED with this question; resumes on the next message to the task.
    AskInput(String),
    /// AUTH_REQUIRED; resumes on a message carrying `Authorization: <expected>`.
    AskAuth(String, String),
    /// Wait until the test opens the named gate.
    Gate(String),
    /// Emit a raw state string (for unknown states) in a status update.
    RawState(String),
    /// Emit this exact text as the `data:` of one stream event (e.g. invalid JSON).
    RawSse(String),
    /// Emit this event as is (e.g. a Message after the task exists).
    Event(Box<StreamResponse>),
}

/// Prefix of the messageId of the placeholder event that carries a [`Step::RawSse`] text.
const RAW_SSE: &str = "raw-sse:";

/// A fault for the next matching request.
#[derive(Debug, Clone)]
pub enum Fault {
    /// Answer with this HTTP status (and Retry-After seconds) without processing.
    Http(u16, Option<u64>),
    /// Answer with this JSON-RPC error without processing.
    Rpc(i64),
    /// Process the request, then answer with HTTP 502 (the reply is lost: indefinite).
    LandThenFail,
    /// Never answer (the request is journaled first).
    Hang,
    /// Process the request (create the task) and then never answer.
    LandThenHang,
    /// Answer 200 with a body that is not JSON, without processing.
    Garbage,
}

/// One journaled request.
#[derive(Debug, Clone)]
pub struct Req {
    pub method: String,
    pub params: Value,
    pub authorization: Option<String>,
    pub version: Option<String>,
}

#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub streaming: bool,
    pub push: bool,
    pub v03: bool,
    pub dedupe: bool,
    pub skills: Vec<(String, Vec<String>)>,
    /// Close the stream at interrupted states (as the Python SDK does).
    pub close_on_interrupt: bool,
    /// Close the stream at terminal states (a conforming agent does).
    pub close_on_terminal: bool,
    /// Answer every response and stream event with a JSON-RPC id that is not the request's.
    pub wrong_rpc_id: bool,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            streaming: false,
            push: false,
            v03: false,
            dedupe: true,
            skills: vec![(
                "work".into(),
                vec!["text/plain".into(), "application/json".into()],
            )],
            close_on_interrupt: true,
            close_on_terminal: true,
            wrong_rpc_id: false,
        }
    }
}

struct FakeTask {
    task: Task,
    events: Vec<StreamResponse>,
    resume: Arc<Notify>,
    inbox: VecDeque<(Message, Option<String>)>,
    push: Option<(String, Option<String>)>,
    canceled: bool,
}

pub struct AgentState {
    pub cfg: AgentConfig,
    pub base: String,
    tasks: Mutex<HashMap<String, FakeTask>>,
    by_message: Mutex<HashMap<String, String>>,
    journal: Mutex<Vec<Req>>,
    changed: watch::Sender<u64>,
    scripts: Mutex<HashMap<String, Vec<Step>>>,
    faults: Mutex<VecDeque<(String, Fault)>>,
    gates: Mutex<HashMap<String, bool>>,
    gate_notify: Notify,
    counter: Mutex<u64>,
}

#[derive(Clone)]
pub struct FakeAgent {
    pub state: Arc<AgentState>,
    pub card_url: String,
    pub rpc_url: String,
}

impl FakeAgent {
    pub async fn start(cfg: AgentConfig) -> FakeAgent {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let base = format!("http://{addr}");
        let (changed, _) = watch::channel(0);
        let state = Arc::new(AgentState {
            cfg,
            base: base.clone(),
            tasks: Mutex::new(HashMap::new()),
            by_message: Mutex::new(HashMap::new()),
            journal: Mutex::new(Vec::new()),
            changed,
            scripts: Mutex::new(HashMap::new()),
            faults: Mutex::new(VecDeque::new()),
            gates: Mutex::new(HashMap::new()),
            gate_notify: Notify::new(),
            counter: Mutex::new(0),
        });
        let s1 = state.clone();
        let s2 = state.clone();
        let app = Router::new()
            .route(
                "/.well-known/agent-card.json",
                get(move || {
                    let s = s1.clone();
                    async move { Json(s.card()) }
                }),
            )
            .route(
                "/rpc",
                post(move |headers: HeaderMap, body: axum::body::Bytes| {
                    let s = s2.clone();
                    async move { s.rpc(headers, body).await }
                }),
            )
            .route(
                "/files/{name}",
                get(
                    |axum::extract::Path(name): axum::extract::Path<String>| async move {
                        let n: usize = name.trim_end_matches(".bin").parse().unwrap_or(0);
                        let body: Vec<u8> = (0..n).map(|i| (i % 251) as u8).collect();
                        (StatusCode::OK, body)
                    },
                ),
            );
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeAgent {
            card_url: format!("{base}/.well-known/agent-card.json"),
            rpc_url: format!("{base}/rpc"),
            state,
        }
    }

    /// Script the tasks of a skill.
    pub fn script(&self, skill: &str, steps: Vec<Step>) {
        self.state
            .scripts
            .lock()
            .unwrap()
            .insert(skill.to_string(), steps);
    }

    /// Inject a fault for the next request of `method`.
    pub fn fault(&self, method: &str, f: Fault) {
        self.state
            .faults
            .lock()
            .unwrap()
            .push_back((method.to_string(), f));
    }

    pub fn open_gate(&self, name: &str) {
        self.state
            .gates
            .lock()
            .unwrap()
            .insert(name.to_string(), true);
        self.state.gate_notify.notify_waiters();
    }

    pub fn journal(&self) -> Vec<Req> {
        self.state.journal.lock().unwrap().clone()
    }

    pub fn requests(&self, method: &str) -> Vec<Req> {
        self.journal()
            .into_iter()
            .filter(|r| r.method == method)
            .collect()
    }

    pub fn task_count(&self) -> usize {
        self.state.tasks.lock().unwrap().len()
    }

    pub fn all_tasks(&self) -> Vec<Task> {
        self.state
            .tasks
            .lock()
            .unwrap()
            .values()
            .map(|t| t.task.clone())
            .collect()
    }

    pub fn task(&self, id: &str) -> Option<Task> {
        self.state
            .tasks
            .lock()
            .unwrap()
            .get(id)
            .map(|t| t.task.clone())
    }

    /// Wait (at most `secs`) until `pred` holds for the journal.
    pub async fn wait_for(&self, secs: u64, pred: impl Fn(&[Req]) -> bool) {
        let mut rx = self.state.changed.subscribe();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            if pred(&self.journal()) {
                return;
            }
            tokio::select! {
                r = rx.changed() => { r.unwrap(); }
                _ = tokio::time::sleep_until(deadline) => panic!("timed out waiting; journal: {:#?}", self.journal().iter().map(|r| r.method.clone()).collect::<Vec<_>>()),
            }
        }
    }

    /// Wait until some task reaches `state`.
    pub async fn wait_task_state(&self, secs: u64, state: TaskState) -> Task {
        let mut rx = self.state.changed.subscribe();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(t) = self
                .state
                .tasks
                .lock()
                .unwrap()
                .values()
                .find(|t| t.task.status.state == state)
            {
                return t.task.clone();
            }
            tokio::select! {
                r = rx.changed() => { r.unwrap(); }
                _ = tokio::time::sleep_until(deadline) => panic!("timed out waiting for a task in {state}"),
            }
        }
    }
}

fn rpc_error(id: &Value, code: i64) -> Value {
    let e = ErrorCode::from_code(code).to_error(None, &[]);
    json!({"jsonrpc": "2.0", "id": id, "error": e})
}

impl AgentState {
    fn bump(&self) {
        self.changed.send_modify(|v| *v += 1);
    }

    fn card(&self) -> Value {
        let skills: Vec<Value> = self
            .cfg
            .skills
            .iter()
            .map(|(id, modes)| json!({"id": id, "name": id, "description": "d", "tags": ["t"], "outputModes": modes}))
            .collect();
        if self.cfg.v03 {
            json!({"name": "fake03", "description": "d", "version": "1", "url": format!("{}/rpc", self.base),
                "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
                "capabilities": {"streaming": self.cfg.streaming, "pushNotifications": self.cfg.push},
                "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": skills})
        } else {
            json!({"name": "fake", "description": "d", "version": "1",
                "supportedInterfaces": [{"url": format!("{}/rpc", self.base), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
                "capabilities": {"streaming": self.cfg.streaming, "pushNotifications": self.cfg.push},
                "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"], "skills": skills})
        }
    }

    fn next_id(&self, prefix: &str) -> String {
        let mut c = self.counter.lock().unwrap();
        *c += 1;
        format!("{prefix}-{}", *c)
    }

    fn take_fault(&self, method: &str) -> Option<Fault> {
        let mut f = self.faults.lock().unwrap();
        let pos = f.iter().position(|(m, _)| m == method)?;
        f.remove(pos).map(|(_, x)| x)
    }

    fn out(&self, method: &str, id: &Value, result: Value) -> Value {
        let result = if self.cfg.v03 {
            match ObjectKind::result_of(method) {
                Some(k) => compat03::to_v03(k, &result).unwrap_or(result),
                None => result,
            }
        } else {
            result
        };
        json!({"jsonrpc": "2.0", "id": self.reply_id(id), "result": result})
    }

    fn reply_id(&self, id: &Value) -> Value {
        if self.cfg.wrong_rpc_id {
            json!("wrong-id-from-fake")
        } else {
            id.clone()
        }
    }

    async fn rpc(self: Arc<Self>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
        let v: Value = match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(_) => return Json(rpc_error(&Value::Null, -32700)).into_response(),
        };
        let id = v.get("id").cloned().unwrap_or(Value::Null);
        let raw_method = v
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let mut params = v.get("params").cloned().unwrap_or(json!({}));
        let method = if self.cfg.v03 {
            let m = compat03::method_to_v1(&raw_method)
                .unwrap_or(&raw_method)
                .to_string();
            if let Some(k) = ObjectKind::params_of(&m) {
                params = compat03::to_v1(k, &params).unwrap_or(params);
            }
            m
        } else {
            raw_method
        };
        let auth = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let version = headers
            .get("a2a-version")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        self.journal.lock().unwrap().push(Req {
            method: method.clone(),
            params: params.clone(),
            authorization: auth.clone(),
            version,
        });
        self.bump();
        let fault = self.take_fault(&method);
        match &fault {
            Some(Fault::Http(status, ra)) => {
                let mut r = (StatusCode::from_u16(*status).unwrap(), "fault").into_response();
                if let Some(s) = ra {
                    r.headers_mut()
                        .insert("retry-after", s.to_string().parse().unwrap());
                }
                return r;
            }
            Some(Fault::Rpc(code)) => return Json(rpc_error(&id, *code)).into_response(),
            Some(Fault::Garbage) => return (StatusCode::OK, "<<garbage>>").into_response(),
            Some(Fault::Hang) => {
                std::future::pending::<()>().await;
            }
            _ => {}
        }
        let resp = match method.as_str() {
            "SendMessage" | "SendStreamingMessage" => {
                self.clone()
                    .send(&method, &id, params, auth, method == "SendStreamingMessage")
                    .await
            }
            "GetTask" => {
                let tid = params["id"].as_str().unwrap_or_default().to_string();
                match self.snapshot(&tid) {
                    Some(t) => Json(self.out(&method, &id, serde_json::to_value(t).unwrap()))
                        .into_response(),
                    None => Json(rpc_error(&id, -32001)).into_response(),
                }
            }
            "CancelTask" => {
                let tid = params["id"].as_str().unwrap_or_default().to_string();
                let r = {
                    let mut tasks = self.tasks.lock().unwrap();
                    match tasks.get_mut(&tid) {
                        None => Err(-32001),
                        Some(t) if t.task.status.state.is_terminal() => Err(-32002),
                        Some(t) => {
                            t.canceled = true;
                            t.task.status = TaskStatus::new(TaskState::Canceled);
                            t.events
                                .push(StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
                                    task_id: tid.clone(),
                                    context_id: t.task.context_id.clone(),
                                    status: t.task.status.clone(),
                                    metadata: None,
                                }));
                            t.resume.notify_waiters();
                            Ok(t.task.clone())
                        }
                    }
                };
                self.bump();
                match r {
                    Ok(t) => Json(self.out(&method, &id, serde_json::to_value(t).unwrap()))
                        .into_response(),
                    Err(c) => Json(rpc_error(&id, c)).into_response(),
                }
            }
            "SubscribeToTask" => {
                let tid = params["id"].as_str().unwrap_or_default().to_string();
                let (state, start) = {
                    let tasks = self.tasks.lock().unwrap();
                    match tasks.get(&tid) {
                        None => (None, 0),
                        Some(t) => (Some(t.task.status.state), t.events.len()),
                    }
                };
                match state {
                    None => Json(rpc_error(&id, -32001)).into_response(),
                    Some(s) if s.is_terminal() => Json(rpc_error(&id, -32004)).into_response(),
                    Some(_) => {
                        let snap = self.snapshot(&tid).unwrap();
                        self.sse(id, tid, Some(StreamResponse::Task(snap)), start)
                    }
                }
            }
            "ListTasks" => {
                let ctx = params["contextId"].as_str().map(String::from);
                let tasks: Vec<Task> = self
                    .tasks
                    .lock()
                    .unwrap()
                    .values()
                    .filter(|t| ctx.as_deref().is_none_or(|c| t.task.context_id == c))
                    .map(|t| t.task.clone())
                    .collect();
                let n = tasks.len();
                Json(self.out(
                    &method,
                    &id,
                    json!({"tasks": tasks, "nextPageToken": "", "pageSize": 100, "totalSize": n}),
                ))
                .into_response()
            }
            _ => Json(rpc_error(&id, -32601)).into_response(),
        };
        match fault {
            Some(Fault::LandThenFail) => (StatusCode::BAD_GATEWAY, "lost").into_response(),
            Some(Fault::LandThenHang) => {
                drop(resp);
                std::future::pending::<()>().await;
                unreachable!()
            }
            _ => resp,
        }
    }

    fn snapshot(&self, tid: &str) -> Option<Task> {
        self.tasks.lock().unwrap().get(tid).map(|t| t.task.clone())
    }

    async fn send(
        self: Arc<Self>,
        method: &str,
        id: &Value,
        params: Value,
        auth: Option<String>,
        streaming: bool,
    ) -> Response {
        let msg: Message = match serde_json::from_value(params["message"].clone()) {
            Ok(m) => m,
            Err(_) => return Json(rpc_error(id, -32602)).into_response(),
        };
        // Continuation of an existing task.
        if let Some(tid) = msg.task_id.clone() {
            let start = {
                let mut tasks = self.tasks.lock().unwrap();
                let Some(t) = tasks.get_mut(&tid) else {
                    return Json(rpc_error(id, -32001)).into_response();
                };
                if t.task.status.state.is_terminal() {
                    return Json(rpc_error(id, -32004)).into_response();
                }
                t.task.history.push(msg.clone());
                t.inbox.push_back((msg.clone(), auth.clone()));
                t.resume.notify_waiters();
                t.events.len()
            };
            self.bump();
            if streaming {
                return self.sse(id.clone(), tid, None, start);
            }
            let snap = self.snapshot(&tid).unwrap();
            return Json(self.out(method, id, json!({"task": snap}))).into_response();
        }
        // Deduplication by messageId.
        let known = if self.cfg.dedupe {
            self.by_message
                .lock()
                .unwrap()
                .get(&msg.message_id)
                .cloned()
        } else {
            None
        };
        if let Some(tid) = known {
            if streaming {
                let snap = self.snapshot(&tid).unwrap();
                let start = self.tasks.lock().unwrap()[&tid].events.len();
                return self.sse(id.clone(), tid, Some(StreamResponse::Task(snap)), start);
            }
            let snap = self.snapshot(&tid).unwrap();
            return Json(self.out(method, id, json!({"task": snap}))).into_response();
        }
        let skill = msg
            .metadata
            .as_ref()
            .and_then(|m| m.get("skill"))
            .and_then(Value::as_str)
            .unwrap_or("work")
            .to_string();
        let script = self
            .scripts
            .lock()
            .unwrap()
            .get(&skill)
            .cloned()
            .unwrap_or_else(|| vec![Step::State(TaskState::Completed, None)]);
        if let Some(Step::Reply(text)) = script.first() {
            let mut m = Message::agent_text(self.next_id("m"), text.clone());
            m.context_id = Some(self.next_id("ctx"));
            if streaming {
                let mut out = Vec::new();
                let data = json!({"jsonrpc": "2.0", "id": id, "result": {"message": m}});
                encode_event(&mut out, None, &data.to_string());
                return sse_response(Body::from(out));
            }
            return Json(self.out(method, id, json!({"message": m}))).into_response();
        }
        let tid = self.next_id("task");
        let ctx = msg
            .context_id
            .clone()
            .unwrap_or_else(|| self.next_id("ctx"));
        let task = Task {
            id: tid.clone(),
            context_id: ctx,
            status: TaskStatus::new(TaskState::Submitted),
            history: vec![msg.clone()],
            ..Default::default()
        };
        let push = params["configuration"]["taskPushNotificationConfig"]["url"]
            .as_str()
            .map(|u| {
                (
                    u.to_string(),
                    params["configuration"]["taskPushNotificationConfig"]["token"]
                        .as_str()
                        .map(String::from),
                )
            });
        self.tasks.lock().unwrap().insert(
            tid.clone(),
            FakeTask {
                task: task.clone(),
                events: Vec::new(),
                resume: Arc::new(Notify::new()),
                inbox: VecDeque::new(),
                push,
                canceled: false,
            },
        );
        self.by_message
            .lock()
            .unwrap()
            .insert(msg.message_id.clone(), tid.clone());
        self.bump();
        let runner = self.clone();
        let rtid = tid.clone();
        tokio::spawn(async move { runner.run_script(rtid, script).await });
        if streaming {
            return self.sse(id.clone(), tid, Some(StreamResponse::Task(task)), 0);
        }
        Json(self.out(method, id, json!({"task": task}))).into_response()
    }

    fn push_event(&self, tid: &str, ev: StreamResponse) {
        let push = {
            let mut tasks = self.tasks.lock().unwrap();
            let Some(t) = tasks.get_mut(tid) else { return };
            match &ev {
                StreamResponse::StatusUpdate(u) => t.task.status = u.status.clone(),
                StreamResponse::ArtifactUpdate(a) => {
                    if a.append
                        && let Some(existing) = t
                            .task
                            .artifacts
                            .iter_mut()
                            .find(|x| x.artifact_id == a.artifact.artifact_id)
                    {
                        existing.parts.extend(a.artifact.parts.clone());
                    } else if let Some(existing) = t
                        .task
                        .artifacts
                        .iter_mut()
                        .find(|x| x.artifact_id == a.artifact.artifact_id)
                    {
                        *existing = a.artifact.clone();
                    } else {
                        t.task.artifacts.push(a.artifact.clone());
                    }
                }
                _ => {}
            }
            t.events.push(ev.clone());
            t.push.clone()
        };
        self.bump();
        if let Some((url, token)) = push {
            let body = serde_json::to_string(&ev).unwrap();
            tokio::spawn(async move {
                let http = reqwest::Client::builder().no_proxy().build().unwrap();
                let mut rb = http.post(url).body(body);
                if let Some(t) = token {
                    rb = rb.header("Authorization", format!("Bearer {t}"));
                }
                let _ = rb.send().await;
            });
        }
    }

    fn status_event(&self, tid: &str, state: TaskState, text: Option<String>) -> StreamResponse {
        let ctx = self.tasks.lock().unwrap()[tid].task.context_id.clone();
        let mut status = TaskStatus::new(state);
        if let Some(t) = text {
            let mut m = Message::agent_text(self.next_id("q"), t);
            m.task_id = Some(tid.to_string());
            m.context_id = Some(ctx.clone());
            status.message = Some(m);
        }
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: tid.to_string(),
            context_id: ctx,
            status,
            metadata: None,
        })
    }

    fn is_canceled(&self, tid: &str) -> bool {
        self.tasks.lock().unwrap()[tid].canceled
    }

    async fn wait_message(&self, tid: &str, expected_auth: Option<&str>) -> Option<Message> {
        loop {
            let resume = {
                let mut tasks = self.tasks.lock().unwrap();
                let t = tasks.get_mut(tid)?;
                if t.canceled {
                    return None;
                }
                while let Some((m, auth)) = t.inbox.pop_front() {
                    if expected_auth.is_none() || auth.as_deref() == expected_auth {
                        return Some(m);
                    }
                }
                t.resume.clone()
            };
            let n = resume.notified();
            // Re-check after registering to avoid a lost wake-up.
            {
                let tasks = self.tasks.lock().unwrap();
                let t = tasks.get(tid)?;
                if t.canceled || !t.inbox.is_empty() {
                    continue;
                }
            }
            n.await;
        }
    }

    async fn run_script(self: Arc<Self>, tid: String, script: Vec<Step>) {
        // Let the reply with the SUBMITTED snapshot go out first.
        tokio::task::yield_now().await;
        for step in script {
            if self.is_canceled(&tid) {
                return;
            }
            match step {
                Step::Reply(_) => {}
                Step::State(s, text) => {
                    let ev = self.status_event(&tid, s, text);
                    self.push_event(&tid, ev);
                }
                Step::RawSse(text) => {
                    let mut m =
                        Message::agent_text(format!("{RAW_SSE}{}", self.next_id("r")), text);
                    m.task_id = Some(tid.clone());
                    self.push_event(&tid, StreamResponse::Message(m));
                }
                Step::Event(ev) => self.push_event(&tid, *ev),
                Step::RawState(raw) => {
                    // Stored as UNSPECIFIED; the raw name is what the wire carries (see sse()).
                    let ev =
                        self.status_event(&tid, TaskState::Unspecified, Some(format!("raw:{raw}")));
                    self.push_event(&tid, ev);
                }
                Step::Artifact {
                    id,
                    parts,
                    append,
                    last,
                } => {
                    let ctx = self.tasks.lock().unwrap()[&tid].task.context_id.clone();
                    let ev = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
                        task_id: tid.clone(),
                        context_id: ctx,
                        artifact: Artifact {
                            artifact_id: id,
                            parts,
                            ..Default::default()
                        },
                        append,
                        last_chunk: last,
                        metadata: None,
                    });
                    self.push_event(&tid, ev);
                }
                Step::AskInput(q) => {
                    let ev = self.status_event(&tid, TaskState::InputRequired, Some(q));
                    self.push_event(&tid, ev);
                    if self.wait_message(&tid, None).await.is_none() {
                        return;
                    }
                    let ev = self.status_event(&tid, TaskState::Working, None);
                    self.push_event(&tid, ev);
                }
                Step::AskAuth(q, expected) => {
                    let ev = self.status_event(&tid, TaskState::AuthRequired, Some(q));
                    self.push_event(&tid, ev);
                    if self.wait_message(&tid, Some(&expected)).await.is_none() {
                        return;
                    }
                    let ev = self.status_event(&tid, TaskState::Working, None);
                    self.push_event(&tid, ev);
                }
                Step::Gate(name) => loop {
                    let n = self.gate_notify.notified();
                    if self
                        .gates
                        .lock()
                        .unwrap()
                        .get(&name)
                        .copied()
                        .unwrap_or(false)
                    {
                        break;
                    }
                    n.await;
                },
            }
        }
    }

    fn sse(
        self: Arc<Self>,
        id: Value,
        tid: String,
        first: Option<StreamResponse>,
        start: usize,
    ) -> Response {
        let mut rx = self.changed.subscribe();
        let id = self.reply_id(&id);
        let stream = async_stream(move |tx: tokio::sync::mpsc::Sender<Vec<u8>>| async move {
            let send = |ev: &StreamResponse| {
                if let StreamResponse::Message(m) = ev
                    && m.message_id.starts_with(RAW_SSE)
                {
                    let mut out = Vec::new();
                    encode_event(&mut out, None, &m.text());
                    return out;
                }
                let mut result = serde_json::to_value(ev).unwrap();
                // A raw state name travels as-is.
                if let Some(text) = result
                    .pointer("/statusUpdate/status/message/parts/0/text")
                    .and_then(Value::as_str)
                    .and_then(|t| t.strip_prefix("raw:"))
                    .map(String::from)
                {
                    result["statusUpdate"]["status"]["state"] = Value::String(text);
                }
                if self.cfg.v03 {
                    result = compat03::to_v03(ObjectKind::StreamResult, &result).unwrap_or(result);
                }
                let data = json!({"jsonrpc": "2.0", "id": id, "result": result});
                let mut out = Vec::new();
                encode_event(&mut out, None, &data.to_string());
                out
            };
            if let Some(f) = &first
                && tx.send(send(f)).await.is_err()
            {
                return;
            }
            let mut idx = start;
            loop {
                let (evs, state) = {
                    let tasks = self.tasks.lock().unwrap();
                    let t = &tasks[&tid];
                    (t.events[idx..].to_vec(), t.task.status.state)
                };
                for ev in &evs {
                    idx += 1;
                    if tx.send(send(ev)).await.is_err() {
                        return;
                    }
                    if let Some(s) = ev.state()
                        && ((s.is_terminal() && self.cfg.close_on_terminal)
                            || (s.is_interrupted() && self.cfg.close_on_interrupt))
                    {
                        return;
                    }
                }
                if evs.is_empty() && state.is_terminal() && self.cfg.close_on_terminal {
                    return;
                }
                if rx.changed().await.is_err() {
                    return;
                }
            }
        });
        sse_response(Body::from_stream(stream))
    }
}

fn sse_response(body: Body) -> Response {
    Response::builder()
        .status(200)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(body)
        .unwrap()
}

/// A byte stream fed by a producer task.
fn async_stream<F, Fut>(
    f: F,
) -> impl futures::Stream<Item = Result<Vec<u8>, std::convert::Infallible>>
where
    F: FnOnce(tokio::sync::mpsc::Sender<Vec<u8>>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    tokio::spawn(f(tx));
    futures::stream::unfold(
        rx,
        |mut rx| async move { rx.recv().await.map(|b| (Ok(b), rx)) },
    )
}

/// The `a2a-delegator drive` binary as a child process, spoken to over stdin/stdout.
pub struct Driver {
    pub child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    /// Every line received, in order.
    pub seen: Vec<Value>,
}

impl Driver {
    pub fn spawn(store: &std::path::Path, extra: &[&str]) -> Driver {
        use tokio::io::AsyncBufReadExt;
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_a2a-delegator"));
        cmd.arg("drive")
            .arg("--store")
            .arg(store)
            .args(extra)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn a2a-delegator");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        Driver {
            child,
            stdin,
            lines: tokio::io::BufReader::new(stdout).lines(),
            seen: Vec::new(),
        }
    }

    pub async fn send(&mut self, v: Value) {
        self.send_raw(&v.to_string()).await;
    }

    pub async fn send_raw(&mut self, line: &str) {
        use tokio::io::AsyncWriteExt;
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        stdin.flush().await.unwrap();
    }

    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next line (at most `secs`), or `None` at EOF.
    pub async fn next(&mut self, secs: u64) -> Option<Value> {
        let line =
            match tokio::time::timeout(Duration::from_secs(secs), self.lines.next_line()).await {
                Ok(r) => r.expect("reading stdout")?,
                Err(_) => panic!(
                    "no line from the delegator in time; lines so far: {:#?}",
                    self.seen
                ),
            };
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
        self.seen.push(v.clone());
        Some(v)
    }

    /// Read lines until one satisfies `pred`.
    pub async fn until(&mut self, secs: u64, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let v = self
                .next(left.as_secs().max(1))
                .await
                .expect("EOF before the expected line");
            if pred(&v) {
                return v;
            }
        }
    }

    pub async fn init(
        &mut self,
        store: &std::path::Path,
        agents: &[&str],
        recovering: bool,
        options: Value,
    ) -> Value {
        self.send(
            json!({"type": "init", "store_dir": store, "recovering": recovering,
            "agents": agents, "webhook_base_url": null, "self_url": "http://127.0.0.1:1/delegator",
            "credential": "Bearer own-secret-token", "options": options}),
        )
        .await;
        let v = self.next(20).await.expect("init_ok");
        assert_eq!(v["type"], "init_ok", "{v}");
        v
    }

    pub fn sigkill(&mut self) {
        let pid = self.child.id().expect("running") as i32;
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
    }

    pub fn sigterm(&mut self) {
        let pid = self.child.id().expect("running") as i32;
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
    }

    pub async fn wait_exit(&mut self, secs: u64) -> std::process::ExitStatus {
        tokio::time::timeout(Duration::from_secs(secs), self.child.wait())
            .await
            .expect("process did not exit in time")
            .unwrap()
    }
}
