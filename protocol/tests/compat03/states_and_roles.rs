//! Task states and roles.

use super::*;

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
