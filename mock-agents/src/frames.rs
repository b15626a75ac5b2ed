//! Pre-encoded frames for chunks of generated artifact content: the hot path of a large
//! streamed artifact.
//!
//! The small envelope around the part (JSON-RPC response, bare `StreamResponse`, or the
//! protobuf messages around the part) is serialised as usual, with an empty part; the payload is
//! then written once, straight into the frame buffer: as is for text (generated text is
//! JSON-safe, see [`crate::content::ContentStream`]), base64-encoded for `raw` in JSON, as the
//! bytes field in protobuf. No `serde_json::Value` ever holds the payload, and nothing hashes
//! it here (the one hash per byte is the artifact truth in [`crate::task_events`]).
//!
//! The general path ([`crate::sse`]) still serves every chunk that a mutation or the 0.3
//! translation has to rewrite.

use crate::agent::GenChunk;
use crate::methods::to_value;
use a2a_protocol::conformance::ObjectType;
use a2a_protocol::grpc::encode_from_json;
use a2a_protocol::{Binding, Id, Part};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Value, json};

/// The frame of this chunk on `binding` (`id`: the JSON-RPC request id) in consecutive
/// pieces (the payload itself is one of them where it goes out as is, shared, not copied), or
/// `None` when it cannot be pre-encoded (then the general path encodes it).
pub(crate) fn encode(binding: Binding, id: &Id, c: &GenChunk) -> Option<Vec<Bytes>> {
    match binding {
        Binding::JsonRpc => sse_frame(c, Some(id)),
        Binding::Rest => sse_frame(c, None),
        Binding::Grpc => grpc_frame(c),
    }
}

/// The part with no content, of the chunk's kind.
fn empty_part(c: &GenChunk) -> Part {
    if c.raw {
        Part::raw(Vec::new())
    } else {
        Part::text("")
    }
}

/// Length of the base64 (padded) encoding of `n` bytes.
fn base64_len(n: usize) -> usize {
    n.div_ceil(3) * 4
}

/// An SSE event whose data is the JSON-RPC response (`id` given) or the bare `StreamResponse`
/// of this chunk.
fn sse_frame(c: &GenChunk, id: Option<&Id>) -> Option<Vec<Bytes>> {
    debug_assert!(
        c.raw
            || c.payload
                .iter()
                .all(|b| (0x20..0x7F).contains(b) && *b != b'"' && *b != b'\\'),
        "generated text must be JSON-safe"
    );
    let result = to_value(&c.event_with(empty_part(c)));
    let text = match id {
        Some(id) => serde_json::to_string(&json!({"jsonrpc": "2.0", "id": id, "result": result})),
        None => serde_json::to_string(&result),
    }
    .ok()?;
    // The only `"text":""` (or `"raw":""`) key of the event is the part's: keys inside other
    // strings would have escaped quotes.
    let key = if c.raw {
        "\"raw\":\"\""
    } else {
        "\"text\":\"\""
    };
    let at = text.find(key)? + key.len() - 1;
    let (head, tail) = text.split_at(at);
    let mut end = BytesMut::with_capacity(tail.len() + 2);
    end.put_slice(tail.as_bytes());
    end.put_slice(b"\n\n");
    if !c.raw {
        let mut start = BytesMut::with_capacity(6 + head.len());
        start.put_slice(b"data: ");
        start.put_slice(head.as_bytes());
        return Some(vec![start.freeze(), c.payload.clone(), end.freeze()]);
    }
    let n = base64_len(c.payload.len());
    let mut out = BytesMut::with_capacity(6 + head.len() + n);
    out.put_slice(b"data: ");
    out.put_slice(head.as_bytes());
    let start = out.len();
    out.resize(start + n, 0);
    STANDARD.encode_slice(&c.payload, &mut out[start..]).ok()?;
    Some(vec![out.freeze(), end.freeze()])
}

/// Bytes of `n` as a protobuf varint.
fn varint_len(mut n: usize) -> usize {
    let mut len = 1;
    while n >= 0x80 {
        n >>= 7;
        len += 1;
    }
    len
}

fn put_varint(out: &mut BytesMut, mut n: usize) {
    while n >= 0x80 {
        out.put_u8((n as u8 & 0x7F) | 0x80);
        n >>= 7;
    }
    out.put_u8(n as u8);
}

/// The key of a length-delimited protobuf field.
const fn len_key(field: u8) -> u8 {
    (field << 3) | 2
}

