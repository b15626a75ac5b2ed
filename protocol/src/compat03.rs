//! The one adapter between A2A 0.3 peers and the A2A 1.0 wire format.
//!
//! Everything here works on [`serde_json::Value`], so it is independent of the typed 1.0 structs
//! and can translate payloads those structs would reject. It covers version negotiation
//! ([`negotiate`]), JSON-RPC method names, task states, roles, error names, and whole objects in
//! both directions ([`to_v1`] and [`to_v03`], selected by [`ObjectKind`]); the mapping follows
//! reference §1.5.
//!
//! Translation rules common to every object kind:
//!
//! * Keys the adapter does not know are copied unchanged (the receiving side should ignore
//!   them, §5.7). Keys 1.0 removed (`kind`, `final`, `capabilities.stateTransitionHistory`, the
//!   card's legacy transport keys) are dropped going to 1.0 and rebuilt going to 0.3.
//! * A `null` field of a translated object means "unset" in both versions and is dropped.
//! * `metadata`, timestamps, ids and base64 payloads pass through untouched.
//!
//! Known lossy cases (no 0.3 field exists): a text or data part's `mediaType`/`filename`; a
//! non-object data part, which 0.3 receives wrapped as `{"value": x}` (see [`to_v03`]); extra
//! `schemes` of a 0.3 push `authentication` (1.0 keeps the first); all but one OAuth flow (1.0's
//! `OAuthFlows` is a oneof); per-interface `protocolVersion` and `tenant` of an agent card.
//!
//! ```
//! use a2a_protocol::compat03::{to_v1, to_v03, ObjectKind};
//! use serde_json::json;
//!
//! let old = json!({"kind": "message", "messageId": "m-1", "role": "user",
//!                  "parts": [{"kind": "text", "text": "hi"}]});
//! let new = to_v1(ObjectKind::Message, &old)?;
//! assert_eq!(new, json!({"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}));
//! assert_eq!(to_v03(ObjectKind::Message, &new)?, old);
//! # Ok::<(), a2a_protocol::compat03::AdaptError>(())
//! ```

use serde_json::{Map, Value};
use std::fmt;

/// Name of the HTTP header (also accepted as a query parameter) that carries the requested
/// protocol version, so callers do not hard-code the spelling.
pub const VERSION_HEADER: &str = "A2A-Version";

/// JSON-RPC code of `VersionNotSupportedError`, the answer to a [`VersionError`]; it is a 1.0
/// code that 0.3 peers do not know.
pub const VERSION_NOT_SUPPORTED_CODE: i64 = -32009;

// ---------------------------------------------------------------------------------------------
// Version negotiation
// ---------------------------------------------------------------------------------------------

/// A protocol version this harness can serve, identified by `Major.Minor` only (§3.6: patch
/// numbers are ignored in negotiation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ProtocolVersion {
    /// A2A 0.3: slash-style method names, `kind` discriminators, kebab-case states.
    V0_3,
    /// A2A 1.0: PascalCase methods, ProtoJSON objects, `TASK_STATE_*` enums.
    V1_0,
}

impl ProtocolVersion {
    /// The `A2A-Version` header value for this version (`"0.3"` or `"1.0"`), which is what a
    /// client sends and a server echoes.
    pub const fn header_value(self) -> &'static str {
        match self {
            ProtocolVersion::V0_3 => "0.3",
            ProtocolVersion::V1_0 => "1.0",
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.header_value())
    }
}

/// The requested `A2A-Version` is not one this harness serves; answer it with
/// `VersionNotSupportedError` ([`VERSION_NOT_SUPPORTED_CODE`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("A2A version {requested:?} is not supported (supported: 0.3, 1.0)")]
pub struct VersionError {
    /// The header value exactly as the client sent it, for the error message and logs.
    pub requested: String,
}

/// Decide the protocol version from an `A2A-Version` header (or query parameter) value.
///
/// Rules (R03): missing, empty or blank ⇒ 0.3; otherwise `Major[.Minor[.Patch…]]` with numeric
/// major and minor, surrounding whitespace ignored. Only `Major.Minor` is compared: the patch part
/// (anything after the second dot, which must not be empty) is ignored, so `"1.0.2"` ⇒ 1.0. A
/// bare major (`"1"`) is read as minor 0, so `"1"` ⇒ 1.0 and `"0"` ⇒ 0.0 (unsupported). Anything
/// else, including `"1.1"` and `"2.0"`, is a [`VersionError`].
///
/// ```
/// use a2a_protocol::compat03::{negotiate, ProtocolVersion};
/// assert_eq!(negotiate(None).ok(), Some(ProtocolVersion::V0_3));
/// assert_eq!(negotiate(Some("1.0.3")).ok(), Some(ProtocolVersion::V1_0));
/// assert!(negotiate(Some("2.0")).is_err());
/// ```
pub fn negotiate(header: Option<&str>) -> Result<ProtocolVersion, VersionError> {
    let raw = header.unwrap_or_default();
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Ok(ProtocolVersion::V0_3);
    }
    let fail = || VersionError {
        requested: raw.to_owned(),
    };
    let mut parts = trimmed.splitn(3, '.');
    let major = parts
        .next()
        .and_then(parse_version_number)
        .ok_or_else(fail)?;
    let minor = match parts.next() {
        None => 0,
        Some(m) => parse_version_number(m).ok_or_else(fail)?,
    };
    if parts.next().is_some_and(str::is_empty) {
        return Err(fail());
    }
    match (major, minor) {
        (0, 3) => Ok(ProtocolVersion::V0_3),
        (1, 0) => Ok(ProtocolVersion::V1_0),
        _ => Err(fail()),
    }
}

fn parse_version_number(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

// ---------------------------------------------------------------------------------------------
// Method names
// ---------------------------------------------------------------------------------------------

/// `(0.3 name, 1.0 name)` for every JSON-RPC method that exists in both versions.
const METHODS: &[(&str, &str)] = &[
    ("message/send", "SendMessage"),
    ("message/stream", "SendStreamingMessage"),
    ("tasks/get", "GetTask"),
    ("tasks/cancel", "CancelTask"),
    ("tasks/resubscribe", "SubscribeToTask"),
    (
        "tasks/pushNotificationConfig/set",
        "CreateTaskPushNotificationConfig",
    ),
    (
        "tasks/pushNotificationConfig/get",
        "GetTaskPushNotificationConfig",
    ),
    (
        "tasks/pushNotificationConfig/list",
        "ListTaskPushNotificationConfigs",
    ),
    (
        "tasks/pushNotificationConfig/delete",
        "DeleteTaskPushNotificationConfig",
    ),
    ("agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"),
];

/// The 1.0 method name for a 0.3 JSON-RPC method name (exact, case-sensitive match), so a
/// server can route 0.3 requests to its 1.0 handlers; `None` for anything else, including names
/// that are already 1.0.
pub fn method_to_v1(name: &str) -> Option<&'static str> {
    METHODS
        .iter()
        .find(|(old, _)| *old == name)
        .map(|(_, new)| *new)
}

