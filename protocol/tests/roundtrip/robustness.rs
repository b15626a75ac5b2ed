//! Robustness: no input makes a decoder or the conformance check panic.

use super::*;

/// Leaves biased towards what the wire types look for.
fn fuzz_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => json_leaf(),
        1 => select(
            TaskState::ALL
                .iter()
                .map(|s| s.as_str())
                .chain(["completed", "input-required", "user", "ROLE_AGENT", "TASK_STATE_FOO"])
                .collect::<Vec<_>>()
        )
        .prop_map(Value::from),
        1 => select(vec![
            "2026-03-20T10:00:01.000Z",
            "2026-03-20T12:00:01+02:00",
            "yesterday",
            "iVBORw0KGgo=",
            "not base64!",
            "-_-_",
            "2.0",
            "3",
        ])
        .prop_map(Value::from),
        1 => prop_oneof![
            Just(json!(i64::MAX)),
            Just(json!(u64::MAX)),
            Just(json!(i64::MIN)),
            Just(json!(f64::MAX)),
            Just(json!(3_000_000_000u64)),
        ],
    ]
}

fn fuzz_key() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => "[a-zA-Z_]{1,6}",
        4 => select(vec![
            "id", "contextId", "context_id", "taskId", "messageId", "role", "parts", "text",
            "raw", "url", "data", "metadata", "filename", "mediaType", "status", "state",
            "message", "timestamp", "artifacts", "artifact", "artifactId", "history", "task",
            "statusUpdate", "artifactUpdate", "append", "lastChunk", "kind", "final", "index",
            "configuration", "historyLength", "pageSize", "tasks", "nextPageToken", "totalSize",
            "jsonrpc", "result", "error", "code", "params", "method", "name", "description",
            "supportedInterfaces", "skills", "capabilities", "securitySchemes", "flows",
            "httpAuthSecurityScheme", "oauth2SecurityScheme", "authorizationCode", "scopes",
            "schemes", "list", "authentication", "scheme",
        ])
        .prop_map(str::to_string),
    ]
}

