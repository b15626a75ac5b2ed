//! Reassembler write + hash: the delegator's artifact reassembler
//! (`a2a_delegator::artifacts::Reassembler`, public) fed one 4 MiB text artifact as 64 appended
//! 64 KiB chunks, then committed (flush, fsync, rename; the sha256 is computed while writing).
//! Each iteration uses a fresh reassembler with the delegator's default 64 KiB write buffer,
//! writing into a temporary directory. Throughput is the artifact's bytes.

use a2a_delegator::artifacts::{Provenance, Reassembler};
use a2a_delegator::bugs::Bugs;
use a2a_delegator::request::ArtifactSpec;
use a2a_protocol::{Artifact, Part};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

/// Bytes of one chunk.
const CHUNK: usize = 64 * 1024;
/// Chunks per artifact.
const CHUNKS: usize = 64;
/// The delegator's default write buffer (`EngineConfig::write_buffer_bytes`).
const BUFFER: usize = 64 * 1024;

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let http = reqwest::Client::new();
    let spec = ArtifactSpec {
        mime_types: vec!["text/plain".into()],
        max_size_bytes: 1 << 30,
        streaming_preferred: true,
        schema: None,
    };
    let prov = Provenance {
        agent_url: "http://127.0.0.1:1/".into(),
        skill: "bench".into(),
        task_id: "task-1".into(),
    };
    let text: String = (0..CHUNK)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let chunk = Artifact {
        artifact_id: "art-1".into(),
        parts: vec![Part::text(text)],
        ..Default::default()
    };

    let mut g = c.benchmark_group("reassembler");
    g.throughput(Throughput::Bytes((CHUNK * CHUNKS) as u64));
    g.bench_function("write_hash_64x64KiB_chunks", |b| {
        b.to_async(&rt).iter_batched(
            // Chunk copies are made outside the timed part (the reassembler takes them by value).
            || vec![chunk.clone(); CHUNKS],
            |chunks| {
                let (dir, http, spec, prov) = (dir.path().to_path_buf(), &http, &spec, &prov);
                async move {
                    let mut r = Reassembler::new(dir, spec, BUFFER, Bugs::none());
                    for (i, art) in chunks.into_iter().enumerate() {
                        r.apply_chunk(http, art, i > 0, i + 1 == CHUNKS)
                            .await
                            .expect("chunk applied");
                    }
                    let records = r.commit(prov).await.expect("committed");
                    assert_eq!(records[0].bytes, (CHUNK * CHUNKS) as u64);
                    black_box(records)
                }
            },
            criterion::BatchSize::PerIteration,
        );
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
