//! Snapshots of the canonical JSON of one fully-populated instance of every object type, and the
//! JSON examples of the A2A 1.0 reference (§1.3, §1.4, §3.2, §3.6, §3.7, §3.9-§3.12, §4): each
//! decodes, re-encodes to the same JSON and has no conformance deviations.

use a2a_protocol::codec::decode;
use a2a_protocol::conformance::{
    Deviation, ObjectType, conformance, conformance_response, params_type, result_type,
};
use a2a_protocol::jsonrpc::{Id, JsonRpcError, JsonRpcRequest, JsonRpcResponse, Method};
use a2a_protocol::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Debug;

// ---------------------------------------------------------------------------
// Fully-populated fixtures
// ---------------------------------------------------------------------------

fn ts(s: &str) -> Timestamp {
    Timestamp::parse(s).unwrap()
}

fn meta(v: Value) -> Option<Metadata> {
    match v {
        Value::Object(m) => Some(m),
        _ => panic!("metadata must be an object"),
    }
}

fn text_part() -> Part {
    Part {
        content: PartContent::Text("Summarize the attached file".into()),
        metadata: meta(json!({"lang": "en"})),
        filename: Some("prompt.txt".into()),
        media_type: Some("text/plain".into()),
    }
}

fn raw_part() -> Part {
    Part::raw(b"\x89PNG\r\n\x1a\n".to_vec())
        .with_filename("in.png")
        .with_media_type("image/png")
}

fn url_part() -> Part {
    Part::url("https://files.example/out.pdf")
        .with_filename("out.pdf")
        .with_media_type("application/pdf")
}

fn data_part() -> Part {
    Part {
        metadata: meta(json!({"schema": "budget/v1"})),
        ..Part::data(json!({"budgetUsd": 3.5, "items": [1, 2], "note": null}))
            .with_media_type("application/json")
    }
}

fn user_message() -> Message {
    Message {
        message_id: "m-1".into(),
        context_id: Some("c-1".into()),
        task_id: Some("t-1".into()),
        role: Role::User,
        parts: vec![text_part(), raw_part(), url_part(), data_part()],
        metadata: meta(json!({"x-deleg": {"depth": 1}})),
        extensions: vec!["https://ext.example/trace/v1".into()],
        reference_task_ids: vec!["t-0".into()],
    }
}

fn agent_message() -> Message {
    Message {
        message_id: "m-a1".into(),
        context_id: Some("c-1".into()),
        task_id: Some("t-1".into()),
        role: Role::Agent,
        parts: vec![Part::text("From which airport?")],
        metadata: meta(json!({"source": "mock"})),
        extensions: vec!["https://ext.example/trace/v1".into()],
        reference_task_ids: vec![],
    }
}

fn task_status() -> TaskStatus {
    TaskStatus {
        state: TaskState::InputRequired,
        message: Some(agent_message()),
        timestamp: Some(ts("2026-03-20T10:00:00.123Z")),
    }
}

fn artifact() -> Artifact {
    Artifact {
        artifact_id: "a-1".into(),
        name: Some("report".into()),
        description: Some("The flight options".into()),
        parts: vec![Part::text("Part one. "), data_part()],
        metadata: meta(json!({"chunked": true})),
        extensions: vec!["https://ext.example/trace/v1".into()],
    }
}

fn task() -> Task {
    Task {
        id: "t-1".into(),
        context_id: "c-1".into(),
        status: task_status(),
        artifacts: vec![artifact()],
        history: vec![user_message()],
        metadata: meta(json!({"priority": "low"})),
    }
}

fn status_update() -> TaskStatusUpdateEvent {
    TaskStatusUpdateEvent {
        task_id: "t-1".into(),
        context_id: "c-1".into(),
        status: TaskStatus {
            state: TaskState::Working,
            message: Some(agent_message()),
            timestamp: Some(ts("2026-03-20T10:00:01.000Z")),
        },
        metadata: meta(json!({"seq": 2})),
    }
}

fn artifact_update() -> TaskArtifactUpdateEvent {
    TaskArtifactUpdateEvent {
        task_id: "t-1".into(),
        context_id: "c-1".into(),
        artifact: artifact(),
        append: true,
        last_chunk: true,
        metadata: meta(json!({"seq": 3})),
    }
}

fn authentication() -> AuthenticationInfo {
    AuthenticationInfo {
        scheme: "Bearer".into(),
        credentials: Some("hook-secret".into()),
    }
}

