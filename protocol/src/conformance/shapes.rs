//! The table of the 1.0 proto shapes: each object type's fields with their JSON types and
//! whether they are required, the members of each one-of, and the fields that 0.3 or the 1.0
//! release candidates had.

use super::ObjectType;

/// The JSON type of a field.
#[derive(Clone, Copy)]
pub(super) enum Ty {
    Str,
    Bool,
    Int,
    State,
    Role,
    Time,
    Bytes,
    /// `google.protobuf.Struct`: any JSON object.
    Struct,
    /// `google.protobuf.Value`: any JSON value.
    Any,
    Obj(ObjectType),
    ArrStr,
    Arr(ObjectType),
    MapStr,
    Map(ObjectType),
}

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Req {
    Opt,
    /// Required: present and not the default value.
    Req,
}

use ObjectType as O;
use Req::{Opt, Req as R};
use Ty::*;

pub(super) type Field = (&'static str, Ty, Req);

/// For one-of objects: the member keys and their types.
pub(super) fn one_of(t: ObjectType) -> Option<&'static [(&'static str, Ty)]> {
    Some(match t {
        O::Part => &[("text", Str), ("raw", Bytes), ("url", Str), ("data", Any)],
        O::SendMessageResponse => &[("task", Obj(O::Task)), ("message", Obj(O::Message))],
        O::StreamResponse => &[
            ("task", Obj(O::Task)),
            ("message", Obj(O::Message)),
            ("statusUpdate", Obj(O::TaskStatusUpdateEvent)),
            ("artifactUpdate", Obj(O::TaskArtifactUpdateEvent)),
        ],
        O::SecurityScheme => &[
            ("apiKeySecurityScheme", Obj(O::ApiKeySecurityScheme)),
            ("httpAuthSecurityScheme", Obj(O::HttpAuthSecurityScheme)),
            ("oauth2SecurityScheme", Obj(O::OAuth2SecurityScheme)),
            (
                "openIdConnectSecurityScheme",
                Obj(O::OpenIdConnectSecurityScheme),
            ),
            ("mtlsSecurityScheme", Obj(O::MutualTlsSecurityScheme)),
        ],
        O::OAuthFlows => &[
            ("authorizationCode", Obj(O::AuthorizationCodeOAuthFlow)),
            ("clientCredentials", Obj(O::ClientCredentialsOAuthFlow)),
            ("deviceCode", Obj(O::DeviceCodeOAuthFlow)),
            ("implicit", Obj(O::ImplicitOAuthFlow)),
            ("password", Obj(O::PasswordOAuthFlow)),
        ],
        _ => return None,
    })
}

