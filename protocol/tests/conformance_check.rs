//! One test per conformance `DeviationKind`, asserting the exact JSON path and rule ID of each
//! deviation; that the lenient decoders accept the same payloads where the value is representable;
//! and that `codec::decode` errors name the JSON path of the problem.

use a2a_protocol::codec::{DecodeError, decode, decode_value};
use a2a_protocol::conformance::{
    Deviation, DeviationKind, ObjectType, conformance, conformance_response, params_type,
    result_type,
};
use a2a_protocol::jsonrpc::{Id, JsonRpcRequest, JsonRpcResponse};
use a2a_protocol::*;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::fmt::Debug;

use DeviationKind::*;

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// The deviations as sorted (path, rule, kind) triples.
fn triples(found: &[Deviation]) -> Vec<(String, String, DeviationKind)> {
    let mut v: Vec<_> = found
        .iter()
        .map(|d| (d.path.clone(), d.rule.clone(), d.kind))
        .collect();
    v.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    v
}

/// `conformance(t, v)` finds exactly `expected` (path, rule, kind), in any order.
#[track_caller]
fn assert_exactly(t: ObjectType, v: &Value, expected: &[(&str, &str, DeviationKind)]) {
    let found = conformance(t, v);
    let mut want: Vec<_> = expected
        .iter()
        .map(|(p, r, k)| (p.to_string(), r.to_string(), *k))
        .collect();
    want.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    assert_eq!(triples(&found), want, "{t:?} {v:#}\n{found:#?}");
    for d in &found {
        assert!(!d.message.is_empty());
        // Display shows path and rule.
        let shown = d.to_string();
        assert!(shown.starts_with(&d.path) && shown.contains(&format!("[{}]", d.rule)));
    }
}

/// The lenient decoder accepts `v` (from text and from the value) and gives the same result.
#[track_caller]
fn lenient<T: DeserializeOwned + PartialEq + Debug>(v: &Value) -> T {
    let from_text: T = decode(v.to_string().as_bytes()).unwrap_or_else(|e| panic!("{e}\n{v}"));
    let from_value: T = decode_value(v).unwrap_or_else(|e| panic!("{e}\n{v}"));
    assert_eq!(from_text, from_value);
    from_text
}

/// The decoder rejects `text`, naming `path`.
#[track_caller]
fn rejects_at<T: DeserializeOwned + Debug>(text: &str, path: &str) -> DecodeError {
    let err = decode::<T>(text.as_bytes()).expect_err(text);
    assert_eq!(err.path(), path, "{err}");
    assert!(
        err.to_string().starts_with(path),
        "Display names the path: {err}"
    );
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        let err2 = decode_value::<T>(&v).expect_err(text);
        assert_eq!(err2.path(), path, "decode_value: {err2}");
    }
    err
}

fn task_with_state(state: Value) -> Value {
    json!({"id": "t-1", "contextId": "c-1", "status": {"state": state}})
}

fn user_message() -> Value {
    json!({"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]})
}

fn minimal_card() -> Value {
    json!({
        "name": "a", "description": "d", "version": "1",
        "supportedInterfaces": [{"url": "http://x/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "n", "description": "d", "tags": ["t"]}]
    })
}

#[test]
fn valid_payloads_have_no_deviations() {
    assert_exactly(
        ObjectType::Task,
        &task_with_state(json!("TASK_STATE_COMPLETED")),
        &[],
    );
    assert_exactly(ObjectType::Message, &user_message(), &[]);
    assert_exactly(ObjectType::AgentCard, &minimal_card(), &[]);
    // ProtoJSON allows int32 as a numeric string and `null` for an unset field.
    assert_exactly(
        ObjectType::GetTaskRequest,
        &json!({"id": "t-1", "historyLength": "10", "tenant": null}),
        &[],
    );
    let r: GetTaskRequest = lenient(&json!({"id": "t-1", "historyLength": "10", "tenant": null}));
    assert_eq!(r.history_length, Some(10));
    assert_eq!(r.tenant, None);
}

// ---------------------------------------------------------------------------
// UnknownField
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// InvalidEnum
// ---------------------------------------------------------------------------

#[test]
fn invalid_enum_lowercase_completed() {
    let task = task_with_state(json!("completed"));
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status.state", "R05", InvalidEnum)],
    );
    // A 0.3-style lowercase state decodes.
    let t: Task = lenient(&task);
    assert_eq!(t.status.state, TaskState::Completed);
}

#[test]
fn invalid_enum_kebab_input_required() {
    let task = task_with_state(json!("input-required"));
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status.state", "R05", InvalidEnum)],
    );
    let t: Task = lenient(&task);
    assert_eq!(t.status.state, TaskState::InputRequired);
}

#[test]
fn invalid_enum_number() {
    let task = task_with_state(json!(3));
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status.state", "R05", InvalidEnum)],
    );
    let t: Task = lenient(&task);
    assert_eq!(t.status.state, TaskState::Completed);
    let list = json!({"status": 2});
    assert_exactly(
        ObjectType::ListTasksRequest,
        &list,
        &[("$.status", "R05", InvalidEnum)],
    );
    assert_eq!(
        lenient::<ListTasksRequest>(&list).status,
        Some(TaskState::Working)
    );
}

#[test]
fn invalid_enum_unknown_name() {
    let task = task_with_state(json!("TASK_STATE_FOO"));
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status.state", "R05", InvalidEnum)],
    );
    let err = rejects_at::<Task>(&task.to_string(), "$.status.state");
    assert!(err.to_string().contains("TASK_STATE_FOO"), "{err}");
    // An out-of-range number is also rejected.
    rejects_at::<Task>(&task_with_state(json!(99)).to_string(), "$.status.state");
}

