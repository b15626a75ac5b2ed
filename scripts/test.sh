#!/usr/bin/env bash
# Run every test of the project: installs the pinned Python SDK environment (.venv) and the report
# tests' tools (chromium, xmllint) and the TypeScript example adapter (npm) if needed, then the whole Rust workspace's tests (unit,
# integration, property, interop, doctests).
set -euo pipefail
root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup-python.sh
bash scripts/setup-chromium.sh
bash scripts/setup-node.sh
cargo test --workspace --all-features --no-fail-fast "$@"
