//! Method names and the object kinds of their params and results.

use super::*;

macro_rules! method_tests {
    ($($name:ident: $old:literal <=> $new:literal;)+) => {$(
        #[test]
        fn $name() {
            assert_eq!(method_to_v1($old), Some($new));
            assert_eq!(method_to_v03($new), Some($old));
            assert_eq!(method_to_v1($new), None, "1.0 names are not 0.3 names");
            assert_eq!(method_to_v03($old), None, "0.3 names are not 1.0 names");
        }
    )+};
}

method_tests! {
    method_send: "message/send" <=> "SendMessage";
    method_stream: "message/stream" <=> "SendStreamingMessage";
    method_get: "tasks/get" <=> "GetTask";
    method_cancel: "tasks/cancel" <=> "CancelTask";
    method_resubscribe: "tasks/resubscribe" <=> "SubscribeToTask";
    method_push_set: "tasks/pushNotificationConfig/set" <=> "CreateTaskPushNotificationConfig";
    method_push_get: "tasks/pushNotificationConfig/get" <=> "GetTaskPushNotificationConfig";
    method_push_list: "tasks/pushNotificationConfig/list" <=> "ListTaskPushNotificationConfigs";
    method_push_delete: "tasks/pushNotificationConfig/delete" <=> "DeleteTaskPushNotificationConfig";
    method_extended_card: "agent/getAuthenticatedExtendedCard" <=> "GetExtendedAgentCard";
}

#[test]
fn method_list_tasks_has_no_0_3_name() {
    assert_eq!(method_to_v03("ListTasks"), None);
}

#[test]
fn method_unknown_and_wrong_case() {
    assert_eq!(method_to_v1("message/Send"), None);
    assert_eq!(method_to_v1("tasks/list"), None);
    assert_eq!(method_to_v03("sendMessage"), None);
    assert_eq!(method_to_v03("ListTaskPushNotificationConfig"), None);
}

#[test]
fn object_kinds_of_methods() {
    use ObjectKind as K;
    let cases = [
        ("message/send", K::SendMessageParams, K::SendMessageResult),
        (
            "SendStreamingMessage",
            K::SendMessageParams,
            K::StreamResult,
        ),
        ("tasks/get", K::TaskIdParams, K::Task),
        ("CancelTask", K::TaskIdParams, K::Task),
        ("tasks/resubscribe", K::TaskIdParams, K::StreamResult),
        (
            "tasks/pushNotificationConfig/set",
            K::PushConfig,
            K::PushConfig,
        ),
        (
            "GetTaskPushNotificationConfig",
            K::PushConfigIdParams,
            K::PushConfig,
        ),
        (
            "tasks/pushNotificationConfig/list",
            K::PushConfigListParams,
            K::PushConfigList,
        ),
        (
            "DeleteTaskPushNotificationConfig",
            K::PushConfigIdParams,
            K::Empty,
        ),
        ("agent/getAuthenticatedExtendedCard", K::Empty, K::AgentCard),
    ];
    for (method, params, result) in cases {
        assert_eq!(ObjectKind::params_of(method), Some(params), "{method}");
        assert_eq!(ObjectKind::result_of(method), Some(result), "{method}");
    }
    assert_eq!(ObjectKind::params_of("ListTasks"), None);
    assert_eq!(ObjectKind::result_of("nope"), None);
}