/// The 0.3 JSON-RPC method name for a 1.0 method name, so a client can talk to a 0.3 peer;
/// `None` for unknown names and for `ListTasks`, which 0.3 offered only over gRPC/REST.
pub fn method_to_v03(name: &str) -> Option<&'static str> {
    METHODS
        .iter()
        .find(|(_, new)| *new == name)
        .map(|(old, _)| *old)
}

// ---------------------------------------------------------------------------------------------
// States and roles
// ---------------------------------------------------------------------------------------------

/// `(0.3 name, 1.0 name, proto number)` of every task state.
const STATES: &[(&str, &str, i64)] = &[
    ("unknown", "TASK_STATE_UNSPECIFIED", 0),
    ("submitted", "TASK_STATE_SUBMITTED", 1),
    ("working", "TASK_STATE_WORKING", 2),
    ("completed", "TASK_STATE_COMPLETED", 3),
    ("failed", "TASK_STATE_FAILED", 4),
    ("canceled", "TASK_STATE_CANCELED", 5),
    ("input-required", "TASK_STATE_INPUT_REQUIRED", 6),
    ("rejected", "TASK_STATE_REJECTED", 7),
    ("auth-required", "TASK_STATE_AUTH_REQUIRED", 8),
];

fn state_entry(s: &str) -> Option<&'static (&'static str, &'static str, i64)> {
    let lower = s.trim().to_ascii_lowercase().replace('-', "_");
    let key = lower.strip_prefix("task_state_").unwrap_or(&lower);
    let key = match key {
        "unspecified" => "unknown",
        "cancelled" => "canceled",
        other => other,
    };
    STATES
        .iter()
        .find(|(old, _, _)| old.replace('-', "_") == key)
}

/// The 1.0 `TASK_STATE_*` name for a task state written in any known spelling: 0.3 kebab-case
/// (`"input-required"`), lowercase snake (`"input_required"`) or the 1.0 name itself, case
/// insensitive; 0.3 `"unknown"` maps to `TASK_STATE_UNSPECIFIED`.
pub fn state_to_v1(state: &str) -> Option<&'static str> {
    state_entry(state).map(|(_, new, _)| *new)
}

/// The 0.3 kebab-case name for a task state in any spelling [`state_to_v1`] accepts;
/// `TASK_STATE_UNSPECIFIED` maps to `"unknown"`.
pub fn state_to_v03(state: &str) -> Option<&'static str> {
    state_entry(state).map(|(old, _, _)| *old)
}

/// Whether a state (any spelling) is terminal or interrupted, i.e. one after which a 0.3 stream
/// marked its status update `final: true` and a blocking send returns.
pub fn is_final_state(state: &str) -> bool {
    matches!(
        state_to_v1(state),
        Some(
            "TASK_STATE_COMPLETED"
                | "TASK_STATE_FAILED"
                | "TASK_STATE_CANCELED"
                | "TASK_STATE_REJECTED"
                | "TASK_STATE_INPUT_REQUIRED"
                | "TASK_STATE_AUTH_REQUIRED"
        )
    )
}

/// `(0.3 name, 1.0 name, proto number)` of every valid role.
const ROLES: &[(&str, &str, i64)] = &[("user", "ROLE_USER", 1), ("agent", "ROLE_AGENT", 2)];

fn role_entry(s: &str) -> Option<&'static (&'static str, &'static str, i64)> {
    let lower = s.trim().to_ascii_lowercase();
    let key = lower.strip_prefix("role_").unwrap_or(&lower);
    ROLES.iter().find(|(old, _, _)| *old == key)
}

/// The 1.0 role name (`ROLE_USER`/`ROLE_AGENT`) for a role in 0.3 or 1.0 spelling, case
/// insensitive; `None` for anything else (including `ROLE_UNSPECIFIED`, which is invalid).
pub fn role_to_v1(role: &str) -> Option<&'static str> {
    role_entry(role).map(|(_, new, _)| *new)
}

/// The 0.3 role name (`user`/`agent`) for a role in 0.3 or 1.0 spelling; `None` otherwise.
pub fn role_to_v03(role: &str) -> Option<&'static str> {
    role_entry(role).map(|(old, _, _)| *old)
}

// ---------------------------------------------------------------------------------------------
// Error names
// ---------------------------------------------------------------------------------------------

/// `(code, 0.3 name, 1.0 name)` for the A2A errors both versions define. The codes are shared;
/// only -32007 was renamed. -32008 (`ExtensionSupportRequiredError`) and -32009
/// (`VersionNotSupportedError`) exist only in 1.0.
const ERRORS: &[(i64, &str, &str)] = &[
    (-32001, "TaskNotFoundError", "TaskNotFoundError"),
    (-32002, "TaskNotCancelableError", "TaskNotCancelableError"),
    (
        -32003,
        "PushNotificationNotSupportedError",
        "PushNotificationNotSupportedError",
    ),
    (
        -32004,
        "UnsupportedOperationError",
        "UnsupportedOperationError",
    ),
    (
        -32005,
        "ContentTypeNotSupportedError",
        "ContentTypeNotSupportedError",
    ),
    (
        -32006,
        "InvalidAgentResponseError",
        "InvalidAgentResponseError",
    ),
    (
        -32007,
        "AuthenticatedExtendedCardNotConfiguredError",
        "ExtendedAgentCardNotConfiguredError",
    ),
];

/// The 1.0 error name for a 0.3 A2A error name (only -32007 differs:
/// `AuthenticatedExtendedCardNotConfiguredError` ⇒ `ExtendedAgentCardNotConfiguredError`).
pub fn error_name_to_v1(name: &str) -> Option<&'static str> {
    ERRORS
        .iter()
        .find(|(_, old, _)| *old == name)
        .map(|(_, _, new)| *new)
}

/// The 0.3 error name for a 1.0 A2A error name; `None` for `ExtensionSupportRequiredError`
/// (-32008) and `VersionNotSupportedError` (-32009), which 0.3 does not have.
pub fn error_name_to_v03(name: &str) -> Option<&'static str> {
    ERRORS
        .iter()
        .find(|(_, _, new)| *new == name)
        .map(|(_, old, _)| *old)
}

