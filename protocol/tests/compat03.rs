//! Tests of the 0.3 ⇔ 1.0 adapter: one test per mapping plus a round-trip property.

use a2a_protocol::compat03::{
    AdaptErrorKind, ObjectKind, ProtocolVersion, VersionError, error_code_known_in_v03,
    error_name_to_v1, error_name_to_v03, is_final_state, method_to_v1, method_to_v03, negotiate,
    role_to_v1, role_to_v03, state_to_v1, state_to_v03, to_v1, to_v03,
};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Translate both ways and check each direction against the expected form.
fn both_ways(kind: ObjectKind, v03: Value, v1: Value) {
    assert_eq!(to_v1(kind, &v03).expect("to_v1"), v1, "{kind:?} 0.3 -> 1.0");
    assert_eq!(
        to_v03(kind, &v1).expect("to_v03"),
        v03,
        "{kind:?} 1.0 -> 0.3"
    );
}

// ---------------------------------------------------------------------------------------------
// Versions
// ---------------------------------------------------------------------------------------------

#[test]
fn version_missing_header_is_0_3() {
    assert_eq!(negotiate(None), Ok(ProtocolVersion::V0_3));
}

#[test]
fn version_empty_or_blank_header_is_0_3() {
    assert_eq!(negotiate(Some("")), Ok(ProtocolVersion::V0_3));
    assert_eq!(negotiate(Some("  ")), Ok(ProtocolVersion::V0_3));
}

#[test]
fn version_1_0() {
    assert_eq!(negotiate(Some("1.0")), Ok(ProtocolVersion::V1_0));
    assert_eq!(negotiate(Some(" 1.0 ")), Ok(ProtocolVersion::V1_0));
}

#[test]
fn version_patch_is_ignored() {
    assert_eq!(negotiate(Some("1.0.3")), Ok(ProtocolVersion::V1_0));
    assert_eq!(negotiate(Some("1.0.0-rc1")), Ok(ProtocolVersion::V1_0));
    assert_eq!(negotiate(Some("0.3.0")), Ok(ProtocolVersion::V0_3));
}

#[test]
fn version_bare_major_means_minor_zero() {
    assert_eq!(negotiate(Some("1")), Ok(ProtocolVersion::V1_0));
    assert!(negotiate(Some("0")).is_err());
}

#[test]
fn version_0_3_explicit() {
    assert_eq!(negotiate(Some("0.3")), Ok(ProtocolVersion::V0_3));
}

#[test]
fn version_2_0_is_an_error_carrying_the_request() {
    let e = negotiate(Some("2.0")).expect_err("2.0 unsupported");
    assert_eq!(
        e,
        VersionError {
            requested: "2.0".into()
        }
    );
    assert!(e.to_string().contains("\"2.0\""), "{e}");
}

#[test]
fn version_other_errors() {
    for bad in [
        "1.1", "0.2", "v1.0", "1.x", "1.0.", ".1", "1..0", "abc", "1,0",
    ] {
        let e = negotiate(Some(bad)).expect_err(bad);
        assert_eq!(e.requested, bad);
    }
}

#[test]
fn version_header_values() {
    assert_eq!(ProtocolVersion::V0_3.header_value(), "0.3");
    assert_eq!(ProtocolVersion::V1_0.header_value(), "1.0");
    assert_eq!(ProtocolVersion::V1_0.to_string(), "1.0");
    for v in [ProtocolVersion::V0_3, ProtocolVersion::V1_0] {
        assert_eq!(negotiate(Some(v.header_value())), Ok(v));
    }
}

// ---------------------------------------------------------------------------------------------
// Methods
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// States and roles
// ---------------------------------------------------------------------------------------------

macro_rules! state_tests {
    ($($name:ident: $old:literal <=> $new:literal, $snake:literal, $num:literal;)+) => {$(
        #[test]
        fn $name() {
            assert_eq!(state_to_v1($old), Some($new));
            assert_eq!(state_to_v1($new), Some($new));
            assert_eq!(state_to_v1($snake), Some($new));
            assert_eq!(state_to_v03($new), Some($old));
            assert_eq!(state_to_v03($old), Some($old));
            // Inside a status object, including the proto number form.
            both_ways(
                ObjectKind::TaskStatus,
                json!({"state": $old}),
                json!({"state": $new}),
            );
            assert_eq!(
                to_v1(ObjectKind::TaskStatus, &json!({"state": $num})).expect("number"),
                json!({"state": $new})
            );
        }
    )+};
}

