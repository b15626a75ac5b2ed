//! Raw part decode: a `{"raw": "<base64>"}` part holding 64 KiB of bytes, decoded with the
//! protocol crate's `Part` deserializer (`serde_json::from_slice::<a2a_protocol::Part>`).
//! Throughput is the part's JSON bytes (about 87 KiB of base64 text).

use a2a_protocol::{Part, PartContent};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

/// Decoded bytes of the part.
const RAW: usize = 64 * 1024;

fn part_json() -> Vec<u8> {
    let bytes: Vec<u8> = (0..RAW).map(|i| (i * 31 % 251) as u8).collect();
    serde_json::to_vec(&Part::raw(bytes)).expect("serialisable")
}

fn bench(c: &mut Criterion) {
    let json = part_json();
    let mut g = c.benchmark_group("raw_part");
    g.throughput(Throughput::Bytes(json.len() as u64));
    g.bench_function("decode_64KiB_base64", |b| {
        b.iter(|| {
            let part: Part = serde_json::from_slice(black_box(&json)).expect("valid part");
            match part.content {
                PartContent::Raw(bytes) => {
                    assert_eq!(bytes.len(), RAW);
                    black_box(bytes)
                }
                other => panic!("not a raw part: {other:?}"),
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
