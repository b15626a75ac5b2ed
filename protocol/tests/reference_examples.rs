//! The JSON examples of the A2A 1.0 reference (§1.3, §1.4, §3.2, §3.6, §3.7, §3.9-§3.12, §4): each
//! decodes, re-encodes to the same JSON and has no conformance deviations.

use a2a_protocol::codec::decode;
use a2a_protocol::conformance::{
    Deviation, ObjectType, conformance, conformance_response, params_type,
};
use a2a_protocol::jsonrpc::{Id, JsonRpcRequest, JsonRpcResponse, Method};
use a2a_protocol::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// Decode `text` as `T`, re-encode, and return (original, re-encoded).
fn reencode<T: Serialize + DeserializeOwned>(text: &str) -> (Value, Value) {
    let original: Value = serde_json::from_str(text).expect("example is JSON");
    let typed: T = decode(text.as_bytes()).unwrap_or_else(|e| panic!("{e}\n{text}"));
    (original, serde_json::to_value(&typed).unwrap())
}

/// Decode `text` as `T`; it re-encodes to exactly the same JSON.
fn assert_reencodes<T: Serialize + DeserializeOwned>(text: &str) -> Value {
    let (original, again) = reencode::<T>(text);
    assert_eq!(
        again, original,
        "re-encoding changed the example\n{text}\n{again:#}"
    );
    original
}

/// A request example: exact re-encoding as `JsonRpcRequest<P>`, params conform.
fn request_example<P: Serialize + DeserializeOwned>(text: &str) -> Vec<Deviation> {
    let v = assert_reencodes::<JsonRpcRequest<P>>(text);
    // Also exact as raw JSON-RPC.
    assert_reencodes::<JsonRpcRequest>(text);
    let method = v["method"].as_str().unwrap();
    assert!(Method::parse(method).is_some(), "{method}");
    let t = params_type(method).unwrap();
    conformance(t, &v["params"])
}

/// A response example: exact re-encoding as `JsonRpcResponse<R>`, envelope and result conform.
fn response_example<R: Serialize + DeserializeOwned>(
    text: &str,
    result: ObjectType,
) -> Vec<Deviation> {
    let v = assert_reencodes::<JsonRpcResponse<R>>(text);
    assert_reencodes::<JsonRpcResponse>(text);
    conformance_response(Some(result), &v)
}

#[track_caller]
fn assert_no_deviations(found: Vec<Deviation>) {
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn reference_1_3_envelopes() {
    assert_no_deviations(request_example::<GetTaskRequest>(
        r#"{"jsonrpc":"2.0","id":"r-1","method":"GetTask","params":{"id":"t-1","historyLength":2}}"#,
    ));
    assert_no_deviations(response_example::<Task>(
        r#"{"jsonrpc":"2.0","id":"r-1","result":{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING"}}}"#,
        ObjectType::Task,
    ));
    let error = r#"{"jsonrpc":"2.0","id":"r-1","error":{"code":-32001,"message":"Task not found",
 "data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND",
          "domain":"a2a-protocol.org","metadata":{"taskId":"t-1"}}]}}"#;
    assert_no_deviations(response_example::<Task>(error, ObjectType::Task));
    // The example is exactly what `ErrorCode::to_error` builds.
    let built: JsonRpcResponse<Task> = JsonRpcResponse::error(
        Id::from("r-1"),
        ErrorCode::TaskNotFound.to_error(None, &[("taskId", "t-1")]),
    );
    assert_eq!(
        serde_json::to_value(&built).unwrap(),
        serde_json::from_str::<Value>(error).unwrap()
    );
    let decoded: JsonRpcResponse<Task> = decode(error.as_bytes()).unwrap();
    let err = decoded.payload.unwrap_err();
    assert_eq!(err.error_code(), ErrorCode::TaskNotFound);
    assert_eq!(err.error_info().unwrap().metadata["taskId"], "t-1");
}

