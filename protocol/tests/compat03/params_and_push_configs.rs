//! Request params and push notification configs.

use super::*;

#[test]
fn send_params_blocking_true() {
    both_ways(
        ObjectKind::SendMessageParams,
        json!({"message": message03(),
               "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 0,
                                 "blocking": true},
               "metadata": {"x-deleg": {"depth": 1}}}),
        json!({"message": message1(),
               "configuration": {"acceptedOutputModes": ["text/plain"], "historyLength": 0},
               "metadata": {"x-deleg": {"depth": 1}}}),
    );
}

#[test]
fn send_params_blocking_false_is_return_immediately() {
    both_ways(
        ObjectKind::SendMessageParams,
        json!({"message": message03(), "configuration": {"blocking": false}}),
        json!({"message": message1(), "configuration": {"returnImmediately": true}}),
    );
}

#[test]
fn send_params_without_configuration_sends_explicit_blocking() {
    both_ways(
        ObjectKind::SendMessageParams,
        json!({"message": message03(), "configuration": {"blocking": true}}),
        json!({"message": message1()}),
    );
    assert_eq!(
        to_v03(
            ObjectKind::SendMessageParams,
            &json!({"message": message1(), "configuration": {"returnImmediately": false}})
        )
        .expect("explicit false")["configuration"],
        json!({"blocking": true})
    );
}

#[test]
fn send_params_push_config_is_flattened() {
    both_ways(
        ObjectKind::SendMessageParams,
        json!({"message": message03(),
               "configuration": {"blocking": false, "pushNotificationConfig": {
                   "id": "cfg-1", "url": "http://127.0.0.1:7000/hook", "token": "tok",
                   "authentication": {"schemes": ["Bearer"], "credentials": "s"}}}}),
        json!({"message": message1(),
               "configuration": {"returnImmediately": true, "taskPushNotificationConfig": {
                   "id": "cfg-1", "url": "http://127.0.0.1:7000/hook", "token": "tok",
                   "authentication": {"scheme": "Bearer", "credentials": "s"}}}}),
    );
}

#[test]
fn send_params_bad_blocking_type() {
    let e = to_v1(
        ObjectKind::SendMessageParams,
        &json!({"message": message03(), "configuration": {"blocking": "yes"}}),
    )
    .expect_err("type");
    assert_eq!(
        e.to_string(),
        "$.configuration.blocking: expected boolean, found string"
    );
}

#[test]
fn task_id_params_get() {
    both_ways(
        ObjectKind::TaskIdParams,
        json!({"id": "t-1", "historyLength": 2}),
        json!({"id": "t-1", "historyLength": 2}),
    );
}

#[test]
fn task_id_params_push_form() {
    both_ways(
        ObjectKind::TaskIdParams,
        json!({"id": "t-1", "pushNotificationConfigId": "cfg-1"}),
        json!({"taskId": "t-1", "id": "cfg-1"}),
    );
}

#[test]
fn push_config_id_params() {
    both_ways(
        ObjectKind::PushConfigIdParams,
        json!({"id": "t-1", "pushNotificationConfigId": "cfg-1"}),
        json!({"taskId": "t-1", "id": "cfg-1"}),
    );
}

#[test]
fn push_config_id_params_default_config_id() {
    assert_eq!(
        to_v1(ObjectKind::PushConfigIdParams, &json!({"id": "t-1"})).expect("default"),
        json!({"taskId": "t-1", "id": "t-1"})
    );
    let e = to_v03(ObjectKind::PushConfigIdParams, &json!({"id": "c"})).expect_err("taskId");
    assert_eq!(e.to_string(), "$.taskId: missing required field");
}

#[test]
fn push_config_list_params() {
    both_ways(
        ObjectKind::PushConfigListParams,
        json!({"id": "t-1"}),
        json!({"taskId": "t-1"}),
    );
}

#[test]
fn push_config() {
    both_ways(
        ObjectKind::PushConfig,
        json!({"taskId": "t-2", "pushNotificationConfig": {
            "id": "cfg-1", "url": "http://127.0.0.1:7000/hook", "token": "tok-t2",
            "authentication": {"schemes": ["Bearer"], "credentials": "hook-secret"}}}),
        json!({"taskId": "t-2", "id": "cfg-1", "url": "http://127.0.0.1:7000/hook",
               "token": "tok-t2",
               "authentication": {"scheme": "Bearer", "credentials": "hook-secret"}}),
    );
}

#[test]
fn push_config_extra_schemes_keep_the_first() {
    let v1 = to_v1(
        ObjectKind::PushConfig,
        &json!({"taskId": "t", "pushNotificationConfig": {"url": "u",
                "authentication": {"schemes": ["Basic", "Bearer"]}}}),
    )
    .expect("first scheme");
    assert_eq!(v1["authentication"], json!({"scheme": "Basic"}));
}

#[test]
fn push_config_errors() {
    let e = to_v1(ObjectKind::PushConfig, &json!({"taskId": "t"})).expect_err("nested");
    assert_eq!(e.path, "$.pushNotificationConfig");
    let e = to_v1(
        ObjectKind::PushConfig,
        &json!({"taskId": "t", "pushNotificationConfig": {"url": "u",
                "authentication": {"schemes": []}}}),
    )
    .expect_err("empty schemes");
    assert_eq!(e.path, "$.pushNotificationConfig.authentication.schemes");
}

#[test]
fn push_config_list_result() {
    both_ways(
        ObjectKind::PushConfigList,
        json!([{"taskId": "t", "pushNotificationConfig": {"id": "a", "url": "u"}}]),
        json!({"configs": [{"taskId": "t", "id": "a", "url": "u"}]}),
    );
}

#[test]
fn empty_payload() {
    both_ways(ObjectKind::Empty, json!(null), json!({}));
}