fn push_config() -> TaskPushNotificationConfig {
    TaskPushNotificationConfig {
        tenant: Some("acme".into()),
        id: Some("cfg-1".into()),
        task_id: Some("t-1".into()),
        url: "http://127.0.0.1:7000/hook".into(),
        token: Some("tok-t1".into()),
        authentication: Some(authentication()),
    }
}

fn send_configuration() -> SendMessageConfiguration {
    SendMessageConfiguration {
        accepted_output_modes: vec!["text/plain".into(), "application/json".into()],
        task_push_notification_config: Some(TaskPushNotificationConfig {
            tenant: None,
            task_id: None,
            ..push_config()
        }),
        history_length: Some(0),
        return_immediately: true,
    }
}

fn send_message_request() -> SendMessageRequest {
    SendMessageRequest {
        tenant: Some("acme".into()),
        message: user_message(),
        configuration: Some(send_configuration()),
        metadata: meta(json!({"x-deleg": {
            "deadline": "2026-03-20T10:07:00Z", "budget_usd": 2.0, "depth": 1,
            "chain": ["http://127.0.0.1:4100/"]
        }})),
    }
}

fn get_task_request() -> GetTaskRequest {
    GetTaskRequest {
        tenant: Some("acme".into()),
        id: "t-1".into(),
        history_length: Some(2),
    }
}

fn list_tasks_request() -> ListTasksRequest {
    ListTasksRequest {
        tenant: Some("acme".into()),
        context_id: Some("c-1".into()),
        status: Some(TaskState::Working),
        page_size: Some(10),
        page_token: Some("cursor-1".into()),
        history_length: Some(1),
        status_timestamp_after: Some(ts("2026-03-20T09:00:00Z")),
        include_artifacts: Some(true),
    }
}

fn list_tasks_response() -> ListTasksResponse {
    ListTasksResponse {
        tasks: vec![task()],
        next_page_token: "cursor-2".into(),
        page_size: 10,
        total_size: 11,
    }
}

fn cancel_task_request() -> CancelTaskRequest {
    CancelTaskRequest {
        tenant: Some("acme".into()),
        id: "t-1".into(),
        metadata: meta(json!({"reason": "user aborted"})),
    }
}

fn subscribe_request() -> SubscribeToTaskRequest {
    SubscribeToTaskRequest {
        tenant: Some("acme".into()),
        id: "t-1".into(),
    }
}

fn push_config_ref() -> TaskPushNotificationConfigRef {
    TaskPushNotificationConfigRef {
        tenant: Some("acme".into()),
        task_id: "t-1".into(),
        id: "cfg-1".into(),
    }
}

fn list_push_configs_request() -> ListTaskPushNotificationConfigsRequest {
    ListTaskPushNotificationConfigsRequest {
        tenant: Some("acme".into()),
        task_id: "t-1".into(),
        page_size: 5,
        page_token: Some("cursor-1".into()),
    }
}

fn list_push_configs_response() -> ListTaskPushNotificationConfigsResponse {
    ListTaskPushNotificationConfigsResponse {
        configs: vec![push_config()],
        next_page_token: Some("cursor-2".into()),
    }
}

fn scopes() -> BTreeMap<String, String> {
    [
        ("tasks:read".to_string(), "Read tasks".to_string()),
        ("tasks:write".to_string(), "Create tasks".to_string()),
    ]
    .into()
}

fn oauth_flows() -> Vec<(&'static str, OAuthFlows)> {
    vec![
        (
            "authorization_code",
            OAuthFlows::AuthorizationCode(AuthorizationCodeOAuthFlow {
                authorization_url: "https://auth.example/authorize".into(),
                token_url: "https://auth.example/token".into(),
                refresh_url: Some("https://auth.example/refresh".into()),
                scopes: scopes(),
                pkce_required: true,
            }),
        ),
        (
            "client_credentials",
            OAuthFlows::ClientCredentials(ClientCredentialsOAuthFlow {
                token_url: "https://auth.example/token".into(),
                refresh_url: Some("https://auth.example/refresh".into()),
                scopes: scopes(),
            }),
        ),
        (
            "device_code",
            OAuthFlows::DeviceCode(DeviceCodeOAuthFlow {
                device_authorization_url: "https://auth.example/device".into(),
                token_url: "https://auth.example/token".into(),
                refresh_url: Some("https://auth.example/refresh".into()),
                scopes: scopes(),
            }),
        ),
        (
            "implicit",
            OAuthFlows::Implicit(ImplicitOAuthFlow {
                authorization_url: Some("https://auth.example/authorize".into()),
                refresh_url: Some("https://auth.example/refresh".into()),
                scopes: scopes(),
            }),
        ),
        (
            "password",
            OAuthFlows::Password(PasswordOAuthFlow {
                token_url: Some("https://auth.example/token".into()),
                refresh_url: Some("https://auth.example/refresh".into()),
                scopes: scopes(),
            }),
        ),
    ]
}