/// Arbitrary JSON, with keys and leaves that reach deep into the decoders.
fn fuzz_value() -> impl Strategy<Value = Value> {
    fuzz_leaf().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(Value::Array),
            btree_map(fuzz_key(), inner, 0..6).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Replace the subtree reached by following `path` (each index picks a child) with `new`.
fn replace_at(v: &mut Value, path: &[Index], new: Value) {
    let (first, rest) = match path.split_first() {
        Some(x) => x,
        None => {
            *v = new;
            return;
        }
    };
    match v {
        Value::Object(m) if !m.is_empty() => {
            let i = first.index(m.len());
            let key = m.keys().nth(i).cloned().unwrap();
            replace_at(m.get_mut(&key).unwrap(), rest, new);
        }
        Value::Array(a) if !a.is_empty() => {
            let i = first.index(a.len());
            replace_at(&mut a[i], rest, new);
        }
        _ => *v = new,
    }
}

/// A valid payload of some type with one subtree replaced by arbitrary JSON.
fn mutated_payload() -> impl Strategy<Value = Value> {
    fn v<T: Serialize>(t: T) -> Value {
        serde_json::to_value(t).unwrap()
    }
    // Boxed arms keep the value trees off the (small, debug-mode) test thread stack.
    let base = prop_oneof![
        task().prop_map(v).boxed(),
        message().prop_map(v).boxed(),
        stream_response().prop_map(v).boxed(),
        send_message_request().prop_map(v).boxed(),
        agent_card().prop_map(v).boxed(),
        list_tasks_response().prop_map(v).boxed(),
        (id(), stream_response())
            .prop_map(|(id, r)| v(JsonRpcResponse::success(id, r)))
            .boxed(),
    ];
    (base, vec(any::<Index>(), 0..6), fuzz_value()).prop_map(|(mut base, path, new)| {
        replace_at(&mut base, &path, new);
        base
    })
}

/// Decode `v` as every wire type, from the value and from its text; only errors are allowed.
fn decode_as_everything(v: &Value) {
    let bytes = serde_json::to_vec(v).unwrap();
    macro_rules! try_all {
        ($($t:ty),+ $(,)?) => {$(
            let _ = decode_value::<$t>(v);
            let _ = decode::<$t>(&bytes);
        )+};
    }
    try_all!(
        Role,
        TaskState,
        Timestamp,
        Part,
        Message,
        TaskStatus,
        Task,
        Artifact,
        TaskStatusUpdateEvent,
        TaskArtifactUpdateEvent,
        SendMessageConfiguration,
        SendMessageRequest,
        SendMessageResponse,
        StreamResponse,
        GetTaskRequest,
        ListTasksRequest,
        ListTasksResponse,
        CancelTaskRequest,
        SubscribeToTaskRequest,
        AuthenticationInfo,
        TaskPushNotificationConfig,
        TaskPushNotificationConfigRef,
        ListTaskPushNotificationConfigsRequest,
        ListTaskPushNotificationConfigsResponse,
        GetExtendedAgentCardRequest,
        AgentCard,
        AgentInterface,
        AgentProvider,
        AgentCapabilities,
        AgentExtension,
        AgentSkill,
        AgentCardSignature,
        SecurityRequirement,
        StringList,
        SecurityScheme,
        OAuthFlows,
        Id,
        JsonRpcError,
        JsonRpcRequest,
        JsonRpcRequest<SendMessageRequest>,
        JsonRpcResponse,
        JsonRpcResponse<StreamResponse>,
        JsonRpcResponse<SendMessageResponse>,
        JsonRpcResponse<Task>,
        JsonRpcResponse<AgentCard>,
        JsonRpcResponse<()>,
        ErrorInfo,
    );
}

/// Run every conformance entry point on `v`, also wrapped as a response result.
fn check_everything(v: &Value) {
    for t in ObjectType::ALL {
        let found = conformance(*t, v);
        assert!(found.len() <= conformance::MAX_DEVIATIONS);
        for d in &found {
            assert!(d.path.starts_with('$'), "{d}");
        }
    }
    let _ = conformance_response(None, v);
    let wrapped = json!({"jsonrpc": "2.0", "id": 1, "result": v});
    for m in Method::ALL {
        let _ = conformance_response(result_type(m.as_str()), v);
        let _ = conformance_response(result_type(m.as_str()), &wrapped);
    }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn arbitrary_json_never_panics(v in fuzz_value()) {
        decode_as_everything(&v);
        check_everything(&v);
    }

    #[test]
    fn mutated_payloads_never_panic(v in mutated_payload()) {
        decode_as_everything(&v);
        check_everything(&v);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in vec(any::<u8>(), 0..256)) {
        let _ = decode::<JsonRpcRequest>(&bytes);
        let _ = decode::<JsonRpcResponse<StreamResponse>>(&bytes);
        let _ = decode::<JsonRpcRequest<SendMessageRequest>>(&bytes);
    }

    #[test]
    fn corrupted_bytes_never_panic(
        (id, event) in (id(), stream_response()),
        cuts in vec((any::<Index>(), any::<u8>()), 0..4),
        truncate in of(any::<Index>()),
    ) {
        let mut bytes = serde_json::to_vec(&JsonRpcResponse::success(id, event)).unwrap();
        for (at, b) in cuts {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        if let Some(t) = truncate {
            bytes.truncate(t.index(bytes.len() + 1));
        }
        let _ = decode::<JsonRpcRequest>(&bytes);
        let _ = decode::<JsonRpcResponse<StreamResponse>>(&bytes);
        let _ = decode::<JsonRpcResponse>(&bytes);
    }
}

#[test]
fn deeply_nested_input_is_an_error_not_a_crash() {
    let depth = 10_000;
    let mut text = String::from(
        r#"{"jsonrpc":"2.0","id":1,"result":{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"data":"#,
    );
    text.push_str(&"[".repeat(depth));
    text.push_str(&"]".repeat(depth));
    text.push_str("}]}}}");
    assert!(decode::<JsonRpcResponse<StreamResponse>>(text.as_bytes()).is_err());
    assert!(decode::<JsonRpcResponse>(text.as_bytes()).is_err());
}
