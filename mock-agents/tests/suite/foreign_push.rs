//! A push notification from another network (another case whose webhook port the OS gave to
//! this agent) is not this network's traffic: answered 404, never journaled. Found by
//! `a2a-harness run --check-determinism`: such strays made two runs of a case differ.

use crate::common;

use a2a_mock_agents::Event;
use common::*;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a_push_from_another_network_is_refused_and_not_journaled() {
    let pusher = start(
        r#"
        [[agent]]
        name = "p"
        [[agent.rule]]
        steps = [
          { do = "state", state = "TASK_STATE_WORKING" },
          { do = "state", state = "TASK_STATE_COMPLETED" },
        ]
        "#,
    )
    .await;
    let bystander = start(
        r#"
        [[agent]]
        name = "b"
        "#,
    )
    .await;
    // The pusher's webhook URL is (as after a port reuse) the bystander's address.
    let hook = format!(
        "{}/a2a-webhook/d1",
        bystander.base_url("b").expect("b's URL")
    );
    let http = client();
    let mut p = send_params("go");
    p["configuration"] = json!({"taskPushNotificationConfig": {"url": hook, "token": "tok-1"}});
    call(&http, &pusher.rpc_url("p").unwrap(), "SendMessage", p).await;
    // Both state changes were pushed and refused.
    pusher
        .journal()
        .wait_for(WAIT, |es| {
            es.iter()
                .filter(|e| {
                    matches!(
                        e.event,
                        Event::Push {
                            status: Some(404),
                            ..
                        }
                    )
                })
                .count()
                >= 2
        })
        .await
        .expect("the pushes were answered 404");
    assert!(
        bystander.journal().is_empty(),
        "{:?}",
        bystander.journal().entries()
    );
    // A request without the mark (say, from a delegator) is still journaled.
    let r = http
        .post(format!(
            "{}/a2a-webhook/d1",
            bystander.base_url("b").unwrap()
        ))
        .body("{}")
        .send()
        .await
        .expect("answered");
    assert_eq!(r.status(), 404);
    assert!(!bystander.journal().is_empty());
}
