#!/usr/bin/env bash
# Fuzzes the turn parser (whole and streamed) and the path resolver with cargo-fuzz (libFuzzer),
# each target for a given number of seconds, and reports executions and crashes per target.
# Not part of `npm test`: it needs a nightly toolchain and cargo-fuzz.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     default: 600 seconds, every target
#
# Corpora grow in src-tauri/fuzz/corpus/TARGET (seeded with the golden protocol cases);
# crashing inputs land in src-tauri/fuzz/artifacts/TARGET, and libFuzzer's own output of the
# last run in src-tauri/fuzz/logs/TARGET.log. Exits 1 if any target crashed.
set -euo pipefail
cd "$(dirname "$0")/../src-tauri"

seconds="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(parser_whole parser_streamed path_resolver)
fi

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "fuzz: a nightly toolchain is needed (rustup toolchain install nightly)" >&2
  exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz" >&2
  cargo install cargo-fuzz --version 0.13.2 --locked
fi

# Seeds: every input of the golden protocol cases, one file each.
for target in parser_whole parser_streamed; do
  dir="fuzz/corpus/$target"
  if [ ! -d "$dir" ]; then
    mkdir -p "$dir"
    python3 - "$dir" <<'PY' || true
import json, sys, pathlib
out = pathlib.Path(sys.argv[1])
for i, case in enumerate(json.load(open("../tests/golden/protocol.json"))):
    (out / f"golden-{i:03}").write_text(case["input"])
PY
  fi
done
mkdir -p fuzz/corpus/path_resolver

cargo +nightly fuzz build -O >&2

status=0
printf '| target | seconds | CPU seconds | executions | executions/s | crashes | corpus |\n'
printf '|---|---|---|---|---|---|---|\n'
for target in "${targets[@]}"; do
  artifacts="fuzz/artifacts/$target"
  mkdir -p "$artifacts"
  before=$(find "$artifacts" -type f | wc -l)
  mkdir -p fuzz/logs
  log="fuzz/logs/$target.log"
  times=$(mktemp)
  # libFuzzer prints its statistics on stderr; /usr/bin/time (Debian package `time`) adds
  # the CPU time used, which on a busy machine is less than the wall time.
  timer=()
  if [ -x /usr/bin/time ]; then
    timer=(/usr/bin/time -f '%U %S' -o "$times")
  fi
  "${timer[@]}" cargo +nightly fuzz run -O "$target" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    >"$log" 2>&1 || true
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  runs=${runs:-0}
  cpu=$(tail -1 "$times" | awk '{printf "%.0f", $1 + $2}')
  cpu=${cpu:--}
  after=$(find "$artifacts" -type f | wc -l)
  crashes=$((after - before))
  corpus=$(find "fuzz/corpus/$target" -type f | wc -l)
  rate=$(awk -v r="$runs" -v s="$seconds" 'BEGIN {printf "%.0f", r / s}')
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' \
    "$target" "$seconds" "$cpu" "$runs" "$rate" "$crashes" "$corpus"
  if [ "$crashes" -gt 0 ]; then
    status=1
    echo "fuzz: $target crashed; inputs in $artifacts, log:" >&2
    tail -40 "$log" >&2
  fi
  rm -f "$times"
done
exit $status
