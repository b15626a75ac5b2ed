//! The messages the harness writes to the delegator (`delegate`) and the forged push
//! notification it posts to the delegator's webhook.

use super::SELF_URL;
use crate::scenario::Delegation;
use a2a_driver_contract::{ArtifactSpec, ChildDelegate, Delegate, Priority};
use a2a_mock_agents::{Entry, Event};
use serde_json::{Value, json};
use std::time::Duration;

/// The latest and earliest instants a delegation deadline is sent as (RFC 3339, 4-digit year).
fn deadline_bounds() -> (time::OffsetDateTime, time::OffsetDateTime) {
    (
        time::macros::datetime!(0001-01-01 00:00:00 UTC),
        time::macros::datetime!(9999-12-31 23:59:59.999 UTC),
    )
}

/// The `delegate` request for `d`, and a note when its deadline had to be clamped (an
/// out-of-range `deadline_in_ms` is a scenario error, rejected by the loader; this only keeps
/// the runner from panicking).
pub(super) fn delegate_message(
    d: &Delegation,
    start: time::OffsetDateTime,
) -> (Delegate, Option<String>) {
    let mut note = None;
    let deadline = d.deadline_in_ms.map(|ms| {
        let (lo, hi) = deadline_bounds();
        let at = start
            .checked_add(time::Duration::milliseconds(ms))
            .filter(|t| (lo..=hi).contains(t))
            .unwrap_or_else(|| {
                note = Some(format!(
                    "scenario: delegation {:?}: deadline_in_ms {ms} is out of range; sent clamped",
                    d.id
                ));
                if ms < 0 { lo } else { hi }
            });
        a2a_protocol::Timestamp::from_datetime(at).to_rfc3339()
    });
    let chain: Vec<String> = d
        .chain
        .iter()
        .map(|c| {
            if c == "$self" {
                SELF_URL.to_string()
            } else {
                c.clone()
            }
        })
        .collect();
    let msg = Delegate {
        id: d.id.clone(),
        capability: d.capability.clone(),
        text: d.text.clone(),
        inputs: d.inputs.clone(),
        artifact_spec: ArtifactSpec {
            mime_types: d.mime_types.clone(),
            max_size_bytes: d.max_size_bytes,
            streaming_preferred: d.streaming_preferred,
            schema: d.schema.clone(),
        },
        timeout_seconds: d.timeout_seconds,
        deadline,
        budget_usd: d.budget_usd,
        max_retries: d.max_retries,
        priority: Priority::Normal,
        depth: d.depth,
        chain,
        children: (!d.children.is_empty()).then(|| {
            d.children
                .iter()
                .map(|c| ChildDelegate::new(&c.id, &c.capability, &c.text))
                .collect()
        }),
        refine_of: d.refine_of.clone(),
        agent: None,
    };
    (msg, note)
}

/// Where a forged push for a delegation goes: the push config the delegator gave an agent for
/// one of its tasks, read from the journal.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PushTarget {
    /// The webhook URL of the config.
    pub url: String,
    /// The task it is for.
    pub task: String,
    /// The task's context.
    pub context: String,
}

/// The latest push config the delegator sent for a task of the delegation whose text is
/// `text` (in `configuration.taskPushNotificationConfig` of its send, or a push-config request
/// naming the task), once the agent created that task: a forged notification needs no `state`
/// line from the delegator, only the config it actually gave the agent.
pub(super) fn push_target(entries: &[Entry], text: &str) -> Option<PushTarget> {
    let created = |mid: &str| {
        entries.iter().find_map(|e| match &e.event {
            Event::TaskCreated {
                task_id,
                context_id,
                message_id,
                ..
            } if message_id == mid => Some((task_id.clone(), context_id.clone())),
            _ => None,
        })
    };
    let context_of = |task: &str| {
        entries.iter().find_map(|e| match &e.event {
            Event::TaskCreated {
                task_id,
                context_id,
                ..
            } if task_id == task => Some(context_id.clone()),
            _ => None,
        })
    };
    let ours = |p: &Value| {
        p.pointer("/message/parts")
            .and_then(Value::as_array)
            .is_some_and(|parts| {
                parts
                    .iter()
                    .any(|x| x.get("text").and_then(Value::as_str) == Some(text))
            })
    };
    let mut tasks: Vec<String> = Vec::new();
    // The latest config counts: a delegator restarted after a crash configures its new webhook
    // (the killed process's is gone).
    let mut latest = None;
    for e in entries {
        let Event::Request { params, .. } = &e.event else {
            continue;
        };
        if ours(params)
            && let Some(mid) = params.pointer("/message/messageId").and_then(Value::as_str)
            && let Some((task, context)) = created(mid)
        {
            if let Some(url) = params
                .pointer("/configuration/taskPushNotificationConfig/url")
                .or_else(|| params.pointer("/configuration/pushNotificationConfig/url"))
                .and_then(Value::as_str)
            {
                latest = Some(PushTarget {
                    url: url.to_string(),
                    task: task.clone(),
                    context,
                });
            }
            tasks.push(task);
        }
        // A separate push-config request for one of the delegation's tasks.
        let task = params
            .get("taskId")
            .or_else(|| params.get("task_id"))
            .and_then(Value::as_str);
        let url = params
            .pointer("/pushNotificationConfig/url")
            .or_else(|| params.pointer("/config/url"))
            .or_else(|| params.get("url"))
            .and_then(Value::as_str);
        if let (Some(task), Some(url)) = (task, url)
            && tasks.iter().any(|t| t == task)
        {
            latest = Some(PushTarget {
                url: url.to_string(),
                task: task.to_string(),
                context: context_of(task).unwrap_or_default(),
            });
        }
    }
    latest
}

