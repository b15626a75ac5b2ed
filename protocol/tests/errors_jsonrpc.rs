//! Error codes (reference §3.13, §5), the `ErrorInfo` detail, JSON-RPC envelopes and ids, and
//! method names (reference §1.2, §1.3).

use a2a_protocol::codec::decode;
use a2a_protocol::conformance::{conformance_response, result_type};
use a2a_protocol::error::{ERROR_DOMAIN, ERROR_INFO_TYPE};
use a2a_protocol::jsonrpc::{Id, JSONRPC_VERSION, JsonRpcError, JsonRpcRequest, JsonRpcResponse};
use a2a_protocol::*;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// One test per error code
// ---------------------------------------------------------------------------

/// Everything about one code: number, name, reason, JSON-RPC error shape, `ErrorInfo` reading.
fn check_code(c: ErrorCode, code: i64, name: &str, reason: Option<&str>, message: &str) {
    assert_eq!(c.code(), code);
    assert_eq!(ErrorCode::from_code(code), c);
    assert_eq!(c.name(), name);
    assert_eq!(c.reason(), reason);
    assert_eq!(c.default_message(), message);
    assert_eq!(c.is_a2a(), reason.is_some());
    assert_eq!(c.to_string(), format!("{name} ({code})"));
    assert!(ErrorCode::ALL.contains(&c));

    // Default message, with metadata.
    let err = c.to_error(None, &[("taskId", "t-1"), ("hint", "retry")]);
    assert_eq!(err.code, code);
    assert_eq!(err.message, message);
    assert_eq!(err.error_code(), c);
    assert_eq!(err.to_string(), format!("{code} {name}: {message}"));
    let wire = serde_json::to_value(&err).unwrap();
    match reason {
        Some(reason) => {
            assert_eq!(
                wire,
                json!({"code": code, "message": message, "data": [{
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": reason,
                    "domain": "a2a-protocol.org",
                    "metadata": {"taskId": "t-1", "hint": "retry"}
                }]})
            );
            let info = err.error_info().expect("ErrorInfo");
            assert_eq!(info.type_url, ERROR_INFO_TYPE);
            assert_eq!(info.reason, reason);
            assert_eq!(info.domain, ERROR_DOMAIN);
            assert_eq!(info.metadata.len(), 2);
            assert_eq!(info.metadata["taskId"], "t-1");
        }
        None => {
            // JSON-RPC standard errors carry no ErrorInfo.
            assert_eq!(wire, json!({"code": code, "message": message}));
            assert_eq!(err.error_info(), None);
        }
    }

    // Custom message, no metadata: `metadata` is omitted.
    let err = c.to_error(Some("custom text"), &[]);
    assert_eq!(err.message, "custom text");
    if let Some(reason) = reason {
        let wire = serde_json::to_value(&err).unwrap();
        assert_eq!(
            wire["data"],
            json!([{"@type": ERROR_INFO_TYPE, "reason": reason, "domain": ERROR_DOMAIN}])
        );
        assert!(err.error_info().unwrap().metadata.is_empty());
    }

    // `error_info()` whatever shape `data` has.
    let info = json!({"@type": ERROR_INFO_TYPE, "reason": reason.unwrap_or("SOME_REASON"),
        "domain": ERROR_DOMAIN, "metadata": {"taskId": "t-9"}});
    let with = |data: Option<Value>| JsonRpcError {
        code,
        message: message.to_string(),
        data,
    };
    let bad_request = json!({"@type": "type.googleapis.com/google.rpc.BadRequest",
        "fieldViolations": [{"field": "id", "description": "required"}]});
    // Array, ErrorInfo not first.
    let got = with(Some(json!([bad_request, info]))).error_info().unwrap();
    assert_eq!(got.metadata["taskId"], "t-9");
    assert_eq!(got.reason, reason.unwrap_or("SOME_REASON"));
    // A bare object.
    let got = with(Some(info.clone())).error_info().unwrap();
    assert_eq!(got.domain, ERROR_DOMAIN);
    // A string (PY for protocol-level errors), absent, null, an array without ErrorInfo.
    assert_eq!(with(Some(json!("Task t-9 not found"))).error_info(), None);
    assert_eq!(with(None).error_info(), None);
    assert_eq!(with(Some(Value::Null)).error_info(), None);
    assert_eq!(with(Some(json!([bad_request, 1, "x"]))).error_info(), None);

    // Each data shape survives a response round trip, and the envelope conforms.
    for data in [
        None,
        Some(json!([info])),
        Some(info.clone()),
        Some(json!("text")),
    ] {
        let resp: JsonRpcResponse<Task> = JsonRpcResponse::error(Id::from("r-1"), with(data));
        let text = serde_json::to_string(&resp).unwrap();
        let back: JsonRpcResponse<Task> = decode(text.as_bytes()).unwrap();
        assert_eq!(back, resp);
        let found = conformance_response(
            result_type("GetTask"),
            &serde_json::to_value(&resp).unwrap(),
        );
        assert!(found.is_empty(), "{found:#?}");
    }
}