state_tests! {
    state_submitted: "submitted" <=> "TASK_STATE_SUBMITTED", "submitted", 1;
    state_working: "working" <=> "TASK_STATE_WORKING", "working", 2;
    state_completed: "completed" <=> "TASK_STATE_COMPLETED", "completed", 3;
    state_failed: "failed" <=> "TASK_STATE_FAILED", "failed", 4;
    state_canceled: "canceled" <=> "TASK_STATE_CANCELED", "canceled", 5;
    state_input_required: "input-required" <=> "TASK_STATE_INPUT_REQUIRED", "input_required", 6;
    state_rejected: "rejected" <=> "TASK_STATE_REJECTED", "rejected", 7;
    state_auth_required: "auth-required" <=> "TASK_STATE_AUTH_REQUIRED", "auth_required", 8;
    state_unknown: "unknown" <=> "TASK_STATE_UNSPECIFIED", "unspecified", 0;
}

#[test]
fn state_spelling_variants() {
    assert_eq!(
        state_to_v1("INPUT_REQUIRED"),
        Some("TASK_STATE_INPUT_REQUIRED")
    );
    assert_eq!(
        state_to_v1("Input-Required"),
        Some("TASK_STATE_INPUT_REQUIRED")
    );
    assert_eq!(state_to_v1("cancelled"), Some("TASK_STATE_CANCELED"));
    assert_eq!(
        state_to_v1("task_state_working"),
        Some("TASK_STATE_WORKING")
    );
    assert_eq!(state_to_v1("foo"), None);
    assert_eq!(state_to_v03("TASK_STATE_FOO"), None);
}

#[test]
fn final_states() {
    for s in [
        "completed",
        "failed",
        "canceled",
        "rejected",
        "input-required",
        "TASK_STATE_AUTH_REQUIRED",
    ] {
        assert!(is_final_state(s), "{s}");
    }
    for s in ["submitted", "TASK_STATE_WORKING", "unknown", "bogus"] {
        assert!(!is_final_state(s), "{s}");
    }
}

#[test]
fn role_user() {
    assert_eq!(role_to_v1("user"), Some("ROLE_USER"));
    assert_eq!(role_to_v03("ROLE_USER"), Some("user"));
    assert_eq!(role_to_v1("ROLE_USER"), Some("ROLE_USER"));
}

#[test]
fn role_agent() {
    assert_eq!(role_to_v1("agent"), Some("ROLE_AGENT"));
    assert_eq!(role_to_v03("ROLE_AGENT"), Some("agent"));
    assert_eq!(role_to_v03("agent"), Some("agent"));
}

#[test]
fn role_invalid() {
    assert_eq!(role_to_v1("ROLE_UNSPECIFIED"), None);
    assert_eq!(role_to_v1("system"), None);
    assert_eq!(role_to_v03(""), None);
}

#[test]
fn role_as_proto_number_in_message() {
    let m = json!({"messageId": "m", "role": 2, "parts": [{"text": "x"}]});
    assert_eq!(
        to_v03(ObjectKind::Message, &m).expect("role number")["role"],
        json!("agent")
    );
}

// ---------------------------------------------------------------------------------------------
// Parts
// ---------------------------------------------------------------------------------------------

#[test]
fn part_text() {
    both_ways(
        ObjectKind::Part,
        json!({"kind": "text", "text": "hello"}),
        json!({"text": "hello"}),
    );
}

#[test]
fn part_file_bytes() {
    both_ways(
        ObjectKind::Part,
        json!({"kind": "file", "file": {"bytes": "iVBORw0KGgo=", "mimeType": "image/png", "name": "in.png"}}),
        json!({"raw": "iVBORw0KGgo=", "mediaType": "image/png", "filename": "in.png"}),
    );
}

#[test]
fn part_file_uri() {
    both_ways(
        ObjectKind::Part,
        json!({"kind": "file", "file": {"uri": "https://files.example/out.pdf", "mimeType": "application/pdf", "name": "out.pdf"}}),
        json!({"url": "https://files.example/out.pdf", "mediaType": "application/pdf", "filename": "out.pdf"}),
    );
}

#[test]
fn part_file_minimal() {
    both_ways(
        ObjectKind::Part,
        json!({"kind": "file", "file": {"uri": "https://x/y"}}),
        json!({"url": "https://x/y"}),
    );
}

#[test]
fn part_data_object() {
    both_ways(
        ObjectKind::Part,
        json!({"kind": "data", "data": {"budgetUsd": 3.5, "items": [1, 2]}}),
        json!({"data": {"budgetUsd": 3.5, "items": [1, 2]}}),
    );
}

