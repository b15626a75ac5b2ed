//! Sub-delegation and `x-deleg` limits: the `delegate` step propagates limits down a chain,
//! loops, depth over the limit, past deadlines and malformed limits are rejected with a reason.

use crate::common;

use a2a_mock_agents::Event;
use common::*;
use serde_json::{Value, json};

fn x_deleg(deadline: time::OffsetDateTime, budget: f64, depth: u32, chain: &[&str]) -> Value {
    json!({"deadline": deadline.format(&time::format_description::well_known::Rfc3339).unwrap(),
           "budget_usd": budget, "depth": depth, "chain": chain})
}

#[tokio::test]
async fn delegate_propagates_x_deleg_down_a_chain() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        [[agent.rule]]
        steps = [
          { do = "state", state = "TASK_STATE_WORKING" },
          { do = "delegate", to = "b", text = "find a hotel", skill = "hotels", margin_ms = 2000, budget_share = 0.25 },
          { do = "state", state = "TASK_STATE_COMPLETED" },
        ]
        [[agent]]
        name = "b"
        [[agent.skill]]
        id = "hotels"
        [[agent.rule]]
        when = { skill = "hotels" }
        steps = [{ do = "state", state = "TASK_STATE_COMPLETED", message = "hotel found" }]
        "#,
    )
    .await;
    let http = client();
    let j = net.journal();
    // Millisecond precision, as x-deleg carries it.
    let deadline = time::OffsetDateTime::now_utc() + time::Duration::seconds(30);
    let deadline = deadline
        .replace_nanosecond(u32::from(deadline.millisecond()) * 1_000_000)
        .unwrap();
    let mut p = send_params("plan a trip");
    p["metadata"] = json!({"x-deleg": x_deleg(deadline, 2.0, 1, &["http://delegator.invalid/"])});
    let r = call(&http, &net.rpc_url("a").unwrap(), "SendMessage", p).await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");

    // What b received.
    let entries = j.entries();
    let sub = entries
        .iter()
        .find(|e| {
            e.agent == "b"
                && matches!(&e.event, Event::Request { method: Some(m), .. } if m == "SendMessage")
        })
        .expect("b got a SendMessage");
    let Event::Request {
        params, headers, ..
    } = &sub.event
    else {
        unreachable!()
    };
    assert_eq!(headers.get("a2a-version").map(String::as_str), Some("1.0"));
    assert_eq!(params["message"]["metadata"]["skill"], "hotels");
    let x = a2a_protocol::xdeleg::XDeleg::from_value(&params["metadata"]["x-deleg"]).unwrap();
    assert_eq!(x.depth, 2);
    let a_id = format!("{}/", net.base_url("a").unwrap());
    assert_eq!(x.chain, ["http://delegator.invalid/", a_id.as_str()]);
    assert_eq!(x.deadline, deadline - time::Duration::seconds(2));
    assert!((x.budget_usd - 0.5).abs() < 1e-9);

    let b_task = tasks_created(j)
        .into_iter()
        .map(|t| t.0)
        .find(|t| task_states(j, t) == ["TASK_STATE_SUBMITTED", "TASK_STATE_COMPLETED"])
        .unwrap();
    assert!(entries.iter().any(|e| e.agent == "a"
        && matches!(&e.event, Event::Delegated { to, child_task_id: Some(c), outcome, .. }
            if to == "b" && *c == b_task && outcome == "TASK_STATE_COMPLETED")));
    assert!(limit_rejections(j).is_empty());
    net.shutdown().await;
}

