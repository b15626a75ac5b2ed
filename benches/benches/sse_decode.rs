//! SSE decode: [`a2a_protocol::sse::SseDecoder`] over a stream of 64 KiB-payload events.
//!
//! The input is built once: [`EVENTS`] events, each a `data:` line with a 64 KiB payload
//! (encoded with `a2a_protocol::sse::encode_event`), fed to a fresh decoder in 16 KiB reads,
//! as a body arrives from the network. Throughput is the encoded stream's bytes.
//! `..._shared` is the same stream through `feed_bytes` (each read in its own `Bytes`, as the
//! HTTP client hands them over; the delegator's path): data assembled once, no `String`.

use a2a_protocol::sse::{SseDecoder, encode_event};
use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

/// Payload bytes of one event.
const PAYLOAD: usize = 64 * 1024;
/// Events in the stream.
const EVENTS: usize = 64;
/// Size of one read fed to the decoder.
const READ: usize = 16 * 1024;

fn stream() -> Vec<u8> {
    let payload: String = (0..PAYLOAD)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let mut out = Vec::with_capacity(EVENTS * (PAYLOAD + 16));
    for _ in 0..EVENTS {
        encode_event(&mut out, None, &payload);
    }
    out
}

fn bench(c: &mut Criterion) {
    let body = stream();
    let mut g = c.benchmark_group("sse_decode");
    g.throughput(Throughput::Bytes(body.len() as u64));
    g.bench_function("64x64KiB_events_16KiB_reads", |b| {
        b.iter(|| {
            let mut decoder = SseDecoder::new(1024 * 1024);
            let mut events = Vec::with_capacity(4);
            let mut seen = 0usize;
            for read in body.chunks(READ) {
                decoder.feed(read, &mut events).expect("valid SSE");
                seen += events.len();
                events.clear();
            }
            decoder.finish().expect("clean end");
            assert_eq!(seen, EVENTS);
            black_box(seen)
        });
    });
    let reads: Vec<Bytes> = body.chunks(READ).map(Bytes::copy_from_slice).collect();
    g.bench_function("64x64KiB_events_16KiB_reads_shared", |b| {
        b.iter(|| {
            let mut decoder = SseDecoder::new(1024 * 1024);
            let mut events = Vec::with_capacity(4);
            let mut seen = 0usize;
            for read in &reads {
                decoder.feed_bytes(read, &mut events).expect("valid SSE");
                seen += events.len();
                events.clear();
            }
            decoder.finish().expect("clean end");
            assert_eq!(seen, EVENTS);
            black_box(seen)
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
