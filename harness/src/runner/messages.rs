//! The messages the harness writes to the delegator (`delegate`) and the forged push
//! notification it posts to the delegator's webhook.

use super::SELF_URL;
use crate::scenario::Delegation;
use a2a_driver_contract::{ArtifactSpec, ChildDelegate, Delegate, Priority};
use serde_json::json;
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

/// The webhook URL of delegation `id` under the base URL the delegator reported in `init_ok`
/// (`<base>/a2a-webhook/<id>`, the id percent-encoded); `None` when the base is not an http(s)
/// URL.
pub(super) fn webhook_url(base: &str, id: &str) -> Option<reqwest::Url> {
    let mut url = reqwest::Url::parse(base).ok()?;
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    url.path_segments_mut()
        .ok()?
        .pop_if_empty()
        .extend(["a2a-webhook", id]);
    Some(url)
}

/// POST a forged push notification (a FAILED status with a wrong token) to the delegator's webhook.
pub(super) async fn forge_push(base: &str, id: &str, task: &str, ctx: &str) -> Option<u16> {
    let body = json!({"statusUpdate": {"taskId": task, "contextId": ctx,
        "status": {"state": "TASK_STATE_FAILED", "timestamp": a2a_protocol::Timestamp::now().to_rfc3339()}}});
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .ok()?;
    let url = webhook_url(base, id)?;
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
    fn webhook_urls_are_built_not_pasted() {
        let u = |b: &str, id: &str| webhook_url(b, id).map(|u| u.to_string());
        assert_eq!(
            u("http://127.0.0.1:5/", "d1").as_deref(),
            Some("http://127.0.0.1:5/a2a-webhook/d1")
        );
        assert_eq!(
            u("http://127.0.0.1:5/hooks", "d 1/x").as_deref(),
            Some("http://127.0.0.1:5/hooks/a2a-webhook/d%201%2Fx")
        );
        assert_eq!(u("file:///tmp", "d1"), None);
        assert_eq!(u("not a url", "d1"), None);
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
