//! Tests of the client: endpoints and fallback, error classification, `Retry-After`, state
//! sanitising, streams over every framing.

use super::*;
use a2a_protocol::sse::SseEvent;
use serde_json::json;

/// The event of `data` as the SSE decoder's shared-bytes path gives it.
pub(super) fn shared(ev: &SseEvent) -> SseEventBytes {
    SseEventBytes {
        event: ev.event.clone(),
        data: bytes::Bytes::from(ev.data.clone()),
        id: ev.id.clone(),
        retry: ev.retry,
    }
}

#[test]
fn unknown_states_become_unspecified() {
    let mut v = json!({"task": {"id": "t", "status": {"state": "TASK_STATE_PAUSED"},
        "metadata": {"status": {"state": "keep-me"}}}});
    let r = sanitize_states(&mut v);
    assert_eq!(r, vec!["\"TASK_STATE_PAUSED\"".to_string()]);
    assert_eq!(v["task"]["status"]["state"], "TASK_STATE_UNSPECIFIED");
    assert_eq!(v["task"]["metadata"]["status"]["state"], "keep-me");
    let mut ok = json!({"statusUpdate": {"status": {"state": "working"}}});
    assert!(sanitize_states(&mut ok).is_empty());
    let mut num = json!({"id": "t", "status": {"state": 42}});
    assert_eq!(sanitize_states(&mut num).len(), 1);
}

/// The `Value` path (the fallback, and the only path before the typed one existed).
fn value_path(ev: SseEvent, rest_framing: bool, id: &Id) -> Result<StreamItem, String> {
    let v = if rest_framing {
        rest::event_value(ev)
    } else {
        jsonrpc::event_value(Method::SendStreamingMessage, ProtocolVersion::V1_0, id, ev)
    };
    let mut v = v.map_err(|e| e.to_string())?;
    let unknown_states = sanitize_states(&mut v);
    let event =
        a2a_protocol::codec::decode_value::<StreamResponse>(&v).map_err(|e| e.to_string())?;
    Ok(StreamItem {
        event: event.into(),
        unknown_states,
        lacks: Vec::new(),
    })
}

/// What [`EventStream::next`] yields for one SSE payload: the typed path when it decodes,
/// else the `Value` path.
fn both_paths(
    result: Value,
) -> (
    Option<Result<StreamItem, String>>,
    Result<StreamItem, String>,
) {
    let id = Id::from("r-1");
    let env = json!({"jsonrpc": "2.0", "id": "r-1", "result": result.clone()});
    let ev = |data: String| SseEvent {
        event: None,
        data,
        id: None,
        retry: None,
    };
    // JSON-RPC framing.
    let typed = jsonrpc::event_typed(
        Method::SendStreamingMessage,
        ProtocolVersion::V1_0,
        &id,
        &shared(&ev(env.to_string())),
    )
    .map(|r| {
        r.map(|event| StreamItem {
            event,
            unknown_states: Vec::new(),
            lacks: Vec::new(),
        })
        .map_err(|e| e.to_string())
    });
    let old = value_path(ev(env.to_string()), false, &id);
    // REST framing agrees with JSON-RPC framing.
    let typed_rest = rest::event_typed(&shared(&ev(result.to_string()))).map(|r| {
        r.map(|event| StreamItem {
            event,
            unknown_states: Vec::new(),
            lacks: Vec::new(),
        })
        .map_err(|e| e.to_string())
    });
    let old_rest = value_path(ev(result.to_string()), true, &id);
    assert_eq!(typed, typed_rest);
    // Error messages differ between framings; outcomes do not.
    assert_eq!(old.as_ref().ok(), old_rest.as_ref().ok());
    assert_eq!(old.is_ok(), old_rest.is_ok());
    (typed, old)
}

