//! gRPC framing: split-anywhere property and the typed errors.

use super::*;
use a2a_protocol::grpc::framing::*;
use a2a_protocol::grpc::{PbWire, pb};
use bytes::{Bytes, BytesMut};
use proptest::prelude::*;

fn tasks(ids: &[String]) -> Vec<pb::Task> {
    ids.iter()
        .map(|id| {
            let mut t = task();
            t.id = id.clone();
            t.to_pb().expect("fixture converts")
        })
        .collect()
}

proptest! {
    #[test]
    fn frames_split_anywhere_decode_to_the_same_messages(
        ids in proptest::collection::vec("[a-z0-9]{0,24}", 1..5),
        cuts in proptest::collection::vec(any::<proptest::sample::Index>(), 0..12),
    ) {
        let msgs = tasks(&ids);
        let mut wire = BytesMut::new();
        for m in &msgs {
            encode_frame_into(m, &mut wire);
        }
        let mut points: Vec<usize> = cuts.iter().map(|i| i.index(wire.len() + 1)).collect();
        points.push(0);
        points.push(wire.len());
        points.sort_unstable();
        let mut dec = FrameDecoder::new(DEFAULT_MAX_MESSAGE_SIZE);
        let mut got = Vec::new();
        for w in points.windows(2) {
            dec.push(&wire[w[0]..w[1]]);
            while let Some(m) = dec.next_message::<pb::Task>().expect("valid frames") {
                got.push(m);
            }
        }
        prop_assert!(dec.finish().is_ok());
        prop_assert_eq!(&got, &msgs);
        // The whole body at once, without copying.
        let all: Vec<pb::Task> = decode_frames(wire.freeze(), DEFAULT_MAX_MESSAGE_SIZE).expect("valid");
        prop_assert_eq!(all, msgs);
    }
}

#[test]
fn frame_header_is_flag_and_big_endian_length() {
    let m = pb::GetTaskRequest {
        id: "t".into(),
        ..Default::default()
    };
    let f = encode_frame(&m);
    assert_eq!(&f[..], &[0, 0, 0, 0, 3, 0x12, 0x01, b't']);
}

#[test]
fn compressed_and_invalid_flags_are_rejected() {
    let mut dec = FrameDecoder::new(100);
    dec.push(&[1, 0, 0, 0, 0]);
    assert!(matches!(dec.next_frame(), Err(FrameError::Compressed)));
    let mut dec = FrameDecoder::new(100);
    dec.push(&[7, 0, 0, 0, 0]);
    assert!(matches!(dec.next_frame(), Err(FrameError::InvalidFlag(7))));
}

#[test]
fn oversize_is_rejected_from_the_header_alone() {
    let mut dec = FrameDecoder::new(10);
    dec.push(&[0, 0, 0, 0, 11]);
    assert!(matches!(
        dec.next_frame(),
        Err(FrameError::TooLarge { len: 11, max: 10 })
    ));
    let mut raw = BytesMut::new();
    encode_raw_frame(0, &[0u8; 11], &mut raw);
    assert!(matches!(
        decode_frames::<pb::Task>(raw.freeze(), 10),
        Err(FrameError::TooLarge { .. })
    ));
}

#[test]
fn truncated_input_is_reported_at_the_end() {
    let f = encode_frame(&pb::GetTaskRequest {
        id: "task".into(),
        ..Default::default()
    });
    let mut dec = FrameDecoder::new(100);
    dec.push(&f[..f.len() - 1]);
    assert!(dec.next_frame().expect("no error yet").is_none());
    match dec.finish() {
        Err(FrameError::Truncated { buffered, needed }) => {
            assert_eq!((buffered, needed), (f.len() - 1, f.len()));
        }
        other => panic!("expected Truncated, got {other:?}"),
    }
    let mut dec = FrameDecoder::new(100);
    dec.push(&f[..3]);
    assert!(matches!(
        dec.finish(),
        Err(FrameError::Truncated {
            buffered: 3,
            needed: 5
        })
    ));
    assert!(matches!(
        decode_frames::<pb::GetTaskRequest>(f.slice(..6), 100),
        Err(FrameError::Truncated { .. })
    ));
    assert!(
        decode_frames::<pb::GetTaskRequest>(Bytes::new(), 100)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn undecodable_protobuf_is_a_typed_error() {
    let mut raw = BytesMut::new();
    // Field 2 (id, length-delimited) claims 100 bytes but holds 1.
    encode_raw_frame(0, &[0x12, 100, b'x'], &mut raw);
    let mut dec = FrameDecoder::new(100);
    dec.push(&raw);
    assert!(matches!(
        dec.next_message::<pb::GetTaskRequest>(),
        Err(FrameError::Decode(_))
    ));
}
