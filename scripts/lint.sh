#!/usr/bin/env bash
# Formatting and lints, as a reviewer would run them.
set -euo pipefail
cd "$(dirname "$0")/../src-tauri"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# The API docs link only to what they can show: a link to a private item is an error.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