fn security_schemes() -> BTreeMap<String, SecurityScheme> {
    let mut m = BTreeMap::new();
    m.insert(
        "apiKey".to_string(),
        SecurityScheme::ApiKeySecurityScheme(ApiKeySecurityScheme {
            description: Some("Key in a header".into()),
            location: "header".into(),
            name: "X-API-Key".into(),
        }),
    );
    m.insert(
        "bearer".to_string(),
        SecurityScheme::HttpAuthSecurityScheme(HttpAuthSecurityScheme {
            description: Some("JWT bearer".into()),
            scheme: "Bearer".into(),
            bearer_format: Some("JWT".into()),
        }),
    );
    for (name, flows) in oauth_flows() {
        m.insert(
            format!("oauth2_{name}"),
            SecurityScheme::Oauth2SecurityScheme(OAuth2SecurityScheme {
                description: Some(format!("OAuth 2.0 {name}")),
                flows: Some(flows),
                oauth2_metadata_url: Some(
                    "https://auth.example/.well-known/oauth-authorization-server".into(),
                ),
            }),
        );
    }
    m.insert(
        "oidc".to_string(),
        SecurityScheme::OpenIdConnectSecurityScheme(OpenIdConnectSecurityScheme {
            description: Some("OpenID Connect".into()),
            open_id_connect_url: "https://auth.example/.well-known/openid-configuration".into(),
        }),
    );
    m.insert(
        "mtls".to_string(),
        SecurityScheme::MtlsSecurityScheme(MutualTlsSecurityScheme {
            description: Some("Client certificate".into()),
        }),
    );
    m
}

fn requirement(name: &str, scopes: &[&str]) -> SecurityRequirement {
    SecurityRequirement {
        schemes: [(
            name.to_string(),
            StringList {
                list: scopes.iter().map(|s| s.to_string()).collect(),
            },
        )]
        .into(),
    }
}

fn agent_card() -> AgentCard {
    AgentCard {
        name: "mock-flight-agent".into(),
        description: "Deterministic mock A2A agent for conformance tests".into(),
        supported_interfaces: vec![
            AgentInterface {
                url: "http://127.0.0.1:9101/a2a".into(),
                protocol_binding: BINDING_JSONRPC.into(),
                tenant: Some("acme".into()),
                protocol_version: "1.0".into(),
            },
            AgentInterface {
                url: "http://127.0.0.1:9102/".into(),
                protocol_binding: "HTTP+JSON".into(),
                tenant: None,
                protocol_version: "1.0".into(),
            },
        ],
        provider: Some(AgentProvider {
            url: "https://example.invalid".into(),
            organization: "conformance-harness".into(),
        }),
        version: "0.1.0".into(),
        documentation_url: Some("https://example.invalid/docs".into()),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(true),
            extensions: vec![AgentExtension {
                uri: "https://ext.example/trace/v1".into(),
                description: "Trace propagation".into(),
                required: true,
                params: meta(json!({"header": "traceparent"})),
            }],
            extended_agent_card: Some(false),
        },
        security_schemes: security_schemes(),
        security_requirements: vec![
            requirement("bearer", &[]),
            requirement("oauth2_authorization_code", &["tasks:read"]),
        ],
        default_input_modes: vec!["text/plain".into(), "application/json".into()],
        default_output_modes: vec!["text/plain".into(), "application/json".into()],
        skills: vec![AgentSkill {
            id: "book-flight".into(),
            name: "Book flight".into(),
            description: "Books a flight; may ask for input".into(),
            tags: vec!["travel".into()],
            examples: vec!["Book SFO to JFK on Friday".into()],
            input_modes: vec!["text/plain".into()],
            output_modes: vec!["application/json".into()],
            security_requirements: vec![requirement("apiKey", &[])],
        }],
        signatures: vec![AgentCardSignature {
            protected: "eyJhbGciOiJFUzI1NiJ9".into(),
            signature: "c2lnbmF0dXJl".into(),
            header: meta(json!({"kid": "key-1"})),
        }],
        icon_url: Some("https://example.invalid/icon.png".into()),
    }
}

