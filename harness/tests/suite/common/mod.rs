//! Shared helpers for the harness tests: paths to the workspace's binaries and catalog.

#![allow(dead_code)]

use std::path::PathBuf;

/// The workspace root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `target/<profile>/` of this test run.
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test> -> target/<profile>
    exe.parent()
        .and_then(|p| p.parent())
        .expect("target dir")
        .to_path_buf()
}

/// The reference delegator binary, built by `cargo test --workspace`.
pub fn delegator() -> PathBuf {
    let p = bin_dir().join("a2a-delegator");
    assert!(
        p.exists(),
        "{} is missing: run the tests with `cargo test --workspace --all-features` (scripts/test.sh) so the delegator binary is built",
        p.display()
    );
    p
}

/// The harness binary.
pub fn harness() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_a2a-harness"))
}

/// Every `artifact_sent` of a journal as (agent, artifact id, bytes, sha256), sorted: what a
/// recording and its replay must agree on (their task ids differ).
pub fn artifacts_sent(journal: &[a2a_mock_agents::Entry]) -> Vec<(String, String, u64, String)> {
    let mut out: Vec<_> = journal
        .iter()
        .filter_map(|e| match &e.event {
            a2a_mock_agents::Event::ArtifactSent {
                artifact_id,
                bytes,
                sha256,
                ..
            } => Some((
                e.agent.to_string(),
                artifact_id.clone(),
                *bytes,
                sha256.clone(),
            )),
            _ => None,
        })
        .collect();
    out.sort();
    out
}
