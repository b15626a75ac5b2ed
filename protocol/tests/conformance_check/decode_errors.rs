//! `codec::decode` errors name the JSON path of the problem.

use super::*;

#[test]
fn decode_errors_name_the_json_path() {
    rejects_at::<Task>(r#"{"id":"t","status":{"state":"NOPE"}}"#, "$.status.state");
    rejects_at::<Task>(
        r#"{"id":"t","status":{"state":"TASK_STATE_WORKING"},"history":[{"messageId":"m","role":"x","parts":[]}]}"#,
        "$.history[0].role",
    );
    rejects_at::<Task>(
        r#"{"id":"t","status":{"state":"TASK_STATE_WORKING"},"artifacts":[{"artifactId":"a","parts":[{"text":"x"},{"raw":"%%"}]}]}"#,
        "$.artifacts[0].parts[1]",
    );
    rejects_at::<Message>(
        r#"{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"},{}]}"#,
        "$.parts[1]",
    );
    rejects_at::<Message>(
        r#"{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x","filename":7}]}"#,
        "$.parts[0].filename",
    );
    rejects_at::<JsonRpcResponse<StreamResponse>>(
        r#"{"jsonrpc":"2.0","id":"r","result":{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"done"}}}}"#,
        "$.result.statusUpdate.status.state",
    );
    rejects_at::<JsonRpcRequest<SendMessageRequest>>(
        r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"},{"url":5}]}}}"#,
        "$.params.message.parts[1].url",
    );
    rejects_at::<ListTasksRequest>(r#"{"pageSize":"big"}"#, "$.pageSize");
    rejects_at::<AgentCard>(
        r#"{"securitySchemes":{"b":{"httpAuthSecurityScheme":{"scheme":1}}}}"#,
        "$.securitySchemes.b.httpAuthSecurityScheme.scheme",
    );

    // Syntax errors have position, path `$`.
    let err = decode::<Task>(br#"{"id": "t","#).unwrap_err();
    assert!(matches!(err, DecodeError::Syntax { line: 1, .. }), "{err}");
    assert_eq!(err.path(), "$");
    let err = decode::<Task>(br#"{"id":"t","status":{}} trailing"#).unwrap_err();
    assert!(matches!(err, DecodeError::Syntax { .. }), "{err}");
}