/// Whether a 0.3 peer knows this JSON-RPC error code: the shared A2A codes -32001..=-32007 and
/// the standard JSON-RPC codes. -32008 and -32009 are 1.0-only; a 0.3 client sees them as
/// generic errors.
pub fn error_code_known_in_v03(code: i64) -> bool {
    (-32007..=-32001).contains(&code) || matches!(code, -32700 | -32600 | -32601 | -32602 | -32603)
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// A payload could not be translated; `path` is the JSONPath of the offending value (for example
/// `$.status.state`) so the message can be reported to the peer verbatim.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {kind}")]
pub struct AdaptError {
    /// JSONPath of the problem, rooted at `$` (the object passed to [`to_v1`]/[`to_v03`]).
    pub path: String,
    /// What is wrong there.
    pub kind: AdaptErrorKind,
}

/// The reason an [`AdaptError`] was raised, separate from its location so tests and callers can
/// match on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdaptErrorKind {
    /// The value has the wrong JSON type.
    #[error("expected {expected}, found {found}")]
    WrongType {
        /// The JSON type required here.
        expected: &'static str,
        /// The JSON type found.
        found: &'static str,
    },
    /// A field needed for the translation is absent (or `null`).
    #[error("missing required field")]
    Missing,
    /// A task state in no known spelling.
    #[error("unknown state {0:?}")]
    UnknownState(String),
    /// A role in no known spelling.
    #[error("unknown role {0:?}")]
    UnknownRole(String),
    /// A 0.3 `kind` discriminator this kind of object cannot have.
    #[error("unknown kind {0:?}")]
    UnknownKind(String),
    /// A 0.3 security scheme `type` that is not one of the five known ones.
    #[error("unknown security scheme type {0:?}")]
    UnknownSchemeType(String),
    /// None of the alternatives of a oneof is present.
    #[error("none of {0} is present")]
    NoContent(&'static str),
    /// More than one alternative of a oneof is present.
    #[error("more than one of {0} is present")]
    Ambiguous(String),
    /// Any other invalid value, described in words.
    #[error("{0}")]
    Invalid(String),
}

fn err(path: &str, kind: AdaptErrorKind) -> AdaptError {
    AdaptError {
        path: path.to_owned(),
        kind,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn wrong_type(path: &str, expected: &'static str, found: &Value) -> AdaptError {
    err(
        path,
        AdaptErrorKind::WrongType {
            expected,
            found: type_name(found),
        },
    )
}

fn key_path(base: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{base}.{key}")
    } else {
        format!("{base}[{}]", Value::String(key.to_owned()))
    }
}

fn idx_path(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

// ---------------------------------------------------------------------------------------------
// Object translation: entry points
// ---------------------------------------------------------------------------------------------

/// Which A2A object a [`Value`] holds, since the JSON alone does not always say (a 0.3 `{id}`
/// is GetTask params or push-config list params depending on the method).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    /// `Message`: `kind: "message"` and lowercase roles in 0.3.
    Message,
    /// `Part`: 0.3 `kind`-tagged text/file/data parts ⇔ the flat 1.0 oneof.
    Part,
    /// `Task`, with its status, history and artifacts.
    Task,
    /// `TaskStatus`: the state is renamed, the status message translated.
    TaskStatus,
    /// `Artifact`: only its parts change.
    Artifact,
    /// `TaskStatusUpdateEvent` (0.3 `kind: "status-update"`, with `final`).
    StatusUpdate,
    /// `TaskArtifactUpdateEvent` (0.3 `kind: "artifact-update"`).
    ArtifactUpdate,
    /// 0.3 `MessageSendParams` ⇔ 1.0 `SendMessageRequest` (`blocking` ⇔ inverted
    /// `returnImmediately`, nested ⇔ flattened push config).
    SendMessageParams,
    /// Result of `message/send`: a bare 0.3 Task or Message ⇔ 1.0 `{"task"}`/`{"message"}`.
    SendMessageResult,
    /// One streaming event: a bare 0.3 object ⇔ the 1.0 `StreamResponse` wrapper.
    StreamResult,
    /// Params of get/cancel/resubscribe (`{id, historyLength?}`, the same in both versions).
    /// A 0.3 object with `pushNotificationConfigId`, or a 1.0 object with `taskId`, is
    /// translated as [`ObjectKind::PushConfigIdParams`] instead.
    TaskIdParams,
    /// Params of push-config get/delete: 0.3 `{id: taskId, pushNotificationConfigId?}` ⇔ 1.0
    /// `{taskId, id}`; a missing 0.3 config id defaults to the task id (as the Python SDK does).
    PushConfigIdParams,
    /// Params of push-config list: 0.3 `{id: taskId}` ⇔ 1.0 `{taskId, pageSize?, pageToken?}`.
    PushConfigListParams,
    /// `TaskPushNotificationConfig`: 0.3 `{taskId, pushNotificationConfig: {…}}` ⇔ 1.0 flat.
    PushConfig,
    /// Result of push-config list: a 0.3 array of configs ⇔ 1.0 `{configs, nextPageToken?}`.
    PushConfigList,
    /// `AgentCard`: interfaces, extended-card flag, security schemes and requirements.
    AgentCard,
    /// An empty payload (push-config delete result, extended-card params): 0.3 `null` ⇔ 1.0
    /// `{}`; a non-empty object is copied.
    Empty,
}

impl ObjectKind {
    /// The kind of a request's `params` for a method named in either version; `None` for
    /// `ListTasks` and unknown methods, which have nothing to translate.
    pub fn params_of(method: &str) -> Option<ObjectKind> {
        let v1 = method_to_v1(method).unwrap_or(method);
        Some(match v1 {
            "SendMessage" | "SendStreamingMessage" => ObjectKind::SendMessageParams,
            "GetTask" | "CancelTask" | "SubscribeToTask" => ObjectKind::TaskIdParams,
            "CreateTaskPushNotificationConfig" => ObjectKind::PushConfig,
            "GetTaskPushNotificationConfig" | "DeleteTaskPushNotificationConfig" => {
                ObjectKind::PushConfigIdParams
            }
            "ListTaskPushNotificationConfigs" => ObjectKind::PushConfigListParams,
            "GetExtendedAgentCard" => ObjectKind::Empty,
            _ => return None,
        })
    }

    /// The kind of a response's `result` (for streaming methods: of each event) for a method
    /// named in either version; `None` for `ListTasks` and unknown methods.
    pub fn result_of(method: &str) -> Option<ObjectKind> {
        let v1 = method_to_v1(method).unwrap_or(method);
        Some(match v1 {
            "SendMessage" => ObjectKind::SendMessageResult,
            "SendStreamingMessage" | "SubscribeToTask" => ObjectKind::StreamResult,
            "GetTask" | "CancelTask" => ObjectKind::Task,
            "CreateTaskPushNotificationConfig" | "GetTaskPushNotificationConfig" => {
                ObjectKind::PushConfig
            }
            "ListTaskPushNotificationConfigs" => ObjectKind::PushConfigList,
            "DeleteTaskPushNotificationConfig" => ObjectKind::Empty,
            "GetExtendedAgentCard" => ObjectKind::AgentCard,
            _ => return None,
        })
    }
}

/// Translate a 0.3 JSON object of the given kind into its 1.0 ProtoJSON form.
///
/// Input spellings are accepted leniently (1.0 enum names, proto numbers, a missing 0.3 `kind`
/// when the shape is unambiguous); errors name the JSON path of the first problem.
pub fn to_v1(kind: ObjectKind, v: &Value) -> Result<Value, AdaptError> {
    let p = "$";
    match kind {
        ObjectKind::Message => message_to_v1(v, p),
        ObjectKind::Part => part_to_v1(v, p),
        ObjectKind::Task => task_to_v1(v, p),
        ObjectKind::TaskStatus => status_to_v1(v, p),
        ObjectKind::Artifact => artifact_to_v1(v, p),
        ObjectKind::StatusUpdate => status_update_to_v1(v, p),
        ObjectKind::ArtifactUpdate => artifact_update_to_v1(v, p),
        ObjectKind::SendMessageParams => send_params_to_v1(v, p),
        ObjectKind::SendMessageResult => wrapped_to_v1(v, p, SEND_RESULT_KINDS),
        ObjectKind::StreamResult => wrapped_to_v1(v, p, STREAM_KINDS),
        ObjectKind::TaskIdParams => {
            let src = obj(v, p)?;
            if present(src, "pushNotificationConfigId") {
                push_id_params_to_v1(v, p)
            } else {
                copy_object(v, p)
            }
        }
        ObjectKind::PushConfigIdParams => push_id_params_to_v1(v, p),
        ObjectKind::PushConfigListParams => rename_task_id(v, p, "id", "taskId"),
        ObjectKind::PushConfig => push_config_to_v1(v, p),
        ObjectKind::PushConfigList => {
            let configs = map_array(v, p, push_config_to_v1)?;
            let mut out = Map::new();
            out.insert("configs".into(), configs);
            Ok(Value::Object(out))
        }
        ObjectKind::AgentCard => card_to_v1(v, p),
        ObjectKind::Empty => match v {
            Value::Null => Ok(Value::Object(Map::new())),
            _ => copy_object(v, p),
        },
    }
}

/// Translate a 1.0 ProtoJSON object of the given kind into its 0.3 JSON form.
///
/// `kind` discriminators are added, status updates get `final` (true for terminal and
/// interrupted states), and a 1.0 data part whose `data` is not an object is sent to 0.3 (whose
/// `DataPart.data` must be an object) as `{"data": {"value": x}}`. A sent `configuration` always
/// carries an explicit `blocking` (the inverse of `returnImmediately`, so absent ⇒ `true`)
/// because 0.3 peers disagree on its default.
pub fn to_v03(kind: ObjectKind, v: &Value) -> Result<Value, AdaptError> {
    let p = "$";
    match kind {
        ObjectKind::Message => message_to_v03(v, p),
        ObjectKind::Part => part_to_v03(v, p),
        ObjectKind::Task => task_to_v03(v, p),
        ObjectKind::TaskStatus => status_to_v03(v, p),
        ObjectKind::Artifact => artifact_to_v03(v, p),
        ObjectKind::StatusUpdate => status_update_to_v03(v, p),
        ObjectKind::ArtifactUpdate => artifact_update_to_v03(v, p),
        ObjectKind::SendMessageParams => send_params_to_v03(v, p),
        ObjectKind::SendMessageResult => wrapped_to_v03(v, p, SEND_RESULT_KINDS),
        ObjectKind::StreamResult => wrapped_to_v03(v, p, STREAM_KINDS),
        ObjectKind::TaskIdParams => {
            let src = obj(v, p)?;
            if present(src, "taskId") {
                push_id_params_to_v03(v, p)
            } else {
                copy_object(v, p)
            }
        }
        ObjectKind::PushConfigIdParams => push_id_params_to_v03(v, p),
        ObjectKind::PushConfigListParams => rename_task_id(v, p, "taskId", "id"),
        ObjectKind::PushConfig => push_config_to_v03(v, p),
        ObjectKind::PushConfigList => {
            let src = obj(v, p)?;
            match src.get("configs") {
                None | Some(Value::Null) => Ok(Value::Array(Vec::new())),
                Some(configs) => map_array(configs, &key_path(p, "configs"), push_config_to_v03),
            }
        }
        ObjectKind::AgentCard => card_to_v03(v, p),
        ObjectKind::Empty => match v {
            Value::Null => Ok(Value::Null),
            Value::Object(m) if m.is_empty() => Ok(Value::Null),
            _ => copy_object(v, p),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// Generic helpers
// ---------------------------------------------------------------------------------------------

type Res = Result<Value, AdaptError>;

/// What to do with one field while rebuilding an object.
enum Field {
    Keep,
    Drop,
    Set(Value),
    Rename(&'static str, Value),
}

fn obj<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, AdaptError> {
    v.as_object().ok_or_else(|| wrong_type(path, "object", v))
}

fn present(m: &Map<String, Value>, key: &str) -> bool {
    m.get(key).is_some_and(|v| !v.is_null())
}

fn get<'a>(m: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    m.get(key).filter(|v| !v.is_null())
}

/// Rebuild an object field by field; `null` fields are dropped before `f` sees them.
fn rebuild(
    src: &Map<String, Value>,
    path: &str,
    mut f: impl FnMut(&str, &Value, &str) -> Result<Field, AdaptError>,
) -> Result<Map<String, Value>, AdaptError> {
    let mut out = Map::new();
    for (k, val) in src {
        if val.is_null() {
            continue;
        }
        match f(k, val, &key_path(path, k))? {
            Field::Keep => {
                out.insert(k.clone(), val.clone());
            }
            Field::Drop => {}
            Field::Set(new) => {
                out.insert(k.clone(), new);
            }
            Field::Rename(name, new) => {
                out.insert(name.to_owned(), new);
            }
        }
    }
    Ok(out)
}

fn copy_object(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |_, _, _| Ok(Field::Keep)).map(Value::Object)
}

fn map_array(v: &Value, path: &str, f: fn(&Value, &str) -> Res) -> Res {
    let arr = v.as_array().ok_or_else(|| wrong_type(path, "array", v))?;
    arr.iter()
        .enumerate()
        .map(|(i, x)| f(x, &idx_path(path, i)))
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

fn str_at<'a>(v: &'a Value, path: &str) -> Result<&'a str, AdaptError> {
    v.as_str().ok_or_else(|| wrong_type(path, "string", v))
}

/// Check a 0.3 `kind` discriminator if present; absent is accepted (lenient input).
fn expect_kind(
    src: &Map<String, Value>,
    path: &str,
    expected: &'static str,
) -> Result<(), AdaptError> {
    match get(src, "kind") {
        None => Ok(()),
        Some(k) => {
            let p = key_path(path, "kind");
            let found = str_at(k, &p)?;
            if found == expected {
                Ok(())
            } else {
                Err(err(&p, AdaptErrorKind::UnknownKind(found.to_owned())))
            }
        }
    }
}

fn with_kind(mut m: Map<String, Value>, kind: &str) -> Value {
    m.insert("kind".into(), Value::String(kind.to_owned()));
    Value::Object(m)
}

fn enum_lookup(
    v: &Value,
    path: &str,
    by_name: fn(&str) -> Option<&'static str>,
    table: &[(&'static str, &'static str, i64)],
    v1: bool,
    unknown: fn(String) -> AdaptErrorKind,
) -> Res {
    let name = match v {
        Value::String(s) => by_name(s),
        Value::Number(n) => n.as_i64().and_then(|n| {
            table
                .iter()
                .find(|(_, _, num)| *num == n)
                .map(|(old, new, _)| if v1 { *new } else { *old })
        }),
        other => return Err(wrong_type(path, "string", other)),
    };
    name.map(|s| Value::String(s.to_owned())).ok_or_else(|| {
        let shown = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        err(path, unknown(shown))
    })
}

fn state_value(v: &Value, path: &str, v1: bool) -> Res {
    let f = if v1 { state_to_v1 } else { state_to_v03 };
    enum_lookup(v, path, f, STATES, v1, AdaptErrorKind::UnknownState)
}

fn role_value(v: &Value, path: &str, v1: bool) -> Res {
    let f = if v1 { role_to_v1 } else { role_to_v03 };
    enum_lookup(v, path, f, ROLES, v1, AdaptErrorKind::UnknownRole)
}

// ---------------------------------------------------------------------------------------------
// Messages and parts
// ---------------------------------------------------------------------------------------------

fn message_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    expect_kind(src, path, "message")?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" => Field::Drop,
            "role" => Field::Set(role_value(val, p, true)?),
            "parts" => Field::Set(map_array(val, p, part_to_v1)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

fn message_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" => Field::Drop,
            "role" => Field::Set(role_value(val, p, false)?),
            "parts" => Field::Set(map_array(val, p, part_to_v03)?),
            _ => Field::Keep,
        })
    })?;
    Ok(with_kind(out, "message"))
}