#[test]
fn reference_1_4_sse_payloads() {
    let payloads = [
        r#"{"jsonrpc":"2.0","id":"r-2","result":{"task":{"id":"t-2","contextId":"c-1","status":{"state":"TASK_STATE_SUBMITTED"}}}}"#,
        r#"{"jsonrpc":"2.0","id":"r-2","result":{"statusUpdate":{"taskId":"t-2","contextId":"c-1","status":{"state":"TASK_STATE_WORKING","timestamp":"2026-03-20T10:00:01.000Z"}}}}"#,
        r#"{"jsonrpc":"2.0","id":"r-2","result":{"artifactUpdate":{"taskId":"t-2","contextId":"c-1","artifact":{"artifactId":"a-1","name":"report","parts":[{"text":"Part one. "}]}}}}"#,
        r#"{"jsonrpc":"2.0","id":"r-2","result":{"artifactUpdate":{"taskId":"t-2","contextId":"c-1","artifact":{"artifactId":"a-1","parts":[{"text":"Part two."}]},"append":true,"lastChunk":true}}}"#,
        r#"{"jsonrpc":"2.0","id":"r-2","result":{"statusUpdate":{"taskId":"t-2","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-03-20T10:00:03.000Z"}}}}"#,
    ];
    let mut events = Vec::new();
    for p in payloads {
        assert_no_deviations(response_example::<StreamResponse>(
            p,
            ObjectType::StreamResponse,
        ));
        let r: JsonRpcResponse<StreamResponse> = decode(p.as_bytes()).unwrap();
        assert_eq!(r.id, Id::from("r-2"));
        events.push(r.payload.unwrap());
    }
    let keys: Vec<_> = events.iter().map(StreamResponse::key).collect();
    assert_eq!(
        keys,
        [
            "task",
            "statusUpdate",
            "artifactUpdate",
            "artifactUpdate",
            "statusUpdate"
        ]
    );
    let states: Vec<_> = events.iter().filter_map(StreamResponse::state).collect();
    assert_eq!(
        states,
        [
            TaskState::Submitted,
            TaskState::Working,
            TaskState::Completed
        ]
    );
    assert!(events.iter().all(|e| e.task_id() == Some("t-2")));
}

#[test]
fn reference_3_2_parts() {
    let text = r#"[{"text":"Summarize the attached file"},
 {"raw":"iVBORw0KGgo=","filename":"in.png","mediaType":"image/png"},
 {"url":"https://files.example/out.pdf","filename":"out.pdf","mediaType":"application/pdf"},
 {"data":{"budgetUsd":3.5,"items":[1,2]},"mediaType":"application/json"}]"#;
    let v = assert_reencodes::<Vec<Part>>(text);
    for (i, p) in v.as_array().unwrap().iter().enumerate() {
        let found = conformance(ObjectType::Part, p);
        assert!(found.is_empty(), "part {i}: {found:#?}");
    }
    let parts: Vec<Part> = decode(text.as_bytes()).unwrap();
    assert_eq!(
        parts[1].content,
        PartContent::Raw(b"\x89PNG\r\n\x1a\n".to_vec())
    );
    assert!(matches!(parts[3].content, PartContent::Data(_)));
}

/// §3.6 shows `"returnImmediately":false`, a proto3 default value; canonical ProtoJSON (and this
/// crate) omits it, so the re-encoding equals the example without that member.
#[test]
fn reference_3_6_send_message_request() {
    let text = r#"{"jsonrpc":"2.0","id":"r-10","method":"SendMessage","params":{
  "message":{"messageId":"m-1","role":"ROLE_USER","contextId":"c-1",
             "parts":[{"text":"Book a flight"}]},
  "configuration":{"acceptedOutputModes":["text/plain"],"historyLength":0,
                   "returnImmediately":false},
  "metadata":{"x-deleg":{"deadline":"2026-03-20T10:07:00Z","budget_usd":2.0,
                         "depth":1,"chain":["http://127.0.0.1:4100/"]}}}}"#;
    let (mut original, again) = reencode::<JsonRpcRequest<SendMessageRequest>>(text);
    let removed = original["params"]["configuration"]
        .as_object_mut()
        .unwrap()
        .remove("returnImmediately");
    assert_eq!(removed, Some(json!(false)));
    assert_eq!(again, original);
    // `historyLength: 0` has presence (optional int32) and is kept.
    assert_eq!(again["params"]["configuration"]["historyLength"], json!(0));
    // The example itself is conformant (an explicit default is allowed on input).
    let v: Value = serde_json::from_str(text).unwrap();
    assert_no_deviations(conformance(ObjectType::SendMessageRequest, &v["params"]));
}

#[test]
fn reference_3_7_send_message_responses() {
    assert_no_deviations(response_example::<SendMessageResponse>(
        r#"{"jsonrpc":"2.0","id":"r-10","result":{"task":{"id":"t-9","contextId":"c-1",
  "status":{"state":"TASK_STATE_INPUT_REQUIRED","timestamp":"2026-03-20T10:00:00.000Z",
    "message":{"messageId":"m-a1","role":"ROLE_AGENT","contextId":"c-1","taskId":"t-9",
               "parts":[{"text":"From which airport?"}]}}}}}"#,
        ObjectType::SendMessageResponse,
    ));
    assert_no_deviations(response_example::<SendMessageResponse>(
        r#"{"jsonrpc":"2.0","id":"r-11","result":{"message":{"messageId":"m-a2","role":"ROLE_AGENT",
  "contextId":"c-1","parts":[{"text":"Hello!"}]}}}"#,
        ObjectType::SendMessageResponse,
    ));
    assert_no_deviations(request_example::<SendMessageRequest>(
        r#"{"jsonrpc":"2.0","id":"r-12","method":"SendMessage","params":{"message":{
  "messageId":"m-2","role":"ROLE_USER","taskId":"t-9","contextId":"c-1",
  "parts":[{"text":"From SFO"}]}}}"#,
    ));
}

