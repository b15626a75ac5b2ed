//! InvalidEnum.

use super::*;

/// A task whose state is `state`, which the check reports as the one `InvalidEnum` deviation.
fn task_with_invalid_state(state: Value) -> Value {
    let task = task_with_state(state);
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status.state", "R05", InvalidEnum)],
    );
    task
}

#[test]
fn invalid_enum_lowercase_completed() {
    let task = task_with_invalid_state(json!("completed"));
    // A 0.3-style lowercase state decodes.
    let t: Task = lenient(&task);
    assert_eq!(t.status.state, TaskState::Completed);
}

#[test]
fn invalid_enum_kebab_input_required() {
    let task = task_with_invalid_state(json!("input-required"));
    let t: Task = lenient(&task);
    assert_eq!(t.status.state, TaskState::InputRequired);
}

#[test]
fn invalid_enum_number() {
    let task = task_with_invalid_state(json!(3));
    let t: Task = lenient(&task);
    assert_eq!(t.status.state, TaskState::Completed);
    let list = json!({"status": 2});
    assert_exactly(
        ObjectType::ListTasksRequest,
        &list,
        &[("$.status", "R05", InvalidEnum)],
    );
    assert_eq!(
        lenient::<ListTasksRequest>(&list).status,
        Some(TaskState::Working)
    );
}

#[test]
fn invalid_enum_unknown_name() {
    let task = task_with_invalid_state(json!("TASK_STATE_FOO"));
    let err = rejects_at::<Task>(&task.to_string(), "$.status.state");
    assert!(err.to_string().contains("TASK_STATE_FOO"), "{err}");
    // An out-of-range number is also rejected.
    rejects_at::<Task>(&task_with_state(json!(99)).to_string(), "$.status.state");
}

#[test]
fn invalid_enum_role_user() {
    let mut msg = user_message();
    msg["role"] = json!("user");
    assert_exactly(ObjectType::Message, &msg, &[("$.role", "R05", InvalidEnum)]);
    let m: Message = lenient(&msg);
    assert_eq!(m.role, Role::User);
    msg["role"] = json!("ROLE_ADMIN");
    assert_exactly(ObjectType::Message, &msg, &[("$.role", "R05", InvalidEnum)]);
    rejects_at::<Message>(&msg.to_string(), "$.role");
}