#[test]
fn typed_fast_path_matches_the_value_path() {
    use base64::Engine;
    let bytes: Vec<u8> = (0..=255u8).cycle().take(3001).collect();
    let std_pad = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let std_nopad = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes);
    let url_pad = base64::engine::general_purpose::URL_SAFE.encode(&bytes);
    let url_nopad = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&bytes);
    assert!(url_nopad.contains(['-', '_']));
    let text = "plain \"quoted\" \\ back\nslash, unicode \u{e9}\u{1F600}, ".repeat(500);
    let art = |parts: Value, append: bool, last: bool, id: &str| {
        json!({"artifactUpdate": {"taskId": "t-1", "contextId": "c-1", "append": append,
            "lastChunk": last, "artifact": {"artifactId": id, "name": "out", "parts": parts}}})
    };
    let good = vec![
        art(json!([{"text": text}]), false, false, "a1"),
        art(
            json!([{"text": "x", "mediaType": "text/markdown"}]),
            true,
            true,
            "a1",
        ),
        art(json!([{"raw": std_pad}]), true, false, "a2"),
        art(json!([{"raw": std_nopad}]), true, false, "a2"),
        art(json!([{"raw": url_pad}]), true, false, "a3"),
        art(json!([{"raw": url_nopad}, {"raw": ""}]), true, true, "a3"),
        art(
            json!([{"data": {"k": [1, 2.5, "s", null, {"n": true}]}}]),
            false,
            true,
            "a4",
        ),
        art(
            json!([{"url": "http://example.invalid/x"}]),
            false,
            true,
            "a5",
        ),
        json!({"statusUpdate": {"taskId": "t-1", "contextId": "c-1",
            "status": {"state": "TASK_STATE_WORKING"}}}),
        json!({"task": {"id": "t-1", "contextId": "c-1",
            "status": {"state": "TASK_STATE_COMPLETED"},
            "artifacts": [{"artifactId": "a1", "parts": [{"raw": url_nopad}]}]}}),
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT",
            "parts": [{"text": "hi"}]}}),
    ];
    for r in good {
        let (typed, old) = both_paths(r.clone());
        let typed = typed.unwrap_or_else(|| panic!("no fast path for {r}"));
        assert_eq!(typed, old, "{r}");
        assert!(old.is_ok(), "{r}: {old:?}");
    }
    // Raw parts decode to the same bytes whatever the alphabet and padding.
    for b64 in [&std_pad, &std_nopad, &url_pad, &url_nopad] {
        let (typed, _) = both_paths(art(json!([{"raw": b64}]), false, true, "a"));
        let Some(Ok(StreamItem {
            event: SharedStreamResponse::ArtifactChunk(u),
            ..
        })) = typed
        else {
            panic!("not decoded: {b64}");
        };
        assert_eq!(u.parts[0].content.inline_bytes().unwrap().as_ref(), bytes);
    }
    // Unknown states and bad shapes leave the fast path; the Value path records the states
    // and reports the errors, as before.
    let fallback = vec![
        json!({"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_PAUSED"}}}),
        json!({"task": {"id": "t-1", "status": {"state": 42}}}),
        art(json!([{"raw": "not base64!"}]), false, true, "a"),
        json!({"nothing": {}}),
        json!([1, 2]),
    ];
    for r in fallback {
        let (typed, old) = both_paths(r.clone());
        assert!(typed.is_none(), "{r}: {typed:?}");
        if r.pointer("/statusUpdate/status/state").is_some()
            || r.pointer("/task/status/state").is_some()
        {
            let item = old.unwrap_or_else(|e| panic!("{r}: {e}"));
            assert_eq!(item.unknown_states.len(), 1, "{r}");
        } else {
            assert!(old.is_err(), "{r}");
        }
    }
}

