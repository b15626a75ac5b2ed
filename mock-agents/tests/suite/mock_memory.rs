//! The mock keeps no streamed chunk bodies: its own peak RSS (this test process runs the mock
//! in-process and reads the stream without keeping it) grows by far less than the artifact
//! while a 256 MiB artifact streams. Alone in its test binary so no other test's allocations
//! count; nothing here is timed.

use crate::common;
use common::*;
use std::time::Duration;

const ARTIFACT_MIB: u64 = 256;
/// Allowed growth of the peak RSS while the artifact streams.
const BOUND_MIB: u64 = 64;

/// A field of `/proc/self/status` in KiB (`VmHWM`, `VmRSS`).
fn status_kib(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with(field))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_a_large_artifact_does_not_grow_the_mock() {
    let Some(before) = status_kib("VmHWM:") else {
        eprintln!("no /proc/self/status: skipped");
        return;
    };
    let chunks = ARTIFACT_MIB * 16;
    let net = start(&format!(
        r#"
        seed = 5
        [journal]
        max_string_bytes = 256
        [[agent]]
        name = "a"
        [[agent.rule]]
        steps = [
          {{ do = "state", state = "TASK_STATE_WORKING" }},
          {{ do = "artifacts", count = 1, chunks = {chunks}, chunk_bytes = 65536 }},
          {{ do = "state", state = "TASK_STATE_COMPLETED" }},
        ]
        "#
    ))
    .await;
    let http = client_with_timeout(Duration::from_secs(600));
    let url = net.rpc_url("a").expect("agent a");
    let mut r = post(
        &http,
        &url,
        &envelope("SendStreamingMessage", send_params("go")),
        &[("Accept", "text/event-stream")],
    )
    .await
    .expect("request");
    assert_eq!(r.status(), 200);
    // A raw reader: count the bytes, keep nothing.
    let mut total = 0u64;
    while let Some(b) = r.chunk().await.expect("body") {
        total += b.len() as u64;
    }
    assert!(total > ARTIFACT_MIB << 20, "streamed {total} bytes");
    let sent = artifacts_sent(net.journal());
    let (bytes, _) = sent.values().next().expect("artifact_sent");
    assert_eq!(*bytes, ARTIFACT_MIB << 20);
    let after = status_kib("VmHWM:").expect("VmHWM");
    let grown_mib = after.saturating_sub(before) / 1024;
    eprintln!(
        "VmHWM {} MiB -> {} MiB (+{grown_mib} MiB) for {ARTIFACT_MIB} MiB streamed",
        before / 1024,
        after / 1024
    );
    assert!(
        grown_mib < BOUND_MIB,
        "peak RSS grew by {grown_mib} MiB while {ARTIFACT_MIB} MiB streamed (bound {BOUND_MIB} MiB)"
    );
}