#[test]
fn part_data_non_object_is_wrapped_for_0_3() {
    for x in [
        json!([1, 2]),
        json!("s"),
        json!(4),
        json!(true),
        json!(null),
    ] {
        let v1 = json!({"data": x.clone()});
        if x.is_null() {
            // `null` means unset: there is no content at all.
            assert!(to_v03(ObjectKind::Part, &v1).is_err());
            continue;
        }
        assert_eq!(
            to_v03(ObjectKind::Part, &v1).expect("wrap"),
            json!({"kind": "data", "data": {"value": x}})
        );
    }
}

#[test]
fn part_metadata_is_kept() {
    both_ways(
        ObjectKind::Part,
        json!({"kind": "text", "text": "t", "metadata": {"k": [1]}}),
        json!({"text": "t", "metadata": {"k": [1]}}),
    );
    both_ways(
        ObjectKind::Part,
        json!({"kind": "file", "file": {"bytes": "AA=="}, "metadata": {"k": 1}}),
        json!({"raw": "AA==", "metadata": {"k": 1}}),
    );
}

#[test]
fn part_media_type_of_text_and_data_is_dropped_for_0_3() {
    assert_eq!(
        to_v03(
            ObjectKind::Part,
            &json!({"text": "t", "mediaType": "text/plain", "filename": "a.txt"})
        )
        .expect("text"),
        json!({"kind": "text", "text": "t"})
    );
    assert_eq!(
        to_v03(
            ObjectKind::Part,
            &json!({"data": {"a": 1}, "mediaType": "application/json"})
        )
        .expect("data"),
        json!({"kind": "data", "data": {"a": 1}})
    );
}

#[test]
fn part_without_kind_is_inferred() {
    assert_eq!(
        to_v1(ObjectKind::Part, &json!({"text": "t"})).expect("text"),
        json!({"text": "t"})
    );
    assert_eq!(
        to_v1(ObjectKind::Part, &json!({"file": {"bytes": "AA=="}})).expect("file"),
        json!({"raw": "AA=="})
    );
    assert_eq!(
        to_v1(ObjectKind::Part, &json!({"url": "u", "mediaType": "m"})).expect("1.0 already"),
        json!({"url": "u", "mediaType": "m"})
    );
}

#[test]
fn part_errors_name_the_path() {
    let e = to_v1(ObjectKind::Part, &json!({"kind": "image", "image": 1})).expect_err("kind");
    assert_eq!(e.path, "$.kind");
    assert_eq!(e.kind, AdaptErrorKind::UnknownKind("image".into()));

    let e = to_v1(
        ObjectKind::Part,
        &json!({"kind": "file", "file": {"bytes": "AA==", "uri": "u"}}),
    )
    .expect_err("both");
    assert_eq!(e.path, "$.file");
    assert!(matches!(e.kind, AdaptErrorKind::Ambiguous(_)));

    let e = to_v1(ObjectKind::Part, &json!({"kind": "file", "file": {}})).expect_err("none");
    assert_eq!(e.to_string(), "$.file: none of bytes, uri is present");

    let e = to_v1(ObjectKind::Part, &json!({"kind": "text"})).expect_err("no text");
    assert_eq!(e.to_string(), "$.text: missing required field");

    let e = to_v03(ObjectKind::Part, &json!({"text": "a", "url": "b"})).expect_err("two");
    assert_eq!(e.to_string(), "$: more than one of text, url is present");

    let e = to_v03(ObjectKind::Part, &json!({"metadata": {}})).expect_err("none");
    assert_eq!(e.kind, AdaptErrorKind::NoContent("text, raw, url, data"));

    let e = to_v03(ObjectKind::Part, &json!("text")).expect_err("not object");
    assert_eq!(e.to_string(), "$: expected object, found string");
}

// ---------------------------------------------------------------------------------------------
// Messages, tasks, statuses, artifacts, events
// ---------------------------------------------------------------------------------------------

fn message03() -> Value {
    json!({"kind": "message", "messageId": "m-1", "role": "agent", "contextId": "c-1",
           "taskId": "t-1", "parts": [{"kind": "text", "text": "From which airport?"}],
           "metadata": {"x": 1}, "referenceTaskIds": ["t-0"], "extensions": ["urn:e"]})
}

fn message1() -> Value {
    json!({"messageId": "m-1", "role": "ROLE_AGENT", "contextId": "c-1", "taskId": "t-1",
           "parts": [{"text": "From which airport?"}], "metadata": {"x": 1},
           "referenceTaskIds": ["t-0"], "extensions": ["urn:e"]})
}

