//! MultipleOneOf and EmptyOneOf.

use super::*;

#[test]
fn multiple_one_of_part_with_text_and_data() {
    let text = r#"{"messageId":"m-1","role":"ROLE_USER","parts":[{"text":"a","data":{"k":1}}]}"#;
    let msg: Value = serde_json::from_str(text).unwrap();
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[("$.parts[0]", "R06", MultipleOneOf)],
    );
    // The decoder keeps the first member in document order.
    let m: Message = decode(text.as_bytes()).unwrap();
    assert_eq!(m.parts[0].content, PartContent::Text("a".into()));

    let resp =
        json!({"jsonrpc": "2.0", "id": 1, "result": {"a": 1}, "error": {"code": 1, "message": ""}});
    let found = conformance_response(None, &resp);
    assert_eq!(
        triples(&found),
        [("$".to_string(), "R01".to_string(), MultipleOneOf)]
    );
    let stream =
        json!({"task": task_with_state(json!("TASK_STATE_WORKING")), "message": user_message()});
    assert_exactly(
        ObjectType::StreamResponse,
        &stream,
        &[("$", "R06", MultipleOneOf)],
    );
}

#[test]
fn empty_one_of() {
    let msg = json!({"messageId": "m-1", "role": "ROLE_USER",
        "parts": [{"text": "ok"}, {"mediaType": "text/plain"}]});
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[("$.parts[1]", "R06", EmptyOneOf)],
    );
    rejects_at::<Message>(&msg.to_string(), "$.parts[1]");

    // `null` members do not count; `data: null` does (google.protobuf.Value null).
    assert_exactly(
        ObjectType::Part,
        &json!({"text": null}),
        &[("$", "R06", EmptyOneOf)],
    );
    assert_exactly(ObjectType::Part, &json!({"data": null}), &[]);
    let p: Part = lenient(&json!({"data": null}));
    assert_eq!(p.content, PartContent::Data(Value::Null));

    assert_exactly(
        ObjectType::StreamResponse,
        &json!({}),
        &[("$", "R06", EmptyOneOf)],
    );
    rejects_at::<StreamResponse>("{}", "$");
    assert_exactly(
        ObjectType::SecurityScheme,
        &json!({"type": "http"}),
        &[("$", "R06", EmptyOneOf), ("$.type", "R06", LegacyField)],
    );
    rejects_at::<SecurityScheme>(r#"{"type":"http"}"#, "$");

    let found = conformance_response(None, &json!({"jsonrpc": "2.0", "id": 1}));
    assert_eq!(
        triples(&found),
        [("$".to_string(), "R01".to_string(), EmptyOneOf)]
    );
}
