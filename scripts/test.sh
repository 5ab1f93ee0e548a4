#!/usr/bin/env bash
# Every test: Rust unit and integration tests (core, CLI). Runs the set-up first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd src-tauri
cargo test --workspace --locked --no-fail-fast
