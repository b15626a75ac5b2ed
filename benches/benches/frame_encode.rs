//! Mock frame encode. The mock agents' frame encoder (`mock-agents/src/frames.rs`) is
//! crate-private, so this measures the two encoders it is built on, over the same 64 KiB
//! text artifact chunk:
//!
//! - `sse_event`: `a2a_protocol::sse::encode_event` of the chunk's JSON-RPC payload;
//! - `grpc_frame`: `a2a_protocol::grpc::framing::encode_frame` of the prost `StreamResponse`
//!   (artifact update) message.
//!
//! Throughput is the encoded bytes (the SSE event; the 5-byte-prefixed gRPC frame).

use a2a_protocol::grpc::PbWire;
use a2a_protocol::grpc::framing::encode_frame;
use a2a_protocol::sse::encode_event;
use a2a_protocol::{Artifact, Id, JsonRpcResponse, Part, StreamResponse, TaskArtifactUpdateEvent};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

/// Text bytes of the artifact chunk.
const TEXT: usize = 64 * 1024;

fn event() -> StreamResponse {
    let text: String = (0..TEXT)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
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
    })
}

fn bench(c: &mut Criterion) {
    let ev = event();
    let data = serde_json::to_string(&JsonRpcResponse::success(Id::from("r-1"), ev.clone()))
        .expect("serialisable");
    let mut sse = Vec::new();
    encode_event(&mut sse, None, &data);
    let pb = ev.to_pb().expect("convertible to protobuf");
    let frame_len = encode_frame(&pb).len();

    let mut g = c.benchmark_group("frame_encode");
    g.throughput(Throughput::Bytes(sse.len() as u64));
    g.bench_function("sse_event_64KiB", |b| {
        b.iter(|| {
            let mut out = Vec::new();
            encode_event(&mut out, None, black_box(&data));
            black_box(out)
        });
    });
    g.throughput(Throughput::Bytes(frame_len as u64));
    g.bench_function("grpc_frame_64KiB", |b| {
        b.iter(|| black_box(encode_frame(black_box(&pb))));
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
