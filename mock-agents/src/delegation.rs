//! Sub-delegation: the `delegate` step sends work to another agent of the network with a child
//! `x-deleg` and polls it to an end within the child's deadline.

use crate::agent::*;
use crate::journal::Event;
use crate::methods::to_value;
use crate::task_events::*;
use a2a_protocol::xdeleg::XDeleg;
use a2a_protocol::*;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

#[allow(clippy::too_many_arguments)]
pub(crate) async fn delegate(
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
    let rpc = format!("{base}{}", crate::rpc::RPC_PATH);
    let from = st.spec.name.clone();
    let call = |method: &'static str, params: Value| {
        let http = st.net.http.clone();
        let from = from.clone();
        let rpc = rpc.clone();
        async move {
            let body = json!({"jsonrpc": "2.0", "id": format!("sub-{method}"), "method": method, "params": params});
            let r = http
                .post(&rpc)
                .header(a2a_protocol::VERSION_HEADER, "1.0")
                .header(crate::rpc::MOCK_PEER_HEADER, from.as_str())
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