#[tokio::test]
async fn delegation_loop_is_rejected_with_a_reason() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        [[agent.rule]]
        steps = [{ do = "delegate", to = "b", text = "ask b" }, { do = "state", state = "TASK_STATE_COMPLETED" }]
        [[agent]]
        name = "b"
        [[agent.rule]]
        steps = [{ do = "delegate", to = "a", text = "ask a" }, { do = "state", state = "TASK_STATE_COMPLETED" }]
        "#,
    )
    .await;
    let http = client();
    let j = net.journal();
    let r = call(
        &http,
        &net.rpc_url("a").unwrap(),
        "SendMessage",
        send_params("go"),
    )
    .await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_FAILED");
    let why = r["task"]["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(why.contains("sub-delegation to b"), "{why}");

    let rejected = limit_rejections(j);
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    assert_eq!(rejected[0].0, "a");
    assert!(rejected[0].1.contains("loop"), "{}", rejected[0].1);
    assert!(j.entries().iter().any(|e| e.agent == "b"
        && matches!(&e.event, Event::Delegated { to, outcome, .. } if to == "a" && outcome == "TASK_STATE_REJECTED")));
    // The rejected task says why.
    let rejected_task = j
        .entries()
        .iter()
        .find_map(|e| match &e.event {
            Event::LimitRejected { task_id, .. } => Some(task_id.clone()),
            _ => None,
        })
        .unwrap();
    let t = call(
        &http,
        &net.rpc_url("a").unwrap(),
        "GetTask",
        json!({"id": rejected_task}),
    )
    .await;
    assert_eq!(t["status"]["state"], "TASK_STATE_REJECTED");
    assert!(
        t["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("loop")
    );
    net.shutdown().await;
}

#[tokio::test]
async fn depth_over_the_limit_past_deadline_and_malformed_limits_are_rejected() {
    let net = start(
        r#"
        [[agent]]
        name = "b"
        max_depth = 2
        [[agent.rule]]
        steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
        "#,
    )
    .await;
    let http = client();
    let url = net.rpc_url("b").unwrap();
    let j = net.journal();
    let later = time::OffsetDateTime::now_utc() + time::Duration::seconds(30);
    let earlier = time::OffsetDateTime::now_utc() - time::Duration::seconds(1);
    let cases = [
        (
            x_deleg(later, 1.0, 3, &["http://x.invalid/"]),
            Some("depth 3 exceeds the limit of 2"),
        ),
        (
            x_deleg(earlier, 1.0, 1, &["http://x.invalid/"]),
            Some("has passed"),
        ),
        (
            json!({"deadline": "soon", "budget_usd": 1, "depth": 1, "chain": []}),
            Some("malformed x-deleg"),
        ),
        (x_deleg(later, 1.0, 2, &["http://x.invalid/"]), None),
    ];
    for (x, reason) in cases {
        let mut p = send_params("work");
        p["metadata"] = json!({ "x-deleg": x });
        let r = call(&http, &url, "SendMessage", p).await;
        let status = &r["task"]["status"];
        match reason {
            Some(why) => {
                assert_eq!(status["state"], "TASK_STATE_REJECTED");
                let text = status["message"]["parts"][0]["text"].as_str().unwrap();
                assert!(text.contains(why), "{text} should contain {why}");
            }
            None => assert_eq!(status["state"], "TASK_STATE_COMPLETED"),
        }
    }
    assert_eq!(limit_rejections(j).len(), 3);
    net.shutdown().await;
}

#[tokio::test]
async fn two_delegations_to_the_same_agent_make_two_child_tasks() {
    let net = start(
        r#"
        [[agent]]
        name = "a"
        [[agent.rule]]
        steps = [
          { do = "delegate", to = "b", text = "first" },
          { do = "delegate", to = "b", text = "second" },
          { do = "state", state = "TASK_STATE_COMPLETED" },
        ]
        [[agent]]
        name = "b"
        [[agent.rule]]
        steps = [{ do = "state", state = "TASK_STATE_COMPLETED" }]
        "#,
    )
    .await;
    let r = call(
        &client(),
        &net.rpc_url("a").unwrap(),
        "SendMessage",
        send_params("go"),
    )
    .await;
    assert_eq!(r["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let children: Vec<(String, bool)> = net
        .journal()
        .entries()
        .iter()
        .filter(|e| e.agent == "b")
        .filter_map(|e| match &e.event {
            Event::TaskCreated { task_id, dedup, .. } => Some((task_id.clone(), *dedup)),
            _ => None,
        })
        .collect();
    assert_eq!(children.len(), 2);
    assert!(
        children.iter().all(|c| !c.1),
        "not deduplicated: {children:?}"
    );
    assert_ne!(children[0].0, children[1].0);
    net.shutdown().await;
}
