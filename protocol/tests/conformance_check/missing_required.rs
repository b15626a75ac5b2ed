//! MissingRequired.

use super::*;

#[test]
fn missing_required_fields() {
    let msg = json!({"role": "ROLE_USER", "parts": [{"text": "hi"}]});
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[("$.messageId", "R06", MissingRequired)],
    );
    assert_eq!(lenient::<Message>(&msg).message_id, "");

    // Empty string and null count as absent.
    let msg = json!({"messageId": "", "role": null, "parts": [{"text": "hi"}]});
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[
            ("$.messageId", "R06", MissingRequired),
            ("$.role", "R06", MissingRequired),
        ],
    );
    assert_eq!(lenient::<Message>(&msg).role, Role::Unspecified);

    let task = json!({"id": "t-1"});
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status", "R06", MissingRequired)],
    );
    let task = json!({"id": "t-1", "status": {}});
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status.state", "R06", MissingRequired)],
    );
    assert_eq!(lenient::<Task>(&task).status.state, TaskState::Unspecified);

    let event = json!({"status": {"state": "TASK_STATE_WORKING"}});
    assert_exactly(
        ObjectType::TaskStatusUpdateEvent,
        &event,
        &[
            ("$.contextId", "R06", MissingRequired),
            ("$.taskId", "R06", MissingRequired),
        ],
    );
}

#[test]
fn missing_required_empty_parts_array() {
    let msg = json!({"messageId": "m-1", "role": "ROLE_USER", "parts": []});
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[("$.parts", "R06", MissingRequired)],
    );
    let found = conformance(ObjectType::Message, &msg);
    assert!(found[0].message.contains("at least one element"));
    assert!(lenient::<Message>(&msg).parts.is_empty());

    let artifact = json!({"artifactId": "a-1", "parts": []});
    assert_exactly(
        ObjectType::Artifact,
        &artifact,
        &[("$.parts", "R06", MissingRequired)],
    );
}

#[test]
fn missing_required_unspecified_enum() {
    // The proto zero value of a required enum is "unset".
    let mut msg = user_message();
    msg["role"] = json!("ROLE_UNSPECIFIED");
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[("$.role", "R06", MissingRequired)],
    );
    let task = task_with_state(json!("TASK_STATE_UNSPECIFIED"));
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status.state", "R06", MissingRequired)],
    );
    // As a number it is also not the proto name.
    let task = task_with_state(json!(0));
    assert_exactly(
        ObjectType::Task,
        &task,
        &[
            ("$.status.state", "R05", InvalidEnum),
            ("$.status.state", "R06", MissingRequired),
        ],
    );
    // An optional filter may be UNSPECIFIED (no filter).
    assert_exactly(
        ObjectType::ListTasksRequest,
        &json!({"status": "TASK_STATE_UNSPECIFIED"}),
        &[],
    );
}

#[test]
fn missing_required_card_fields() {
    let card = json!({"name": "a", "supportedInterfaces": [{"url": "http://x/"}],
        "skills": [{"id": "s", "tags": []}]});
    assert_exactly(
        ObjectType::AgentCard,
        &card,
        &[
            ("$.capabilities", "R06", MissingRequired),
            ("$.defaultInputModes", "R06", MissingRequired),
            ("$.defaultOutputModes", "R06", MissingRequired),
            ("$.description", "R06", MissingRequired),
            ("$.skills[0].description", "R06", MissingRequired),
            ("$.skills[0].name", "R06", MissingRequired),
            ("$.skills[0].tags", "R06", MissingRequired),
            (
                "$.supportedInterfaces[0].protocolBinding",
                "R06",
                MissingRequired,
            ),
            (
                "$.supportedInterfaces[0].protocolVersion",
                "R06",
                MissingRequired,
            ),
            ("$.version", "R06", MissingRequired),
        ],
    );
    lenient::<AgentCard>(&card);
}

#[test]
fn missing_required_envelope_members() {
    let found = conformance_response(None, &json!({"result": {}}));
    assert_eq!(
        triples(&found),
        [
            ("$.id".to_string(), "R01".to_string(), MissingRequired),
            ("$.jsonrpc".to_string(), "R01".to_string(), MissingRequired),
        ]
    );
    let found = conformance_response(None, &json!({"jsonrpc": "2.0", "id": 1, "error": {}}));
    assert_eq!(
        triples(&found),
        [
            (
                "$.error.code".to_string(),
                "R54".to_string(),
                MissingRequired
            ),
            (
                "$.error.message".to_string(),
                "R54".to_string(),
                MissingRequired
            ),
        ]
    );
}