// ---------------------------------------------------------------------------
// Snapshot helpers
// ---------------------------------------------------------------------------

/// The fixture decodes back to itself and has no conformance deviations as `t`.
fn canonical<T>(t: ObjectType, v: &T) -> Value
where
    T: Serialize + DeserializeOwned + PartialEq + Debug,
{
    let value = serde_json::to_value(v).unwrap();
    let back: T = decode(value.to_string().as_bytes()).unwrap();
    assert_eq!(&back, v, "{t:?} round trip");
    let found = conformance(t, &value);
    assert!(found.is_empty(), "{t:?}: {found:#?}");
    value
}

#[test]
fn snapshot_parts() {
    insta::assert_json_snapshot!("part_text", canonical(ObjectType::Part, &text_part()));
    insta::assert_json_snapshot!("part_raw", canonical(ObjectType::Part, &raw_part()));
    insta::assert_json_snapshot!("part_url", canonical(ObjectType::Part, &url_part()));
    insta::assert_json_snapshot!("part_data", canonical(ObjectType::Part, &data_part()));
}

#[test]
fn snapshot_message() {
    insta::assert_json_snapshot!("message", canonical(ObjectType::Message, &user_message()));
}

#[test]
fn snapshot_task_and_parts() {
    insta::assert_json_snapshot!("task", canonical(ObjectType::Task, &task()));
    insta::assert_json_snapshot!(
        "task_status",
        canonical(ObjectType::TaskStatus, &task_status())
    );
    insta::assert_json_snapshot!("artifact", canonical(ObjectType::Artifact, &artifact()));
}

#[test]
fn snapshot_events() {
    insta::assert_json_snapshot!(
        "task_status_update_event",
        canonical(ObjectType::TaskStatusUpdateEvent, &status_update())
    );
    insta::assert_json_snapshot!(
        "task_artifact_update_event",
        canonical(ObjectType::TaskArtifactUpdateEvent, &artifact_update())
    );
}

#[test]
fn snapshot_one_of_wrappers() {
    insta::assert_json_snapshot!(
        "send_message_response_task",
        canonical(
            ObjectType::SendMessageResponse,
            &SendMessageResponse::Task(task())
        )
    );
    insta::assert_json_snapshot!(
        "send_message_response_message",
        canonical(
            ObjectType::SendMessageResponse,
            &SendMessageResponse::Message(agent_message())
        )
    );
    let events = [
        ("stream_response_task", StreamResponse::Task(task())),
        (
            "stream_response_message",
            StreamResponse::Message(agent_message()),
        ),
        (
            "stream_response_status_update",
            StreamResponse::StatusUpdate(status_update()),
        ),
        (
            "stream_response_artifact_update",
            StreamResponse::ArtifactUpdate(artifact_update()),
        ),
    ];
    for (name, event) in events {
        insta::assert_json_snapshot!(name, canonical(ObjectType::StreamResponse, &event));
    }
}

#[test]
fn snapshot_requests() {
    insta::assert_json_snapshot!(
        "send_message_request",
        canonical(ObjectType::SendMessageRequest, &send_message_request())
    );
    insta::assert_json_snapshot!(
        "send_message_configuration",
        canonical(ObjectType::SendMessageConfiguration, &send_configuration())
    );
    insta::assert_json_snapshot!(
        "get_task_request",
        canonical(ObjectType::GetTaskRequest, &get_task_request())
    );
    insta::assert_json_snapshot!(
        "list_tasks_request",
        canonical(ObjectType::ListTasksRequest, &list_tasks_request())
    );
    insta::assert_json_snapshot!(
        "list_tasks_response",
        canonical(ObjectType::ListTasksResponse, &list_tasks_response())
    );
    insta::assert_json_snapshot!(
        "cancel_task_request",
        canonical(ObjectType::CancelTaskRequest, &cancel_task_request())
    );
    insta::assert_json_snapshot!(
        "subscribe_to_task_request",
        canonical(ObjectType::SubscribeToTaskRequest, &subscribe_request())
    );
    insta::assert_json_snapshot!(
        "get_extended_agent_card_request",
        canonical(
            ObjectType::GetExtendedAgentCardRequest,
            &GetExtendedAgentCardRequest {
                tenant: Some("acme".into())
            }
        )
    );
}

