#!/usr/bin/env bash
# Every test, after the set-up: Rust (core, CLI, model backends, app), the UI's unit tests and
# type check, and the end-to-end tests of the real window under a virtual display. Every stage
# runs even if an earlier one fails; the summary says which failed.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --tests || exit 1

failed=()
stage() {
  local name=$1
  shift
  echo "==> $name"
  if ! "$@"; then failed+=("$name"); fi
}

# The app crate embeds the built UI, and is tested with the same features the end-to-end
# binary is built with, so that Tauri is compiled once.
stage "ui build" npm run --silent build
stage "rust tests" bash -c 'cd src-tauri && cargo test --workspace --locked --no-fail-fast --features lantern-app/custom-protocol'
stage "ui type check" npx tsc --noEmit -p ui
stage "ui unit tests" npx vitest run --root ui
stage "end-to-end tests" bash scripts/e2e.sh

if [ ${#failed[@]} -gt 0 ]; then
  echo "test: failed: ${failed[*]}"
  exit 1
fi
echo "test: all stages passed"
