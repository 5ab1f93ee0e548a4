#!/usr/bin/env bash
# Every test, after the set-up: Rust (core, CLI, model backends, app), the UI's unit tests and
# type check, and the end-to-end tests of the real window under a virtual display. Every stage
# runs even if an earlier one fails; the summary says which failed, how long each stage took,
# and which ten tests were the slowest.
set -uo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
times=$(mktemp -d)
trap 'rm -rf "$times"' EXIT

failed=()
stage_times=()
stage() {
  local name=$1
  shift
  echo "==> $name"
  local t0
  t0=$(date +%s)
  if ! "$@"; then failed+=("$name"); fi
  stage_times+=("$(printf '%5d s  %s' $(($(date +%s) - t0)) "$name")")
}

stage "set-up" bash scripts/setup.sh --tests
if [ ${#failed[@]} -gt 0 ]; then
  echo "test: the set-up failed; no test ran"
  exit 1
fi
# The app crate embeds the built UI, and is tested with the same features the end-to-end
# binary is built with, so that Tauri is compiled once.
stage "ui build" npm run --silent build
stage "rust tests" python3 scripts/rust-tests.py --times "$times/rust.tsv" -- \
  --workspace --locked --no-fail-fast --features lantern-app/custom-protocol
stage "ui type check" npx tsc --noEmit -p ui
stage "ui unit tests" npx vitest run --root ui
stage "end-to-end tests" bash -c 'set -o pipefail; bash scripts/e2e.sh | tee "$0"' "$times/e2e.log"

echo
echo "test: time per stage"
printf '  %s\n' "${stage_times[@]}"
printf '  %5d s  in all\n' $(($(date +%s) - started))
# The end-to-end runner prints "ok   <name> (<seconds> s)" per test.
sed -nE 's/^(ok  |FAIL) (.*) \(([0-9.]+) s\)$/\3\tend-to-end: \2/p' "$times/e2e.log" 2>/dev/null >> "$times/rust.tsv"
echo "test: the ten slowest tests"
sort -t$'\t' -k1,1 -rn "$times/rust.tsv" 2>/dev/null | head -n 10 |
  awk -F'\t' '{ name = $2; if (length(name) > 110) name = substr(name, 1, 107) "..."; printf "  %7.1f s  %s\n", $1, name }'

if [ ${#failed[@]} -gt 0 ]; then
  echo "test: failed: ${failed[*]}"
  exit 1
fi
echo "test: all stages passed"