#[test]
fn snapshot_push_configs() {
    insta::assert_json_snapshot!(
        "task_push_notification_config",
        canonical(ObjectType::TaskPushNotificationConfig, &push_config())
    );
    insta::assert_json_snapshot!(
        "authentication_info",
        canonical(ObjectType::AuthenticationInfo, &authentication())
    );
    insta::assert_json_snapshot!(
        "task_push_notification_config_ref",
        canonical(
            ObjectType::GetTaskPushNotificationConfigRequest,
            &push_config_ref()
        )
    );
    assert!(
        conformance(
            ObjectType::DeleteTaskPushNotificationConfigRequest,
            &serde_json::to_value(push_config_ref()).unwrap()
        )
        .is_empty()
    );
    insta::assert_json_snapshot!(
        "list_task_push_notification_configs_request",
        canonical(
            ObjectType::ListTaskPushNotificationConfigsRequest,
            &list_push_configs_request()
        )
    );
    insta::assert_json_snapshot!(
        "list_task_push_notification_configs_response",
        canonical(
            ObjectType::ListTaskPushNotificationConfigsResponse,
            &list_push_configs_response()
        )
    );
}

#[test]
fn snapshot_agent_card() {
    let card = agent_card();
    insta::assert_json_snapshot!("agent_card", canonical(ObjectType::AgentCard, &card));
    // Every security scheme and OAuth flow variant is in the card above; check each alone too.
    assert_eq!(card.security_schemes.len(), 9);
    for scheme in card.security_schemes.values() {
        canonical(ObjectType::SecurityScheme, scheme);
    }
    for (_, flows) in oauth_flows() {
        canonical(ObjectType::OAuthFlows, &flows);
    }
    canonical(ObjectType::AgentInterface, &card.supported_interfaces[0]);
    canonical(ObjectType::AgentProvider, card.provider.as_ref().unwrap());
    canonical(ObjectType::AgentCapabilities, &card.capabilities);
    canonical(ObjectType::AgentExtension, &card.capabilities.extensions[0]);
    canonical(ObjectType::AgentSkill, &card.skills[0]);
    canonical(ObjectType::AgentCardSignature, &card.signatures[0]);
    canonical(
        ObjectType::SecurityRequirement,
        &card.security_requirements[1],
    );
    canonical(
        ObjectType::StringList,
        &card.security_requirements[1].schemes["oauth2_authorization_code"],
    );
}

#[test]
fn snapshot_json_rpc_envelopes() {
    let req = JsonRpcRequest::new("r-1", Method::SendMessage.as_str(), send_message_request());
    insta::assert_json_snapshot!("json_rpc_request_send_message", req);
    let ok = JsonRpcResponse::success(Id::from(7), SendMessageResponse::Task(task()));
    insta::assert_json_snapshot!("json_rpc_response_result", ok);
    let err: JsonRpcResponse<Task> = JsonRpcResponse::error(
        Id::from("r-1"),
        ErrorCode::TaskNotFound.to_error(None, &[("taskId", "t-1")]),
    );
    insta::assert_json_snapshot!("json_rpc_response_error", err);
    let null_id: JsonRpcResponse = JsonRpcResponse::error(
        Id::Null,
        JsonRpcError {
            code: ErrorCode::JsonParse.code(),
            message: "Invalid JSON payload".into(),
            data: Some(json!("expected value at line 1 column 1")),
        },
    );
    insta::assert_json_snapshot!("json_rpc_response_parse_error", null_id);
    for (name, v) in [
        ("ok", serde_json::to_value(&ok).unwrap()),
        ("err", serde_json::to_value(&err).unwrap()),
    ] {
        let found = conformance_response(result_type("SendMessage"), &v);
        assert!(found.is_empty(), "{name}: {found:#?}");
    }
}

// ---------------------------------------------------------------------------
// Reference examples
// ---------------------------------------------------------------------------