/// One gRPC message frame of the `StreamResponse` of this chunk: the event without its
/// artifact and the artifact without its parts are encoded as usual, the part by hand around
/// the payload (`StreamResponse.artifact_update` = 4, `TaskArtifactUpdateEvent.artifact` = 3,
/// `Artifact.parts` = 4, `Part.text` = 1 / `raw` = 2, `Part.media_type` = 7).
fn grpc_frame(c: &GenChunk) -> Option<Vec<Bytes>> {
    let mut ev = to_value(&c.event_with(Part::text("")));
    let upd = ev.get_mut("artifactUpdate")?.as_object_mut()?;
    let mut artifact = upd.remove("artifact")?;
    artifact.as_object_mut()?.remove("parts");
    let ev_pb = encode_from_json(
        ObjectType::TaskArtifactUpdateEvent,
        &Value::Object(upd.clone()),
    )
    .ok()?;
    let art_pb = encode_from_json(ObjectType::Artifact, &artifact).ok()?;
    let n = c.payload.len();
    let media = c.media_type.as_deref().unwrap_or("");
    let media_len = if media.is_empty() {
        0
    } else {
        1 + varint_len(media.len()) + media.len()
    };
    let part_len = media_len + 1 + varint_len(n) + n;
    let art_len = art_pb.len() + 1 + varint_len(part_len) + part_len;
    let ev_len = ev_pb.len() + 1 + varint_len(art_len) + art_len;
    let resp_len = 1 + varint_len(ev_len) + ev_len;
    let mut out = BytesMut::with_capacity(5 + resp_len - n);
    out.put_u8(0);
    out.put_u32(u32::try_from(resp_len).ok()?);
    out.put_u8(len_key(4));
    put_varint(&mut out, ev_len);
    out.put_slice(&ev_pb);
    out.put_u8(len_key(3));
    put_varint(&mut out, art_len);
    out.put_slice(&art_pb);
    out.put_u8(len_key(4));
    put_varint(&mut out, part_len);
    if !media.is_empty() {
        out.put_u8(len_key(7));
        put_varint(&mut out, media.len());
        out.put_slice(media.as_bytes());
    }
    out.put_u8(len_key(if c.raw { 2 } else { 1 }));
    put_varint(&mut out, n);
    Some(vec![out.freeze(), c.payload.clone()])
}

/// What the journal records of a pre-encoded chunk. A payload that fits the journal's string
/// bound (as it appears in JSON) is recorded as the general path records it (the envelope for
/// JSON-RPC, `{"result": …}` otherwise). A longer one is recorded as one short string,
/// `<artifact-update event of N generated bytes>`, without a per-chunk hash (the artifact's
/// length and sha256 are in `artifact_sent`, each chunk's id, flags and size in the
/// `artifact_chunk` entry before it): a multi-GiB artifact then costs the journal a few hundred
/// bytes per chunk, not a JSON tree.
pub(crate) fn journal_data(
    journal: &crate::journal::Journal,
    binding: Binding,
    id: &Id,
    c: &GenChunk,
) -> Value {
    let n = if c.raw {
        base64_len(c.payload.len())
    } else {
        c.payload.len()
    };
    if n > journal.max_string_bytes() {
        return Value::String(format!(
            "<artifact-update event of {} generated bytes>",
            c.payload.len()
        ));
    }
    let result = journal.summarise(&to_value(&c.event()));
    match binding {
        Binding::JsonRpc => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        _ => json!({ "result": result }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a_protocol::StreamResponse;
    use a2a_protocol::grpc::decode_to_json;

    fn chunk(raw: bool, media: Option<&str>, payload: &[u8]) -> GenChunk {
        GenChunk {
            task_id: "t-1".into(),
            context_id: "c-1".into(),
            artifact_id: "artifact-1".into(),
            name: Some("artifact-1".into()),
            media_type: media.map(Into::into),
            raw,
            payload: Bytes::copy_from_slice(payload),
            append: true,
            last_chunk: false,
            _permit: None,
        }
    }

    fn whole(parts: Vec<Bytes>) -> Vec<u8> {
        parts.concat()
    }

    fn sse_json(frame: &[u8]) -> Value {
        let s = std::str::from_utf8(frame).unwrap();
        let data = s
            .strip_prefix("data: ")
            .unwrap()
            .strip_suffix("\n\n")
            .unwrap();
        serde_json::from_str(data).unwrap()
    }

    #[test]
    fn sse_frames_equal_the_general_encoding() {
        let id = Id::Number(7.into());
        for (raw, media) in [(false, None), (true, Some("application/octet-stream"))] {
            let payload: Vec<u8> = if raw {
                (0..=255u8).cycle().take(1000).collect()
            } else {
                let mut v = vec![0u8; 1000];
                crate::content::ContentStream::new(3, true).fill(&mut v);
                v
            };
            let c = chunk(raw, media, &payload);
            let want = to_value(&c.event());
            let f = whole(encode(Binding::JsonRpc, &id, &c).unwrap());
            assert_eq!(
                sse_json(&f),
                json!({"jsonrpc": "2.0", "id": 7, "result": want})
            );
            let f = whole(encode(Binding::Rest, &id, &c).unwrap());
            assert_eq!(sse_json(&f), want);
            let back: StreamResponse = serde_json::from_value(sse_json(&f)).unwrap();
            let StreamResponse::ArtifactUpdate(u) = back else {
                panic!("not an artifact update")
            };
            let part = &u.artifact.parts[0];
            assert_eq!(part.inline_bytes().unwrap().as_ref(), &payload[..]);
        }
    }

    #[test]
    fn grpc_frames_equal_the_general_encoding() {
        for (raw, media) in [(false, None), (true, Some("application/octet-stream"))] {
            // Long enough for multi-byte varints.
            let payload: Vec<u8> = if raw {
                (0..=255u8).cycle().take(70_000).collect()
            } else {
                vec![b'a'; 70_000]
            };
            let c = chunk(raw, media, &payload);
            let f = whole(encode(Binding::Grpc, &Id::Number(1.into()), &c).unwrap());
            assert_eq!(f[0], 0);
            let len = u32::from_be_bytes([f[1], f[2], f[3], f[4]]) as usize;
            assert_eq!(len + 5, f.len());
            let general =
                encode_from_json(ObjectType::StreamResponse, &to_value(&c.event())).unwrap();
            let ours = decode_to_json(ObjectType::StreamResponse, &f[5..]).unwrap();
            let theirs = decode_to_json(ObjectType::StreamResponse, &general).unwrap();
            assert_eq!(ours, theirs);
        }
    }
}