#[test]
fn grpc_fast_path_matches_the_protojson_path() {
    use a2a_protocol::grpc::pb;
    let part = |c: pb::part::Content, media: &str, file: &str| pb::Part {
        metadata: None,
        filename: file.into(),
        media_type: media.into(),
        content: Some(c),
    };
    let frame = |name: &str, parts: Vec<pb::Part>, append: bool, last: bool| pb::StreamResponse {
        payload: Some(pb::stream_response::Payload::ArtifactUpdate(
            pb::TaskArtifactUpdateEvent {
                task_id: "t-1".into(),
                context_id: "".into(),
                artifact: Some(pb::Artifact {
                    artifact_id: "a1".into(),
                    name: name.into(),
                    description: "".into(),
                    parts,
                    metadata: None,
                    extensions: vec!["urn:x".into()],
                }),
                append,
                last_chunk: last,
                metadata: None,
            },
        )),
    };
    let bytes: Vec<u8> = (0..=255u8).cycle().take(70_001).collect();
    let frames = [
        frame(
            "out",
            vec![
                part(pb::part::Content::Text("héllo \"x\"\n".repeat(999)), "", ""),
                part(
                    pb::part::Content::Raw(bytes.clone()),
                    "application/x",
                    "f.bin",
                ),
                part(pb::part::Content::Raw(Vec::new()), "", ""),
                part(pb::part::Content::Url("http://h/x".into()), "", ""),
            ],
            true,
            false,
        ),
        frame("", vec![], false, true),
    ];
    for m in frames {
        let mut v = grpc::stream_value(&m).unwrap();
        assert!(sanitize_states(&mut v).is_empty());
        let old = a2a_protocol::codec::decode_value::<StreamResponse>(&v).unwrap();
        let typed = grpc::stream_typed(m).unwrap_or_else(|_| panic!("no fast path"));
        assert_eq!(typed, old);
    }
    // Data parts, metadata and other events take the ProtoJSON path.
    let status = pb::StreamResponse {
        payload: Some(pb::stream_response::Payload::StatusUpdate(
            pb::TaskStatusUpdateEvent::default(),
        )),
    };
    assert!(grpc::stream_typed(status).is_err());
    let mut meta = frame("x", vec![], false, false);
    if let Some(pb::stream_response::Payload::ArtifactUpdate(u)) = &mut meta.payload {
        u.metadata = Some(Default::default());
    }
    assert!(grpc::stream_typed(meta).is_err());
}

#[test]
fn typed_fast_path_keeps_the_id_and_error_checks() {
    let id = Id::from("r-1");
    let ev = |v: Value| SseEventBytes {
        event: None,
        data: v.to_string().into(),
        id: None,
        retry: None,
    };
    let ok = json!({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_WORKING"}}});
    let wrong = ev(json!({"jsonrpc": "2.0", "id": "other", "result": ok}));
    let r = jsonrpc::event_typed(
        Method::SendStreamingMessage,
        ProtocolVersion::V1_0,
        &id,
        &wrong,
    )
    .unwrap_or_else(|| panic!("fast path"));
    assert!(r.unwrap_err().is_agent_protocol());
    let err = ev(json!({"jsonrpc": "2.0", "id": "r-1",
        "error": {"code": -32001, "message": "Task not found"}}));
    let r = jsonrpc::event_typed(
        Method::SendStreamingMessage,
        ProtocolVersion::V1_0,
        &id,
        &err,
    )
    .unwrap_or_else(|| panic!("fast path"));
    assert_eq!(r.unwrap_err().code(), Some(-32001));
    // 0.3 agents always take the Value path (the compat adapter).
    let v03 = ev(json!({"jsonrpc": "2.0", "id": "r-1", "result": ok}));
    assert!(
        jsonrpc::event_typed(
            Method::SendStreamingMessage,
            ProtocolVersion::V0_3,
            &id,
            &v03
        )
        .is_none()
    );
}

#[test]
fn transient_classification() {
    let h = |s| ClientError::Http {
        status: s,
        retry_after: None,
    };
    assert!(h(503).is_transient());
    assert!(h(429).is_transient());
    assert!(!h(401).is_transient());
    assert!(!h(404).is_transient());
    assert!(ClientError::Transport("x".into()).is_transient());
    assert!(
        ClientError::Connect {
            url: "u".into(),
            message: "m".into()
        }
        .is_transient()
    );
    let rpc = ClientError::Rpc(a2a_protocol::ErrorCode::Internal.to_error(None, &[]));
    assert!(!rpc.is_transient());
    assert_eq!(rpc.code(), Some(-32603));
}

#[test]
fn retry_after_forms() {
    assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
    assert_eq!(
        parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT"),
        Some(Duration::ZERO)
    );
    assert_eq!(parse_retry_after("soon"), None);
}
