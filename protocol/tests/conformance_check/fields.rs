//! UnknownField, LegacyField and SnakeCaseField.

use super::*;

#[test]
fn unknown_field() {
    let mut task = task_with_state(json!("TASK_STATE_WORKING"));
    task["foo"] = json!(1);
    task["status"]["bar"] = json!(true);
    assert_exactly(
        ObjectType::Task,
        &task,
        &[
            ("$.foo", "R06", UnknownField),
            ("$.status.bar", "R06", UnknownField),
        ],
    );
    let t: Task = lenient(&task);
    assert_eq!(t.status.state, TaskState::Working);

    // Unknown members of a one-of wrapper are unknown fields, not members.
    let wrapped = json!({"task": task_with_state(json!("TASK_STATE_WORKING")), "extra": 1});
    assert_exactly(
        ObjectType::StreamResponse,
        &wrapped,
        &[("$.extra", "R06", UnknownField)],
    );
    let e: StreamResponse = lenient(&wrapped);
    assert_eq!(e.key(), "task");

    // Unknown envelope members.
    let resp = json!({"jsonrpc": "2.0", "id": 1, "result": {}, "extra": 1});
    let found = conformance_response(None, &resp);
    assert_eq!(
        triples(&found),
        [("$.extra".to_string(), "R01".to_string(), UnknownField)]
    );
}

// ---------------------------------------------------------------------------
// LegacyField
// ---------------------------------------------------------------------------

#[test]
fn legacy_kind() {
    let mut msg = user_message();
    msg["kind"] = json!("message");
    msg["parts"][0]["kind"] = json!("text");
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[
            ("$.kind", "R07", LegacyField),
            ("$.parts[0].kind", "R07", LegacyField),
        ],
    );
    let m: Message = lenient(&msg);
    assert_eq!(m.text(), "hi");
}

#[test]
fn legacy_final() {
    let event = json!({"taskId": "t-1", "contextId": "c-1",
        "status": {"state": "TASK_STATE_COMPLETED"}, "final": true});
    assert_exactly(
        ObjectType::TaskStatusUpdateEvent,
        &event,
        &[("$.final", "R06", LegacyField)],
    );
    // Also inside a response envelope.
    let resp = json!({"jsonrpc": "2.0", "id": "r-2", "result": {"statusUpdate": event}});
    let found = conformance_response(result_type("SendStreamingMessage"), &resp);
    assert_eq!(
        triples(&found),
        [(
            "$.result.statusUpdate.final".to_string(),
            "R06".to_string(),
            LegacyField
        )]
    );
    let e: TaskStatusUpdateEvent = lenient(&event);
    assert_eq!(e.status.state, TaskState::Completed);
    let r: JsonRpcResponse<StreamResponse> = lenient(&resp);
    assert_eq!(r.payload.unwrap().state(), Some(TaskState::Completed));
}

#[test]
fn legacy_index() {
    let event = json!({"taskId": "t-1", "contextId": "c-1", "index": 0,
        "artifact": {"artifactId": "a-1", "parts": [{"text": "x"}]}});
    assert_exactly(
        ObjectType::TaskArtifactUpdateEvent,
        &event,
        &[("$.index", "R06", LegacyField)],
    );
    let e: TaskArtifactUpdateEvent = lenient(&event);
    assert_eq!(e.artifact.artifact_id, "a-1");
}

#[test]
fn legacy_blocking() {
    let req = json!({"message": user_message(), "configuration": {"blocking": true}});
    assert_exactly(
        ObjectType::SendMessageRequest,
        &req,
        &[("$.configuration.blocking", "R06", LegacyField)],
    );
    let r: SendMessageRequest = lenient(&req);
    // `blocking` is not mapped by the 1.0 decoder (compat03 does that); the default is blocking.
    assert!(!r.configuration.unwrap().return_immediately);

    let rc = json!({"message": user_message(),
        "configuration": {"pushNotificationConfig": {"url": "http://x/"}}});
    assert_exactly(
        ObjectType::SendMessageRequest,
        &rc,
        &[("$.configuration.pushNotificationConfig", "R06", LegacyField)],
    );
}

#[test]
fn legacy_part_mime_type_and_file() {
    // 1.0 part with the 0.3 `mimeType` spelling.
    let msg = json!({"messageId": "m-1", "role": "ROLE_USER",
        "parts": [{"text": "a"}, {"text": "b", "mimeType": "text/plain"}]});
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[("$.parts[1].mimeType", "R06", LegacyField)],
    );
    let m: Message = lenient(&msg);
    assert_eq!(m.parts[1].media_type, None, "mimeType is not mediaType");

    // A 0.3 file part: legacy `kind` and `file`, and no 1.0 content member at all.
    let msg = json!({"messageId": "m-1", "role": "ROLE_USER", "parts": [
        {"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain", "name": "a.txt"}}]});
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[
            ("$.parts[0]", "R06", EmptyOneOf),
            ("$.parts[0].file", "R06", LegacyField),
            ("$.parts[0].kind", "R07", LegacyField),
        ],
    );
    // Not representable in 1.0: the decoder rejects it, naming the part.
    let err = rejects_at::<Message>(&msg.to_string(), "$.parts[0]");
    assert!(
        err.to_string().contains("none of text, raw, url or data"),
        "{err}"
    );

    let part = json!({"text": "x", "name": "a.txt"});
    assert_exactly(ObjectType::Part, &part, &[("$.name", "R06", LegacyField)]);
}