macro_rules! code_tests {
    ($($test:ident: $variant:ident, $code:literal, $name:literal, $reason:expr, $message:literal;)+) => {
        $(
            #[test]
            fn $test() {
                check_code(ErrorCode::$variant, $code, $name, $reason, $message);
            }
        )+

        #[test]
        fn every_named_code_is_tested() {
            let tested = [$(ErrorCode::$variant),+];
            assert_eq!(tested.len(), ErrorCode::ALL.len());
            for c in ErrorCode::ALL {
                assert!(tested.contains(c), "{c} untested");
            }
        }
    };
}

code_tests! {
    code_32001_task_not_found: TaskNotFound, -32001, "TaskNotFoundError",
        Some("TASK_NOT_FOUND"), "Task not found";
    code_32002_task_not_cancelable: TaskNotCancelable, -32002, "TaskNotCancelableError",
        Some("TASK_NOT_CANCELABLE"), "Task cannot be canceled";
    code_32003_push_not_supported: PushNotificationNotSupported, -32003,
        "PushNotificationNotSupportedError", Some("PUSH_NOTIFICATION_NOT_SUPPORTED"),
        "Push notifications are not supported";
    code_32004_unsupported_operation: UnsupportedOperation, -32004, "UnsupportedOperationError",
        Some("UNSUPPORTED_OPERATION"), "This operation is not supported";
    code_32005_content_type_not_supported: ContentTypeNotSupported, -32005,
        "ContentTypeNotSupportedError", Some("CONTENT_TYPE_NOT_SUPPORTED"),
        "Incompatible content types";
    code_32006_invalid_agent_response: InvalidAgentResponse, -32006, "InvalidAgentResponseError",
        Some("INVALID_AGENT_RESPONSE"), "Invalid agent response";
    code_32007_extended_card_not_configured: ExtendedAgentCardNotConfigured, -32007,
        "ExtendedAgentCardNotConfiguredError", Some("EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
        "Extended agent card not configured";
    code_32008_extension_support_required: ExtensionSupportRequired, -32008,
        "ExtensionSupportRequiredError", Some("EXTENSION_SUPPORT_REQUIRED"),
        "Extension support required";
    code_32009_version_not_supported: VersionNotSupported, -32009, "VersionNotSupportedError",
        Some("VERSION_NOT_SUPPORTED"), "Version not supported";
    code_32700_json_parse: JsonParse, -32700, "JSONParseError", None, "Invalid JSON payload";
    code_32600_invalid_request: InvalidRequest, -32600, "InvalidRequestError", None,
        "Request payload validation error";
    code_32601_method_not_found: MethodNotFound, -32601, "MethodNotFoundError", None,
        "Method not found";
    code_32602_invalid_params: InvalidParams, -32602, "InvalidParamsError", None,
        "Invalid parameters";
    code_32603_internal: Internal, -32603, "InternalError", None, "Internal error";
}

#[test]
fn other_codes_are_kept() {
    let c = ErrorCode::from_code(-32050);
    assert_eq!(c, ErrorCode::Other(-32050));
    assert_eq!(c.code(), -32050);
    assert!(c.is_a2a(), "-32001..-32099 is the A2A range");
    assert_eq!(c.reason(), None);
    assert_eq!(c.name(), "UnknownError");
    let e = c.to_error(None, &[("k", "v")]);
    assert_eq!(e.data, None);
    assert!(!ErrorCode::from_code(-32100).is_a2a());
    assert!(!ErrorCode::from_code(-32000).is_a2a());
    assert!(!ErrorCode::from_code(401).is_a2a());
    // An unknown code from a peer decodes and keeps its number.
    let r: JsonRpcResponse =
        decode(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32099,"message":"x"}}"#).unwrap();
    assert_eq!(
        r.payload.unwrap_err().error_code(),
        ErrorCode::Other(-32099)
    );
    // The message may be absent.
    let r: JsonRpcResponse =
        decode(br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001}}"#).unwrap();
    let e = r.payload.unwrap_err();
    assert_eq!(e.message, "");
    assert_eq!(e.error_code(), ErrorCode::TaskNotFound);
}