fn artifact03() -> Value {
    json!({"artifactId": "a-1", "name": "report", "description": "d",
           "parts": [{"kind": "data", "data": {"ok": true}}, {"kind": "text", "text": "x"}]})
}

fn artifact1() -> Value {
    json!({"artifactId": "a-1", "name": "report", "description": "d",
           "parts": [{"data": {"ok": true}}, {"text": "x"}]})
}

fn task03() -> Value {
    json!({"kind": "task", "id": "t-1", "contextId": "c-1",
           "status": {"state": "input-required", "timestamp": "2026-03-20T10:00:00.000Z",
                      "message": message03()},
           "history": [message03()], "artifacts": [artifact03()], "metadata": {"m": "v"}})
}

fn task1() -> Value {
    json!({"id": "t-1", "contextId": "c-1",
           "status": {"state": "TASK_STATE_INPUT_REQUIRED", "timestamp": "2026-03-20T10:00:00.000Z",
                      "message": message1()},
           "history": [message1()], "artifacts": [artifact1()], "metadata": {"m": "v"}})
}

#[test]
fn object_message() {
    both_ways(ObjectKind::Message, message03(), message1());
}

#[test]
fn object_message_wrong_kind_is_rejected() {
    let mut m = message03();
    m["kind"] = json!("task");
    let e = to_v1(ObjectKind::Message, &m).expect_err("kind");
    assert_eq!(e.to_string(), "$.kind: unknown kind \"task\"");
}

#[test]
fn object_message_bad_role() {
    let mut m = message03();
    m["role"] = json!("system");
    let e = to_v1(ObjectKind::Message, &m).expect_err("role");
    assert_eq!(e.to_string(), "$.role: unknown role \"system\"");
}

#[test]
fn object_task() {
    both_ways(ObjectKind::Task, task03(), task1());
}

#[test]
fn object_task_status() {
    both_ways(
        ObjectKind::TaskStatus,
        json!({"state": "working", "timestamp": "2026-03-20T10:00:01Z", "message": message03()}),
        json!({"state": "TASK_STATE_WORKING", "timestamp": "2026-03-20T10:00:01Z", "message": message1()}),
    );
}

#[test]
fn object_task_status_missing_state() {
    let e = to_v1(ObjectKind::TaskStatus, &json!({"timestamp": "x"})).expect_err("state");
    assert_eq!(e.path, "$.state");
    assert_eq!(e.kind, AdaptErrorKind::Missing);
}

#[test]
fn object_artifact() {
    both_ways(ObjectKind::Artifact, artifact03(), artifact1());
}

#[test]
fn object_status_update_terminal_is_final() {
    both_ways(
        ObjectKind::StatusUpdate,
        json!({"kind": "status-update", "taskId": "t", "contextId": "c",
               "status": {"state": "completed"}, "final": true, "metadata": {}}),
        json!({"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED"},
               "metadata": {}}),
    );
}

#[test]
fn object_status_update_interrupted_is_final() {
    both_ways(
        ObjectKind::StatusUpdate,
        json!({"kind": "status-update", "taskId": "t", "contextId": "c",
               "status": {"state": "auth-required"}, "final": true}),
        json!({"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_AUTH_REQUIRED"}}),
    );
}

