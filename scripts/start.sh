#!/usr/bin/env bash
# Sets everything up, builds Lantern and starts it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd src-tauri
cargo build --locked -p lantern-cli
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/debug/lantern"
"$bin" --help
echo
echo "lantern is at $bin. Try:  $bin tool list_files --workspace ."