/// Decode `text` as `T`, re-encode, and return (original, re-encoded).
fn reencode<T: Serialize + DeserializeOwned>(text: &str) -> (Value, Value) {
    let original: Value = serde_json::from_str(text).expect("example is JSON");
    let typed: T = decode(text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    (original, serde_json::to_value(&typed).unwrap())
}

/// Decode `text` as `T`; it re-encodes to exactly the same JSON.
fn assert_reencodes<T: Serialize + DeserializeOwned>(text: &str) -> Value {
    let (original, again) = reencode::<T>(text);
    assert_eq!(
        again, original,
        "re-encoding changed the example\n{text}\n{again:#}"
    );
    original
}

/// A request example: exact re-encoding as `JsonRpcRequest<P>`, params conform.
fn request_example<P: Serialize + DeserializeOwned>(text: &str) -> Vec<Deviation> {
    let v = assert_reencodes::<JsonRpcRequest<P>>(text);
    // Also exact as raw JSON-RPC.
    assert_reencodes::<JsonRpcRequest>(text);
    let method = v["method"].as_str().unwrap();
    assert!(Method::parse(method).is_some(), "{method}");
    let t = params_type(method).unwrap();
    conformance(t, &v["params"])
}

/// A response example: exact re-encoding as `JsonRpcResponse<R>`, envelope and result conform.
fn response_example<R: Serialize + DeserializeOwned>(
    text: &str,
    result: ObjectType,
) -> Vec<Deviation> {
    let v = assert_reencodes::<JsonRpcResponse<R>>(text);
    assert_reencodes::<JsonRpcResponse>(text);
    conformance_response(Some(result), &v)
}

#[track_caller]
fn assert_no_deviations(found: Vec<Deviation>) {
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn reference_1_3_envelopes() {
    assert_no_deviations(request_example::<GetTaskRequest>(
        r#"{"jsonrpc":"2.0","id":"r-1","method":"GetTask","params":{"id":"t-1","historyLength":2}}"#,
    ));
    assert_no_deviations(response_example::<Task>(
        r#"{"jsonrpc":"2.0","id":"r-1","result":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}"#,
        ObjectType::Task,
    ));
    let error = r#"{"jsonrpc":"2.0","id":"r-1","error":{"code":-32001,"message":"Task not found",
 "data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND",
          "domain":"a2a-protocol.org","metadata":{"taskId":"t-1"}}]}}"#;
    assert_no_deviations(response_example::<Task>(error, ObjectType::Task));
    // The example is exactly what `ErrorCode::to_error` builds.
    let built: JsonRpcResponse<Task> = JsonRpcResponse::error(
        Id::from("r-1"),
        ErrorCode::TaskNotFound.to_error(None, &[("taskId", "t-1")]),
    );
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        serde_json::from_str::<Value>(error).unwrap()
    );
    let decoded: JsonRpcResponse<Task> = decode(error.as_bytes()).unwrap();
    let err = decoded.payload.unwrap_err();
    assert_eq!(err.error_code(), ErrorCode::TaskNotFound);
    assert_eq!(err.error_info().unwrap().metadata["taskId"], "t-1");
}

#[test]
fn reference_1_4_sse_payloads() {
    let payloads = [
        r#"{"jsonrpc":"2.0","id":"r-2","result":{"task":{"id":"t-2","contextId":"c-1","status":{"state":"TASK_STATE_SUBMITTED"}}}}"#,
        r#"{"jsonrpc":"2.0","id":"r-2","result":{"statusUpdate":{"taskId":"t-2","contextId":"c-1","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-03-20T10:00:01.000Z"}}}}"#,
        r#"{"jsonrpc":"2.0","id":"r-2","result":{"artifactUpdate":{"taskId":"t-2","contextId":"c-1","artifact":{"artifactId":"a-1","name":"report","parts":[{"text":"Part one. "}]}}}}"#,
        r#"{"jsonrpc":"2.0","id":"r-2","result":{"artifactUpdate":{"taskId":"t-2","contextId":"c-1","artifact":{"artifactId":"a-1","parts":[{"text":"Part two."}]},"append":true,"lastChunk":true}}}"#,
        r#"{"jsonrpc":"2.0","id":"r-2","result":{"statusUpdate":{"taskId":"t-2","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-03-20T10:00:03.000Z"}}}}"#,
    ];
    let mut events = Vec::new();
    for p in payloads {
        assert_no_deviations(response_example::<StreamResponse>(
            p,
            ObjectType::StreamResponse,
        ));
        let r: JsonRpcResponse<StreamResponse> = decode(p.as_bytes()).unwrap();
        assert_eq!(r.id, Id::from("r-2"));
        events.push(r.payload.unwrap());
    }
    let keys: Vec<_> = events.iter().map(StreamResponse::key).collect();
    assert_eq!(
        keys,
        [
            "task",
            "statusUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "statusUpdate"
        ]
    );
    let states: Vec<_> = events.iter().filter_map(StreamResponse::state).collect();
    assert_eq!(
        states,
        [
            TaskState::Submitted,
            TaskState::Working,
            TaskState::Completed
        ]
    );
    assert!(events.iter().all(|e| e.task_id() == Some("t-2")));
}

