//! The 1.0 object types the check knows, with their proto message names.

use serde::{Deserialize, Serialize};

/// The 1.0 object types the check knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[allow(missing_docs)]
pub enum ObjectType {
    Message,
    Part,
    Task,
    TaskStatus,
    Artifact,
    TaskStatusUpdateEvent,
    TaskArtifactUpdateEvent,
    SendMessageRequest,
    SendMessageConfiguration,
    SendMessageResponse,
    StreamResponse,
    GetTaskRequest,
    ListTasksRequest,
    ListTasksResponse,
    CancelTaskRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
    AuthenticationInfo,
    GetTaskPushNotificationConfigRequest,
    DeleteTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    GetExtendedAgentCardRequest,
    AgentCard,
    AgentInterface,
    AgentProvider,
    AgentCapabilities,
    AgentExtension,
    AgentSkill,
    AgentCardSignature,
    SecurityRequirement,
    StringList,
    SecurityScheme,
    ApiKeySecurityScheme,
    HttpAuthSecurityScheme,
    OAuth2SecurityScheme,
    OpenIdConnectSecurityScheme,
    MutualTlsSecurityScheme,
    OAuthFlows,
    AuthorizationCodeOAuthFlow,
    ClientCredentialsOAuthFlow,
    DeviceCodeOAuthFlow,
    ImplicitOAuthFlow,
    PasswordOAuthFlow,
}

impl ObjectType {
    /// The proto message name (`APIKeySecurityScheme`, `HTTPAuthSecurityScheme`: the proto's
    /// casing, not the Rust variant's).
    pub fn name(self) -> String {
        match self {
            ObjectType::ApiKeySecurityScheme => "APIKeySecurityScheme".to_string(),
            ObjectType::HttpAuthSecurityScheme => "HTTPAuthSecurityScheme".to_string(),
            _ => format!("{self:?}"),
        }
    }

    /// The object type with this proto message name (the Rust variant name is accepted too).
    pub fn from_name(name: &str) -> Option<ObjectType> {
        let all = ObjectType::ALL.iter().copied();
        all.clone()
            .find(|t| t.name() == name)
            .or_else(|| all.clone().find(|t| format!("{t:?}") == name))
    }

    /// Every object type.
    pub const ALL: &'static [ObjectType] = &[
        ObjectType::Message,
        ObjectType::Part,
        ObjectType::Task,
        ObjectType::TaskStatus,
        ObjectType::Artifact,
        ObjectType::TaskStatusUpdateEvent,
        ObjectType::TaskArtifactUpdateEvent,
        ObjectType::SendMessageRequest,
        ObjectType::SendMessageConfiguration,
        ObjectType::SendMessageResponse,
        ObjectType::StreamResponse,
        ObjectType::GetTaskRequest,
        ObjectType::ListTasksRequest,
        ObjectType::ListTasksResponse,
        ObjectType::CancelTaskRequest,
        ObjectType::SubscribeToTaskRequest,
        ObjectType::TaskPushNotificationConfig,
        ObjectType::AuthenticationInfo,
        ObjectType::GetTaskPushNotificationConfigRequest,
        ObjectType::DeleteTaskPushNotificationConfigRequest,
        ObjectType::ListTaskPushNotificationConfigsRequest,
        ObjectType::ListTaskPushNotificationConfigsResponse,
        ObjectType::GetExtendedAgentCardRequest,
        ObjectType::AgentCard,
        ObjectType::AgentInterface,
        ObjectType::AgentProvider,
        ObjectType::AgentCapabilities,
        ObjectType::AgentExtension,
        ObjectType::AgentSkill,
        ObjectType::AgentCardSignature,
        ObjectType::SecurityRequirement,
        ObjectType::StringList,
        ObjectType::SecurityScheme,
        ObjectType::ApiKeySecurityScheme,
        ObjectType::HttpAuthSecurityScheme,
        ObjectType::OAuth2SecurityScheme,
        ObjectType::OpenIdConnectSecurityScheme,
        ObjectType::MutualTlsSecurityScheme,
        ObjectType::OAuthFlows,
        ObjectType::AuthorizationCodeOAuthFlow,
        ObjectType::ClientCredentialsOAuthFlow,
        ObjectType::DeviceCodeOAuthFlow,
        ObjectType::ImplicitOAuthFlow,
        ObjectType::PasswordOAuthFlow,
    ];
}
