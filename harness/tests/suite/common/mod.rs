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
