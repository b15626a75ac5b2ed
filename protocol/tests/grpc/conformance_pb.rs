//! The conformance check applies to protobuf payloads (through their ProtoJSON).

use super::*;
use a2a_protocol::conformance::DeviationKind;
use a2a_protocol::grpc::{PbWire, Rpc, conformance_frame, conformance_pb, framing, pb};

#[test]
fn missing_required_fields_of_a_grpc_payload_are_reported() {
    // message_id "" and ROLE_UNSPECIFIED: both are "unset" in proto3, so absent in ProtoJSON.
    let m = pb::Message {
        parts: vec![pb::Part {
            content: Some(pb::part::Content::Text("hi".into())),
            ..Default::default()
        }],
        ..Default::default()
    };
    let req = pb::SendMessageRequest {
        message: Some(m),
        ..Default::default()
    };
    let frame = framing::encode_frame(&req);
    let devs = conformance_frame(Rpc::SendMessage.request_type(), &frame[5..]).expect("decodes");
    let missing: Vec<&str> = devs
        .iter()
        .filter(|d| d.kind == DeviationKind::MissingRequired)
        .map(|d| d.path.as_str())
        .collect();
    assert!(missing.iter().any(|p| p.ends_with("messageId")), "{devs:?}");
    assert!(missing.iter().any(|p| p.ends_with("role")), "{devs:?}");

    // A conforming payload has no deviation.
    let ok = SendMessageRequest {
        message: Message::user_text("m-1", "hi"),
        ..Default::default()
    };
    assert!(
        conformance_pb(O::SendMessageRequest, &ok.to_pb().unwrap())
            .unwrap()
            .is_empty()
    );
}

#[test]
fn unknown_enum_number_of_a_grpc_payload_is_reported() {
    let t = pb::Task {
        id: "t-1".into(),
        status: Some(pb::TaskStatus {
            state: 42,
            ..Default::default()
        }),
        ..Default::default()
    };
    let devs = conformance_pb(O::Task, &t).expect("converts");
    assert!(
        devs.iter().any(|d| d.path.contains("state")),
        "an unknown TaskState number must be reported: {devs:?}"
    );
}

#[test]
fn rpc_paths_and_methods() {
    for m in Method::ALL {
        let r = Rpc::from(*m);
        assert_eq!(Method::from(r), *m);
        assert_eq!(Rpc::from_path(r.path()), Some(r));
        assert_eq!(
            r.path(),
            format!("{}{}", a2a_protocol::grpc::PATH_PREFIX, m.as_str())
        );
    }
    assert_eq!(Rpc::from_path("/a2a.v1.A2AService/GetTask"), None);
    assert!(Rpc::SubscribeToTask.is_server_streaming());
    assert!(a2a_protocol::grpc::is_grpc_content_type(
        "application/grpc+proto; charset=x"
    ));
    assert!(!a2a_protocol::grpc::is_grpc_content_type(
        "application/grpc+json"
    ));
}
