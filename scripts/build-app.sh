#!/usr/bin/env bash
# Builds the desktop app with its UI embedded and prints the binary's path. A debug build: it
# builds faster and shares its cache with the tests, and the model crates are optimised even so.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run --silent build >&2
cd src-tauri
cargo build --locked -p lantern-app --features custom-protocol >&2
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
echo "$target/debug/lantern-app"
