//! The method tables the check uses, and the bound on its report.

use super::*;

#[test]
fn params_and_result_types_cover_every_method() {
    use a2a_protocol::jsonrpc::Method;
    for m in Method::ALL {
        assert!(params_type(m.as_str()).is_some(), "{m}");
        let r = result_type(m.as_str());
        assert_eq!(
            r.is_none(),
            *m == Method::DeleteTaskPushNotificationConfig,
            "{m}"
        );
    }
    assert_eq!(params_type("message/send"), None);
    assert_eq!(result_type("tasks/get"), None);
    for t in ObjectType::ALL {
        assert_eq!(ObjectType::from_name(&t.name()), Some(*t));
    }

    // A legacy 0.3 response checked as 1.0.
    let legacy = json!({"jsonrpc": "2.0", "id": Id::from(3), "result": {
        "kind": "task", "id": "t-1", "contextId": "c-1",
        "status": {"state": "completed", "timestamp": "2026-03-20T10:00:00+00:00"}}});
    let found = conformance_response(result_type("GetTask"), &legacy);
    assert_eq!(
        triples(&found),
        [
            ("$.result.kind".to_string(), "R07".to_string(), LegacyField),
            (
                "$.result.status.state".to_string(),
                "R05".to_string(),
                InvalidEnum
            ),
            (
                "$.result.status.timestamp".to_string(),
                "R05".to_string(),
                NonUtcTimestamp
            ),
        ]
    );
    let r: JsonRpcResponse<Task> = lenient(&legacy);
    assert_eq!(r.payload.unwrap().status.state, TaskState::Completed);
}

#[test]
fn report_is_bounded() {
    let mut obj = serde_json::Map::new();
    for i in 0..1000 {
        obj.insert(format!("x{i}"), json!(i));
    }
    let found = conformance(ObjectType::Task, &Value::Object(obj));
    assert_eq!(found.len(), a2a_protocol::conformance::MAX_DEVIATIONS);
}
