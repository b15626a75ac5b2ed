//! Error names and codes.

use super::*;

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
