//! Task states, roles and A2A error names in both spellings.

/// `(0.3 name, 1.0 name, proto number)` of every task state.
pub(super) const STATES: &[(&str, &str, i64)] = &[
    ("unknown", "TASK_STATE_UNSPECIFIED", 0),
    ("submitted", "TASK_STATE_SUBMITTED", 1),
    ("working", "TASK_STATE_WORKING", 2),
    ("completed", "TASK_STATE_COMPLETED", 3),
    ("failed", "TASK_STATE_FAILED", 4),
    ("canceled", "TASK_STATE_CANCELED", 5),
    ("input-required", "TASK_STATE_INPUT_REQUIRED", 6),
    ("rejected", "TASK_STATE_REJECTED", 7),
    ("auth-required", "TASK_STATE_AUTH_REQUIRED", 8),
];

fn state_entry(s: &str) -> Option<&'static (&'static str, &'static str, i64)> {
    let lower = s.trim().to_ascii_lowercase().replace('-', "_");
    let key = lower.strip_prefix("task_state_").unwrap_or(&lower);
    let key = match key {
        "unspecified" => "unknown",
        "cancelled" => "canceled",
        other => other,
    };
    STATES
        .iter()
        .find(|(old, _, _)| old.replace('-', "_") == key)
}

/// The 1.0 `TASK_STATE_*` name for a task state written in any known spelling: 0.3 kebab-case
/// (`"input-required"`), lowercase snake (`"input_required"`) or the 1.0 name itself, case
/// insensitive; 0.3 `"unknown"` maps to `TASK_STATE_UNSPECIFIED`.
pub fn state_to_v1(state: &str) -> Option<&'static str> {
    state_entry(state).map(|(_, new, _)| *new)
}

/// The 0.3 kebab-case name for a task state in any spelling [`state_to_v1`] accepts;
/// `TASK_STATE_UNSPECIFIED` maps to `"unknown"`.
pub fn state_to_v03(state: &str) -> Option<&'static str> {
    state_entry(state).map(|(old, _, _)| *old)
}

/// Whether a state (any spelling) is terminal or interrupted, i.e. one after which a 0.3 stream
/// marked its status update `final: true` and a blocking send returns.
pub fn is_final_state(state: &str) -> bool {
    matches!(
        state_to_v1(state),
        Some(
            "TASK_STATE_COMPLETED"
                | "TASK_STATE_FAILED"
                | "TASK_STATE_CANCELED"
                | "TASK_STATE_REJECTED"
                | "TASK_STATE_INPUT_REQUIRED"
                | "TASK_STATE_AUTH_REQUIRED"
        )
    )
}

/// `(0.3 name, 1.0 name, proto number)` of every valid role.
pub(super) const ROLES: &[(&str, &str, i64)] =
    &[("user", "ROLE_USER", 1), ("agent", "ROLE_AGENT", 2)];

fn role_entry(s: &str) -> Option<&'static (&'static str, &'static str, i64)> {
    let lower = s.trim().to_ascii_lowercase();
    let key = lower.strip_prefix("role_").unwrap_or(&lower);
    ROLES.iter().find(|(old, _, _)| *old == key)
}

/// The 1.0 role name (`ROLE_USER`/`ROLE_AGENT`) for a role in 0.3 or 1.0 spelling, case
/// insensitive; `None` for anything else (including `ROLE_UNSPECIFIED`, which is invalid).
pub fn role_to_v1(role: &str) -> Option<&'static str> {
    role_entry(role).map(|(_, new, _)| *new)
}

/// The 0.3 role name (`user`/`agent`) for a role in 0.3 or 1.0 spelling; `None` otherwise.
pub fn role_to_v03(role: &str) -> Option<&'static str> {
    role_entry(role).map(|(old, _, _)| *old)
}

/// `(code, 0.3 name, 1.0 name)` for the A2A errors both versions define. The codes are shared;
/// only -32007 was renamed. -32008 (`ExtensionSupportRequiredError`) and -32009
/// (`VersionNotSupportedError`) exist only in 1.0.
pub(super) const ERRORS: &[(i64, &str, &str)] = &[
    (-32001, "TaskNotFoundError", "TaskNotFoundError"),
    (-32002, "TaskNotCancelableError", "TaskNotCancelableError"),
    (
        -32003,
        "PushNotificationNotSupportedError",
        "PushNotificationNotSupportedError",
    ),
    (
        -32004,
        "UnsupportedOperationError",
        "UnsupportedOperationError",
    ),
    (
        -32005,
        "ContentTypeNotSupportedError",
        "ContentTypeNotSupportedError",
    ),
    (
        -32006,
        "InvalidAgentResponseError",
        "InvalidAgentResponseError",
    ),
    (
        -32007,
        "AuthenticatedExtendedCardNotConfiguredError",
        "ExtendedAgentCardNotConfiguredError",
    ),
];

/// The 1.0 error name for a 0.3 A2A error name (only -32007 differs:
/// `AuthenticatedExtendedCardNotConfiguredError` ⇒ `ExtendedAgentCardNotConfiguredError`).
pub fn error_name_to_v1(name: &str) -> Option<&'static str> {
    ERRORS
        .iter()
        .find(|(_, old, _)| *old == name)
        .map(|(_, _, new)| *new)
}

/// The 0.3 error name for a 1.0 A2A error name; `None` for `ExtensionSupportRequiredError`
/// (-32008) and `VersionNotSupportedError` (-32009), which 0.3 does not have.
pub fn error_name_to_v03(name: &str) -> Option<&'static str> {
    ERRORS
        .iter()
        .find(|(_, _, new)| *new == name)
        .map(|(_, old, _)| *old)
}

/// Whether a 0.3 peer knows this JSON-RPC error code: the shared A2A codes -32001..=-32007 and
/// the standard JSON-RPC codes. -32008 and -32009 are 1.0-only; a 0.3 client sees them as
/// generic errors.
pub fn error_code_known_in_v03(code: i64) -> bool {
    (-32007..=-32001).contains(&code) || matches!(code, -32700 | -32600 | -32601 | -32602 | -32603)
}