#[test]
fn reference_3_2_parts() {
    let text = r#"[{"text":"Summarize the attached file"},
 {"raw":"iVBORw0KGgo=","filename":"in.png","mediaType":"image/png"},
 {"url":"https://files.example/out.pdf","filename":"out.pdf","mediaType":"application/pdf"},
 {"data":{"budgetUsd":3.5,"items":[1,2]},"mediaType":"application/json"}]"#;
    let v = assert_reencodes::<Vec<Part>>(text);
    for (i, p) in v.as_array().unwrap().iter().enumerate() {
        let found = conformance(ObjectType::Part, p);
        assert!(found.is_empty(), "part {i}: {found:#?}");
    }
    let parts: Vec<Part> = decode(text.as_bytes()).unwrap();
    assert_eq!(
        parts[1].content,
        PartContent::Raw(b"\x89PNG\r\n\x1a\n".to_vec())
    );
    assert!(matches!(parts[3].content, PartContent::Data(_)));
}

/// §3.6 shows `"returnImmediately":false`, a proto3 default value; canonical ProtoJSON (and this
/// crate) omits it, so the re-encoding equals the example without that member.
#[test]
fn reference_3_6_send_message_request() {
    let text = r#"{"jsonrpc":"2.0","id":"r-10","method":"SendMessage","params":{
  "message":{"messageId":"m-1","role":"ROLE_USER","contextId":"c-1",
             "parts":[{"text":"Book a flight"}]},
  "configuration":{"acceptedOutputModes":["text/plain"],"historyLength":0,
                   "returnImmediately":false},
  "metadata":{"x-deleg":{"deadline":"2026-03-20T10:07:00Z","budget_usd":2.0,
                         "depth":1,"chain":["http://127.0.0.1:4100/"]}}}}"#;
    let (mut original, again) = reencode::<JsonRpcRequest<SendMessageRequest>>(text);
    let removed = original["params"]["configuration"]
        .as_object_mut()
        .unwrap()
        .remove("returnImmediately");
    assert_eq!(removed, Some(json!(false)));
    assert_eq!(again, original);
    // `historyLength: 0` has presence (optional int32) and is kept.
    assert_eq!(again["params"]["configuration"]["historyLength"], json!(0));
    // The example itself is conformant (an explicit default is allowed on input).
    let v: Value = serde_json::from_str(text).unwrap();
    assert_no_deviations(conformance(ObjectType::SendMessageRequest, &v["params"]));
}

#[test]
fn reference_3_7_send_message_responses() {
    assert_no_deviations(response_example::<SendMessageResponse>(
        r#"{"jsonrpc":"2.0","id":"r-10","result":{"task":{"id":"t-9","contextId":"c-1",
  "status":{"state":"TASK_STATE_INPUT_REQUIRED","timestamp":"2026-03-20T10:00:00.000Z",
    "message":{"messageId":"m-a1","role":"ROLE_AGENT","contextId":"c-1","taskId":"t-9",
               "parts":[{"text":"From which airport?"}]}}}}}"#,
        ObjectType::SendMessageResponse,
    ));
    assert_no_deviations(response_example::<SendMessageResponse>(
        r#"{"jsonrpc":"2.0","id":"r-11","result":{"message":{"messageId":"m-a2","role":"ROLE_AGENT",
  "contextId":"c-1","parts":[{"text":"Hello!"}]}}}"#,
        ObjectType::SendMessageResponse,
    ));
    assert_no_deviations(request_example::<SendMessageRequest>(
        r#"{"jsonrpc":"2.0","id":"r-12","method":"SendMessage","params":{"message":{
  "messageId":"m-2","role":"ROLE_USER","taskId":"t-9","contextId":"c-1",
  "parts":[{"text":"From SFO"}]}}}"#,
    ));
}

