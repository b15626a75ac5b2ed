//! The Rust values sent to the SDK: one per object type and one-of member, and the zero-value probes.

use super::*;

/// One fully populated Rust value per object type and one-of member, serialised.
pub(crate) fn rust_items() -> Vec<(String, ObjectType, Value)> {
    fn item<T: Serialize>(label: &str, t: ObjectType, v: &T) -> (String, ObjectType, Value) {
        let json = serde_json::to_value(v).unwrap_or_else(|e| panic!("serialise {label}: {e}"));
        (label.to_string(), t, json)
    }
    let mut out = Vec::new();
    for (i, p) in parts().iter().enumerate() {
        out.push(item(&format!("Part[{i}]"), O::Part, p));
    }
    out.push(item("Message/user", O::Message, &user_message()));
    out.push(item("Message/agent", O::Message, &agent_message()));
    out.push(item("TaskStatus", O::TaskStatus, &task_status()));
    out.push(item("Artifact", O::Artifact, &artifact()));
    out.push(item("Task", O::Task, &task()));
    out.push(item(
        "TaskStatusUpdateEvent",
        O::TaskStatusUpdateEvent,
        &status_update(),
    ));
    out.push(item(
        "TaskArtifactUpdateEvent",
        O::TaskArtifactUpdateEvent,
        &artifact_update(),
    ));
    out.push(item(
        "SendMessageConfiguration",
        O::SendMessageConfiguration,
        &send_configuration(),
    ));
    out.push(item(
        "SendMessageRequest",
        O::SendMessageRequest,
        &SendMessageRequest {
            tenant: Some("tenant-a".into()),
            message: user_message(),
            configuration: Some(send_configuration()),
            metadata: Some(md(json!({"x-deleg": {
                "deadline": "2026-03-20T10:07:00Z",
                "budget_usd": 2.0,
                "depth": 1,
                "chain": ["http://127.0.0.1:4100/"],
            }}))),
        },
    ));
    out.push(item(
        "SendMessageResponse/task",
        O::SendMessageResponse,
        &SendMessageResponse::Task(task()),
    ));
    out.push(item(
        "SendMessageResponse/message",
        O::SendMessageResponse,
        &SendMessageResponse::Message(agent_message()),
    ));
    for ev in [
        StreamResponse::Task(task()),
        StreamResponse::Message(agent_message()),
        StreamResponse::StatusUpdate(status_update()),
        StreamResponse::ArtifactUpdate(artifact_update()),
    ] {
        out.push(item(
            &format!("StreamResponse/{}", ev.key()),
            O::StreamResponse,
            &ev,
        ));
    }
    out.push(item(
        "GetTaskRequest",
        O::GetTaskRequest,
        &GetTaskRequest {
            tenant: Some("tenant-a".into()),
            id: "t-1".into(),
            history_length: Some(2),
        },
    ));
    out.push(item(
        "ListTasksRequest",
        O::ListTasksRequest,
        &ListTasksRequest {
            tenant: Some("tenant-a".into()),
            context_id: Some("c-1".into()),
            status: Some(TaskState::Working),
            page_size: Some(10),
            page_token: Some("page-2".into()),
            // `optional int32`: an explicit 0 has presence and must survive.
            history_length: Some(0),
            status_timestamp_after: Some(ts("2026-03-20T09:00:00.250Z")),
            include_artifacts: Some(true),
        },
    ));
    out.push(item(
        "ListTasksResponse",
        O::ListTasksResponse,
        &ListTasksResponse {
            tasks: vec![task()],
            next_page_token: "page-3".into(),
            page_size: 10,
            total_size: 21,
        },
    ));
    out.push(item(
        "CancelTaskRequest",
        O::CancelTaskRequest,
        &CancelTaskRequest {
            tenant: Some("tenant-a".into()),
            id: "t-1".into(),
            metadata: Some(md(json!({"reason": "user"}))),
        },
    ));
    out.push(item(
        "SubscribeToTaskRequest",
        O::SubscribeToTaskRequest,
        &SubscribeToTaskRequest {
            tenant: Some("tenant-a".into()),
            id: "t-1".into(),
        },
    ));
    out.push(item(
        "TaskPushNotificationConfig",
        O::TaskPushNotificationConfig,
        &push_config(),
    ));
    out.push(item("AuthenticationInfo", O::AuthenticationInfo, &auth()));
    let config_ref = TaskPushNotificationConfigRef {
        tenant: Some("tenant-a".into()),
        task_id: "t-1".into(),
        id: "cfg-1".into(),
    };
    out.push(item(
        "GetTaskPushNotificationConfigRequest",
        O::GetTaskPushNotificationConfigRequest,
        &config_ref,
    ));
    out.push(item(
        "DeleteTaskPushNotificationConfigRequest",
        O::DeleteTaskPushNotificationConfigRequest,
        &config_ref,
    ));
    out.push(item(
        "ListTaskPushNotificationConfigsRequest",
        O::ListTaskPushNotificationConfigsRequest,
        &ListTaskPushNotificationConfigsRequest {
            tenant: Some("tenant-a".into()),
            task_id: "t-1".into(),
            page_size: 20,
            page_token: Some("p-1".into()),
        },
    ));
    out.push(item(
        "ListTaskPushNotificationConfigsResponse",
        O::ListTaskPushNotificationConfigsResponse,
        &ListTaskPushNotificationConfigsResponse {
            configs: vec![push_config()],
            next_page_token: Some("p-2".into()),
        },
    ));
    out.push(item(
        "GetExtendedAgentCardRequest",
        O::GetExtendedAgentCardRequest,
        &GetExtendedAgentCardRequest {
            tenant: Some("tenant-a".into()),
        },
    ));
    out.push(item("AgentCard", O::AgentCard, &agent_card()));
    for (i, iface) in interfaces().iter().enumerate() {
        out.push(item(
            &format!("AgentInterface[{i}]"),
            O::AgentInterface,
            iface,
        ));
    }
    out.push(item("AgentProvider", O::AgentProvider, &provider()));
    out.push(item(
        "AgentCapabilities",
        O::AgentCapabilities,
        &capabilities(),
    ));
    out.push(item(
        "AgentCapabilities/allFalse",
        O::AgentCapabilities,
        // `optional bool`s: explicit false has presence and must survive.
        &AgentCapabilities {
            streaming: Some(false),
            push_notifications: Some(false),
            extensions: Vec::new(),
            extended_agent_card: Some(false),
        },
    ));
    for (i, ext) in extensions().iter().enumerate() {
        out.push(item(
            &format!("AgentExtension[{i}]"),
            O::AgentExtension,
            ext,
        ));
    }
    out.push(item("AgentSkill", O::AgentSkill, &skill()));
    out.push(item(
        "AgentCardSignature",
        O::AgentCardSignature,
        &signature(),
    ));
    out.push(item(
        "SecurityRequirement",
        O::SecurityRequirement,
        &requirement(&[("oauth", &["read", "write"]), ("apiKey", &[])]),
    ));
    out.push(item(
        "StringList",
        O::StringList,
        &string_list(&["read", "write"]),
    ));
    out.push(item("StringList/empty", O::StringList, &string_list(&[])));
    for (name, scheme) in security_schemes() {
        out.push(item(
            &format!("SecurityScheme/{name}"),
            O::SecurityScheme,
            &scheme,
        ));
    }
    out.push(item(
        "ApiKeySecurityScheme",
        O::ApiKeySecurityScheme,
        &api_key(),
    ));
    out.push(item(
        "HttpAuthSecurityScheme",
        O::HttpAuthSecurityScheme,
        &http_auth(),
    ));
    out.push(item(
        "OpenIdConnectSecurityScheme",
        O::OpenIdConnectSecurityScheme,
        &oidc(),
    ));
    out.push(item(
        "MutualTlsSecurityScheme",
        O::MutualTlsSecurityScheme,
        &mtls(),
    ));
    for (name, flow) in flows() {
        out.push(item(
            &format!("OAuth2SecurityScheme/{name}"),
            O::OAuth2SecurityScheme,
            &oauth2(flow.clone()),
        ));
        out.push(item(&format!("OAuthFlows/{name}"), O::OAuthFlows, &flow));
        let (label, t, json) = match &flow {
            OAuthFlows::AuthorizationCode(f) => item(
                "AuthorizationCodeOAuthFlow",
                O::AuthorizationCodeOAuthFlow,
                f,
            ),
            OAuthFlows::ClientCredentials(f) => item(
                "ClientCredentialsOAuthFlow",
                O::ClientCredentialsOAuthFlow,
                f,
            ),
            OAuthFlows::DeviceCode(f) => item("DeviceCodeOAuthFlow", O::DeviceCodeOAuthFlow, f),
            OAuthFlows::Implicit(f) => item("ImplicitOAuthFlow", O::ImplicitOAuthFlow, f),
            OAuthFlows::Password(f) => item("PasswordOAuthFlow", O::PasswordOAuthFlow, f),
        };
        out.push((label, t, json));
    }
    out
}

/// For each object type, what this crate emits for it when nothing is set (`{}` decoded, then
/// encoded): its required fields at their zero values (`""`, `[]`, `{}`, `0`, `*_UNSPECIFIED`),
/// nested ones included. One-ofs cannot decode from `{}`, so they are probed as `{}`.
pub(crate) fn zero_probes() -> Vec<(String, ObjectType, Value)> {
    ObjectType::ALL
        .iter()
        .map(|t| {
            let json = reencode(*t, &json!({})).unwrap_or_else(|_| json!({}));
            (format!("{}/zero", t.name()), *t, json)
        })
        .collect()
}
