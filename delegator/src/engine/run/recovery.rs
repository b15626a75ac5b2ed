//! Recovery after a restart: resume a delegation from its durable record, finding the task of an
//! ambiguous send (`ListTasks` in its context) or reading the state of a known task.

use super::failure::{Call, Decision};
use super::{Next, Run};
use crate::client::required;
use a2a_protocol::{Method, Task};
use serde_json::json;

impl Run {
    /// Where a recovered delegation goes on.
    pub(super) async fn recover(&mut self) -> Next {
        self.inner.emit_state(&self.rec);
        let Some(task_id) = self.rec.task_id.clone() else {
            // An ambiguous send: find the task in its context, else resend the same messageId.
            if let Some(ctx) = self.rec.context_id.clone() {
                match self.find_in_context(&ctx).await {
                    Ok(Some(task)) => {
                        // `ListTasks` leaves artifacts out unless asked: read the task itself
                        // (with its artifacts) before taking its state as the outcome.
                        return match self.adopt_task(&task).await {
                            Some(n) => n,
                            None => self.read_state(&task.id).await,
                        };
                    }
                    Ok(None) => {}
                    Err(n) => return n,
                }
            }
            return Next::Send;
        };
        self.read_state(&task_id).await
    }

    /// The task in context `ctx` (a context the agent gave) whose history holds our first
    /// message, if the agent lists one: `ListTasks` in that context, following `nextPageToken`
    /// until it is `""` (at most [`MAX_LIST_PAGES`] pages). An agent that keeps no history
    /// shows no message: the caller then resends with the same `messageId`.
    async fn find_in_context(&mut self, ctx: &str) -> Result<Option<Task>, Next> {
        let Some(agent) = self.agent.clone() else {
            return Ok(None);
        };
        let Some(mid) = self.rec.message_ids.get("create").cloned() else {
            return Ok(None);
        };
        let mut page_token = String::new();
        for _ in 0..MAX_LIST_PAGES {
            let mut params = json!({"contextId": ctx, "historyLength": 20, "pageSize": 100});
            if !page_token.is_empty() {
                params["pageToken"] = json!(page_token);
            }
            let r = self
                .inner
                .client
                .call(
                    &agent.endpoint,
                    Method::ListTasks,
                    params,
                    self.auth().as_deref(),
                    self.req_timeout(),
                )
                .await;
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    return match self.on_call_failed(Call::ListTasks, &e).await {
                        Decision::Next(n) => Err(n),
                        Decision::Again | Decision::ReadState => Ok(None),
                    };
                }
            };
            let state_presence = r.binding != a2a_protocol::Binding::Grpc;
            let Ok(list) =
                a2a_protocol::codec::decode_value::<a2a_protocol::ListTasksResponse>(&r.result)
            else {
                return Ok(None);
            };
            let raw = r.result.get("tasks").and_then(|t| t.as_array());
            let found = list.tasks.into_iter().enumerate().find(|(i, t)| {
                // A listed task lacking REQUIRED fields is not taken.
                let complete = raw
                    .and_then(|a| a.get(*i))
                    .is_some_and(|v| required::task(v, state_presence).is_empty());
                complete && t.history.iter().any(|m| m.message_id == mid)
            });
            if let Some((_, t)) = found {
                return Ok(Some(t));
            }
            // `""` (or none) ends the list; a token repeated would loop.
            if list.next_page_token.is_empty() || list.next_page_token == page_token {
                return Ok(None);
            }
            page_token = list.next_page_token;
        }
        Ok(None)
    }
}

/// The most `ListTasks` pages read while looking for the task of an ambiguous send.
const MAX_LIST_PAGES: usize = 50;