fn part_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let kind_path = key_path(path, "kind");
    let kind = match get(src, "kind") {
        Some(k) => str_at(k, &kind_path)?,
        None if present(src, "file") => "file",
        None if present(src, "text") => "text",
        None if present(src, "data") => "data",
        // Already a 1.0 file part: nothing to rename.
        None if present(src, "raw") || present(src, "url") => return copy_object(v, path),
        None => {
            return Err(err(
                path,
                AdaptErrorKind::NoContent("kind, text, file, data"),
            ));
        }
    };
    match kind {
        "text" | "data" => {
            if !present(src, kind) {
                return Err(err(&key_path(path, kind), AdaptErrorKind::Missing));
            }
            rebuild(src, path, |k, _, _| {
                Ok(if k == "kind" {
                    Field::Drop
                } else {
                    Field::Keep
                })
            })
            .map(Value::Object)
        }
        "file" => {
            let file_path = key_path(path, "file");
            let file = get(src, "file").ok_or_else(|| err(&file_path, AdaptErrorKind::Missing))?;
            let file = obj(file, &file_path)?;
            let mut out = rebuild(src, path, |k, _, _| {
                Ok(match k {
                    "kind" | "file" => Field::Drop,
                    _ => Field::Keep,
                })
            })?;
            match (get(file, "bytes"), get(file, "uri")) {
                (Some(_), Some(_)) => {
                    return Err(err(
                        &file_path,
                        AdaptErrorKind::Ambiguous("bytes, uri".into()),
                    ));
                }
                (None, None) => {
                    return Err(err(&file_path, AdaptErrorKind::NoContent("bytes, uri")));
                }
                _ => {}
            }
            let file_fields = rebuild(file, &file_path, |k, val, _| {
                Ok(match k {
                    "bytes" => Field::Rename("raw", val.clone()),
                    "uri" => Field::Rename("url", val.clone()),
                    "mimeType" => Field::Rename("mediaType", val.clone()),
                    "name" => Field::Rename("filename", val.clone()),
                    _ => Field::Keep,
                })
            })?;
            for (k, val) in file_fields {
                if matches!(k.as_str(), "raw" | "url" | "mediaType" | "filename") {
                    out.insert(k, val);
                } else {
                    // Unknown keys inside `file` have no 1.0 home except the part itself.
                    out.entry(k).or_insert(val);
                }
            }
            Ok(Value::Object(out))
        }
        other => Err(err(
            &kind_path,
            AdaptErrorKind::UnknownKind(other.to_owned()),
        )),
    }
}

