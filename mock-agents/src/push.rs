//! Push notifications: the push-config methods, and the per-task worker that delivers every
//! event to the registered loopback webhooks (with scripted duplicates).

use crate::agent::*;
use crate::journal::Event;
use crate::methods::{ok, parse, to_value};
use crate::mutations::mutate;
use crate::rpc::Call;
use a2a_protocol::compat03::ObjectKind;
use a2a_protocol::*;
use axum::http::header;
use axum::response::Response;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

pub(crate) fn push_config(
    st: &Arc<AgentState>,
    call: &Call,
    method: &str,
    params: &Value,
) -> Response {
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

pub(crate) fn add_push(
    st: &Arc<AgentState>,
    entry: &Arc<TaskEntry>,
    cfg: TaskPushNotificationConfig,
) {
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

pub(crate) fn is_loopback(url: &str) -> bool {
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

pub(crate) async fn push_worker(
    st: Arc<AgentState>,
    entry: Arc<TaskEntry>,
    task_id: String,
    mut rx: mpsc::Receiver<PushItem>,
) {
    while let Some(item) = rx.recv().await {
        let (ev, about) = match &item {
            PushItem::Event(ev) => (ev, task_id.clone()),
            // Journaled under the foreign task's id: the push is about that task.
            PushItem::Foreign(ev) => (ev, ev.task_id().unwrap_or_default().to_string()),
        };
        let (configs, mutations) = {
            let g = entry.lock();
            (g.push.clone(), g.mutations.clone())
        };
        let mut body = to_value(ev.as_ref());
        mutate(&mut body, &mutations);
        st.clock.restyle(&mut body);
        for cfg in configs {
            for _ in 0..=st.spec.push_duplicates {
                deliver(&st, &cfg, &body, &about).await;
            }
        }
    }
}

/// POST one push body to one webhook with the config's credentials and token (only to a
/// loopback URL), and journal it as a push about `task_id`.
async fn deliver(st: &AgentState, cfg: &TaskPushNotificationConfig, body: &Value, task_id: &str) {
    if !is_loopback(&cfg.url) {
        st.journal(Event::Push {
            task_id: task_id.to_string(),
            url: cfg.url.clone(),
            status: None,
            error: Some("refused: webhook URL is not loopback (SSRF guard, R53)".into()),
        });
        return;
    }
    let mut rb = st
        .net
        .http
        .post(&cfg.url)
        .header(header::CONTENT_TYPE, "application/a2a+json")
        .header(crate::rpc::MOCK_PUSH_HEADER, st.net.id.as_str())
        .timeout(Duration::from_secs(10))
        .json(body);
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
        task_id: task_id.to_string(),
        url: cfg.url.clone(),
        status,
        error,
    });
}

/// Queue, behind the task's own pushes, a status update in `state` about a task and context
/// the client never saw (ids derived from the seed, the task and `n`), for every webhook of
/// the task (`push_foreign`). Nothing is sent when the task has no webhook.
pub(crate) async fn push_foreign(
    st: &AgentState,
    entry: &TaskEntry,
    n: u64,
    state: TaskState,
    message: Option<&str>,
) {
    let (tx, ordinal) = {
        let g = entry.lock();
        (g.push_tx.clone(), g.ordinal)
    };
    let Some(tx) = tx else { return };
    let k = ordinal * 1000 + n;
    let foreign = Task {
        id: st.make_id("foreign-task", k),
        context_id: st.make_id("foreign-ctx", k),
        ..Default::default()
    };
    let parts = crate::task_events::text_parts(message);
    let ev = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
        task_id: foreign.id.clone(),
        context_id: foreign.context_id.clone(),
        status: status(
            state,
            parts,
            &foreign,
            st.make_id("foreign-status", k),
            st.clock.now(),
        ),
        metadata: None,
    });
    let _ = tokio::time::timeout(
        crate::task_events::SUBSCRIBER_SEND_TIMEOUT,
        tx.send(PushItem::Foreign(Arc::new(ev))),
    )
    .await;
}
