#!/usr/bin/env bash
# The tool-use evaluation: builds the lantern command line and runs every task of
# tests/eval/tasks/ on the fixtures in tests/fixtures. Arguments go to `lantern eval`, e.g.
#   npm run eval -- --model scripted:replies.json --tool-choice auto --out bench/results/eval.md
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
(cd src-tauri && cargo build --release --locked -p lantern-cli)
target=$(cd src-tauri && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
exec "$target/release/lantern" eval --tasks "$root/tests/eval/tasks" --fixtures "$root/tests/fixtures" "$@"