const PART_CONTENT: [&str; 4] = ["text", "raw", "url", "data"];

fn part_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let contents: Vec<&str> = PART_CONTENT
        .iter()
        .copied()
        .filter(|k| present(src, k))
        .collect();
    let content = match contents.as_slice() {
        [one] => *one,
        [] => return Err(err(path, AdaptErrorKind::NoContent("text, raw, url, data"))),
        many => return Err(err(path, AdaptErrorKind::Ambiguous(many.join(", ")))),
    };
    let mut out = rebuild(src, path, |k, _, _| {
        Ok(match k {
            "kind" | "text" | "raw" | "url" | "data" | "mediaType" | "filename" => Field::Drop,
            _ => Field::Keep,
        })
    })?;
    let value = get(src, content).cloned().unwrap_or(Value::Null);
    let kind = match content {
        "text" => {
            out.insert("text".into(), value);
            "text"
        }
        "data" => {
            let data = if value.is_object() {
                value
            } else {
                let mut wrap = Map::new();
                wrap.insert("value".into(), value);
                Value::Object(wrap)
            };
            out.insert("data".into(), data);
            "data"
        }
        _ => {
            let mut file = Map::new();
            let key = if content == "raw" { "bytes" } else { "uri" };
            file.insert(key.into(), value);
            if let Some(m) = get(src, "mediaType") {
                file.insert("mimeType".into(), m.clone());
            }
            if let Some(n) = get(src, "filename") {
                file.insert("name".into(), n.clone());
            }
            out.insert("file".into(), Value::Object(file));
            "file"
        }
    };
    Ok(with_kind(out, kind))
}

// ---------------------------------------------------------------------------------------------
// Tasks, statuses, artifacts, events
// ---------------------------------------------------------------------------------------------

fn task_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    expect_kind(src, path, "task")?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" => Field::Drop,
            "status" => Field::Set(status_to_v1(val, p)?),
            "history" => Field::Set(map_array(val, p, message_to_v1)?),
            "artifacts" => Field::Set(map_array(val, p, artifact_to_v1)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

fn task_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" => Field::Drop,
            "status" => Field::Set(status_to_v03(val, p)?),
            "history" => Field::Set(map_array(val, p, message_to_v03)?),
            "artifacts" => Field::Set(map_array(val, p, artifact_to_v03)?),
            _ => Field::Keep,
        })
    })?;
    Ok(with_kind(out, "task"))
}

fn status_convert(v: &Value, path: &str, v1: bool) -> Res {
    let src = obj(v, path)?;
    if !present(src, "state") {
        return Err(err(&key_path(path, "state"), AdaptErrorKind::Missing));
    }
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "state" => Field::Set(state_value(val, p, v1)?),
            "message" if v1 => Field::Set(message_to_v1(val, p)?),
            "message" => Field::Set(message_to_v03(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

fn status_to_v1(v: &Value, path: &str) -> Res {
    status_convert(v, path, true)
}

fn status_to_v03(v: &Value, path: &str) -> Res {
    status_convert(v, path, false)
}

fn artifact_convert(v: &Value, path: &str, f: fn(&Value, &str) -> Res) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "parts" => Field::Set(map_array(val, p, f)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

fn artifact_to_v1(v: &Value, path: &str) -> Res {
    artifact_convert(v, path, part_to_v1)
}

fn artifact_to_v03(v: &Value, path: &str) -> Res {
    artifact_convert(v, path, part_to_v03)
}

fn status_update_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    expect_kind(src, path, "status-update")?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" | "final" => Field::Drop,
            "status" => Field::Set(status_to_v1(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

fn status_update_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let mut is_final = false;
    let mut out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" | "final" => Field::Drop,
            "status" => {
                let status = status_to_v03(val, p)?;
                is_final = status
                    .get("state")
                    .and_then(Value::as_str)
                    .is_some_and(is_final_state);
                Field::Set(status)
            }
            _ => Field::Keep,
        })
    })?;
    out.insert("final".into(), Value::Bool(is_final));
    Ok(with_kind(out, "status-update"))
}

fn artifact_update_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    expect_kind(src, path, "artifact-update")?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" => Field::Drop,
            "artifact" => Field::Set(artifact_to_v1(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

fn artifact_update_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "kind" => Field::Drop,
            "artifact" => Field::Set(artifact_to_v03(val, p)?),
            _ => Field::Keep,
        })
    })?;
    Ok(with_kind(out, "artifact-update"))
}

