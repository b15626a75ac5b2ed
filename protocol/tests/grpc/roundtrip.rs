//! Every wire type -> prost -> bytes -> prost -> wire type, for the fully populated values of
//! every object type and one-of member (the fixtures the SDK interop tests use).

use super::*;
use a2a_protocol::grpc::{PbWire, convert, decode_to_json, encode_from_json, pb};
use prost::Message as _;

fn typed<W>(label: &str, json: &Value)
where
    W: PbWire + PartialEq + std::fmt::Debug + Serialize,
    W::Pb: PartialEq,
{
    let w: W = decode_value(json).unwrap_or_else(|e| panic!("{label}: decode wire: {e}"));
    let p = w
        .to_pb()
        .unwrap_or_else(|e| panic!("{label}: to prost: {e}"));
    let bytes = p.encode_to_vec();
    let p2 = W::Pb::decode(bytes.as_slice()).unwrap_or_else(|e| panic!("{label}: decode: {e}"));
    assert!(p2 == p, "{label}: prost value changed through bytes");
    let back = W::from_pb(&p2).unwrap_or_else(|e| panic!("{label}: from prost: {e}"));
    if back != w {
        // Struct/Value numbers are doubles in protobuf: a metadata `2.0` comes back as `2`.
        let as_json = |x: &W| normalise(&serde_json::to_value(x).expect("serialise"));
        assert_eq!(
            as_json(&back),
            as_json(&w),
            "{label}: wire value changed through protobuf"
        );
    }
}

#[test]
fn every_wire_type_round_trips_through_protobuf_bytes() {
    let items = rust_items();
    assert!(items.len() > 40);
    let mut typed_count = 0;
    for (label, t, json) in &items {
        // Generic ProtoJSON path, for every object type.
        let bytes = encode_from_json(*t, json).unwrap_or_else(|e| panic!("{label}: encode: {e}"));
        let back = decode_to_json(*t, &bytes).unwrap_or_else(|e| panic!("{label}: decode: {e}"));
        assert_eq!(
            reencode(*t, &back).map(|v| normalise(&v)),
            reencode(*t, json).map(|v| normalise(&v)),
            "{label}: ProtoJSON changed through protobuf"
        );
        // Typed path, for the types with a PbWire impl.
        typed_count += 1;
        match t {
            O::Message => typed::<Message>(label, json),
            O::Part => typed::<Part>(label, json),
            O::Task => typed::<Task>(label, json),
            O::TaskStatus => typed::<TaskStatus>(label, json),
            O::Artifact => typed::<Artifact>(label, json),
            O::TaskStatusUpdateEvent => typed::<TaskStatusUpdateEvent>(label, json),
            O::TaskArtifactUpdateEvent => typed::<TaskArtifactUpdateEvent>(label, json),
            O::StreamResponse => typed::<StreamResponse>(label, json),
            O::SendMessageResponse => typed::<SendMessageResponse>(label, json),
            O::SendMessageRequest => typed::<SendMessageRequest>(label, json),
            O::SendMessageConfiguration => typed::<SendMessageConfiguration>(label, json),
            O::AgentCard => typed::<AgentCard>(label, json),
            O::GetTaskRequest => typed::<GetTaskRequest>(label, json),
            O::ListTasksRequest => typed::<ListTasksRequest>(label, json),
            O::ListTasksResponse => typed::<ListTasksResponse>(label, json),
            O::CancelTaskRequest => typed::<CancelTaskRequest>(label, json),
            O::SubscribeToTaskRequest => typed::<SubscribeToTaskRequest>(label, json),
            O::TaskPushNotificationConfig => typed::<TaskPushNotificationConfig>(label, json),
            O::AuthenticationInfo => typed::<AuthenticationInfo>(label, json),
            O::GetTaskPushNotificationConfigRequest => {
                typed::<TaskPushNotificationConfigRef>(label, json)
            }
            O::DeleteTaskPushNotificationConfigRequest => {
                let w: TaskPushNotificationConfigRef = decode_value(json).expect("decode");
                let p = convert::delete_push_config_to_pb(&w).expect("to prost");
                let p2 = pb::DeleteTaskPushNotificationConfigRequest::decode(
                    p.encode_to_vec().as_slice(),
                )
                .expect("decode");
                assert_eq!(convert::delete_push_config_from_pb(&p2).expect("back"), w);
            }
            O::ListTaskPushNotificationConfigsRequest => {
                typed::<ListTaskPushNotificationConfigsRequest>(label, json)
            }
            O::ListTaskPushNotificationConfigsResponse => {
                typed::<ListTaskPushNotificationConfigsResponse>(label, json)
            }
            O::GetExtendedAgentCardRequest => typed::<GetExtendedAgentCardRequest>(label, json),
            _ => typed_count -= 1,
        }
    }
    assert!(
        typed_count >= 23,
        "only {typed_count} typed round trips ran"
    );
}

#[test]
fn unknown_task_state_decodes_and_becomes_unspecified() {
    // TaskStatus { state: 9 } — a number TaskState does not name (proto3 enums are open).
    let p = pb::TaskStatus::decode(&[0x08, 0x09][..]).expect("decodes");
    assert_eq!(p.state, 9);
    assert_eq!(
        decode_to_json(O::TaskStatus, &[0x08, 0x09]).unwrap(),
        json!({"state": 9})
    );
    let w = TaskStatus::from_pb(&p).expect("converts");
    assert_eq!(w.state, TaskState::Unspecified);
    // Nested in a stream event and a task's history role, too.
    let ev = pb::StreamResponse {
        payload: Some(pb::stream_response::Payload::Task(pb::Task {
            id: "t-1".into(),
            status: Some(p.clone()),
            history: vec![pb::Message {
                message_id: "m".into(),
                role: 7,
                ..Default::default()
            }],
            ..Default::default()
        })),
    };
    match StreamResponse::from_pb(&ev).expect("converts") {
        StreamResponse::Task(t) => {
            assert_eq!(t.status.state, TaskState::Unspecified);
            assert_eq!(t.history[0].role, Role::Unspecified);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn struct_numbers_and_timestamps_are_canonical() {
    let t = Task {
        id: "t-1".into(),
        status: TaskStatus {
            state: TaskState::Working,
            message: None,
            timestamp: Some(ts("2026-03-20T10:00:01.123Z")),
        },
        metadata: Some(md(json!({"n": 1, "f": 1.5, "l": [1, 2.0]}))),
        ..Default::default()
    };
    let p = t.to_pb().unwrap();
    let v = a2a_protocol::grpc::from_pb(&p).unwrap();
    assert_eq!(v["metadata"], json!({"n": 1, "f": 1.5, "l": [1, 2]}));
    assert_eq!(v["status"]["timestamp"], "2026-03-20T10:00:01.123Z");
}
