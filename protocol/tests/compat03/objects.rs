//! Messages, tasks, statuses, artifacts and events.

use super::*;

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