#[test]
fn object_status_update_working_is_not_final() {
    both_ways(
        ObjectKind::StatusUpdate,
        json!({"kind": "status-update", "taskId": "t", "contextId": "c",
               "status": {"state": "working"}, "final": false}),
        json!({"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}),
    );
}

#[test]
fn object_status_update_final_is_dropped_even_if_wrong() {
    // A 0.3 peer claiming `final: true` on WORKING: 1.0 has no such flag; stream closure decides.
    assert_eq!(
        to_v1(
            ObjectKind::StatusUpdate,
            &json!({"kind": "status-update", "taskId": "t", "contextId": "c",
                    "status": {"state": "working"}, "final": true})
        )
        .expect("drop final"),
        json!({"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}})
    );
}

#[test]
fn object_artifact_update() {
    both_ways(
        ObjectKind::ArtifactUpdate,
        json!({"kind": "artifact-update", "taskId": "t", "contextId": "c",
               "artifact": artifact03(), "append": true, "lastChunk": true}),
        json!({"taskId": "t", "contextId": "c", "artifact": artifact1(),
               "append": true, "lastChunk": true}),
    );
}

#[test]
fn unknown_state_names_the_path() {
    let mut t = task03();
    t["status"]["state"] = json!("foo");
    let e = to_v1(ObjectKind::Task, &t).expect_err("state");
    assert_eq!(e.to_string(), "$.status.state: unknown state \"foo\"");

    let mut t = task1();
    t["history"][0]["parts"][0] = json!({"nothing": 1});
    let e = to_v03(ObjectKind::Task, &t).expect_err("part");
    assert_eq!(e.path, "$.history[0].parts[0]");
}

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

#[test]
fn send_result_task() {
    both_ways(
        ObjectKind::SendMessageResult,
        task03(),
        json!({"task": task1()}),
    );
}

#[test]
fn send_result_message() {
    both_ways(
        ObjectKind::SendMessageResult,
        message03(),
        json!({"message": message1()}),
    );
}

#[test]
fn send_result_without_kind_is_inferred() {
    let mut t = task03();
    t.as_object_mut().map(|m| m.remove("kind"));
    assert_eq!(
        to_v1(ObjectKind::SendMessageResult, &t).expect("task"),
        json!({"task": task1()})
    );
}

#[test]
fn send_result_errors() {
    let e = to_v1(
        ObjectKind::SendMessageResult,
        &json!({"kind": "status-update", "taskId": "t"}),
    )
    .expect_err("not allowed");
    assert_eq!(e.to_string(), "$.kind: unknown kind \"status-update\"");
    let e = to_v03(ObjectKind::SendMessageResult, &json!({})).expect_err("empty");
    assert_eq!(e.kind, AdaptErrorKind::NoContent("task, message"));
    let e = to_v03(
        ObjectKind::SendMessageResult,
        &json!({"task": task1(), "message": message1()}),
    )
    .expect_err("both");
    assert!(matches!(e.kind, AdaptErrorKind::Ambiguous(_)));
}

#[test]
fn stream_result_task() {
    both_ways(ObjectKind::StreamResult, task03(), json!({"task": task1()}));
}

#[test]
fn stream_result_message() {
    both_ways(
        ObjectKind::StreamResult,
        message03(),
        json!({"message": message1()}),
    );
}

#[test]
fn stream_result_status_update() {
    both_ways(
        ObjectKind::StreamResult,
        json!({"kind": "status-update", "taskId": "t-2", "contextId": "c-1",
               "status": {"state": "completed", "timestamp": "2026-03-20T10:00:03.000Z"},
               "final": true}),
        json!({"statusUpdate": {"taskId": "t-2", "contextId": "c-1",
               "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2026-03-20T10:00:03.000Z"}}}),
    );
}

#[test]
fn stream_result_artifact_update() {
    both_ways(
        ObjectKind::StreamResult,
        json!({"kind": "artifact-update", "taskId": "t-2", "contextId": "c-1",
               "artifact": {"artifactId": "a-1", "parts": [{"kind": "text", "text": "Part two."}]},
               "append": true, "lastChunk": true}),
        json!({"artifactUpdate": {"taskId": "t-2", "contextId": "c-1",
               "artifact": {"artifactId": "a-1", "parts": [{"text": "Part two."}]},
               "append": true, "lastChunk": true}}),
    );
}

#[test]
fn stream_result_unknown_kind() {
    let e = to_v1(ObjectKind::StreamResult, &json!({"kind": "ping"})).expect_err("kind");
    assert_eq!(e.path, "$.kind");
    let e = to_v1(ObjectKind::StreamResult, &json!({"foo": 1})).expect_err("no kind");
    assert_eq!(e.to_string(), "$.kind: missing required field");
}

// ---------------------------------------------------------------------------------------------
// Params and push configs
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Agent card
// ---------------------------------------------------------------------------------------------

fn card03() -> Value {
    json!({
        "protocolVersion": "0.3",
        "name": "mock", "description": "d", "version": "0.1.0",
        "url": "http://127.0.0.1:9101/a2a",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [
            {"url": "http://127.0.0.1:9101/a2a", "transport": "JSONRPC"},
            {"url": "http://127.0.0.1:9101/rest", "transport": "HTTP+JSON"}
        ],
        "capabilities": {"streaming": true, "pushNotifications": false},
        "supportsAuthenticatedExtendedCard": true,
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"],
                    "security": [{"oauth": ["read"]}]}],
        "securitySchemes": {
            "key": {"type": "apiKey", "name": "X-Key", "in": "header", "description": "k"},
            "bearer": {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
            "oauth": {"type": "oauth2", "flows": {"clientCredentials":
                {"tokenUrl": "https://t", "scopes": {"read": "r"}}}},
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://o"},
            "mtls": {"type": "mutualTLS", "description": "m"}
        },
        "security": [{"bearer": []}, {"oauth": ["read", "write"], "key": []}]
    })
}

fn card1() -> Value {
    json!({
        "name": "mock", "description": "d", "version": "0.1.0",
        "supportedInterfaces": [
            {"url": "http://127.0.0.1:9101/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "http://127.0.0.1:9101/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"}
        ],
        "capabilities": {"streaming": true, "pushNotifications": false, "extendedAgentCard": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "s", "name": "S", "description": "d", "tags": ["t"],
                    "securityRequirements": [{"schemes": {"oauth": {"list": ["read"]}}}]}],
        "securitySchemes": {
            "key": {"apiKeySecurityScheme": {"name": "X-Key", "location": "header", "description": "k"}},
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
            "oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials":
                {"tokenUrl": "https://t", "scopes": {"read": "r"}}}}},
            "oidc": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://o"}},
            "mtls": {"mtlsSecurityScheme": {"description": "m"}}
        },
        "securityRequirements": [
            {"schemes": {"bearer": {"list": []}}},
            {"schemes": {"oauth": {"list": ["read", "write"]}, "key": {"list": []}}}
        ]
    })
}