#[test]
fn invalid_enum_role_user() {
    let mut msg = user_message();
    msg["role"] = json!("user");
    assert_exactly(ObjectType::Message, &msg, &[("$.role", "R05", InvalidEnum)]);
    let m: Message = lenient(&msg);
    assert_eq!(m.role, Role::User);
    msg["role"] = json!("ROLE_ADMIN");
    assert_exactly(ObjectType::Message, &msg, &[("$.role", "R05", InvalidEnum)]);
    rejects_at::<Message>(&msg.to_string(), "$.role");
}

// ---------------------------------------------------------------------------
// MissingRequired
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// MultipleOneOf, EmptyOneOf
// ---------------------------------------------------------------------------

#[test]
fn multiple_one_of_part_with_text_and_data() {
    let text = r#"{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"a","data":{"k":1}}]}"#;
    let msg: Value = serde_json::from_str(text).unwrap();
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[("$.parts[0]", "R06", MultipleOneOf)],
    );
    // The decoder keeps the first member in document order.
    let m: Message = decode(text.as_bytes()).unwrap();
    assert_eq!(m.parts[0].content, PartContent::Text("a".into()));

    let resp =
        json!({"jsonrpc": "2.0", "id": 1, "result": {"a": 1}, "error": {"code": 1, "message": ""}});
    let found = conformance_response(None, &resp);
    assert_eq!(
        triples(&found),
        [("$".to_string(), "R01".to_string(), MultipleOneOf)]
    );
    let stream =
        json!({"task": task_with_state(json!("TASK_STATE_WORKING")), "message": user_message()});
    assert_exactly(
        ObjectType::StreamResponse,
        &stream,
        &[("$", "R06", MultipleOneOf)],
    );
}

#[test]
fn empty_one_of() {
    let msg = json!({"messageId": "m-1", "role": "ROLE_USER",
        "parts": [{"text": "ok"}, {"mediaType": "text/plain"}]});
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[("$.parts[1]", "R06", EmptyOneOf)],
    );
    rejects_at::<Message>(&msg.to_string(), "$.parts[1]");

    // `null` members do not count; `data: null` does (google.protobuf.Value null).
    assert_exactly(
        ObjectType::Part,
        &json!({"text": null}),
        &[("$", "R06", EmptyOneOf)],
    );
    assert_exactly(ObjectType::Part, &json!({"data": null}), &[]);
    let p: Part = lenient(&json!({"data": null}));
    assert_eq!(p.content, PartContent::Data(Value::Null));

    assert_exactly(
        ObjectType::StreamResponse,
        &json!({}),
        &[("$", "R06", EmptyOneOf)],
    );
    rejects_at::<StreamResponse>("{}", "$");
    assert_exactly(
        ObjectType::SecurityScheme,
        &json!({"type": "http"}),
        &[("$", "R06", EmptyOneOf), ("$.type", "R06", LegacyField)],
    );
    rejects_at::<SecurityScheme>(r#"{"type":"http"}"#, "$");

    let found = conformance_response(None, &json!({"jsonrpc": "2.0", "id": 1}));
    assert_eq!(
        triples(&found),
        [("$".to_string(), "R01".to_string(), EmptyOneOf)]
    );
}

// ---------------------------------------------------------------------------
// NonUtcTimestamp, WrongType, InvalidBase64
// ---------------------------------------------------------------------------

