//! NonUtcTimestamp, WrongType and InvalidBase64.

use super::*;

#[test]
fn non_utc_timestamp() {
    let mut task = task_with_state(json!("TASK_STATE_WORKING"));
    task["status"]["timestamp"] = json!("2026-03-20T12:00:01.000+02:00");
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status.timestamp", "R05", NonUtcTimestamp)],
    );
    // The decoder converts to UTC.
    let t: Task = lenient(&task);
    assert_eq!(
        t.status.timestamp.unwrap().to_rfc3339(),
        "2026-03-20T10:00:01.000Z"
    );

    // `+00:00` is UTC but not `Z`; seconds-only `Z` is fine (ms precision is a SHOULD).
    task["status"]["timestamp"] = json!("2026-03-20T10:00:01+00:00");
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status.timestamp", "R05", NonUtcTimestamp)],
    );
    task["status"]["timestamp"] = json!("2026-03-20T10:00:01Z");
    assert_exactly(ObjectType::Task, &task, &[]);

    // Not RFC 3339 at all: a deviation, and the decoder rejects it naming the path.
    task["status"]["timestamp"] = json!("yesterday");
    assert_exactly(
        ObjectType::Task,
        &task,
        &[("$.status.timestamp", "R05", NonUtcTimestamp)],
    );
    rejects_at::<Task>(&task.to_string(), "$.status.timestamp");

    let list = json!({"statusTimestampAfter": "2026-03-20T10:00:00-05:00"});
    assert_exactly(
        ObjectType::ListTasksRequest,
        &list,
        &[("$.statusTimestampAfter", "R05", NonUtcTimestamp)],
    );
}

#[test]
fn wrong_type() {
    let task = json!({"id": 5, "status": {"state": "TASK_STATE_WORKING"}});
    assert_exactly(ObjectType::Task, &task, &[("$.id", "R05", WrongType)]);
    rejects_at::<Task>(&task.to_string(), "$.id");

    let req = json!({"id": "t-1", "historyLength": "ten"});
    assert_exactly(
        ObjectType::GetTaskRequest,
        &req,
        &[("$.historyLength", "R05", WrongType)],
    );
    rejects_at::<GetTaskRequest>(&req.to_string(), "$.historyLength");

    // int32 range.
    let req = json!({"id": "t-1", "historyLength": 3_000_000_000u64});
    assert_exactly(
        ObjectType::GetTaskRequest,
        &req,
        &[("$.historyLength", "R05", WrongType)],
    );
    rejects_at::<GetTaskRequest>(&req.to_string(), "$.historyLength");

    let msg = json!({"messageId": "m-1", "role": true, "parts": {"text": "x"},
        "metadata": [], "extensions": ["ok", 1]});
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[
            ("$.extensions[1]", "R05", WrongType),
            ("$.metadata", "R05", WrongType),
            ("$.parts", "R05", WrongType),
            ("$.role", "R05", WrongType),
        ],
    );
    assert_exactly(ObjectType::Task, &json!([]), &[("$", "R05", WrongType)]);
    rejects_at::<Task>("5", "$");
    // Known leniency: serde-derived structs also accept a JSON array (positional fields), so the
    // decoder does not reject `[]`; the conformance check does (above).
    assert_eq!(decode::<Task>(b"[]").unwrap(), Task::default());

    let event = json!({"taskId": "t", "contextId": "c", "append": "yes",
        "artifact": {"artifactId": "a", "parts": [{"text": 1}]}});
    assert_exactly(
        ObjectType::TaskArtifactUpdateEvent,
        &event,
        &[
            ("$.append", "R05", WrongType),
            ("$.artifact.parts[0].text", "R05", WrongType),
        ],
    );
    rejects_at::<TaskArtifactUpdateEvent>(&event.to_string(), "$.append");

    let found = conformance_response(None, &json!("not an object"));
    assert_eq!(
        triples(&found),
        [("$".to_string(), "R01".to_string(), WrongType)]
    );
}

#[test]
fn invalid_base64() {
    let msg = json!({"messageId": "m-1", "role": "ROLE_USER",
        "parts": [{"text": "see file"}, {"raw": "not base64!", "mediaType": "image/png"}]});
    assert_exactly(
        ObjectType::Message,
        &msg,
        &[("$.parts[1].raw", "R05", InvalidBase64)],
    );
    let err = rejects_at::<Message>(&msg.to_string(), "$.parts[1]");
    assert!(err.to_string().contains("base64"), "{err}");

    // URL-safe and unpadded base64 are accepted (ProtoJSON bytes).
    for raw in ["-_8", "iVBORw0KGgo", "iVBORw0KGgo="] {
        let part = json!({"raw": raw});
        assert_exactly(ObjectType::Part, &part, &[]);
        lenient::<Part>(&part);
    }
    let p: Part = lenient(&json!({"raw": "-_8"}));
    assert_eq!(p.content, PartContent::Raw(vec![0xfb, 0xff]));
}