#[test]
fn reference_3_9_list_tasks() {
    assert_no_deviations(request_example::<ListTasksRequest>(
        r#"{"jsonrpc":"2.0","id":"r-20","method":"ListTasks","params":{"contextId":"c-1",
  "status":"TASK_STATE_WORKING","pageSize":10}}"#,
    ));
    assert_no_deviations(response_example::<ListTasksResponse>(
        r#"{"jsonrpc":"2.0","id":"r-20","result":{"tasks":[{"id":"t-2","contextId":"c-1",
  "status":{"state":"TASK_STATE_WORKING","timestamp":"2026-03-20T10:00:01.000Z"}}],
  "nextPageToken":"","pageSize":10,"totalSize":1}}"#,
        ObjectType::ListTasksResponse,
    ));
}

#[test]
fn reference_3_10_cancel_and_subscribe() {
    assert_no_deviations(request_example::<CancelTaskRequest>(
        r#"{"jsonrpc":"2.0","id":"r-30","method":"CancelTask","params":{"id":"t-2"}}"#,
    ));
    assert_no_deviations(request_example::<SubscribeToTaskRequest>(
        r#"{"jsonrpc":"2.0","id":"r-31","method":"SubscribeToTask","params":{"id":"t-2"}}"#,
    ));
}

#[test]
fn reference_3_11_create_push_config() {
    assert_no_deviations(request_example::<TaskPushNotificationConfig>(
        r#"{"jsonrpc":"2.0","id":"r-40","method":"CreateTaskPushNotificationConfig","params":{
  "taskId":"t-2","id":"cfg-1","url":"http://127.0.0.1:7000/hook","token":"tok-t2",
  "authentication":{"scheme":"Bearer","credentials":"hook-secret"}}}"#,
    ));
}

#[test]
fn reference_3_12_webhook_body() {
    let text = r#"{"statusUpdate":{"taskId":"t-2","contextId":"c-1",
  "status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-03-20T10:05:00.000Z"}}}"#;
    let v = assert_reencodes::<StreamResponse>(text);
    assert_no_deviations(conformance(ObjectType::StreamResponse, &v));
    let event: StreamResponse = decode(text.as_bytes()).unwrap();
    assert_eq!(event.state(), Some(TaskState::Completed));
}

/// §4's card writes `{"list": []}` for a scheme without scopes; an empty repeated field is a
/// proto3 default, omitted by canonical ProtoJSON (and this crate), so it re-encodes as `{}`.
#[test]
fn reference_4_minimal_card() {
    let text = r#"{
  "name": "mock-flight-agent",
  "description": "Deterministic mock A2A agent for conformance tests",
  "version": "0.1.0",
  "supportedInterfaces": [
    {"url": "http://127.0.0.1:9101/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
  ],
  "provider": {"organization": "conformance-harness", "url": "https://example.invalid"},
  "capabilities": {"streaming": true, "pushNotifications": true, "extendedAgentCard": false},
  "defaultInputModes": ["text/plain", "application/json"],
  "defaultOutputModes": ["text/plain", "application/json"],
  "skills": [{"id": "book-flight", "name": "Book flight", "description": "Books a flight; may ask for input",
              "tags": ["travel"], "examples": ["Book SFO to JFK on Friday"]}],
  "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
  "securityRequirements": [{"schemes": {"bearer": {"list": []}}}]
}"#;
    let (mut original, again) = reencode::<AgentCard>(text);
    assert_no_deviations(conformance(ObjectType::AgentCard, &original));
    let bearer = &mut original["securityRequirements"][0]["schemes"]["bearer"];
    assert_eq!(bearer, &json!({"list": []}));
    *bearer = json!({});
    assert_eq!(again, original);

    let card: AgentCard = decode(text.as_bytes()).unwrap();
    assert_eq!(
        card.jsonrpc_interface().unwrap().url,
        "http://127.0.0.1:9101/a2a"
    );
    assert!(card.skill("book-flight").is_some());
    assert_eq!(
        card.output_modes(&card.skills[0]),
        ["text/plain", "application/json"]
    );
    // Without the scopeless requirement the card re-encodes exactly.
    let mut unauthenticated: Value = serde_json::from_str(text).unwrap();
    let obj = unauthenticated.as_object_mut().unwrap();
    obj.remove("securitySchemes");
    obj.remove("securityRequirements");
    assert_reencodes::<AgentCard>(&unauthenticated.to_string());
}
