#!/usr/bin/env bash
# Release build of the lantern command line.
set -euo pipefail
cd "$(dirname "$0")/../src-tauri"
cargo build --release --locked -p lantern-cli
echo "built: $(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/lantern"
