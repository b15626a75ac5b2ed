//! Object translation entry points: [`ObjectKind`], [`to_v1`] and [`to_v03`].

use serde_json::{Map, Value};

use super::card::*;
use super::errors::*;
use super::helpers::*;
use super::message::*;
use super::methods::method_to_v1;
use super::params::*;
use super::task::*;

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
