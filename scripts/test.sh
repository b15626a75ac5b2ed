#!/usr/bin/env bash
# Run every test of the project: installs the pinned Python SDK environment (.venv) and the report
# tests' tools (chromium, xmllint) and the TypeScript example adapter (npm) if needed, then the whole
# Rust workspace's tests (unit, integration, property, interop) with cargo-nextest, which runs test
# binaries side by side (.config/nextest.toml), and the doctests with `cargo test --doc`.
# Without cargo-nextest it falls back to `cargo test` (the same tests, one binary at a time).
# Extra arguments go to the test runner (e.g. `-p a2a-harness` or a test name filter).
set -euo pipefail
root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup-python.sh
bash scripts/setup-chromium.sh
bash scripts/setup-node.sh
if cargo nextest --version >/dev/null 2>&1; then
    status=0
    cargo nextest run --workspace --all-features --no-fail-fast "$@" || status=$?
    cargo test --workspace --all-features --doc "$@" || status=$?
    exit "$status"
fi
echo "note: cargo-nextest not found (https://nexte.st); running the tests with cargo test, one binary at a time" >&2
cargo test --workspace --all-features --no-fail-fast "$@"