#[test]
fn reference_3_9_list_tasks() {
    assert_no_deviations(request_example::<ListTasksRequest>(
        r#"{"jsonrpc":"2.0","id":"r-20","method":"ListTasks","params":{"contextId":"c-1",
  "status":"TASK_STATE_WORKING","pageSize":10}}"#,
    ));
    assert_no_deviations(response_example::<ListTasksResponse>(
        r#"{"jsonrpc":"2.0","id":"r-20","result":{"tasks":[{"id":"t-2","contextId":"c-1",
  "status":{"state":"TASK_STATE_WORKING","timestamp":"2026-03-20T10:00:01.000Z"}}],
  "nextPageToken":"","pageSize":10,"totalSize":1}}"#,
        ObjectType::ListTasksResponse,
    ));
}

#[test]
fn reference_3_10_cancel_and_subscribe() {
    assert_no_deviations(request_example::<CancelTaskRequest>(
        r#"{"jsonrpc":"2.0","id":"r-30","method":"CancelTask","params":{"id":"t-2"}}"#,
    ));
    assert_no_deviations(request_example::<SubscribeToTaskRequest>(
        r#"{"jsonrpc":"2.0","id":"r-31","method":"SubscribeToTask","params":{"id":"t-2"}}"#,
    ));
}

#[test]
fn reference_3_11_create_push_config() {
    assert_no_deviations(request_example::<TaskPushNotificationConfig>(
        r#"{"jsonrpc":"2.0","id":"r-40","method":"CreateTaskPushNotificationConfig","params":{
  "taskId":"t-2","id":"cfg-1","url":"http://127.0.0.1:7000/hook","token":"tok-t2",
  "authentication":{"scheme":"Bearer","credentials":"hook-secret"}}}"#,
    ));
}

#[test]
fn reference_3_12_webhook_body() {
    let text = r#"{"statusUpdate":{"taskId":"t-2","contextId":"c-1",
  "status":{"state":"TASK_STATE_COMPLETED","timestamp":"2026-03-20T10:05:00.000Z"}}}"#;
    let v = assert_reencodes::<StreamResponse>(text);
    assert_no_deviations(conformance(ObjectType::StreamResponse, &v));
    let event: StreamResponse = decode(text.as_bytes()).unwrap();
    assert_eq!(event.state(), Some(TaskState::Completed));
}

/// §4's card writes `{"list": []}` for a scheme without scopes; an empty repeated field is a
/// proto3 default, omitted by canonical ProtoJSON (and this crate), so it re-encodes as `{}`.
#[test]
fn reference_4_minimal_card() {
    let text = r#"{
  "name": "mock-flight-agent",
  "description": "Deterministic mock A2A agent for conformance tests",
  "version": "0.1.0",
  "supportedInterfaces": [
    {"url": "http://127.0.0.1:9101/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
  ],
  "provider": {"organization": "conformance-harness", "url": "https://example.invalid"},
  "capabilities": {"streaming": true, "pushNotifications": true, "extendedAgentCard": false},
  "defaultInputModes": ["text/plain", "application/json"],
  "defaultOutputModes": ["text/plain", "application/json"],
  "skills": [{"id": "book-flight", "name": "Book flight", "description": "Books a flight; may ask for input",
              "tags": ["travel"], "examples": ["Book SFO to JFK on Friday"]}],
  "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
  "securityRequirements": [{"schemes": {"bearer": {"list": []}}}]
}"#;
    let (mut original, again) = reencode::<AgentCard>(text);
    assert_no_deviations(conformance(ObjectType::AgentCard, &original));
    let bearer = &mut original["securityRequirements"][0]["schemes"]["bearer"];
    assert_eq!(bearer, &json!({"list": []}));
    *bearer = json!({});
    assert_eq!(again, original);

    let card: AgentCard = decode(text.as_bytes()).unwrap();
    assert_eq!(
        card.jsonrpc_interface().unwrap().url,
        "http://127.0.0.1:9101/a2a"
    );
    assert!(card.skill("book-flight").is_some());
    assert_eq!(
        card.output_modes(&card.skills[0]),
        ["text/plain", "application/json"]
    );
    // Without the scopeless requirement the card re-encodes exactly.
    let mut unauthenticated: Value = serde_json::from_str(text).unwrap();
    let obj = unauthenticated.as_object_mut().unwrap();
    obj.remove("securitySchemes");
    obj.remove("securityRequirements");
    assert_reencodes::<AgentCard>(&unauthenticated.to_string());
}
