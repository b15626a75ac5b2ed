//! The shared-bytes decode of stream events (`a2a_protocol::artifact_chunk`) against the typed
//! decode of `StreamResponse`: same acceptance, same values; text parts without escapes are
//! slices of the payload.

use a2a_protocol::artifact_chunk::{
    ChunkContent, SharedStreamResponse, decode_jsonrpc_stream_response, decode_stream_response,
};
use a2a_protocol::{JsonRpcResponse, StreamResponse};
use base64::Engine;
use bytes::Bytes;
use proptest::prelude::*;
use serde_json::{Value, json};

/// Both decodes of `payload`, as JSON-RPC response and as bare `StreamResponse`; they must agree.
fn check(payload: &str) {
    let bytes = Bytes::copy_from_slice(payload.as_bytes());
    let typed = serde_json::from_slice::<JsonRpcResponse<StreamResponse>>(&bytes);
    let shared = decode_jsonrpc_stream_response(&bytes);
    match (&typed, shared) {
        (Ok(t), Ok(s)) => {
            let s = JsonRpcResponse {
                id: s.id,
                payload: s.payload.map(SharedStreamResponse::into_stream_response),
            };
            assert_eq!(t, &s, "{payload}");
        }
        (Err(_), Err(_)) => {}
        (t, s) => panic!("decodes disagree on {payload}: typed {t:?}, shared {s:?}"),
    }
    let typed = serde_json::from_slice::<StreamResponse>(&bytes);
    let shared = decode_stream_response(&bytes);
    match (typed, shared) {
        (Ok(t), Ok(s)) => assert_eq!(t, s.into_stream_response(), "{payload}"),
        (Err(_), Err(_)) => {}
        (t, s) => panic!("bare decodes disagree on {payload}: typed {t:?}, shared {s:?}"),
    }
}

#[test]
fn examples_agree() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(3001).collect();
    let b64 = [
        base64::engine::general_purpose::STANDARD.encode(&bytes),
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes),
        base64::engine::general_purpose::URL_SAFE.encode(&bytes),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes),
    ];
    let art = |parts: Value| {
        json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "append": true,
            "lastChunk": false, "metadata": {"k": 1},
            "artifact": {"artifactId": "a", "name": "n", "description": "d",
                "metadata": {"m": [1]}, "extensions": ["urn:x"], "parts": parts}}})
    };
    let mut results = vec![
        art(json!([{"text": "plain"}, {"text": "esc \"q\" \\ \n \u{e9}"}])),
        art(
            json!([{"text": "x", "mediaType": "text/markdown", "filename": "f.md",
            "metadata": {"a": null}}]),
        ),
        art(json!([{"raw": ""}, {"url": "http://h/x"}, {"data": {"k": [1, 2.5]}}])),
        art(json!([{"data": null}])),
        art(json!([{"text": null, "raw": b64[0]}])),
        art(json!([{"text": "first", "raw": b64[1]}])),
        art(json!([{"raw": "not base64!"}])),
        art(json!([{"text": 5}])),
        art(json!([{"mediaType": "text/plain"}])),
        art(json!([{"media_type": "a/b", "text": "t", "unknown": {"deep": [1]}}])),
        art(json!(null)),
        json!({"artifact_update": {"task_id": "t", "context_id": "c", "last_chunk": true,
            "artifact": {"artifact_id": "a", "parts": [{"text": "s"}]}}}),
        json!({"artifactUpdate": {"taskId": null, "artifact": null, "append": null}}),
        json!({"artifactUpdate": {"taskId": 3}}),
        json!({"artifactUpdate": {}, "task": {"id": "t"}}),
        json!({"task": {"id": "t"}, "artifactUpdate": {"artifact": {"parts": [{"raw": "!"}]}}}),
        json!({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_WORKING"}}}),
        json!({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_PAUSED"}}}),
        json!({"task": {"id": "t", "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a", "parts": [{"raw": b64[3]}]}]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}}),
        json!({"nothing": {}}),
        json!([1, 2]),
        json!(null),
    ];
    for b in &b64 {
        results.push(art(json!([{"raw": b}])));
    }
    for r in &results {
        check(&r.to_string());
        for env in [
            json!({"jsonrpc": "2.0", "id": "r-1", "result": r}),
            json!({"jsonrpc": "2.0", "id": 7, "result": r, "error": {"code": -32001, "message": "x"}}),
            json!({"id": "r-1", "result": r}),
        ] {
            check(&env.to_string());
        }
    }
    for env in [
        r#"{"jsonrpc":"2.0","id":"r-1","result":null}"#,
        r#"{"jsonrpc":"2.0","id":"r-1"}"#,
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}"#,
        r#"{"jsonrpc":"2.0","id":"r","result":{"task":{"id":"t"}},"result":{"task":{"id":"u"}}}"#,
        r#"not json"#,
        r#"{"jsonrpc":"2.0","id":"r","result":{"artifactUpdate":{"artifact":{"parts":[{"text":"a"}]}}}"#,
    ] {
        check(env);
    }
}

