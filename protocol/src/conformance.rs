//! The conformance check: every deviation from A2A 1.0 found in a JSON payload.
//!
//! Decoding in this crate is lenient so that a tolerant client keeps working; this module is the
//! strict side. [`conformance`] walks a [`Value`] against a table of the 1.0 proto shapes and
//! returns each [`Deviation`] with a JSON path and the rule of reference §6 it breaks: unknown or
//! legacy fields (`kind`, `final`, `index`, ...), wrongly spelled enums, missing required fields,
//! a one-of with zero or several members, non-UTC timestamps, wrong JSON types, bad base64.
//! It never panics and never allocates more than the size of its report.
//!
//! ```
//! use a2a_protocol::conformance::{conformance, ObjectType, DeviationKind};
//! let legacy = serde_json::json!({"kind": "task", "id": "t-1", "contextId": "c-1",
//!     "status": {"state": "completed"}});
//! let found = conformance(ObjectType::Task, &legacy);
//! assert!(found.iter().any(|d| d.kind == DeviationKind::LegacyField && d.path == "$.kind"));
//! assert!(found.iter().any(|d| d.kind == DeviationKind::InvalidEnum && d.path == "$.status.state"));
//! ```

use crate::enums::TaskState;
use crate::timestamp::{Timestamp, is_utc_z};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// What kind of deviation was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DeviationKind {
    /// A field the 1.0 proto does not have.
    UnknownField,
    /// A field from 0.3 or the 1.0 release candidates (`kind`, `final`, `index`, `blocking`, ...).
    LegacyField,
    /// A field spelled in snake_case instead of camelCase.
    SnakeCaseField,
    /// An enum value that is not the exact proto name (lowercase, kebab-case, unknown, a number).
    InvalidEnum,
    /// A required field is absent or empty.
    MissingRequired,
    /// A one-of has more than one member set.
    MultipleOneOf,
    /// A one-of has no member set.
    EmptyOneOf,
    /// A timestamp that is not RFC 3339 in UTC with `Z`.
    NonUtcTimestamp,
    /// A value of the wrong JSON type.
    WrongType,
    /// `raw` bytes that are not base64.
    InvalidBase64,
}

/// One deviation from A2A 1.0.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deviation {
    /// JSON path such as `$.status.state`.
    pub path: String,
    /// The rule of reference §6 broken, such as `R07`.
    pub rule: String,
    /// What kind of deviation.
    pub kind: DeviationKind,
    /// A human-readable description.
    pub message: String,
}

impl fmt::Display for Deviation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}] {}", self.path, self.rule, self.message)
    }
}

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