/// POST a forged push notification (a FAILED status with a wrong token) to `url`.
pub(super) async fn forge_push(url: &str, task: &str, ctx: &str) -> Option<u16> {
    let body = json!({"statusUpdate": {"taskId": task, "contextId": ctx,
        "status": {"state": "TASK_STATE_FAILED", "timestamp": a2a_protocol::Timestamp::now().to_rfc3339()}}});
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .ok()?;
    let url = reqwest::Url::parse(url)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))?;
    let r = client
        .post(url)
        .header("Authorization", "Bearer forged-token")
        .header("X-A2A-Notification-Token", "forged-token")
        .json(&body)
        .send()
        .await
        .ok()?;
    Some(r.status().as_u16())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_forged_push_target_comes_from_the_journal_not_a_state_line() {
        let entry = |seq, event| Entry {
            seq,
            at_us: seq,
            agent: "a".into(),
            event,
        };
        let send = |params: Value| Event::Request {
            binding: a2a_protocol::Binding::JsonRpc,
            req: 1,
            http_method: "POST".into(),
            path: "/a2a".into(),
            method: Some("SendMessage".into()),
            rpc_id: None,
            params: Box::new(params),
            headers: Default::default(),
            envelope: None,
        };
        let created = Event::TaskCreated {
            task_id: "t1".into(),
            context_id: "c1".into(),
            message_id: "m1".into(),
            dedup: false,
        };
        let with_push = json!({"message": {"messageId": "m1", "parts": [{"text": "do it"}]},
            "configuration": {"taskPushNotificationConfig": {"url": "http://127.0.0.1:5/hook/d1", "token": "x"}}});
        let j = vec![entry(1, send(with_push.clone()))];
        assert_eq!(push_target(&j, "do it"), None, "no task yet");
        let j = vec![entry(1, send(with_push)), entry(2, created.clone())];
        assert_eq!(
            push_target(&j, "do it"),
            Some(PushTarget {
                url: "http://127.0.0.1:5/hook/d1".into(),
                task: "t1".into(),
                context: "c1".into()
            })
        );
        assert_eq!(push_target(&j, "other work"), None);
        let no_push = json!({"message": {"messageId": "m1", "parts": [{"text": "do it"}]}});
        let j = vec![entry(1, send(no_push)), entry(2, created)];
        assert_eq!(
            push_target(&j, "do it"),
            None,
            "streaming only: nothing to forge"
        );
    }

    #[test]
    fn a_huge_deadline_is_clamped_not_a_panic() {
        let d: Delegation = toml::from_str(
            "id = \"d1\"\ncapability = \"c\"\ntext = \"t\"\ndeadline_in_ms = 9223372036854775807\n",
        )
        .unwrap();
        let start = time::OffsetDateTime::now_utc();
        let (m, note) = delegate_message(&d, start);
        assert_eq!(m.deadline.as_deref(), Some("9999-12-31T23:59:59.999Z"));
        assert!(note.is_some_and(|n| n.contains("out of range")));
        let d = Delegation {
            deadline_in_ms: Some(i64::MIN),
            ..d
        };
        let (m, _) = delegate_message(&d, start);
        assert_eq!(m.deadline.as_deref(), Some("0001-01-01T00:00:00.000Z"));
        let d = Delegation {
            deadline_in_ms: Some(-1000),
            ..d
        };
        let (_, note) = delegate_message(&d, start);
        assert!(note.is_none());
    }
}