#[test]
fn card_both_ways() {
    both_ways(ObjectKind::AgentCard, card03(), card1());
}

#[test]
fn card_interfaces() {
    let v1 = to_v1(
        ObjectKind::AgentCard,
        &json!({"url": "http://a/", "protocolVersion": "0.3.0", "capabilities": {}}),
    )
    .expect("card");
    assert_eq!(
        v1["supportedInterfaces"],
        json!([{"url": "http://a/", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}])
    );
    for legacy in [
        "url",
        "preferredTransport",
        "additionalInterfaces",
        "protocolVersion",
    ] {
        assert!(v1.get(legacy).is_none(), "{legacy}");
    }
    let back = to_v03(
        ObjectKind::AgentCard,
        &json!({"supportedInterfaces": [
            {"url": "http://a/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0", "tenant": "x"},
            {"url": "grpc://a", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]}),
    )
    .expect("0.3 card");
    assert_eq!(back["url"], json!("http://a/"));
    assert_eq!(back["preferredTransport"], json!("JSONRPC"));
    assert_eq!(back["protocolVersion"], json!("1.0"));
    assert_eq!(
        back["additionalInterfaces"],
        json!([{"url": "http://a/", "transport": "JSONRPC"},
               {"url": "grpc://a", "transport": "GRPC"}])
    );
}

#[test]
fn card_keeps_existing_supported_interfaces() {
    let hybrid = json!({"url": "http://legacy/", "protocolVersion": "0.3",
        "supportedInterfaces": [{"url": "http://new/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]});
    let v1 = to_v1(ObjectKind::AgentCard, &hybrid).expect("hybrid");
    assert_eq!(
        v1,
        json!({"supportedInterfaces": [{"url": "http://new/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]})
    );
}

#[test]
fn card_extended_card_flag() {
    let v1 = to_v1(
        ObjectKind::AgentCard,
        &json!({"url": "u", "supportsAuthenticatedExtendedCard": false}),
    )
    .expect("flag");
    assert_eq!(v1["capabilities"], json!({"extendedAgentCard": false}));
    let v03 = to_v03(
        ObjectKind::AgentCard,
        &json!({"supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC"}],
                "capabilities": {"extendedAgentCard": true}}),
    )
    .expect("flag");
    assert_eq!(v03["supportsAuthenticatedExtendedCard"], json!(true));
    assert_eq!(v03["capabilities"], json!({}));
}

#[test]
fn card_state_transition_history_is_dropped() {
    let v1 = to_v1(
        ObjectKind::AgentCard,
        &json!({"url": "u", "capabilities": {"stateTransitionHistory": true, "streaming": true}}),
    )
    .expect("caps");
    assert_eq!(v1["capabilities"], json!({"streaming": true}));
}

#[test]
fn card_security_scheme_api_key_location() {
    let card = json!({"url": "u", "securitySchemes": {"k": {"type": "apiKey", "name": "n", "in": "query"}}});
    let v1 = to_v1(ObjectKind::AgentCard, &card).expect("apiKey");
    assert_eq!(
        v1["securitySchemes"]["k"],
        json!({"apiKeySecurityScheme": {"name": "n", "location": "query"}})
    );
}

#[test]
fn card_security_scheme_oauth_keeps_one_flow() {
    let card = json!({"url": "u", "securitySchemes": {"o": {"type": "oauth2",
        "flows": {"implicit": {"authorizationUrl": "a", "scopes": {}},
                  "authorizationCode": {"authorizationUrl": "a", "tokenUrl": "t", "scopes": {}}}}}});
    let v1 = to_v1(ObjectKind::AgentCard, &card).expect("oauth");
    let flows = &v1["securitySchemes"]["o"]["oauth2SecurityScheme"]["flows"];
    assert!(flows.get("authorizationCode").is_some());
    assert!(flows.get("implicit").is_none());
}

#[test]
fn card_security_scheme_errors() {
    let card = json!({"url": "u", "securitySchemes": {"my key": {"type": "kerberos"}}});
    let e = to_v1(ObjectKind::AgentCard, &card).expect_err("type");
    assert_eq!(
        e.to_string(),
        "$.securitySchemes[\"my key\"].type: unknown security scheme type \"kerberos\""
    );
    let card = json!({"supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC"}],
                      "securitySchemes": {"k": {}}});
    let e = to_v03(ObjectKind::AgentCard, &card).expect_err("wrapper");
    assert_eq!(e.path, "$.securitySchemes.k");
}

#[test]
fn card_security_requirements() {
    let v1 = to_v1(
        ObjectKind::AgentCard,
        &json!({"url": "u", "security": [{"a": ["s1", "s2"]}]}),
    )
    .expect("security");
    assert_eq!(
        v1["securityRequirements"],
        json!([{"schemes": {"a": {"list": ["s1", "s2"]}}}])
    );
    assert!(v1.get("security").is_none());
    let v03 = to_v03(
        ObjectKind::AgentCard,
        &json!({"supportedInterfaces": [{"url": "u", "protocolBinding": "JSONRPC"}],
                "securityRequirements": [{"schemes": {"a": {}}}]}),
    )
    .expect("requirements");
    assert_eq!(v03["security"], json!([{"a": []}]));
}

#[test]
fn card_missing_url_errors() {
    let e = to_v1(ObjectKind::AgentCard, &json!({"name": "x"})).expect_err("url");
    assert_eq!(e.to_string(), "$.url: missing required field");
    let e = to_v03(ObjectKind::AgentCard, &json!({"supportedInterfaces": []})).expect_err("empty");
    assert_eq!(e.path, "$.supportedInterfaces");
}

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

#[test]
fn error_names() {
    assert_eq!(
        error_name_to_v1("AuthenticatedExtendedCardNotConfiguredError"),
        Some("ExtendedAgentCardNotConfiguredError")
    );
    assert_eq!(
        error_name_to_v03("ExtendedAgentCardNotConfiguredError"),
        Some("AuthenticatedExtendedCardNotConfiguredError")
    );
    for shared in [
        "TaskNotFoundError",
        "TaskNotCancelableError",
        "PushNotificationNotSupportedError",
        "UnsupportedOperationError",
        "ContentTypeNotSupportedError",
        "InvalidAgentResponseError",
    ] {
        assert_eq!(error_name_to_v1(shared), Some(shared));
        assert_eq!(error_name_to_v03(shared), Some(shared));
    }
    assert_eq!(error_name_to_v03("ExtensionSupportRequiredError"), None);
    assert_eq!(error_name_to_v03("VersionNotSupportedError"), None);
}

#[test]
fn error_codes_in_0_3() {
    for code in -32007..=-32001 {
        assert!(error_code_known_in_v03(code), "{code}");
    }
    for code in [-32700, -32600, -32601, -32602, -32603] {
        assert!(error_code_known_in_v03(code), "{code}");
    }
    assert!(!error_code_known_in_v03(-32008));
    assert!(!error_code_known_in_v03(-32009));
}

// ---------------------------------------------------------------------------------------------
// Round-trip property
// ---------------------------------------------------------------------------------------------

fn id() -> impl Strategy<Value = String> {
    "[a-z0-9-]{1,12}"
}

fn small_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        "[ -~]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-z]{1,5}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn object_json() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-zA-Z_-]{1,6}", small_json(), 0..3)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn insert_opt(m: &mut serde_json::Map<String, Value>, k: &str, v: Option<Value>) {
    if let Some(v) = v {
        m.insert(k.into(), v);
    }
}

/// 1.0 parts in the lossless subset: no media type on text/data parts, object data only.
fn part1() -> impl Strategy<Value = Value> {
    let media = prop::option::of("[a-z]{1,5}/[a-z]{1,5}");
    let name = prop::option::of("[a-z]{1,6}\\.[a-z]{2,3}");
    let content = prop_oneof![
        "[ -~]{0,20}".prop_map(|t| ("text", Value::String(t), false)),
        "[A-Za-z0-9+/]{0,8}(==)?".prop_map(|b| ("raw", Value::String(b), true)),
        "https://[a-z]{1,8}\\.example/[a-z]{0,8}".prop_map(|u| ("url", Value::String(u), true)),
        object_json().prop_map(|d| ("data", d, false)),
    ];
    (content, media, name, prop::option::of(object_json())).prop_map(
        |((key, value, is_file), media, name, metadata)| {
            let mut m = serde_json::Map::new();
            m.insert(key.into(), value);
            if is_file {
                insert_opt(&mut m, "mediaType", media.map(Value::String));
                insert_opt(&mut m, "filename", name.map(Value::String));
            }
            insert_opt(&mut m, "metadata", metadata);
            Value::Object(m)
        },
    )
}

fn message1_strategy() -> impl Strategy<Value = Value> {
    (
        id(),
        prop::option::of(id()),
        prop::option::of(id()),
        prop_oneof![Just("ROLE_USER"), Just("ROLE_AGENT")],
        prop::collection::vec(part1(), 1..4),
        prop::option::of(object_json()),
        prop::option::of(prop::collection::vec(id(), 1..3)),
    )
        .prop_map(|(mid, ctx, task, role, parts, metadata, refs)| {
            let mut m = serde_json::Map::new();
            m.insert("messageId".into(), Value::String(mid));
            insert_opt(&mut m, "contextId", ctx.map(Value::String));
            insert_opt(&mut m, "taskId", task.map(Value::String));
            m.insert("role".into(), Value::String(role.into()));
            m.insert("parts".into(), Value::Array(parts));
            insert_opt(&mut m, "metadata", metadata);
            insert_opt(&mut m, "referenceTaskIds", refs.map(|r| json!(r)));
            Value::Object(m)
        })
}

const ALL_STATES: [&str; 9] = [
    "TASK_STATE_UNSPECIFIED",
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_AUTH_REQUIRED",
];

fn task1_strategy() -> impl Strategy<Value = Value> {
    let status = (
        prop::sample::select(&ALL_STATES[..]),
        prop::option::of(Just("2026-03-20T10:00:00.000Z")),
        prop::option::of(message1_strategy()),
    )
        .prop_map(|(state, ts, msg)| {
            let mut m = serde_json::Map::new();
            m.insert("state".into(), json!(state));
            insert_opt(&mut m, "timestamp", ts.map(|t| json!(t)));
            insert_opt(&mut m, "message", msg);
            Value::Object(m)
        });
    let artifact = (
        id(),
        prop::option::of("[a-z ]{1,10}"),
        prop::collection::vec(part1(), 1..3),
    )
        .prop_map(|(aid, name, parts)| {
            let mut m = serde_json::Map::new();
            m.insert("artifactId".into(), json!(aid));
            insert_opt(&mut m, "name", name.map(Value::String));
            m.insert("parts".into(), Value::Array(parts));
            Value::Object(m)
        });
    (
        id(),
        id(),
        status,
        prop::option::of(prop::collection::vec(message1_strategy(), 1..3)),
        prop::option::of(prop::collection::vec(artifact, 1..3)),
        prop::option::of(object_json()),
    )
        .prop_map(|(tid, ctx, status, history, artifacts, metadata)| {
            let mut m = serde_json::Map::new();
            m.insert("id".into(), json!(tid));
            m.insert("contextId".into(), json!(ctx));
            m.insert("status".into(), status);
            insert_opt(&mut m, "history", history.map(Value::Array));
            insert_opt(&mut m, "artifacts", artifacts.map(Value::Array));
            insert_opt(&mut m, "metadata", metadata);
            Value::Object(m)
        })
}

proptest! {
    #[test]
    fn message_round_trip_through_0_3(m in message1_strategy()) {
        let old = to_v03(ObjectKind::Message, &m).expect("to_v03");
        prop_assert_eq!(old.get("kind"), Some(&json!("message")));
        let back = to_v1(ObjectKind::Message, &old).expect("to_v1");
        prop_assert_eq!(back, m);
    }

    #[test]
    fn task_round_trip_through_0_3(t in task1_strategy()) {
        let old = to_v03(ObjectKind::Task, &t).expect("to_v03");
        prop_assert_eq!(old.get("kind"), Some(&json!("task")));
        let back = to_v1(ObjectKind::Task, &old).expect("to_v1");
        prop_assert_eq!(&back, &t);
        // The same task inside a stream / send result wrapper.
        let wrapped = json!({"task": t});
        let old = to_v03(ObjectKind::StreamResult, &wrapped).expect("stream to_v03");
        prop_assert_eq!(to_v1(ObjectKind::StreamResult, &old).expect("stream to_v1"), wrapped);
    }
}
