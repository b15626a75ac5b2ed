//! Rule selection: the message-id, context, task-presence, metadata and reference matchers,
//! longest-prefix-first and explicit priority, from TOML and from the builder.

use crate::common;

use a2a_mock_agents::{MockAgent, NetworkSpec, Step};
use a2a_protocol::Method;
use common::*;
use serde_json::{Value, json};

/// Send a message with this id (and extra message fields); the reply text or the error code.
async fn reply_to(f: &Fixture, message_id: &str, extra: Value) -> String {
    let mut msg = json!({"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "hi"}]});
    if let (Some(m), Some(x)) = (msg.as_object_mut(), extra.as_object()) {
        m.extend(x.clone());
    }
    let v = f.rpc("SendMessage", json!({"message": msg})).await;
    if let Some(c) = code(&v) {
        return format!("error {c}");
    }
    if let Some(t) = v
        .pointer("/result/message/parts/0/text")
        .and_then(Value::as_str)
    {
        return t.to_string();
    }
    format!(
        "task {}",
        v.pointer("/result/task/status/state")
            .unwrap_or(&Value::Null)
    )
}

const SCRIPT: &str = r#"
[[agent]]
name = "m"
[[agent.rule]]
when = { message_id_prefix = "tck-artifact-file" }
steps = [{ do = "reply", text = "file" }]
[[agent.rule]]
when = { message_id_prefix = "tck-artifact-file-url" }
steps = [{ do = "reply", text = "file-url" }]
[[agent.rule]]
when = { message_id = "exact-1" }
steps = [{ do = "reply", text = "exact" }]
[[agent.rule]]
when = { message_id_regex = "^re-[0-9a-f]{8}$" }
steps = [{ do = "reply", text = "regex" }]
[[agent.rule]]
when = { context_id = "ctx-9" }
steps = [{ do = "reply", text = "context" }]
[[agent.rule]]
when = { metadata_keys = ["tenant", "trace"] }
steps = [{ do = "reply", text = "metadata" }]
[[agent.rule]]
when = { has_reference_task_ids = true }
steps = [{ do = "reply", text = "references" }]
[[agent.rule]]
priority = 1
when = { text_equals = "urgent" }
steps = [{ do = "reply", text = "priority" }]
[[agent.rule]]
when = { has_task_id = true }
steps = [{ do = "error", code = -32602, message = "no follow-ups here" }]
"#;

#[tokio::test]
async fn message_id_context_metadata_and_reference_matchers_from_toml() {
    let f = Fixture::toml(SCRIPT, "m").await;
    // Longest prefix first, whatever the file order.
    assert_eq!(
        reply_to(&f, "tck-artifact-file-url-0a1b2c3d", json!({})).await,
        "file-url"
    );
    assert_eq!(
        reply_to(&f, "tck-artifact-file-0a1b2c3d", json!({})).await,
        "file"
    );
    assert_eq!(reply_to(&f, "exact-1", json!({})).await, "exact");
    // Exact means exact.
    assert_eq!(
        reply_to(&f, "exact-12", json!({})).await,
        "task \"TASK_STATE_COMPLETED\""
    );
    assert_eq!(reply_to(&f, "re-0a1b2c3d", json!({})).await, "regex");
    assert_eq!(
        reply_to(&f, "re-0a1b2c3dx", json!({})).await,
        "task \"TASK_STATE_COMPLETED\""
    );
    assert_eq!(
        reply_to(&f, "c", json!({"contextId": "ctx-9"})).await,
        "context"
    );
    // Every key must be there; message or request metadata.
    assert_eq!(
        reply_to(&f, "k1", json!({"metadata": {"tenant": "a"}})).await,
        "task \"TASK_STATE_COMPLETED\""
    );
    assert_eq!(
        reply_to(&f, "k2", json!({"metadata": {"tenant": "a", "trace": 1}})).await,
        "metadata"
    );
    let v = f
        .rpc(
            "SendMessage",
            json!({"message": {"messageId": "k3", "role": "ROLE_USER", "parts": [{"text": "x"}],
                               "metadata": {"tenant": "a"}},
                   "metadata": {"trace": "t"}}),
        )
        .await;
    assert_eq!(
        v.pointer("/result/message/parts/0/text"),
        Some(&json!("metadata"))
    );
    assert_eq!(
        reply_to(&f, "r", json!({"referenceTaskIds": ["t-1"]})).await,
        "references"
    );
    // A higher priority wins over a longer prefix.
    let v = f
        .rpc(
            "SendMessage",
            json!({"message": {"messageId": "tck-artifact-file-url-1", "role": "ROLE_USER",
                               "parts": [{"text": "urgent"}]}}),
        )
        .await;
    assert_eq!(
        v.pointer("/result/message/parts/0/text"),
        Some(&json!("priority"))
    );
    // `has_task_id = true` matches continuations (rules without it never do).
    assert_eq!(
        reply_to(&f, "f", json!({"taskId": "whatever"})).await,
        "error -32602"
    );
    f.shutdown().await;
}

#[tokio::test]
async fn the_builder_makes_the_same_matchers() {
    let agent = MockAgent::builder("b")
        .mount(
            MockAgent::when()
                .message_id_prefix("p-")
                .step(Step::reply("short")),
        )
        .mount(
            MockAgent::when()
                .message_id_prefix("p-long-")
                .step(Step::reply("long")),
        )
        .mount(
            MockAgent::when()
                .message_id("id-1")
                .step(Step::reply("exact")),
        )
        .mount(
            MockAgent::when()
                .message_id_regex("^r[0-9]+$")
                .step(Step::reply("regex")),
        )
        .mount(
            MockAgent::when()
                .context_id("c-1")
                .step(Step::reply("context")),
        )
        .mount(
            MockAgent::when()
                .metadata_key("a")
                .metadata_key("b")
                .step(Step::reply("metadata")),
        )
        .mount(
            MockAgent::when()
                .has_reference_task_ids(true)
                .step(Step::reply("refs")),
        )
        .mount(
            MockAgent::when()
                .has_task_id(true)
                .method(Method::SendMessage)
                .step(Step::error(a2a_protocol::ErrorCode::InvalidParams)),
        )
        .mount(
            MockAgent::when()
                .priority(5)
                .message_id("p-long-top")
                .step(Step::reply("top")),
        )
        .build();
    let f = Fixture::agents(vec![agent]).await;
    assert_eq!(reply_to(&f, "p-long-1", json!({})).await, "long");
    assert_eq!(reply_to(&f, "p-1", json!({})).await, "short");
    assert_eq!(reply_to(&f, "p-long-top", json!({})).await, "top");
    assert_eq!(reply_to(&f, "id-1", json!({})).await, "exact");
    assert_eq!(reply_to(&f, "r42", json!({})).await, "regex");
    assert_eq!(
        reply_to(&f, "x", json!({"contextId": "c-1"})).await,
        "context"
    );
    assert_eq!(
        reply_to(&f, "y", json!({"metadata": {"a": 1, "b": 2}})).await,
        "metadata"
    );
    assert_eq!(
        reply_to(&f, "z", json!({"referenceTaskIds": ["t"]})).await,
        "refs"
    );
    assert_eq!(
        reply_to(&f, "w", json!({"taskId": "t"})).await,
        "error -32602"
    );
    f.shutdown().await;
}

#[tokio::test]
async fn an_input_request_can_expect_an_answer_by_message_id_prefix() {
    let f = Fixture::toml(
        r#"
        [[agent]]
        name = "q"
        [[agent.rule]]
        steps = [
          { do = "input_required", question = "more?", on_wrong = "reask", max_wrong = 5,
            expect = { message_id_prefix = "done-" } },
          { do = "state", state = "TASK_STATE_COMPLETED", message = "finished" },
        ]
        "#,
        "q",
    )
    .await;
    let t = f.call("SendMessage", send_params("start")).await;
    let tid = t["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(t["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let follow = |id: &str| {
        json!({"message": {"messageId": id, "role": "ROLE_USER", "taskId": tid,
                           "parts": [{"text": "same text"}]}})
    };
    let t = f.call("SendMessage", follow("more-1")).await;
    assert_eq!(t["task"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    let t = f.call("SendMessage", follow("done-1")).await;
    assert_eq!(t["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(continued(f.j(), &tid), vec!["wrong_answer", "accepted"]);
    f.shutdown().await;
}

#[test]
fn an_invalid_regex_is_located() {
    let text =
        "[[agent]]\nname = \"a\"\n[[agent.rule]]\nwhen = { message_id_regex = \"(unclosed\" }\n";
    let e = NetworkSpec::from_toml("bad.toml", text)
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("bad.toml:4:"), "{e}");
    assert!(
        e.contains("message_id_regex") && e.contains("invalid regex"),
        "{e}"
    );
}
