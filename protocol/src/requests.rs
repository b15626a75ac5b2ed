//! The params and results of every JSON-RPC method (reference §1.2, §3.6-§3.11).

use crate::de::{i32_lenient, is_zero, nullable, opt_i32};
use crate::enums::TaskState;
use crate::message::{Message, Metadata};
use crate::task::Task;
use crate::timestamp::Timestamp;
use serde::{Deserialize, Serialize};

/// How the agent should handle a `SendMessage`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SendMessageConfiguration {
    /// Media types the client accepts.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    #[serde(alias = "accepted_output_modes")]
    pub accepted_output_modes: Vec<String>,
    /// A webhook for this task (its `taskId` left empty here).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "task_push_notification_config")]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// History cap for the returned task.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "opt_i32")]
    #[serde(alias = "history_length")]
    pub history_length: Option<i32>,
    /// `true`: answer right after the task is created instead of waiting (default `false`).
    #[serde(
        skip_serializing_if = "crate::de::is_false",
        deserialize_with = "nullable"
    )]
    #[serde(alias = "return_immediately")]
    pub return_immediately: bool,
}

/// Params of `SendMessage` and `SendStreamingMessage`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SendMessageRequest {
    /// Tenant routing string copied from the card's interface, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The message; required.
    #[serde(deserialize_with = "nullable")]
    pub message: Message,
    /// Optional handling configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Request metadata; this project's `x-deleg` convention lives here.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

impl SendMessageRequest {
    /// Read the `x-deleg` limits from the request metadata (`None` when absent).
    pub fn x_deleg(&self) -> Result<Option<crate::xdeleg::XDeleg>, crate::xdeleg::XDelegError> {
        match &self.metadata {
            Some(m) => crate::xdeleg::XDeleg::read(m),
            None => Ok(None),
        }
    }

    /// Write the `x-deleg` limits into the request metadata, creating it if needed.
    pub fn set_x_deleg(&mut self, x: &crate::xdeleg::XDeleg) {
        x.write(self.metadata.get_or_insert_with(Default::default));
    }
}

/// Params of `GetTask`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GetTaskRequest {
    /// Tenant routing string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task id; required.
    #[serde(deserialize_with = "nullable")]
    pub id: String,
    /// History cap: unset = server default, 0 = none, n = at most n newest.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "opt_i32")]
    #[serde(alias = "history_length")]
    pub history_length: Option<i32>,
}

/// Params of `ListTasks`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ListTasksRequest {
    /// Tenant routing string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Only tasks of this context.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "context_id")]
    pub context_id: Option<String>,
    /// Only tasks in this state (unset: no filter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskState>,
    /// Page size, 1 to 100 (default 50).
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "opt_i32")]
    #[serde(alias = "page_size")]
    pub page_size: Option<i32>,
    /// Cursor from a previous page.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "page_token")]
    pub page_token: Option<String>,
    /// History cap per task.
    #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "opt_i32")]
    #[serde(alias = "history_length")]
    pub history_length: Option<i32>,
    /// Only tasks whose status timestamp is at or after this instant.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "status_timestamp_after")]
    pub status_timestamp_after: Option<Timestamp>,
    /// Include artifacts (default false: the key is then absent from every task).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "include_artifacts")]
    pub include_artifacts: Option<bool>,
}

/// Result of `ListTasks`; every field is required.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ListTasksResponse {
    /// The page of tasks, newest status first.
    #[serde(deserialize_with = "nullable")]
    pub tasks: Vec<Task>,
    /// Cursor for the next page; `""` on the last page (always present).
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "next_page_token")]
    pub next_page_token: String,
    /// The page size used.
    #[serde(deserialize_with = "i32_lenient")]
    #[serde(alias = "page_size")]
    pub page_size: i32,
    /// Total matching tasks.
    #[serde(deserialize_with = "i32_lenient")]
    #[serde(alias = "total_size")]
    pub total_size: i32,
}

/// Params of `CancelTask`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CancelTaskRequest {
    /// Tenant routing string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task id; required.
    #[serde(deserialize_with = "nullable")]
    pub id: String,
    /// Free-form metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

/// Params of `SubscribeToTask`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SubscribeToTaskRequest {
    /// Tenant routing string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task id; required.
    #[serde(deserialize_with = "nullable")]
    pub id: String,
}

/// Credentials an agent sends with webhook calls: `Authorization: <scheme> <credentials>`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AuthenticationInfo {
    /// IANA HTTP auth scheme such as `Bearer`; required.
    #[serde(deserialize_with = "nullable")]
    pub scheme: String,
    /// The credentials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
}

/// A webhook for a task (flattened in 1.0); params and result of the push-config methods.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TaskPushNotificationConfig {
    /// Tenant routing string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The config id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The task (empty inside `SendMessageConfiguration`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "task_id")]
    pub task_id: Option<String>,
    /// Where to POST; required.
    #[serde(deserialize_with = "nullable")]
    pub url: String,
    /// An opaque client-chosen token.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Credentials the agent must send.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
}

/// Params of `GetTaskPushNotificationConfig` and `DeleteTaskPushNotificationConfig`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TaskPushNotificationConfigRef {
    /// Tenant routing string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// The config id; required.
    #[serde(deserialize_with = "nullable")]
    pub id: String,
}

/// Params of `GetTaskPushNotificationConfig`.
pub type GetTaskPushNotificationConfigRequest = TaskPushNotificationConfigRef;
/// Params of `DeleteTaskPushNotificationConfig`.
pub type DeleteTaskPushNotificationConfigRequest = TaskPushNotificationConfigRef;

/// Params of `ListTaskPushNotificationConfigs`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ListTaskPushNotificationConfigsRequest {
    /// Tenant routing string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The task; required.
    #[serde(deserialize_with = "nullable")]
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Page size.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "i32_lenient")]
    #[serde(alias = "page_size")]
    pub page_size: i32,
    /// Cursor from a previous page.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "page_token")]
    pub page_token: Option<String>,
}

/// Result of `ListTaskPushNotificationConfigs`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ListTaskPushNotificationConfigsResponse {
    /// The configs.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "nullable")]
    pub configs: Vec<TaskPushNotificationConfig>,
    /// Cursor for the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(alias = "next_page_token")]
    pub next_page_token: Option<String>,
}

/// Params of `GetExtendedAgentCard` (may be omitted entirely).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GetExtendedAgentCardRequest {
    /// Tenant routing string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
}