/// The JSON type of a field.
#[derive(Clone, Copy)]
enum Ty {
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
enum Req {
    Opt,
    /// Required: present and not the default value.
    Req,
}

use ObjectType as O;
use Req::{Opt, Req as R};
use Ty::*;

type Field = (&'static str, Ty, Req);

/// For one-of objects: the member keys and their types.
fn one_of(t: ObjectType) -> Option<&'static [(&'static str, Ty)]> {
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
fn fields(t: ObjectType) -> &'static [Field] {
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
fn legacy_field(t: ObjectType, key: &str) -> Option<&'static str> {
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

fn snake_to_camel(s: &str) -> String {
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

struct Checker {
    out: Vec<Deviation>,
}

/// Cap on reported deviations, so a hostile payload cannot grow the report without bound.
pub const MAX_DEVIATIONS: usize = 200;

/// Nesting bound, so a hostile payload cannot exhaust the stack.
const MAX_DEPTH: usize = 64;

impl Checker {
    fn push(&mut self, path: &str, rule: &str, kind: DeviationKind, message: String) {
        if self.out.len() < MAX_DEVIATIONS {
            self.out.push(Deviation {
                path: path.to_string(),
                rule: rule.to_string(),
                kind,
                message,
            });
        }
    }

    fn object(&mut self, t: ObjectType, v: &Value, path: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.push(
                path,
                "R06",
                DeviationKind::WrongType,
                "nesting too deep".into(),
            );
            return;
        }
        let Some(obj) = v.as_object() else {
            self.push(
                path,
                "R05",
                DeviationKind::WrongType,
                format!("expected a {} object", t.name()),
            );
            return;
        };
        let members = one_of(t).unwrap_or(&[]);
        let flds = fields(t);
        let mut set_members = Vec::new();
        for (key, val) in obj {
            let p = format!("{path}.{key}");
            if let Some((_, ty)) = members.iter().find(|(k, _)| k == key) {
                if !val.is_null() || matches!(ty, Any) {
                    set_members.push(key.as_str());
                    self.value(*ty, val, &p, depth);
                }
                continue;
            }
            if let Some((_, ty, _)) = flds.iter().find(|(k, _, _)| k == key) {
                if !val.is_null() {
                    self.value(*ty, val, &p, depth);
                }
                continue;
            }
            if let Some(rule) = legacy_field(t, key) {
                self.push(
                    &p,
                    rule,
                    DeviationKind::LegacyField,
                    format!("legacy field {key:?} is not part of A2A 1.0 {}", t.name()),
                );
                continue;
            }
            let camel = snake_to_camel(key);
            let member = members.iter().find(|(k, _)| *k == camel);
            let field = flds.iter().find(|(k, _, _)| *k == camel);
            if key.contains('_') && (member.is_some() || field.is_some()) {
                self.push(
                    &p,
                    "R05",
                    DeviationKind::SnakeCaseField,
                    format!("field {key:?} must be emitted as {camel:?}"),
                );
                // Lenient decoders read the snake_case spelling: count a one-of member as set
                // (no spurious EmptyOneOf) and check what it holds.
                if let Some((k, ty)) = member {
                    if !val.is_null() || matches!(ty, Any) {
                        set_members.push(*k);
                        self.value(*ty, val, &p, depth);
                    }
                } else if let Some((_, ty, _)) = field
                    && !val.is_null()
                {
                    self.value(*ty, val, &p, depth);
                }
                continue;
            }
            self.push(
                &p,
                "R06",
                DeviationKind::UnknownField,
                format!("unknown field {key:?} for {}", t.name()),
            );
        }
        if !members.is_empty() {
            match set_members.len() {
                0 => {
                    let names: Vec<&str> = members.iter().map(|(k, _)| *k).collect();
                    self.push(
                        path,
                        "R06",
                        DeviationKind::EmptyOneOf,
                        format!("{} needs exactly one of {}", t.name(), names.join(", ")),
                    );
                }
                1 => {}
                _ => self.push(
                    path,
                    "R06",
                    DeviationKind::MultipleOneOf,
                    format!("{} has several of {}", t.name(), set_members.join(", ")),
                ),
            }
        }
        for (key, ty, req) in flds {
            if *req != R {
                continue;
            }
            let present = match obj.get(*key) {
                None | Some(Value::Null) => false,
                // A required enum set to its zero value (`*_UNSPECIFIED`) is unset in proto3.
                Some(v) if matches!(ty, State | Role) && is_unspecified_enum(*ty, v) => false,
                Some(Value::String(s)) => !s.is_empty(),
                Some(Value::Array(a)) => !a.is_empty(),
                Some(_) => true,
            };
            // A snake_case spelling was already reported; do not also call the field missing.
            let snake_present = obj
                .keys()
                .any(|k| k.contains('_') && snake_to_camel(k) == *key);
            if !present && !snake_present {
                let what = if matches!(ty, Arr(_) | ArrStr) {
                    "required, with at least one element"
                } else {
                    "required"
                };
                self.push(
                    &format!("{path}.{key}"),
                    "R06",
                    DeviationKind::MissingRequired,
                    format!("{key:?} is {what} in {}", t.name()),
                );
            }
        }
    }

    fn value(&mut self, ty: Ty, v: &Value, path: &str, depth: usize) {
        let wrong = |c: &mut Checker, want: &str| {
            c.push(
                path,
                "R05",
                DeviationKind::WrongType,
                format!("expected {want}, found {}", json_type(v)),
            );
        };
        match ty {
            Str => {
                if !v.is_string() {
                    wrong(self, "a string");
                }
            }
            Bool => {
                if !v.is_boolean() {
                    wrong(self, "a boolean");
                }
            }
            Int => match v {
                Value::Number(n) if n.as_i64().is_some_and(|n| i32::try_from(n).is_ok()) => {}
                Value::String(s) if s.parse::<i32>().is_ok() => {}
                _ => wrong(self, "an int32"),
            },
            State => self.enum_value(
                v,
                path,
                "TaskState",
                |s| TaskState::from_proto_name(s).is_some(),
                |s| TaskState::parse_lenient(s).is_some(),
            ),
            Role => self.enum_value(
                v,
                path,
                "Role",
                |s| crate::enums::Role::from_proto_name(s).is_some(),
                |s| crate::enums::Role::parse_lenient(s).is_some(),
            ),
            Time => match v.as_str() {
                Some(s) => match Timestamp::parse(s) {
                    Err(_) => self.push(
                        path,
                        "R05",
                        DeviationKind::NonUtcTimestamp,
                        format!("{s:?} is not an RFC 3339 timestamp"),
                    ),
                    Ok(_) if !is_utc_z(s) => self.push(
                        path,
                        "R05",
                        DeviationKind::NonUtcTimestamp,
                        format!("{s:?} must use UTC with Z"),
                    ),
                    Ok(_) => {}
                },
                None => wrong(self, "an RFC 3339 string"),
            },
            Bytes => match v.as_str() {
                Some(s) => {
                    if crate::message::decode_base64_lenient(s).is_err() {
                        self.push(
                            path,
                            "R05",
                            DeviationKind::InvalidBase64,
                            "raw is not valid base64".into(),
                        );
                    }
                }
                None => wrong(self, "a base64 string"),
            },
            Struct => {
                if !v.is_object() {
                    wrong(self, "an object");
                }
            }
            Any => {}
            Obj(t) => self.object(t, v, path, depth + 1),
            ArrStr => match v.as_array() {
                Some(a) => {
                    for (i, x) in a.iter().enumerate() {
                        if !x.is_string() {
                            self.push(
                                &format!("{path}[{i}]"),
                                "R05",
                                DeviationKind::WrongType,
                                "expected a string".into(),
                            );
                        }
                    }
                }
                None => wrong(self, "an array"),
            },
            Arr(t) => match v.as_array() {
                Some(a) => {
                    for (i, x) in a.iter().enumerate() {
                        self.object(t, x, &format!("{path}[{i}]"), depth + 1);
                    }
                }
                None => wrong(self, "an array"),
            },
            MapStr => match v.as_object() {
                Some(m) => {
                    for (k, x) in m {
                        if !x.is_string() {
                            self.push(
                                &format!("{path}.{k}"),
                                "R05",
                                DeviationKind::WrongType,
                                "expected a string".into(),
                            );
                        }
                    }
                }
                None => wrong(self, "an object"),
            },
            Map(t) => match v.as_object() {
                Some(m) => {
                    for (k, x) in m {
                        self.object(t, x, &format!("{path}.{k}"), depth + 1);
                    }
                }
                None => wrong(self, "an object"),
            },
        }
    }

    fn enum_value(
        &mut self,
        v: &Value,
        path: &str,
        name: &str,
        exact: impl Fn(&str) -> bool,
        lenient: impl Fn(&str) -> bool,
    ) {
        match v {
            Value::String(s) if exact(s) => {}
            Value::String(s) if lenient(s) => self.push(
                path,
                "R05",
                DeviationKind::InvalidEnum,
                format!("{name} {s:?} is not the proto name"),
            ),
            Value::String(s) => self.push(
                path,
                "R05",
                DeviationKind::InvalidEnum,
                format!("unknown {name} {s:?}"),
            ),
            Value::Number(n) => self.push(
                path,
                "R05",
                DeviationKind::InvalidEnum,
                format!("{name} given as number {n}; emit the proto name"),
            ),
            _ => self.push(
                path,
                "R05",
                DeviationKind::WrongType,
                format!("expected a {name} name, found {}", json_type(v)),
            ),
        }
    }
}

/// True when a `TaskState` or `Role` value means the proto zero value (unset).
fn is_unspecified_enum(ty: Ty, v: &Value) -> bool {
    match (ty, v) {
        (_, Value::Number(n)) => n.as_i64() == Some(0),
        (State, Value::String(s)) => TaskState::parse_lenient(s) == Some(TaskState::Unspecified),
        (Role, Value::String(s)) => {
            crate::enums::Role::parse_lenient(s) == Some(crate::enums::Role::Unspecified)
        }
        _ => false,
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Every deviation from A2A 1.0 in `value`, read as an object of type `t`.
pub fn conformance(t: ObjectType, value: &Value) -> Vec<Deviation> {
    let mut c = Checker { out: Vec::new() };
    c.object(t, value, "$", 0);
    c.out
}

/// Deviations in a JSON-RPC response envelope whose `result` should be of type `result`
/// (`None` when the result type is not checked, e.g. for `DeleteTaskPushNotificationConfig`).
pub fn conformance_response(result: Option<ObjectType>, value: &Value) -> Vec<Deviation> {
    let mut c = Checker { out: Vec::new() };
    let Some(obj) = value.as_object() else {
        c.push(
            "$",
            "R01",
            DeviationKind::WrongType,
            "a JSON-RPC response must be an object".into(),
        );
        return c.out;
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        c.push(
            "$.jsonrpc",
            "R01",
            DeviationKind::MissingRequired,
            "jsonrpc must be \"2.0\"".into(),
        );
    }
    if !obj.contains_key("id") {
        c.push(
            "$.id",
            "R01",
            DeviationKind::MissingRequired,
            "id is required".into(),
        );
    }
    match (obj.get("result"), obj.get("error")) {
        (Some(_), Some(_)) => c.push(
            "$",
            "R01",
            DeviationKind::MultipleOneOf,
            "both result and error".into(),
        ),
        (None, None) => c.push(
            "$",
            "R01",
            DeviationKind::EmptyOneOf,
            "neither result nor error".into(),
        ),
        (Some(r), None) => {
            if let Some(t) = result {
                c.object(t, r, "$.result", 0);
            }
        }
        (None, Some(e)) => {
            if !e.get("code").is_some_and(|c| c.is_i64()) {
                c.push(
                    "$.error.code",
                    "R54",
                    DeviationKind::MissingRequired,
                    "error.code must be an integer".into(),
                );
            }
            if !e.get("message").is_some_and(Value::is_string) {
                c.push(
                    "$.error.message",
                    "R54",
                    DeviationKind::MissingRequired,
                    "error.message must be a string".into(),
                );
            }
        }
    }
    for k in obj.keys() {
        if !matches!(k.as_str(), "jsonrpc" | "id" | "result" | "error") {
            c.push(
                &format!("$.{k}"),
                "R01",
                DeviationKind::UnknownField,
                format!("unknown envelope field {k:?}"),
            );
        }
    }
    c.out
}

/// The params type of a method (for checking requests), by its wire name.
pub fn params_type(method: &str) -> Option<ObjectType> {
    Some(match method {
        "SendMessage" | "SendStreamingMessage" => O::SendMessageRequest,
        "GetTask" => O::GetTaskRequest,
        "ListTasks" => O::ListTasksRequest,
        "CancelTask" => O::CancelTaskRequest,
        "SubscribeToTask" => O::SubscribeToTaskRequest,
        "CreateTaskPushNotificationConfig" => O::TaskPushNotificationConfig,
        "GetTaskPushNotificationConfig" => O::GetTaskPushNotificationConfigRequest,
        "DeleteTaskPushNotificationConfig" => O::DeleteTaskPushNotificationConfigRequest,
        "ListTaskPushNotificationConfigs" => O::ListTaskPushNotificationConfigsRequest,
        "GetExtendedAgentCard" => O::GetExtendedAgentCardRequest,
        _ => return None,
    })
}

/// The result type of a method (for checking responses), by its wire name.
pub fn result_type(method: &str) -> Option<ObjectType> {
    Some(match method {
        "SendMessage" => O::SendMessageResponse,
        "SendStreamingMessage" | "SubscribeToTask" => O::StreamResponse,
        "GetTask" | "CancelTask" => O::Task,
        "ListTasks" => O::ListTasksResponse,
        "CreateTaskPushNotificationConfig" | "GetTaskPushNotificationConfig" => {
            O::TaskPushNotificationConfig
        }
        "ListTaskPushNotificationConfigs" => O::ListTaskPushNotificationConfigsResponse,
        "GetExtendedAgentCard" => O::AgentCard,
        _ => return None,
    })
}
