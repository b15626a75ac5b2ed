//! Recovery after a restart: resume a delegation from its durable record, finding the task of an
//! ambiguous send (`ListTasks` in its context) or reading the state of a known task.

use super::failure::{Call, Decision};
use super::{Next, Run};
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

    /// The task in context `ctx` whose history holds our first message, if the agent lists one.
    async fn find_in_context(&mut self, ctx: &str) -> Result<Option<Task>, Next> {
        let Some(agent) = self.agent.clone() else {
            return Ok(None);
        };
        let params = json!({"contextId": ctx, "historyLength": 20, "pageSize": 100});
        let Some(mid) = self.rec.message_ids.get("create").cloned() else {
            return Ok(None);
        };
        match self
            .inner
            .client
            .call(
                &agent.endpoint,
                Method::ListTasks,
                params,
                self.auth().as_deref(),
                self.req_timeout(),
            )
            .await
        {
            Ok(r) => {
                let Ok(list) =
                    a2a_protocol::codec::decode_value::<a2a_protocol::ListTasksResponse>(&r.result)
                else {
                    return Ok(None);
                };
                Ok(list
                    .tasks
                    .into_iter()
                    .find(|t| t.history.iter().any(|m| m.message_id == mid)))
            }
            Err(e) => match self.on_call_failed(Call::ListTasks, &e).await {
                Decision::Next(n) => Err(n),
                Decision::Again | Decision::ReadState => Ok(None),
            },
        }
    }
}