/// `(0.3 kind, 1.0 wrapper key, 0.3→1.0, 1.0→0.3)` of each payload a result can carry.
type WrappedKind = (
    &'static str,
    &'static str,
    fn(&Value, &str) -> Res,
    fn(&Value, &str) -> Res,
);

const SEND_RESULT_KINDS: &[WrappedKind] = &[
    ("task", "task", task_to_v1, task_to_v03),
    ("message", "message", message_to_v1, message_to_v03),
];

const STREAM_KINDS: &[WrappedKind] = &[
    ("task", "task", task_to_v1, task_to_v03),
    ("message", "message", message_to_v1, message_to_v03),
    (
        "status-update",
        "statusUpdate",
        status_update_to_v1,
        status_update_to_v03,
    ),
    (
        "artifact-update",
        "artifactUpdate",
        artifact_update_to_v1,
        artifact_update_to_v03,
    ),
];

/// Guess the 0.3 `kind` of a bare result object that lacks one, from its required fields.
fn infer_kind(src: &Map<String, Value>) -> Option<&'static str> {
    if present(src, "taskId") && present(src, "status") {
        Some("status-update")
    } else if present(src, "taskId") && present(src, "artifact") {
        Some("artifact-update")
    } else if present(src, "status") {
        Some("task")
    } else if present(src, "messageId") || present(src, "role") {
        Some("message")
    } else {
        None
    }
}

fn wrapped_to_v1(v: &Value, path: &str, kinds: &[WrappedKind]) -> Res {
    let src = obj(v, path)?;
    let kind_path = key_path(path, "kind");
    let kind = match get(src, "kind") {
        Some(k) => str_at(k, &kind_path)?,
        None => infer_kind(src).ok_or_else(|| err(&kind_path, AdaptErrorKind::Missing))?,
    };
    let (_, key, convert, _) = kinds
        .iter()
        .find(|(k, ..)| *k == kind)
        .ok_or_else(|| err(&kind_path, AdaptErrorKind::UnknownKind(kind.to_owned())))?;
    let mut out = Map::new();
    out.insert((*key).to_owned(), convert(v, path)?);
    Ok(Value::Object(out))
}

fn wrapped_to_v03(v: &Value, path: &str, kinds: &[WrappedKind]) -> Res {
    let src = obj(v, path)?;
    let found: Vec<&WrappedKind> = kinds
        .iter()
        .filter(|(_, key, ..)| present(src, key))
        .collect();
    match found.as_slice() {
        [(_, key, _, convert)] => {
            let inner = get(src, key).unwrap_or(&Value::Null);
            convert(inner, &key_path(path, key))
        }
        [] => {
            let names = if kinds.len() == 2 {
                "task, message"
            } else {
                "task, message, statusUpdate, artifactUpdate"
            };
            Err(err(path, AdaptErrorKind::NoContent(names)))
        }
        many => {
            let names: Vec<&str> = many.iter().map(|(_, key, ..)| *key).collect();
            Err(err(path, AdaptErrorKind::Ambiguous(names.join(", "))))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Send params and push configs
// ---------------------------------------------------------------------------------------------

fn send_params_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let mut out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "message" => Field::Set(message_to_v1(val, p)?),
            "configuration" => Field::Set(config_to_v1(val, p)?),
            _ => Field::Keep,
        })
    })?;
    if out
        .get("configuration")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        out.remove("configuration");
    }
    Ok(Value::Object(out))
}

fn config_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "blocking" => match val {
                Value::Bool(true) => Field::Drop,
                Value::Bool(false) => Field::Rename("returnImmediately", Value::Bool(true)),
                other => return Err(wrong_type(p, "boolean", other)),
            },
            "pushNotificationConfig" => {
                Field::Rename("taskPushNotificationConfig", push_inner_to_v1(val, p)?)
            }
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

fn send_params_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let mut out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "message" => Field::Set(message_to_v03(val, p)?),
            "configuration" => Field::Set(config_to_v03(val, p)?),
            _ => Field::Keep,
        })
    })?;
    if !out.contains_key("configuration") {
        let mut config = Map::new();
        config.insert("blocking".into(), Value::Bool(true));
        out.insert("configuration".into(), Value::Object(config));
    }
    Ok(Value::Object(out))
}

fn config_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let mut blocking = true;
    let mut out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "returnImmediately" => match val {
                Value::Bool(b) => {
                    blocking = !b;
                    Field::Drop
                }
                other => return Err(wrong_type(p, "boolean", other)),
            },
            "taskPushNotificationConfig" => {
                let flat = obj(val, p)?;
                Field::Rename("pushNotificationConfig", push_inner_to_v03(flat, p)?)
            }
            _ => Field::Keep,
        })
    })?;
    out.insert("blocking".into(), Value::Bool(blocking));
    Ok(Value::Object(out))
}