#[test]
fn error_info_round_trips() {
    let info = ErrorInfo {
        type_url: ERROR_INFO_TYPE.into(),
        reason: "TASK_NOT_FOUND".into(),
        domain: ERROR_DOMAIN.into(),
        metadata: [("taskId".to_string(), "t-1".to_string())].into(),
    };
    let v = serde_json::to_value(&info).unwrap();
    assert_eq!(v["@type"], ERROR_INFO_TYPE);
    assert_eq!(decode::<ErrorInfo>(v.to_string().as_bytes()).unwrap(), info);
}

// ---------------------------------------------------------------------------
// JSON-RPC ids and envelopes
// ---------------------------------------------------------------------------

/// Decoding then encoding `text` gives the same JSON text (ids echo exactly).
fn echo<T: serde::Serialize + serde::de::DeserializeOwned>(text: &str) -> T {
    let v: T = decode(text.as_bytes()).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(serde_json::to_string(&v).unwrap(), text);
    v
}

#[test]
fn response_ids_echo_exactly() {
    let r: JsonRpcResponse = echo(r#"{"jsonrpc":"2.0","id":"r-1","result":{}}"#);
    assert_eq!(r.id, Id::from("r-1"));
    let r: JsonRpcResponse = echo(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#);
    assert_eq!(r.id, Id::from(7));
    let r: JsonRpcResponse = echo(r#"{"jsonrpc":"2.0","id":1.5,"result":{}}"#);
    assert_eq!(r.id, Id::Number(serde_json::Number::from_f64(1.5).unwrap()));
    let r: JsonRpcResponse = echo(r#"{"jsonrpc":"2.0","id":-3,"result":{}}"#);
    assert_eq!(r.id, Id::from(-3));
    let r: JsonRpcResponse = echo(r#"{"jsonrpc":"2.0","id":18446744073709551615,"result":{}}"#);
    assert_eq!(r.id, Id::Number(u64::MAX.into()));
    let r: JsonRpcResponse = echo(r#"{"jsonrpc":"2.0","id":"","result":{}}"#);
    assert_eq!(r.id, Id::from(""));
    let r: JsonRpcResponse = echo(
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Invalid JSON payload"}}"#,
    );
    assert_eq!(r.id, Id::Null);
    assert_eq!(r.payload.unwrap_err().error_code(), ErrorCode::JsonParse);
    // An absent id reads as null.
    let r: JsonRpcResponse =
        decode(br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"x"}}"#).unwrap();
    assert_eq!(r.id, Id::Null);
    // Display of ids.
    assert_eq!(Id::from(7).to_string(), "7");
    assert_eq!(Id::from("r-1").to_string(), "\"r-1\"");
    assert_eq!(Id::Null.to_string(), "null");
    // Ids of other JSON types are rejected.
    assert!(decode::<Id>(b"true").is_err());
    assert!(decode::<Id>(b"[1]").is_err());
    assert!(decode::<Id>(br#"{"a":1}"#).is_err());
}

#[test]
fn typed_response_round_trips() {
    let task: Task =
        decode(br#"{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}"#)
            .unwrap();
    for id in [
        Id::from("r-1"),
        Id::from(7),
        Id::Number(serde_json::Number::from_f64(1.5).unwrap()),
        Id::Null,
    ] {
        let ok = JsonRpcResponse::success(id.clone(), task.clone());
        let text = serde_json::to_string(&ok).unwrap();
        assert!(text.starts_with(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":"#,
            serde_json::to_string(&id).unwrap()
        )));
        assert_eq!(
            decode::<JsonRpcResponse<Task>>(text.as_bytes()).unwrap(),
            ok
        );
        let err: JsonRpcResponse<Task> =
            JsonRpcResponse::error(id, ErrorCode::TaskNotFound.to_error(None, &[]));
        let text = serde_json::to_string(&err).unwrap();
        assert_eq!(
            decode::<JsonRpcResponse<Task>>(text.as_bytes()).unwrap(),
            err
        );
    }
}

#[test]
fn response_with_neither_result_nor_error_is_an_error() {
    let err = decode::<JsonRpcResponse>(br#"{"jsonrpc":"2.0","id":1}"#).unwrap_err();
    assert!(
        err.to_string().contains("neither result nor error"),
        "{err}"
    );
    let err = decode::<JsonRpcResponse<Task>>(br#"{"jsonrpc":"2.0","id":"r"}"#).unwrap_err();
    assert!(
        err.to_string().contains("neither result nor error"),
        "{err}"
    );
    let err = decode::<JsonRpcResponse<StreamResponse>>(br#"{}"#).unwrap_err();
    assert!(
        err.to_string().contains("neither result nor error"),
        "{err}"
    );
}

#[test]
fn response_with_both_prefers_the_error() {
    let r: JsonRpcResponse<Task> = decode(
        br#"{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":-32001,"message":"Task not found"}}"#,
    )
    .unwrap();
    assert_eq!(r.payload.unwrap_err().error_code(), ErrorCode::TaskNotFound);
    let r: JsonRpcResponse<Value> =
        decode(br#"{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":-32603,"message":"boom"}}"#)
            .unwrap();
    assert_eq!(r.payload.unwrap_err().error_code(), ErrorCode::Internal);
}

/// `DeleteTaskPushNotificationConfig` answers `{}` (spec) or `null` (PY); both are results.
#[test]
fn null_result_is_a_result_where_representable() {
    let r: JsonRpcResponse = echo(r#"{"jsonrpc":"2.0","id":"r-5","result":null}"#);
    assert_eq!(r.payload, Ok(Value::Null));
    let r: JsonRpcResponse = echo(r#"{"jsonrpc":"2.0","id":"r-5","result":{}}"#);
    assert_eq!(r.payload, Ok(json!({})));
    let r: JsonRpcResponse<()> = decode(br#"{"jsonrpc":"2.0","id":"r-5","result":null}"#).unwrap();
    assert_eq!(r.payload, Ok(()));
    let r: JsonRpcResponse<Option<Task>> =
        decode(br#"{"jsonrpc":"2.0","id":"r-5","result":null}"#).unwrap();
    assert_eq!(r.payload, Ok(None));
    // A null where a Task is expected is an error, not a default Task.
    let err = decode::<JsonRpcResponse<Task>>(br#"{"jsonrpc":"2.0","id":"r-5","result":null}"#)
        .unwrap_err();
    assert!(err.to_string().contains("result is null"), "{err}");
    // Both forms pass the envelope check for Delete (result unchecked).
    for body in [json!({}), Value::Null] {
        let resp = json!({"jsonrpc": "2.0", "id": "r-5", "result": body});
        assert!(
            conformance_response(result_type("DeleteTaskPushNotificationConfig"), &resp).is_empty()
        );
    }
}

#[test]
fn request_ids_and_notifications() {
    let r: JsonRpcRequest =
        echo(r#"{"jsonrpc":"2.0","id":"r-1","method":"GetTask","params":{"id":"t-1"}}"#);
    assert_eq!(r.id, Some(Id::from("r-1")));
    let r: JsonRpcRequest =
        echo(r#"{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"t-1"}}"#);
    assert_eq!(r.id, Some(Id::from(7)));
    let r: JsonRpcRequest = echo(r#"{"jsonrpc":"2.0","id":1.5,"method":"GetTask"}"#);
    assert_eq!(
        r.id,
        Some(Id::Number(serde_json::Number::from_f64(1.5).unwrap()))
    );
    assert_eq!(r.params, None);
    // `"id": null` is a request with a null id, not a notification (JSON-RPC 2.0 §4).
    let r: JsonRpcRequest = echo(r#"{"jsonrpc":"2.0","id":null,"method":"GetTask"}"#);
    assert_eq!(r.id, Some(Id::Null));
    // No id at all: a notification.
    let r: JsonRpcRequest = echo(r#"{"jsonrpc":"2.0","method":"GetTask"}"#);
    assert_eq!(r.id, None);

    let typed = JsonRpcRequest::new(
        7,
        Method::GetTask.as_str(),
        GetTaskRequest {
            id: "t-1".into(),
            history_length: Some(2),
            ..Default::default()
        },
    );
    assert_eq!(typed.jsonrpc, JSONRPC_VERSION);
    let text = serde_json::to_string(&typed).unwrap();
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"t-1","historyLength":2}}"#
    );
    assert_eq!(
        decode::<JsonRpcRequest<GetTaskRequest>>(text.as_bytes()).unwrap(),
        typed
    );

    // Params may be omitted for GetExtendedAgentCard, and are then `None`.
    let r: JsonRpcRequest<GetExtendedAgentCardRequest> =
        decode(br#"{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}"#).unwrap();
    assert_eq!(r.params, None);

    // Params need not implement Default (e.g. raw pass-through).
    let r: JsonRpcRequest<Box<serde_json::value::RawValue>> =
        decode(br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{}}}"#)
            .unwrap();
    assert_eq!(r.params.unwrap().get(), r#"{"message":{}}"#);

    // `jsonrpc` and `method` are required.
    assert!(decode::<JsonRpcRequest>(br#"{"id":1,"method":"GetTask"}"#).is_err());
    let err = decode::<JsonRpcRequest>(br#"{"jsonrpc":"2.0","id":1}"#).unwrap_err();
    assert!(err.to_string().contains("method"), "{err}");
}

// ---------------------------------------------------------------------------
// Method names
// ---------------------------------------------------------------------------

#[test]
fn method_parse_every_name() {
    let names = [
        (Method::SendMessage, "SendMessage"),
        (Method::SendStreamingMessage, "SendStreamingMessage"),
        (Method::GetTask, "GetTask"),
        (Method::ListTasks, "ListTasks"),
        (Method::CancelTask, "CancelTask"),
        (Method::SubscribeToTask, "SubscribeToTask"),
        (
            Method::CreateTaskPushNotificationConfig,
            "CreateTaskPushNotificationConfig",
        ),
        (
            Method::GetTaskPushNotificationConfig,
            "GetTaskPushNotificationConfig",
        ),
        (
            Method::ListTaskPushNotificationConfigs,
            "ListTaskPushNotificationConfigs",
        ),
        (
            Method::DeleteTaskPushNotificationConfig,
            "DeleteTaskPushNotificationConfig",
        ),
        (Method::GetExtendedAgentCard, "GetExtendedAgentCard"),
    ];
    assert_eq!(names.len(), Method::ALL.len());
    for (m, name) in names {
        assert_eq!(m.as_str(), name);
        assert_eq!(m.to_string(), name);
        assert_eq!(Method::parse(name), Some(m));
        assert!(Method::ALL.contains(&m));
    }
    let streaming: Vec<_> = Method::ALL.iter().filter(|m| m.is_streaming()).collect();
    assert_eq!(
        streaming,
        [&Method::SendStreamingMessage, &Method::SubscribeToTask]
    );
    let push: Vec<_> = Method::ALL
        .iter()
        .filter(|m| m.is_push_config())
        .map(|m| m.as_str())
        .collect();
    assert_eq!(
        push,
        [
            "CreateTaskPushNotificationConfig",
            "GetTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigs",
            "DeleteTaskPushNotificationConfig",
        ]
    );
}

#[test]
fn method_parse_rejects_rc_and_03_names() {
    for name in [
        // 1.0 RC singular.
        "ListTaskPushNotificationConfig",
        // 0.3 names.
        "message/send",
        "message/stream",
        "tasks/get",
        "tasks/cancel",
        "tasks/resubscribe",
        "tasks/pushNotificationConfig/set",
        "tasks/pushNotificationConfig/get",
        "tasks/pushNotificationConfig/list",
        "tasks/pushNotificationConfig/delete",
        "agent/getAuthenticatedExtendedCard",
        // Case and whitespace matter.
        "sendMessage",
        "SENDMESSAGE",
        " SendMessage",
        "SendMessage ",
        "",
    ] {
        assert_eq!(Method::parse(name), None, "{name:?}");
    }
}
