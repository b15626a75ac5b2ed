//! StreamResponse decode: one JSON-RPC SSE payload carrying a 64 KiB text `artifactUpdate`,
//! decoded the way the delegator's typed fast path does it (`delegator/src/client/jsonrpc.rs`,
//! `event_typed`, which is crate-private): `serde_json::from_str` straight into
//! `JsonRpcResponse<StreamResponse>` (the path before `artifact_chunk`), and `..._shared`:
//! `a2a_protocol::artifact_chunk::decode_jsonrpc_stream_response` from the payload's `Bytes`,
//! the text part left in the payload (what the delegator does now). Throughput is the payload's
//! JSON bytes.

use a2a_protocol::artifact_chunk::{SharedStreamResponse, decode_jsonrpc_stream_response};
use a2a_protocol::{Artifact, Id, JsonRpcResponse, Part, StreamResponse, TaskArtifactUpdateEvent};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

/// Text bytes of the artifact chunk.
const TEXT: usize = 64 * 1024;

fn payload() -> String {
    let text: String = (0..TEXT)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let event = StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
        task_id: "task-1".into(),
        context_id: "ctx-1".into(),
        artifact: Artifact {
            artifact_id: "art-1".into(),
            parts: vec![Part::text(text)],
            ..Default::default()
        },
        append: true,
        last_chunk: false,
        metadata: None,
    });
    serde_json::to_string(&JsonRpcResponse::success(Id::from("r-1"), event)).expect("serialisable")
}

fn bench(c: &mut Criterion) {
    let data = payload();
    let mut g = c.benchmark_group("stream_decode");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("jsonrpc_artifact_update_64KiB_text", |b| {
        b.iter(|| {
            let resp: JsonRpcResponse<StreamResponse> =
                serde_json::from_str(black_box(&data)).expect("valid payload");
            match resp.payload {
                Ok(StreamResponse::ArtifactUpdate(ev)) => black_box(ev),
                other => panic!("unexpected event: {other:?}"),
            }
        });
    });
    let shared = bytes::Bytes::from(data.clone());
    g.bench_function("jsonrpc_artifact_update_64KiB_text_shared", |b| {
        b.iter(|| {
            let resp = decode_jsonrpc_stream_response(black_box(&shared)).expect("valid payload");
            match resp.payload {
                Ok(SharedStreamResponse::ArtifactChunk(c)) => black_box(c),
                other => panic!("unexpected event: {other:?}"),
            }
        });
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
