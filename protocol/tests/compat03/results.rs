//! Send and stream results.

use super::*;

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