#[test]
fn non_utc_timestamp() {
    let mut task = task_with_state(json!("TASK_STATE_WORKING"));
    task["status"]["timestamp"] = json!("2026-03-20T12:00:01.000+02:00");
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status.timestamp", "R05", NonUtcTimestamp)],
    );
    // The decoder converts to UTC.
    let t: Task = lenient(&task);
    assert_eq!(
        t.status.timestamp.unwrap().to_rfc3339(),
        "2026-03-20T10:00:01.000Z"
    );

    // `+00:00` is UTC but not `Z`; seconds-only `Z` is fine (ms precision is a SHOULD).
    task["status"]["timestamp"] = json!("2026-03-20T10:00:01+00:00");
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status.timestamp", "R05", NonUtcTimestamp)],
    );
    task["status"]["timestamp"] = json!("2026-03-20T10:00:01Z");
    assert_exactly(ObjectType::Task, &task, &[]);

    // Not RFC 3339 at all: a deviation, and the decoder rejects it naming the path.
    task["status"]["timestamp"] = json!("yesterday");
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status.timestamp", "R05", NonUtcTimestamp)],
    );
    rejects_at::<Task>(&task.to_string(), "$.status.timestamp");

    let list = json!({"statusTimestampAfter": "2026-03-20T10:00:00-05:00"});
    assert_exactly(
        ObjectType::ListTasksRequest,
        &list,
        &[("$.statusTimestampAfter", "R05", NonUtcTimestamp)],
    );
}

#[test]
fn wrong_type() {
    let task = json!({"id": 5, "status": {"state": "TASK_STATE_WORKING"}});
    assert_exactly(ObjectType::Task, &task, &[("$.id", "R05", WrongType)]);
    rejects_at::<Task>(&task.to_string(), "$.id");

    let req = json!({"id": "t-1", "historyLength": "ten"});
    assert_exactly(
        ObjectType::GetTaskRequest,
        &req,
        &[("$.historyLength", "R05", WrongType)],
    );
    rejects_at::<GetTaskRequest>(&req.to_string(), "$.historyLength");

    // int32 range.
    let req = json!({"id": "t-1", "historyLength": 3_000_000_000u64});
    assert_exactly(
        ObjectType::GetTaskRequest,
        &req,
        &[("$.historyLength", "R05", WrongType)],
    );
    rejects_at::<GetTaskRequest>(&req.to_string(), "$.historyLength");

    let msg = json!({"messageId": "m-1", "role": true, "parts": {"text": "x"},
        "metadata": [], "extensions": ["ok", 1]});
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[
            ("$.extensions[1]", "R05", WrongType),
            ("$.metadata", "R05", WrongType),
            ("$.parts", "R05", WrongType),
            ("$.role", "R05", WrongType),
        ],
    );
    assert_exactly(ObjectType::Task, &json!([]), &[("$", "R05", WrongType)]);
    rejects_at::<Task>("5", "$");
    // Known leniency: serde-derived structs also accept a JSON array (positional fields), so the
    // decoder does not reject `[]`; the conformance check does (above).
    assert_eq!(decode::<Task>(b"[]").unwrap(), Task::default());

    let event = json!({"taskId": "t", "contextId": "c", "append": "yes",
        "artifact": {"artifactId": "a", "parts": [{"text": 1}]}});
    assert_exactly(
        ObjectType::TaskArtifactUpdateEvent,
        &event,
        &[
            ("$.append", "R05", WrongType),
            ("$.artifact.parts[0].text", "R05", WrongType),
        ],
    );
    rejects_at::<TaskArtifactUpdateEvent>(&event.to_string(), "$.append");

    let found = conformance_response(None, &json!("not an object"));
    assert_eq!(
        triples(&found),
        [("$".to_string(), "R01".to_string(), WrongType)]
    );
}

#[test]
fn invalid_base64() {
    let msg = json!({"messageId": "m-1", "role": "ROLE_USER",
        "parts": [{"text": "see file"}, {"raw": "not base64!", "mediaType": "image/png"}]});
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[("$.parts[1].raw", "R05", InvalidBase64)],
    );
    let err = rejects_at::<Message>(&msg.to_string(), "$.parts[1]");
    assert!(err.to_string().contains("base64"), "{err}");

    // URL-safe and unpadded base64 are accepted (ProtoJSON bytes).
    for raw in ["-_8", "iVBORw0KGgo", "iVBORw0KGgo="] {
        let part = json!({"raw": raw});
        assert_exactly(ObjectType::Part, &part, &[]);
        lenient::<Part>(&part);
    }
    let p: Part = lenient(&json!({"raw": "-_8"}));
    assert_eq!(p.content, PartContent::Raw(vec![0xfb, 0xff]));
}