/// The ordinary fields of an object type.
pub(super) fn fields(t: ObjectType) -> &'static [Field] {
    match t {
        O::Message => &[
            ("messageId", Str, R),
            ("contextId", Str, Opt),
            ("taskId", Str, Opt),
            ("role", Role, R),
            ("parts", Arr(O::Part), R),
            ("metadata", Struct, Opt),
            ("extensions", ArrStr, Opt),
            ("referenceTaskIds", ArrStr, Opt),
        ],
        O::Part => &[
            ("metadata", Struct, Opt),
            ("filename", Str, Opt),
            ("mediaType", Str, Opt),
        ],
        O::Task => &[
            ("id", Str, R),
            ("contextId", Str, Opt),
            ("status", Obj(O::TaskStatus), R),
            ("artifacts", Arr(O::Artifact), Opt),
            ("history", Arr(O::Message), Opt),
            ("metadata", Struct, Opt),
        ],
        O::TaskStatus => &[
            ("state", State, R),
            ("message", Obj(O::Message), Opt),
            ("timestamp", Time, Opt),
        ],
        O::Artifact => &[
            ("artifactId", Str, R),
            ("name", Str, Opt),
            ("description", Str, Opt),
            ("parts", Arr(O::Part), R),
            ("metadata", Struct, Opt),
            ("extensions", ArrStr, Opt),
        ],
        O::TaskStatusUpdateEvent => &[
            ("taskId", Str, R),
            ("contextId", Str, R),
            ("status", Obj(O::TaskStatus), R),
            ("metadata", Struct, Opt),
        ],
        O::TaskArtifactUpdateEvent => &[
            ("taskId", Str, R),
            ("contextId", Str, R),
            ("artifact", Obj(O::Artifact), R),
            ("append", Bool, Opt),
            ("lastChunk", Bool, Opt),
            ("metadata", Struct, Opt),
        ],
        O::SendMessageRequest => &[
            ("tenant", Str, Opt),
            ("message", Obj(O::Message), R),
            ("configuration", Obj(O::SendMessageConfiguration), Opt),
            ("metadata", Struct, Opt),
        ],
        O::SendMessageConfiguration => &[
            ("acceptedOutputModes", ArrStr, Opt),
            (
                "taskPushNotificationConfig",
                Obj(O::TaskPushNotificationConfig),
                Opt,
            ),
            ("historyLength", Int, Opt),
            ("returnImmediately", Bool, Opt),
        ],
        O::GetTaskRequest => &[
            ("tenant", Str, Opt),
            ("id", Str, R),
            ("historyLength", Int, Opt),
        ],
        O::ListTasksRequest => &[
            ("tenant", Str, Opt),
            ("contextId", Str, Opt),
            ("status", State, Opt),
            ("pageSize", Int, Opt),
            ("pageToken", Str, Opt),
            ("historyLength", Int, Opt),
            ("statusTimestampAfter", Time, Opt),
            ("includeArtifacts", Bool, Opt),
        ],
        O::ListTasksResponse => &[
            ("tasks", Arr(O::Task), Opt),
            ("nextPageToken", Str, Opt),
            ("pageSize", Int, Opt),
            ("totalSize", Int, Opt),
        ],
        O::CancelTaskRequest => &[
            ("tenant", Str, Opt),
            ("id", Str, R),
            ("metadata", Struct, Opt),
        ],
        O::SubscribeToTaskRequest => &[("tenant", Str, Opt), ("id", Str, R)],
        O::TaskPushNotificationConfig => &[
            ("tenant", Str, Opt),
            ("id", Str, Opt),
            ("taskId", Str, Opt),
            ("url", Str, R),
            ("token", Str, Opt),
            ("authentication", Obj(O::AuthenticationInfo), Opt),
        ],
        O::AuthenticationInfo => &[("scheme", Str, R), ("credentials", Str, Opt)],
        O::GetTaskPushNotificationConfigRequest | O::DeleteTaskPushNotificationConfigRequest => {
            &[("tenant", Str, Opt), ("taskId", Str, R), ("id", Str, R)]
        }
        O::ListTaskPushNotificationConfigsRequest => &[
            ("tenant", Str, Opt),
            ("taskId", Str, R),
            ("pageSize", Int, Opt),
            ("pageToken", Str, Opt),
        ],
        O::ListTaskPushNotificationConfigsResponse => &[
            ("configs", Arr(O::TaskPushNotificationConfig), Opt),
            ("nextPageToken", Str, Opt),
        ],
        O::GetExtendedAgentCardRequest => &[("tenant", Str, Opt)],
        O::AgentCard => &[
            ("name", Str, R),
            ("description", Str, R),
            ("supportedInterfaces", Arr(O::AgentInterface), R),
            ("provider", Obj(O::AgentProvider), Opt),
            ("version", Str, R),
            ("documentationUrl", Str, Opt),
            ("capabilities", Obj(O::AgentCapabilities), R),
            ("securitySchemes", Map(O::SecurityScheme), Opt),
            ("securityRequirements", Arr(O::SecurityRequirement), Opt),
            ("defaultInputModes", ArrStr, R),
            ("defaultOutputModes", ArrStr, R),
            ("skills", Arr(O::AgentSkill), R),
            ("signatures", Arr(O::AgentCardSignature), Opt),
            ("iconUrl", Str, Opt),
        ],
        O::AgentInterface => &[
            ("url", Str, R),
            ("protocolBinding", Str, R),
            ("tenant", Str, Opt),
            ("protocolVersion", Str, R),
        ],
        O::AgentProvider => &[("url", Str, R), ("organization", Str, R)],
        O::AgentCapabilities => &[
            ("streaming", Bool, Opt),
            ("pushNotifications", Bool, Opt),
            ("extensions", Arr(O::AgentExtension), Opt),
            ("extendedAgentCard", Bool, Opt),
        ],
        O::AgentExtension => &[
            ("uri", Str, Opt),
            ("description", Str, Opt),
            ("required", Bool, Opt),
            ("params", Struct, Opt),
        ],
        O::AgentSkill => &[
            ("id", Str, R),
            ("name", Str, R),
            ("description", Str, R),
            ("tags", ArrStr, R),
            ("examples", ArrStr, Opt),
            ("inputModes", ArrStr, Opt),
            ("outputModes", ArrStr, Opt),
            ("securityRequirements", Arr(O::SecurityRequirement), Opt),
        ],
        O::AgentCardSignature => &[
            ("protected", Str, R),
            ("signature", Str, R),
            ("header", Struct, Opt),
        ],
        O::SecurityRequirement => &[("schemes", Map(O::StringList), Opt)],
        O::StringList => &[("list", ArrStr, Opt)],
        O::ApiKeySecurityScheme => &[
            ("description", Str, Opt),
            ("location", Str, R),
            ("name", Str, R),
        ],
        O::HttpAuthSecurityScheme => &[
            ("description", Str, Opt),
            ("scheme", Str, R),
            ("bearerFormat", Str, Opt),
        ],
        O::OAuth2SecurityScheme => &[
            ("description", Str, Opt),
            ("flows", Obj(O::OAuthFlows), R),
            ("oauth2MetadataUrl", Str, Opt),
        ],
        O::OpenIdConnectSecurityScheme => {
            &[("description", Str, Opt), ("openIdConnectUrl", Str, R)]
        }
        O::MutualTlsSecurityScheme => &[("description", Str, Opt)],
        O::AuthorizationCodeOAuthFlow => &[
            ("authorizationUrl", Str, R),
            ("tokenUrl", Str, R),
            ("refreshUrl", Str, Opt),
            ("scopes", MapStr, R),
            ("pkceRequired", Bool, Opt),
        ],
        O::ClientCredentialsOAuthFlow => &[
            ("tokenUrl", Str, R),
            ("refreshUrl", Str, Opt),
            ("scopes", MapStr, R),
        ],
        O::DeviceCodeOAuthFlow => &[
            ("deviceAuthorizationUrl", Str, R),
            ("tokenUrl", Str, R),
            ("refreshUrl", Str, Opt),
            ("scopes", MapStr, R),
        ],
        O::ImplicitOAuthFlow => &[
            ("authorizationUrl", Str, Opt),
            ("refreshUrl", Str, Opt),
            ("scopes", MapStr, Opt),
        ],
        O::PasswordOAuthFlow => &[
            ("tokenUrl", Str, Opt),
            ("refreshUrl", Str, Opt),
            ("scopes", MapStr, Opt),
        ],
        O::SendMessageResponse | O::StreamResponse | O::SecurityScheme | O::OAuthFlows => &[],
    }
}

