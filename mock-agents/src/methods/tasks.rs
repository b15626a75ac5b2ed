//! `ListTasks` (filtering and paging) and `CancelTask` (with the scripted cancel behaviours).

use crate::agent::*;
use crate::methods::{ok, parse, to_value};
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
    let asked = req.page_size.unwrap_or(50);
    if !(1..=100).contains(&asked) {
        return call.error(
            st,
            ErrorCode::InvalidParams,
            Some("pageSize must be between 1 and 100"),
            &[],
        );
    }
    // The agent's own cap (`list_page_size_max`): a client must follow nextPageToken.
    let page_size = match st.spec.list_page_size_max {
        Some(max) => asked.min(i32::try_from(max).unwrap_or(i32::MAX)),
        None => asked,
    };
    if req.history_length.is_some_and(|h| h < 0) {
        return call.error(
            st,
            ErrorCode::InvalidParams,
            Some("historyLength must not be negative"),
            &[],
        );
    }
    let after: Option<Cursor> = match req.page_token.as_deref().filter(|t| !t.is_empty()) {
        None => None,
        Some(t) => match Cursor::parse(t) {
            Some(c) => Some(c),
            None => {
                return call.error(st, ErrorCode::InvalidParams, Some("invalid pageToken"), &[]);
            }
        },
    };
    let ids = crate::agent::lock_map(&st.order).clone();
    let mut tasks: Vec<(Cursor, Task)> = ids
        .iter()
        .enumerate()
        .filter_map(|(i, id)| st.task(id).map(|e| (i, e)))
        .map(|(i, e)| {
            let g = e.lock();
            // Regenerating generated content only when it is shown.
            let t = if req.include_artifacts == Some(true) {
                g.snapshot()
            } else {
                g.task.clone()
            };
            (Cursor::of(&t, i), t)
        })
        .filter(|(_, t)| req.context_id.as_ref().is_none_or(|c| *c == t.context_id))
        .filter(|(_, t)| {
            req.status
                .filter(|s| *s != TaskState::Unspecified)
                .is_none_or(|s| s == t.status.state)
        })
        .filter(|(_, t)| {
            req.status_timestamp_after
                .is_none_or(|after| t.status.timestamp.is_some_and(|ts| ts >= after))
        })
        .collect();
    // Newest status first; ties: the later created first.
    tasks.sort_by_key(|(c, _)| std::cmp::Reverse(*c));
    let total = tasks.len();
    let rest: Vec<(Cursor, Task)> = tasks
        .into_iter()
        .filter(|(c, _)| after.is_none_or(|a| *c < a))
        .collect();
    let more = rest.len() > page_size as usize;
    let page: Vec<(Cursor, Task)> = rest.into_iter().take(page_size as usize).collect();
    let next_page_token = match page.last() {
        Some((c, _)) if more => c.token(),
        _ => String::new(),
    };
    let resp = ListTasksResponse {
        tasks: page
            .into_iter()
            .map(|(_, mut t)| {
                if req.include_artifacts != Some(true) {
                    t.artifacts.clear();
                }
                st.present(&t, req.history_length)
            })
            .collect(),
        next_page_token,
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

/// A task's place in the `ListTasks` order (newest status first, then the later created):
/// `nextPageToken` names the last task of a page, so tasks that change state between two
/// pages never shift the others (no task is listed twice, none that kept its status is
/// skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Cursor {
    /// Status timestamp, nanoseconds since the epoch.
    at: i128,
    /// Creation order.
    created: usize,
}

/// The first bytes of every page token: they make its base64 start with `+/+/` and, with
/// the padding below, end with `==`, so an HTTP+JSON client must percent-encode it in the
/// query (RFC 3986) for it to come back intact.
const TOKEN_MAGIC: [u8; 3] = [0xFB, 0xFF, 0xBF];

impl Cursor {
    fn of(t: &Task, created: usize) -> Cursor {
        Cursor {
            at: t
                .status
                .timestamp
                .map_or(i128::MIN, |ts| ts.0.unix_timestamp_nanos()),
            created,
        }
    }

    /// The opaque token: standard base64 (`+`, `/`, `=`) of the magic and the cursor.
    fn token(&self) -> String {
        use base64::Engine;
        let mut raw = TOKEN_MAGIC.to_vec();
        raw.extend_from_slice(format!("{}:{}", self.at, self.created).as_bytes());
        while raw.len() % 3 != 1 {
            raw.push(b' ');
        }
        base64::engine::general_purpose::STANDARD.encode(raw)
    }

    fn parse(token: &str) -> Option<Cursor> {
        use base64::Engine;
        let raw = base64::engine::general_purpose::STANDARD
            .decode(token)
            .ok()?;
        let text = std::str::from_utf8(raw.strip_prefix(&TOKEN_MAGIC[..])?).ok()?;
        let (at, created) = text.trim_end_matches(' ').split_once(':')?;
        Some(Cursor {
            at: at.parse().ok()?,
            created: created.parse().ok()?,
        })
    }
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
            let t = st.present(&entry.lock().snapshot(), None);
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
            let t = st.present(&entry.lock().snapshot(), None);
            ok(st, call, ObjectKind::Task, to_value(&t), &m)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cursor;

    #[test]
    fn page_tokens_round_trip_and_need_percent_encoding() {
        for c in [
            Cursor { at: 0, created: 0 },
            Cursor {
                at: 1_774_000_000_123_000_000,
                created: 17,
            },
            Cursor {
                at: -5,
                created: 123_456,
            },
        ] {
            let t = c.token();
            assert!(t.starts_with("+/+/") && t.ends_with("=="), "{t}");
            assert_eq!(Cursor::parse(&t), Some(c));
        }
        for bad in ["garbage", "offset-2", "", "+/+/"] {
            assert_eq!(Cursor::parse(bad), None, "{bad}");
        }
        // A `+` the client failed to encode arrives as a space: refused.
        let t = Cursor { at: 1, created: 1 }.token().replace('+', " ");
        assert_eq!(Cursor::parse(&t), None);
    }
}
