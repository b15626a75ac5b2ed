//! A2A errors as gRPC status trailers and back, also through tonic's own parser.

use super::*;
use a2a_protocol::grpc::rpc;
use a2a_protocol::grpc::status::*;
use base64::Engine;
use http::HeaderValue;

#[test]
fn every_a2a_error_round_trips_through_trailers() {
    let msg = "Tâsk t-1 is 100% gone\r\n";
    for &code in ErrorCode::ALL.iter().filter(|c| c.reason().is_some()) {
        let h = error_trailers(code, Some(msg), &[("taskId", "t-1")]);
        assert_eq!(
            h[GRPC_STATUS],
            code.grpc_code().number().to_string().as_str()
        );
        let wire_msg = h[GRPC_MESSAGE].to_str().expect("ASCII");
        assert!(
            wire_msg.bytes().all(|b| (0x20..0x7f).contains(&b)),
            "{wire_msg}"
        );
        assert!(wire_msg.contains("100%25"), "{wire_msg}");
        let f = failure_from_trailers(&h).expect("valid").expect("not OK");
        assert_eq!(f.error_code, code);
        assert_eq!(f.message, msg);
        assert!(f.is_a2a_domain());
        let info = f.error_info.expect("ErrorInfo");
        assert_eq!(Some(info.reason.as_str()), code.reason());
        assert_eq!(info.metadata.get("taskId").map(String::as_str), Some("t-1"));

        // tonic reads the same trailers.
        let st = tonic::Status::from_header_map(&h).expect("tonic parses the trailers");
        assert_eq!(st.code() as i32, code.grpc_code().number());
        assert_eq!(st.message(), msg);
        let f2 = failure_from_tonic(&st).expect("details decode");
        assert_eq!(f2.error_code, code);

        // And what we hand to a tonic server comes back the same.
        let f3 = failure_from_tonic(&a2a_tonic_status(code, Some(msg), &[])).expect("decode");
        assert_eq!(f3.error_code, code);
    }
}

#[test]
fn without_details_the_grpc_code_decides() {
    let h = error_trailers(ErrorCode::InvalidParams, Some("bad"), &[]);
    assert_eq!(h[GRPC_STATUS], "3");
    assert!(h.get(GRPC_STATUS_DETAILS_BIN).is_none());
    let f = failure_from_trailers(&h).unwrap().unwrap();
    assert_eq!(f.error_code, ErrorCode::InvalidParams);
    assert!(f.error_info.is_none());
    // Six A2A errors share FAILED_PRECONDITION: without ErrorInfo none of them is chosen.
    let st = tonic::Status::failed_precondition("x");
    let f = failure_from_tonic(&st).unwrap();
    assert!(f.error_info.is_none());
    assert!(
        !ErrorCode::ALL[..9].contains(&f.error_code),
        "{:?}",
        f.error_code
    );
}

#[test]
fn padded_base64_ok_status_and_malformed_trailers() {
    let st = a2a_status(ErrorCode::TaskNotFound, None, &[]);
    let mut h = status_trailers(&st);
    let padded =
        base64::engine::general_purpose::STANDARD.encode(prost::Message::encode_to_vec(&st));
    h.insert(
        GRPC_STATUS_DETAILS_BIN,
        HeaderValue::from_str(&padded).unwrap(),
    );
    assert_eq!(
        failure_from_trailers(&h).unwrap().unwrap().error_code,
        ErrorCode::TaskNotFound
    );
    assert!(failure_from_trailers(&ok_trailers()).unwrap().is_none());
    assert!(matches!(
        failure_from_trailers(&http::HeaderMap::new()),
        Err(StatusError::MissingStatus)
    ));
    let mut bad = ok_trailers();
    bad.insert(GRPC_STATUS, HeaderValue::from_static("five"));
    assert!(matches!(
        failure_from_trailers(&bad),
        Err(StatusError::InvalidStatus(_))
    ));
    let mut bad = status_trailers(&st);
    bad.insert(GRPC_STATUS_DETAILS_BIN, HeaderValue::from_static("!!!"));
    assert!(matches!(
        failure_from_trailers(&bad),
        Err(StatusError::DetailsBase64(_))
    ));
    let mut bad = status_trailers(&st);
    bad.insert(GRPC_STATUS_DETAILS_BIN, HeaderValue::from_static("/w"));
    assert!(matches!(
        failure_from_trailers(&bad),
        Err(StatusError::DetailsDecode(_))
    ));
}

#[test]
fn status_details_carry_error_info_as_any() {
    let st = a2a_status(ErrorCode::VersionNotSupported, None, &[("version", "0.3")]);
    assert_eq!(st.code, 9);
    assert_eq!(st.message, "Version not supported");
    assert_eq!(st.details.len(), 1);
    assert_eq!(st.details[0].type_url, ERROR_INFO_TYPE_URL);
    let info: rpc::ErrorInfo = prost::Message::decode(st.details[0].value.as_ref()).unwrap();
    assert_eq!(info.reason, "VERSION_NOT_SUPPORTED");
    assert_eq!(info.domain, "a2a-protocol.org");
    assert_eq!(encode_grpc_message("a%b\u{e9}"), "a%25b%C3%A9");
    assert_eq!(decode_grpc_message(b"a%25b%C3%A9"), "a%b\u{e9}");
}

#[test]
fn validation_errors_carry_bad_request() {
    let st = validation_status("invalid params", &[("message.message_id", "required")]);
    let f = failure_from_trailers(&status_trailers(&st))
        .unwrap()
        .unwrap();
    assert_eq!(f.grpc_code, 3);
    assert_eq!(f.error_code, ErrorCode::InvalidParams);
    assert_eq!(f.details[0].type_url, BAD_REQUEST_TYPE_URL);
    let bad: rpc::BadRequest = prost::Message::decode(f.details[0].value.as_ref()).unwrap();
    assert_eq!(bad.field_violations[0].field, "message.message_id");
}