/// Fields that 0.3 or the 1.0 release candidates had and 1.0 does not.
pub(super) fn legacy_field(t: ObjectType, key: &str) -> Option<&'static str> {
    Some(match (t, key) {
        (_, "kind") => "R07",
        (O::TaskStatusUpdateEvent, "final") => "R06",
        (O::TaskArtifactUpdateEvent, "index") => "R06",
        (O::Part, "file" | "mimeType" | "name") => "R06",
        (O::SendMessageConfiguration, "blocking" | "pushNotificationConfig") => "R06",
        (O::Task, "createdAt" | "lastModified") => "R06",
        (O::TaskPushNotificationConfig, "pushNotificationConfig" | "configId" | "config") => "R06",
        (
            O::AgentCard,
            "url"
            | "preferredTransport"
            | "additionalInterfaces"
            | "protocolVersion"
            | "supportsAuthenticatedExtendedCard"
            | "security",
        ) => "R06",
        (O::AgentCapabilities, "stateTransitionHistory") => "R06",
        (O::SecurityScheme, "type") => "R06",
        (O::ApiKeySecurityScheme, "in") => "R06",
        _ => return None,
    })
}

pub(super) fn snake_to_camel(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut up = false;
    for c in s.chars() {
        if c == '_' {
            up = true;
        } else if up {
            out.extend(c.to_uppercase());
            up = false;
        } else {
            out.push(c);
        }
    }
    out
}