#[test]
fn plain_text_is_a_slice_of_the_payload() {
    let text = "x".repeat(65536);
    let payload = Bytes::from(
        json!({"jsonrpc": "2.0", "id": "r-1", "result": {"artifactUpdate": {"taskId": "t",
            "artifact": {"artifactId": "a", "parts": [{"text": text}, {"text": "a\"b"}]}}}})
        .to_string(),
    );
    let r = decode_jsonrpc_stream_response(&payload).unwrap();
    let Ok(SharedStreamResponse::ArtifactChunk(c)) = r.payload else {
        panic!("not a chunk");
    };
    let ChunkContent::Text(plain) = &c.parts[0].content else {
        panic!("not text");
    };
    assert_eq!(plain.as_ref(), text.as_bytes());
    let range = payload.as_ptr_range();
    assert!(range.contains(&plain.as_ptr()), "copied, not shared");
    // An escaped string is unescaped into its own buffer.
    let ChunkContent::Text(escaped) = &c.parts[1].content else {
        panic!("not text");
    };
    assert_eq!(escaped.as_ref(), b"a\"b");
}

fn json_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,40}",
        "\\PC{0,20}",
        Just("quote \" back \\ nl \n tab \t".to_string()),
    ]
}

fn part() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            json_text().prop_map(|t| json!({"text": t})),
            prop::collection::vec(any::<u8>(), 0..64).prop_map(|b| json!({"raw":
                base64::engine::general_purpose::STANDARD.encode(b)})),
            prop::collection::vec(any::<u8>(), 0..64).prop_map(|b| json!({"raw":
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b)})),
            "[a-z!]{0,8}".prop_map(|t| json!({"raw": t})),
            json_text().prop_map(|u| json!({"url": u})),
            json_text().prop_map(|d| json!({"data": {"d": d}})),
            Just(json!({})),
        ],
        prop::option::of(json_text()),
        any::<bool>(),
    )
        .prop_map(|(mut p, media, second)| {
            if let (Some(m), Value::Object(o)) = (media, &mut p) {
                o.insert("mediaType".into(), Value::String(m));
            }
            if second && let Value::Object(o) = &mut p {
                o.insert("text".into(), json!("second"));
            }
            p
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_artifact_updates_agree(
        parts in prop::collection::vec(part(), 0..4),
        task in json_text(),
        id in json_text(),
        name in prop::option::of(json_text()),
        append in prop::option::of(any::<bool>()),
        last in prop::option::of(any::<bool>()),
        snake in any::<bool>(),
    ) {
        let mut artifact = json!({"artifactId": id, "parts": parts});
        if let Some(n) = name {
            artifact["name"] = json!(n);
        }
        let mut update = json!({"taskId": task, "contextId": "c", "artifact": artifact});
        if let Some(a) = append {
            update["append"] = json!(a);
        }
        if let Some(l) = last {
            update[if snake { "last_chunk" } else { "lastChunk" }] = json!(l);
        }
        let key = if snake { "artifact_update" } else { "artifactUpdate" };
        let r = json!({key: update});
        check(&r.to_string());
        check(&json!({"jsonrpc": "2.0", "id": "r-1", "result": r}).to_string());
    }
}