#[test]
fn legacy_card_url_and_protocol_version() {
    let mut card = minimal_card();
    card["url"] = json!("http://x/");
    card["protocolVersion"] = json!("0.3.0");
    card["preferredTransport"] = json!("JSONRPC");
    card["supportsAuthenticatedExtendedCard"] = json!(false);
    card["capabilities"]["stateTransitionHistory"] = json!(false);
    assert_exactly(
        ObjectType::AgentCard,
        &card,
        &[
            ("$.capabilities.stateTransitionHistory", "R06", LegacyField),
            ("$.preferredTransport", "R06", LegacyField),
            ("$.protocolVersion", "R06", LegacyField),
            ("$.supportsAuthenticatedExtendedCard", "R06", LegacyField),
            ("$.url", "R06", LegacyField),
        ],
    );
    let c: AgentCard = lenient(&card);
    assert_eq!(c.supported_interfaces[0].protocol_version, "1.0");
}

#[test]
fn legacy_security_scheme_type_and_in() {
    let mut card = minimal_card();
    card["securitySchemes"] = json!({
        "key": {"type": "apiKey", "apiKeySecurityScheme": {"location": "header", "name": "X-Key", "in": "header"}}
    });
    assert_exactly(
        ObjectType::AgentCard,
        &card,
        &[
            (
                "$.securitySchemes.key.apiKeySecurityScheme.in",
                "R06",
                LegacyField,
            ),
            ("$.securitySchemes.key.type", "R06", LegacyField),
        ],
    );
    // The lenient decoder skips the legacy discriminator next to the 1.0 wrapper key.
    let c: AgentCard = lenient(&card);
    assert!(matches!(
        &c.security_schemes["key"],
        SecurityScheme::ApiKeySecurityScheme(k) if k.name == "X-Key"
    ));
}

#[test]
fn legacy_push_config_and_task_timestamps() {
    let cfg = json!({"taskId": "t-1", "url": "http://x/", "pushNotificationConfig": {}});
    assert_exactly(
        ObjectType::TaskPushNotificationConfig,
        &cfg,
        &[("$.pushNotificationConfig", "R06", LegacyField)],
    );
    let mut task = task_with_state(json!("TASK_STATE_WORKING"));
    task["createdAt"] = json!("2026-03-20T10:00:00Z");
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.createdAt", "R06", LegacyField)],
    );
    lenient::<Task>(&task);
}

// ---------------------------------------------------------------------------
// SnakeCaseField
// ---------------------------------------------------------------------------

#[test]
fn snake_case_field() {
    let msg = json!({"message_id": "m-1", "role": "ROLE_USER", "context_id": "c-1",
        "parts": [{"text": "hi", "media_type": "text/plain"}]});
    // Reported once each; the snake_case spelling does not also count as missing.
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[
            ("$.context_id", "R05", SnakeCaseField),
            ("$.message_id", "R05", SnakeCaseField),
            ("$.parts[0].media_type", "R05", SnakeCaseField),
        ],
    );
    // ProtoJSON parsers accept the original proto names (reference §2).
    let m: Message = lenient(&msg);
    assert_eq!(m.message_id, "m-1");
    assert_eq!(m.context_id.as_deref(), Some("c-1"));
    assert_eq!(m.parts[0].media_type.as_deref(), Some("text/plain"));

    // A snake_case one-of member is one member, not an empty one-of; its content is checked.
    let event = json!({"status_update": {"taskId": "t-1", "contextId": "c-1",
        "status": {"state": "working"}}});
    assert_exactly(
        ObjectType::StreamResponse,
        &event,
        &[
            ("$.status_update", "R05", SnakeCaseField),
            ("$.status_update.status.state", "R05", InvalidEnum),
        ],
    );
    let e: StreamResponse = lenient(&event);
    assert_eq!(e.state(), Some(TaskState::Working));

    let mut card = minimal_card();
    card["securitySchemes"] = json!({"o": {"oauth2_security_scheme": {"flows": {"client_credentials":
            {"token_url": "https://a/token", "scopes": {}}}}}});
    assert_exactly(
        ObjectType::AgentCard,
        &card,
        &[
            (
                "$.securitySchemes.o.oauth2_security_scheme",
                "R05",
                SnakeCaseField,
            ),
            (
                "$.securitySchemes.o.oauth2_security_scheme.flows.client_credentials",
                "R05",
                SnakeCaseField,
            ),
            (
                "$.securitySchemes.o.oauth2_security_scheme.flows.client_credentials.token_url",
                "R05",
                SnakeCaseField,
            ),
        ],
    );
    let c: AgentCard = lenient(&card);
    match &c.security_schemes["o"] {
        SecurityScheme::Oauth2SecurityScheme(s) => match &s.flows {
            Some(OAuthFlows::ClientCredentials(f)) => assert_eq!(f.token_url, "https://a/token"),
            other => panic!("{other:?}"),
        },
        other => panic!("{other:?}"),
    }

    let list = json!({"context_id": "c-1", "page_size": "5", "include_artifacts": true});
    let r: ListTasksRequest = lenient(&list);
    assert_eq!(r.context_id.as_deref(), Some("c-1"));
    assert_eq!(r.page_size, Some(5));
    assert_eq!(r.include_artifacts, Some(true));
}