// ---------------------------------------------------------------------------
// Decode errors name the JSON path
// ---------------------------------------------------------------------------

#[test]
fn decode_errors_name_the_json_path() {
    rejects_at::<Task>(r#"{"id":"t","status":{"state":"NOPE"}}"#, "$.status.state");
    rejects_at::<Task>(
        r#"{"id":"t","status":{"state":"TASK_STATE_WORKING"},"history":[{"messageId":"m","role":"x","parts":[]}]}"#,
        "$.history[0].role",
    );
    rejects_at::<Task>(
        r#"{"id":"t","status":{"state":"TASK_STATE_WORKING"},"artifacts":[{"artifactId":"a","parts":[{"text":"x"},{"raw":"%%"}]}]}"#,
        "$.artifacts[0].parts[1]",
    );
    rejects_at::<Message>(
        r#"{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"},{}]}"#,
        "$.parts[1]",
    );
    rejects_at::<Message>(
        r#"{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x","filename":7}]}"#,
        "$.parts[0].filename",
    );
    rejects_at::<JsonRpcResponse<StreamResponse>>(
        r#"{"jsonrpc":"2.0","id":"r","result":{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"done"}}}}"#,
        "$.result.statusUpdate.status.state",
    );
    rejects_at::<JsonRpcRequest<SendMessageRequest>>(
        r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"},{"url":5}]}}}"#,
        "$.params.message.parts[1].url",
    );
    rejects_at::<ListTasksRequest>(r#"{"pageSize":"big"}"#, "$.pageSize");
    rejects_at::<AgentCard>(
        r#"{"securitySchemes":{"b":{"httpAuthSecurityScheme":{"scheme":1}}}}"#,
        "$.securitySchemes.b.httpAuthSecurityScheme.scheme",
    );

    // Syntax errors have position, path `$`.
    let err = decode::<Task>(br#"{"id": "t","#).unwrap_err();
    assert!(matches!(err, DecodeError::Syntax { line: 1, .. }), "{err}");
    assert_eq!(err.path(), "$");
    let err = decode::<Task>(br#"{"id":"t","status":{}} trailing"#).unwrap_err();
    assert!(matches!(err, DecodeError::Syntax { .. }), "{err}");
}

// ---------------------------------------------------------------------------
// Method tables used by the check
// ---------------------------------------------------------------------------

#[test]
fn params_and_result_types_cover_every_method() {
    use a2a_protocol::jsonrpc::Method;
    for m in Method::ALL {
        assert!(params_type(m.as_str()).is_some(), "{m}");
        let r = result_type(m.as_str());
        assert_eq!(
            r.is_none(),
            *m == Method::DeleteTaskPushNotificationConfig,
            "{m}"
        );
    }
    assert_eq!(params_type("message/send"), None);
    assert_eq!(result_type("tasks/get"), None);
    for t in ObjectType::ALL {
        assert_eq!(ObjectType::from_name(&t.name()), Some(*t));
    }

    // A legacy 0.3 response checked as 1.0.
    let legacy = json!({"jsonrpc": "2.0", "id": Id::from(3), "result": {
        "kind": "task", "id": "t-1", "contextId": "c-1",
        "status": {"state": "completed", "timestamp": "2026-03-20T10:00:00+00:00"}}});
    let found = conformance_response(result_type("GetTask"), &legacy);
    assert_eq!(
        triples(&found),
        [
            ("$.result.kind".to_string(), "R07".to_string(), LegacyField),
            (
                "$.result.status.state".to_string(),
                "R05".to_string(),
                InvalidEnum
            ),
            (
                "$.result.status.timestamp".to_string(),
                "R05".to_string(),
                NonUtcTimestamp
            ),
        ]
    );
    let r: JsonRpcResponse<Task> = lenient(&legacy);
    assert_eq!(r.payload.unwrap().status.state, TaskState::Completed);
}

#[test]
fn report_is_bounded() {
    let mut obj = serde_json::Map::new();
    for i in 0..1000 {
        obj.insert(format!("x{i}"), json!(i));
    }
    let found = conformance(ObjectType::Task, &Value::Object(obj));
    assert_eq!(found.len(), a2a_protocol::conformance::MAX_DEVIATIONS);
}