/// 0.3 `PushNotificationConfig` `{id,url,token,authentication}` ⇒ the flat 1.0 fields.
fn push_inner_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "authentication" => Field::Set(auth_to_v1(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

/// Flat 1.0 push config ⇒ 0.3 `PushNotificationConfig`; `taskId` and `tenant` are dropped (the
/// caller keeps them where 0.3 has a place for them).
fn push_inner_to_v03(src: &Map<String, Value>, path: &str) -> Res {
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "taskId" | "tenant" => Field::Drop,
            "authentication" => Field::Set(auth_to_v03(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

fn auth_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    if present(src, "scheme") {
        // Already the 1.0 shape.
        return copy_object(v, path);
    }
    let schemes_path = key_path(path, "schemes");
    let schemes = get(src, "schemes").ok_or_else(|| err(&schemes_path, AdaptErrorKind::Missing))?;
    let list = schemes
        .as_array()
        .ok_or_else(|| wrong_type(&schemes_path, "array", schemes))?;
    let first = list.first().ok_or_else(|| {
        err(
            &schemes_path,
            AdaptErrorKind::Invalid("empty list; 1.0 requires exactly one scheme".into()),
        )
    })?;
    let first = str_at(first, &idx_path(&schemes_path, 0))?;
    rebuild(src, path, |k, _, _| {
        Ok(match k {
            "schemes" => Field::Rename("scheme", Value::String(first.to_owned())),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

fn auth_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    if present(src, "schemes") {
        return copy_object(v, path);
    }
    let scheme_path = key_path(path, "scheme");
    let scheme = get(src, "scheme").ok_or_else(|| err(&scheme_path, AdaptErrorKind::Missing))?;
    str_at(scheme, &scheme_path)?;
    rebuild(src, path, |k, val, _| {
        Ok(match k {
            "scheme" => Field::Rename("schemes", Value::Array(vec![val.clone()])),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

fn push_config_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let inner_path = key_path(path, "pushNotificationConfig");
    let inner = get(src, "pushNotificationConfig")
        .ok_or_else(|| err(&inner_path, AdaptErrorKind::Missing))?;
    let inner = push_inner_to_v1(inner, &inner_path)?;
    let mut out = rebuild(src, path, |k, _, _| {
        Ok(match k {
            "pushNotificationConfig" => Field::Drop,
            _ => Field::Keep,
        })
    })?;
    if let Value::Object(fields) = inner {
        for (k, val) in fields {
            out.insert(k, val);
        }
    }
    Ok(Value::Object(out))
}

fn push_config_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let inner_fields = ["id", "url", "token", "authentication"];
    let inner: Map<String, Value> = src
        .iter()
        .filter(|(k, _)| inner_fields.contains(&k.as_str()))
        .map(|(k, val)| (k.clone(), val.clone()))
        .collect();
    let inner = push_inner_to_v03(&inner, path)?;
    let mut out = rebuild(src, path, |k, _, _| {
        Ok(if inner_fields.contains(&k) {
            Field::Drop
        } else {
            Field::Keep
        })
    })?;
    out.insert("pushNotificationConfig".into(), inner);
    Ok(Value::Object(out))
}

fn push_id_params_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let task_id =
        get(src, "id").ok_or_else(|| err(&key_path(path, "id"), AdaptErrorKind::Missing))?;
    let config_id = get(src, "pushNotificationConfigId")
        .unwrap_or(task_id)
        .clone();
    let mut out = rebuild(src, path, |k, _, _| {
        Ok(match k {
            "id" | "pushNotificationConfigId" => Field::Drop,
            _ => Field::Keep,
        })
    })?;
    out.insert("taskId".into(), task_id.clone());
    out.insert("id".into(), config_id);
    Ok(Value::Object(out))
}

fn push_id_params_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let task_id = get(src, "taskId")
        .ok_or_else(|| err(&key_path(path, "taskId"), AdaptErrorKind::Missing))?;
    let mut out = rebuild(src, path, |k, _, _| {
        Ok(match k {
            "id" | "taskId" => Field::Drop,
            _ => Field::Keep,
        })
    })?;
    out.insert("id".into(), task_id.clone());
    if let Some(config_id) = get(src, "id") {
        out.insert("pushNotificationConfigId".into(), config_id.clone());
    }
    Ok(Value::Object(out))
}

fn rename_task_id(v: &Value, path: &str, from: &'static str, to: &'static str) -> Res {
    let src = obj(v, path)?;
    if !present(src, from) {
        return Err(err(&key_path(path, from), AdaptErrorKind::Missing));
    }
    rebuild(src, path, |k, val, _| {
        Ok(if k == from {
            Field::Rename(to, val.clone())
        } else if k == to {
            Field::Drop
        } else {
            Field::Keep
        })
    })
    .map(Value::Object)
}

// ---------------------------------------------------------------------------------------------
// Agent card
// ---------------------------------------------------------------------------------------------

/// `(0.3 type, 1.0 wrapper key)` of each security scheme.
const SCHEMES: &[(&str, &str)] = &[
    ("apiKey", "apiKeySecurityScheme"),
    ("http", "httpAuthSecurityScheme"),
    ("oauth2", "oauth2SecurityScheme"),
    ("openIdConnect", "openIdConnectSecurityScheme"),
    ("mutualTLS", "mtlsSecurityScheme"),
];

/// OAuth flows in the order one is kept when 0.3 lists several (1.0 `OAuthFlows` is a oneof).
const OAUTH_FLOWS: &[&str] = &[
    "authorizationCode",
    "clientCredentials",
    "deviceCode",
    "password",
    "implicit",
];

/// `"0.3.0"` ⇒ `"0.3"`; anything not of the form `N.N[.…]` is returned unchanged.
fn major_minor(version: &str) -> String {
    let mut it = version.split('.');
    match (it.next(), it.next()) {
        (Some(a), Some(b))
            if parse_version_number(a).is_some() && parse_version_number(b).is_some() =>
        {
            format!("{a}.{b}")
        }
        _ => version.to_owned(),
    }
}

fn interface(url: &Value, binding: &Value, version: &Value) -> Value {
    let mut m = Map::new();
    m.insert("url".into(), url.clone());
    m.insert("protocolBinding".into(), binding.clone());
    m.insert("protocolVersion".into(), version.clone());
    Value::Object(m)
}

fn card_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let mut out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "url"
            | "preferredTransport"
            | "additionalInterfaces"
            | "protocolVersion"
            | "supportsAuthenticatedExtendedCard" => Field::Drop,
            "capabilities" => {
                let caps = obj(val, p)?;
                Field::Set(Value::Object(rebuild(caps, p, |ck, _, _| {
                    Ok(if ck == "stateTransitionHistory" {
                        Field::Drop
                    } else {
                        Field::Keep
                    })
                })?))
            }
            "securitySchemes" => Field::Set(schemes_map(val, p, scheme_to_v1)?),
            "security" => Field::Rename("securityRequirements", requirements_to_v1(val, p)?),
            "skills" => Field::Set(map_array(val, p, skill_to_v1)?),
            _ => Field::Keep,
        })
    })?;

    if !present(src, "supportedInterfaces") {
        let url_path = key_path(path, "url");
        let url = get(src, "url").ok_or_else(|| err(&url_path, AdaptErrorKind::Missing))?;
        str_at(url, &url_path)?;
        let default_binding = Value::String("JSONRPC".into());
        let binding = get(src, "preferredTransport").unwrap_or(&default_binding);
        let version = match get(src, "protocolVersion") {
            Some(ver) => Value::String(major_minor(str_at(
                ver,
                &key_path(path, "protocolVersion"),
            )?)),
            None => Value::String("0.3".into()),
        };
        let mut list = vec![interface(url, binding, &version)];
        let mut seen = vec![(url.clone(), binding.clone())];
        if let Some(extra) = get(src, "additionalInterfaces") {
            let extra_path = key_path(path, "additionalInterfaces");
            let arr = extra
                .as_array()
                .ok_or_else(|| wrong_type(&extra_path, "array", extra))?;
            for (i, item) in arr.iter().enumerate() {
                let ip = idx_path(&extra_path, i);
                let m = obj(item, &ip)?;
                let iurl = get(m, "url")
                    .ok_or_else(|| err(&key_path(&ip, "url"), AdaptErrorKind::Missing))?;
                let itransport = get(m, "transport")
                    .ok_or_else(|| err(&key_path(&ip, "transport"), AdaptErrorKind::Missing))?;
                let key = (iurl.clone(), itransport.clone());
                if !seen.contains(&key) {
                    list.push(interface(iurl, itransport, &version));
                    seen.push(key);
                }
            }
        }
        out.insert("supportedInterfaces".into(), Value::Array(list));
    }

    if let Some(flag) = get(src, "supportsAuthenticatedExtendedCard") {
        let flag_path = key_path(path, "supportsAuthenticatedExtendedCard");
        if !flag.is_boolean() {
            return Err(wrong_type(&flag_path, "boolean", flag));
        }
        let caps = out
            .entry("capabilities")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(caps) = caps {
            caps.insert("extendedAgentCard".into(), flag.clone());
        }
    }
    Ok(Value::Object(out))
}

fn card_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let mut extended: Option<Value> = None;
    let mut out = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "supportedInterfaces" => Field::Drop,
            "capabilities" => {
                let caps = obj(val, p)?;
                Field::Set(Value::Object(rebuild(caps, p, |ck, cval, _| {
                    Ok(if ck == "extendedAgentCard" {
                        extended = Some(cval.clone());
                        Field::Drop
                    } else {
                        Field::Keep
                    })
                })?))
            }
            "securitySchemes" => Field::Set(schemes_map(val, p, scheme_to_v03)?),
            "securityRequirements" => Field::Rename("security", requirements_to_v03(val, p)?),
            "skills" => Field::Set(map_array(val, p, skill_to_v03)?),
            _ => Field::Keep,
        })
    })?;

    let si_path = key_path(path, "supportedInterfaces");
    let interfaces =
        get(src, "supportedInterfaces").ok_or_else(|| err(&si_path, AdaptErrorKind::Missing))?;
    let arr = interfaces
        .as_array()
        .ok_or_else(|| wrong_type(&si_path, "array", interfaces))?;
    let mut additional = Vec::with_capacity(arr.len());
    for (i, item) in arr.iter().enumerate() {
        let ip = idx_path(&si_path, i);
        let m = obj(item, &ip)?;
        let url =
            get(m, "url").ok_or_else(|| err(&key_path(&ip, "url"), AdaptErrorKind::Missing))?;
        let binding = get(m, "protocolBinding")
            .ok_or_else(|| err(&key_path(&ip, "protocolBinding"), AdaptErrorKind::Missing))?;
        if i == 0 {
            out.insert("url".into(), url.clone());
            out.insert("preferredTransport".into(), binding.clone());
            if let Some(ver) = get(m, "protocolVersion") {
                out.insert("protocolVersion".into(), ver.clone());
            }
        }
        let mut entry = Map::new();
        entry.insert("url".into(), url.clone());
        entry.insert("transport".into(), binding.clone());
        additional.push(Value::Object(entry));
    }
    if additional.is_empty() {
        return Err(err(
            &si_path,
            AdaptErrorKind::Invalid("empty list; a 0.3 card needs a url".into()),
        ));
    }
    out.insert("additionalInterfaces".into(), Value::Array(additional));
    if let Some(flag) = extended {
        out.insert("supportsAuthenticatedExtendedCard".into(), flag);
    }
    Ok(Value::Object(out))
}

