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

mod checker;
mod deviation;
mod object_type;
mod shapes;

pub use deviation::{Deviation, DeviationKind};
pub use object_type::ObjectType;

use ObjectType as O;
use checker::Checker;
use serde_json::Value;

/// Cap on reported deviations, so a hostile payload cannot grow the report without bound.
pub const MAX_DEVIATIONS: usize = 200;

/// Every deviation from A2A 1.0 in `value`, read as an object of type `t`.
pub fn conformance(t: ObjectType, value: &Value) -> Vec<Deviation> {
    let mut c = Checker::default();
    c.object(t, value, "$", 0);
    c.out
}

/// Deviations in a JSON-RPC response envelope whose `result` should be of type `result`
/// (`None` when the result type is not checked, e.g. for `DeleteTaskPushNotificationConfig`).
pub fn conformance_response(result: Option<ObjectType>, value: &Value) -> Vec<Deviation> {
    let mut c = Checker::default();
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
