//! Snapshots of the canonical JSON of one fully-populated instance of every object type: each
//! decodes back to itself and has no conformance deviations. The JSON examples of the A2A 1.0
//! reference are checked in `reference_examples.rs`.

use a2a_protocol::codec::decode;
use a2a_protocol::conformance::{ObjectType, conformance, conformance_response, result_type};
use a2a_protocol::jsonrpc::{Id, JsonRpcError, JsonRpcRequest, JsonRpcResponse, Method};
use a2a_protocol::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Debug;

mod common;
use common::{md, ts};

// ---------------------------------------------------------------------------
// Fully-populated fixtures
// ---------------------------------------------------------------------------

fn text_part() -> Part {
    Part {
        content: PartContent::Text("Summarize the attached file".into()),
        metadata: Some(md(json!({"lang": "en"}))),
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
        metadata: Some(md(json!({"schema": "budget/v1"}))),
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
        metadata: Some(md(json!({"x-deleg": {"depth": 1}}))),
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
        metadata: Some(md(json!({"source": "mock"}))),
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
        metadata: Some(md(json!({"chunked": true}))),
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
        metadata: Some(md(json!({"priority": "low"}))),
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
        metadata: Some(md(json!({"seq": 2}))),
    }
}

fn artifact_update() -> TaskArtifactUpdateEvent {
    TaskArtifactUpdateEvent {
        task_id: "t-1".into(),
        context_id: "c-1".into(),
        artifact: artifact(),
        append: true,
        last_chunk: true,
        metadata: Some(md(json!({"seq": 3}))),
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
        metadata: Some(md(json!({"x-deleg": {
            "deadline": "2026-03-20T10:07:00Z", "budget_usd": 2.0, "depth": 1,
            "chain": ["http://127.0.0.1:4100/"]
        }}))),
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
        metadata: Some(md(json!({"reason": "user aborted"}))),
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
                params: Some(md(json!({"header": "traceparent"}))),
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
            header: Some(md(json!({"kid": "key-1"}))),
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