fn skill_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "security" => Field::Rename("securityRequirements", requirements_to_v1(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

fn skill_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |k, val, p| {
        Ok(match k {
            "securityRequirements" => Field::Rename("security", requirements_to_v03(val, p)?),
            _ => Field::Keep,
        })
    })
    .map(Value::Object)
}

fn schemes_map(v: &Value, path: &str, f: fn(&Value, &str) -> Res) -> Res {
    let src = obj(v, path)?;
    rebuild(src, path, |_, val, p| Ok(Field::Set(f(val, p)?))).map(Value::Object)
}

fn scheme_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let type_path = key_path(path, "type");
    let Some(ty) = get(src, "type") else {
        // Already a 1.0 wrapper?
        if src.len() == 1 && SCHEMES.iter().any(|(_, key)| src.contains_key(*key)) {
            return copy_object(v, path);
        }
        return Err(err(&type_path, AdaptErrorKind::Missing));
    };
    let ty = str_at(ty, &type_path)?;
    let (_, key) = SCHEMES
        .iter()
        .find(|(t, _)| *t == ty)
        .ok_or_else(|| err(&type_path, AdaptErrorKind::UnknownSchemeType(ty.to_owned())))?;
    let inner = rebuild(src, path, |k, val, p| {
        Ok(match k {
            "type" => Field::Drop,
            "in" => Field::Rename("location", val.clone()),
            "flows" => Field::Set(flows_to_v1(val, p)?),
            _ => Field::Keep,
        })
    })?;
    let mut out = Map::new();
    out.insert((*key).to_owned(), Value::Object(inner));
    Ok(Value::Object(out))
}

fn flows_to_v1(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let keep = OAUTH_FLOWS.iter().copied().find(|f| present(src, f));
    rebuild(src, path, |k, _, _| {
        Ok(if OAUTH_FLOWS.contains(&k) && Some(k) != keep {
            Field::Drop
        } else {
            Field::Keep
        })
    })
    .map(Value::Object)
}

fn scheme_to_v03(v: &Value, path: &str) -> Res {
    let src = obj(v, path)?;
    let found: Vec<&(&str, &str)> = SCHEMES
        .iter()
        .filter(|(_, key)| present(src, key))
        .collect();
    let (ty, key) = match found.as_slice() {
        [one] => **one,
        [] if present(src, "type") => return copy_object(v, path),
        [] => {
            return Err(err(
                path,
                AdaptErrorKind::NoContent(
                    "apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, \
                     openIdConnectSecurityScheme, mtlsSecurityScheme",
                ),
            ));
        }
        many => {
            let names: Vec<&str> = many.iter().map(|(_, key)| *key).collect();
            return Err(err(path, AdaptErrorKind::Ambiguous(names.join(", "))));
        }
    };
    let inner_path = key_path(path, key);
    let inner = get(src, key).unwrap_or(&Value::Null);
    let inner = obj(inner, &inner_path)?;
    let mut out = Map::new();
    out.insert("type".into(), Value::String(ty.to_owned()));
    let fields = rebuild(inner, &inner_path, |k, val, _| {
        Ok(match k {
            "location" => Field::Rename("in", val.clone()),
            _ => Field::Keep,
        })
    })?;
    out.extend(fields);
    Ok(Value::Object(out))
}

/// 0.3 `[{name: [scopes]}]` ⇒ 1.0 `[{"schemes": {name: {"list": [scopes]}}}]`.
fn requirements_to_v1(v: &Value, path: &str) -> Res {
    map_array(v, path, |item, p| {
        let src = obj(item, p)?;
        let mut schemes = Map::new();
        for (name, scopes) in src {
            let sp = key_path(p, name);
            let list = match scopes {
                Value::Null => Value::Array(Vec::new()),
                Value::Array(_) => scopes.clone(),
                other => return Err(wrong_type(&sp, "array", other)),
            };
            let mut entry = Map::new();
            entry.insert("list".into(), list);
            schemes.insert(name.clone(), Value::Object(entry));
        }
        let mut out = Map::new();
        out.insert("schemes".into(), Value::Object(schemes));
        Ok(Value::Object(out))
    })
}

/// 1.0 `[{"schemes": {name: {"list": [scopes]}}}]` ⇒ 0.3 `[{name: [scopes]}]`.
fn requirements_to_v03(v: &Value, path: &str) -> Res {
    map_array(v, path, |item, p| {
        let src = obj(item, p)?;
        let mut out = Map::new();
        let Some(schemes) = get(src, "schemes") else {
            return Ok(Value::Object(out));
        };
        let sp = key_path(p, "schemes");
        for (name, entry) in obj(schemes, &sp)? {
            let ep = key_path(&sp, name);
            let list = match entry {
                Value::Null => Value::Array(Vec::new()),
                other => match get(obj(other, &ep)?, "list") {
                    None => Value::Array(Vec::new()),
                    Some(list @ Value::Array(_)) => list.clone(),
                    Some(bad) => return Err(wrong_type(&key_path(&ep, "list"), "array", bad)),
                },
            };
            out.insert(name.clone(), list);
        }
        Ok(Value::Object(out))
    })
}
