//! `ListTasks` (filtering and paging) and `CancelTask` (with the scripted cancel behaviours).

use crate::agent::*;
use crate::methods::{ok, parse, to_value, with_history};
use crate::rpc::{Call, respond};
use crate::script::*;
use crate::task_events::*;
use a2a_protocol::compat03::ObjectKind;
use a2a_protocol::*;
use axum::response::Response;
use serde_json::{Value, json};
use std::sync::Arc;

pub(crate) fn list_tasks(st: &AgentState, call: &Call, params: &Value) -> Response {
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
        .map(|e| {
            let g = e.lock();
            // Regenerating generated content only when it is shown.
            if req.include_artifacts == Some(true) {
                g.snapshot()
            } else {
                g.task.clone()
            }
        })
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

pub(crate) async fn cancel_task(st: &Arc<AgentState>, call: &Call, params: &Value) -> Response {
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
                text_parts(Some("canceled by client")),
                true,
            )
            .await;
            finish_task(&entry, "terminal").await;
            let t = entry.lock().snapshot();
            ok(st, call, ObjectKind::Task, to_value(&t), &m)
        }
        CancelBehaviour::CompleteFirst => {
            apply_state(
                st,
                &entry,
                TaskState::Completed,
                text_parts(Some("completed before the cancel arrived")),
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
            let t = entry.lock().snapshot();
            ok(st, call, ObjectKind::Task, to_value(&t), &m)
        }
    }
}
