//! Strategies for JSON-RPC ids, errors, and method/params/result pairs.

use super::*;

pub(crate) fn id() -> impl Strategy<Value = Id> {
    prop_oneof![
        text().prop_map(Id::String),
        any::<i64>().prop_map(Id::from),
        any::<u64>().prop_map(|n| Id::Number(n.into())),
        exact_f64().prop_map(|f| Id::Number(serde_json::Number::from_f64(f).unwrap())),
        Just(Id::Null),
    ]
}

pub(crate) fn json_rpc_error() -> impl Strategy<Value = JsonRpcError> {
    (
        prop_oneof![
            select(ErrorCode::ALL.to_vec()).prop_map(ErrorCode::code),
            any::<i64>(),
        ],
        text(),
        of(non_null_json()),
    )
        .prop_map(|(code, message, data)| JsonRpcError {
            code,
            message,
            data,
        })
}

/// A method name with params of the matching type, as JSON.
pub(crate) fn method_and_params() -> impl Strategy<Value = (Method, Option<Value>)> {
    fn v<T: Serialize>(t: T) -> Option<Value> {
        Some(serde_json::to_value(t).unwrap())
    }
    prop_oneof![
        send_message_request().prop_map(|p| (Method::SendMessage, v(p))),
        send_message_request().prop_map(|p| (Method::SendStreamingMessage, v(p))),
        get_task_request().prop_map(|p| (Method::GetTask, v(p))),
        list_tasks_request().prop_map(|p| (Method::ListTasks, v(p))),
        cancel_task_request().prop_map(|p| (Method::CancelTask, v(p))),
        subscribe_request().prop_map(|p| (Method::SubscribeToTask, v(p))),
        push_config().prop_map(|p| (Method::CreateTaskPushNotificationConfig, v(p))),
        push_config_ref().prop_map(|p| (Method::GetTaskPushNotificationConfig, v(p))),
        push_config_ref().prop_map(|p| (Method::DeleteTaskPushNotificationConfig, v(p))),
        list_push_configs_request().prop_map(|p| (Method::ListTaskPushNotificationConfigs, v(p))),
        extended_card_request().prop_map(|p| (Method::GetExtendedAgentCard, v(p))),
        Just((Method::GetExtendedAgentCard, None)),
    ]
}

/// A method name with a result of the matching type, as JSON.
pub(crate) fn method_and_result() -> impl Strategy<Value = (Method, Value)> {
    fn v<T: Serialize>(t: T) -> Value {
        serde_json::to_value(t).unwrap()
    }
    prop_oneof![
        send_message_response().prop_map(|r| (Method::SendMessage, v(r))),
        stream_response().prop_map(|r| (Method::SendStreamingMessage, v(r))),
        stream_response().prop_map(|r| (Method::SubscribeToTask, v(r))),
        task().prop_map(|r| (Method::GetTask, v(r))),
        task().prop_map(|r| (Method::CancelTask, v(r))),
        list_tasks_response().prop_map(|r| (Method::ListTasks, v(r))),
        push_config().prop_map(|r| (Method::CreateTaskPushNotificationConfig, v(r))),
        push_config().prop_map(|r| (Method::GetTaskPushNotificationConfig, v(r))),
        list_push_configs_response().prop_map(|r| (Method::ListTaskPushNotificationConfigs, v(r))),
        Just((Method::DeleteTaskPushNotificationConfig, json!({}))),
        agent_card().prop_map(|r| (Method::GetExtendedAgentCard, v(r))),
    ]
}
