#!/usr/bin/env bash
# Lantern's speed against the reference tools, on the same input, in the same run (not a test):
#
#   1. search_code and list_files against ripgrep and fd on two corpora (scripts/bench-search.py);
#      the code index's build and refresh times and memory on three (scripts/bench-index.py);
#      what tools from MCP servers cost the prompt, in tokens (scripts/bench-mcp-prompt.sh)
#   2. the llama backend against llama-bench, grammar on/off, follow-up KV reuse
#      (scripts/bench-model.sh)
#   3. the app: start to interactive window under Xvfb, and idle memory (scripts/bench-app.mjs)
#   4. a 60-step session with the default model at a 2,048-token context: steps that failed,
#      the context meter against llama.cpp's count, compaction events (about 15 minutes)
#
#   scripts/bench.sh [--skip-model] [--skip-app] [--skip-long-session] [--runs N] [-- MODEL.gguf ...]
#
# Prints the table and writes it with the raw numbers to bench/results/<date>-<host>.md. A step
# that cannot run says "not measured: <why>" in its rows instead of failing the whole run.
# Release builds: the lantern CLI (with the llama backend unless --skip-model: about 20 minutes
# the first time on two cores, then seconds) and, for step 3, the app with its UI embedded.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

skip_model=false
skip_app=false
skip_long=false
runs=5
models=()
while [ $# -gt 0 ]; do
  case "$1" in
    --skip-model) skip_model=true ;;
    --skip-app) skip_app=true ;;
    --skip-long-session) skip_long=true ;;
    --runs) runs="$2"; shift ;;
    --) shift; models=("$@"); break ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "bench: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

say() { printf 'bench: %s\n' "$*" >&2; }

out_dir="$root/bench/results"
mkdir -p "$out_dir"
report="$out_dir/$(date +%Y-%m-%d)-$(hostname -s).md"
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
load_before=$(uptime)

# ---- the reference tools: Debian's ripgrep and fd-find (fd is called fdfind there) ----
missing=()
command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
command -v fdfind >/dev/null 2>&1 || command -v fd >/dev/null 2>&1 || missing+=(fd-find)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  else
    say "missing ${missing[*]}; install with: sudo apt-get install -y ${missing[*]}"
  fi
fi
fd_bin=$(command -v fdfind || command -v fd || true)

# ---- lantern, release ----
target=$(cd src-tauri && cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
if [ -n "${LANTERN_BIN:-}" ]; then
  lantern="$LANTERN_BIN"
elif $skip_model; then
  # Without the llama backend: the tools are the same code, and it builds in a minute or two.
  say "building lantern (release, without the llama backend)"
  (cd src-tauri && cargo build --release --locked -p lantern-cli --no-default-features >&2)
  lantern="$target/release/lantern"
else
  say "building lantern (release, with the llama backend; the first time takes a while)"
  (cd src-tauri && cargo build --release --locked -p lantern-cli >&2)
  lantern="$target/release/lantern"
fi

# ---- 1. search and list ----
search_md="$raw/search.md"
if command -v rg >/dev/null 2>&1 && [ -n "$fd_bin" ]; then
  say "step 1: search_code vs rg, list_files vs fd"
  if ! python3 scripts/bench-search.py --lantern "$lantern" --fd "$fd_bin" --runs "$runs" \
      --out-md "$search_md" --out-json "$raw/search.json" >/dev/null; then
    echo "| search_code, list_files | not measured: scripts/bench-search.py failed (see its output above) |" > "$search_md"
  fi
else
  echo "| search_code, list_files | not measured: ripgrep or fd-find is not installed and could not be (run as root, or apt-get install ripgrep fd-find) |" > "$search_md"
fi

index_md="$raw/index.md"
say "step 1: the code index's scale (scripts/bench-index.py)"
if ! python3 scripts/bench-index.py --lantern "$lantern" --out-md "$index_md" --out-json "$raw/index.json" >/dev/null; then
  echo "| code index | not measured: scripts/bench-index.py failed (see its output above) |" > "$index_md"
fi

mcp_md="$raw/mcp.md"
say "step 1: what MCP tools cost the prompt (scripts/bench-mcp-prompt.sh)"
if $skip_model; then
  echo "| MCP prompt cost | not measured: skipped with --skip-model (it counts the default model's tokens) |" > "$mcp_md"
elif ! bash scripts/bench-mcp-prompt.sh "$lantern" > "$mcp_md" 2> "$raw/mcp.err"; then
  echo "| MCP prompt cost | not measured: scripts/bench-mcp-prompt.sh failed ($(tail -n 1 "$raw/mcp.err")) |" > "$mcp_md"
fi

# ---- 2. the model backend ----
model_md="$raw/model.md"
if $skip_model; then
  echo "Not measured: skipped with --skip-model." > "$model_md"
else
  say "step 2: the llama backend vs llama-bench (scripts/bench-model.sh)"
  model_report="$out_dir/$(date +%Y-%m-%d)-$(hostname -s)-model.md"
  if LANTERN_BIN="$lantern" bash scripts/bench-model.sh "${models[@]}" > /dev/null 2> "$raw/model.err"; then
    # Its report, headings one level down; the raw JSON stays in its own file.
    sed -e '/^## Raw/,$d' -e 's/^# /### /' "$model_report" > "$model_md"
    echo "Raw numbers: [$(basename "$model_report")]($(basename "$model_report"))." >> "$model_md"
  else
    { echo "Not measured: scripts/bench-model.sh failed:"; echo; echo '```'; tail -n 15 "$raw/model.err"; echo '```'; } > "$model_md"
  fi
fi

# ---- 3. the app ----
app_md="$raw/app.md"
app_why=""
if $skip_app; then
  app_why="skipped with --skip-app"
elif ! command -v xvfb-run >/dev/null 2>&1; then
  app_why="xvfb-run is not installed (scripts/setup.sh installs it)"
elif ! command -v tauri-driver >/dev/null 2>&1; then
  app_why="tauri-driver is not installed (scripts/setup.sh --tests installs it)"
fi
if [ -z "$app_why" ]; then
  say "step 3: building the app (release, UI embedded)"
  if npm run --silent build >&2 && (cd src-tauri && cargo build --release --locked -p lantern-app --features custom-protocol >&2); then
    # Its own copy, so that the benchmark finds exactly its processes.
    app_bin="$target/release/lantern-app-bench"
    cp "$target/release/lantern-app" "$app_bin"
    say "step 3: start to interactive window and idle memory (Xvfb)"
    if ! LANTERN_APP="$app_bin" xvfb-run --auto-servernum --server-args="-screen 0 1920x1080x24" \
        node scripts/bench-app.mjs --runs "$runs" --out "$raw/app.json" > "$app_md" 2> "$raw/app.err"; then
      app_why="scripts/bench-app.mjs failed: $(tail -n 3 "$raw/app.err" | tr '\n' ' ')"
    fi
  else
    app_why="the app did not build"
  fi
fi
if [ -n "$app_why" ]; then
  {
    echo "| what | Lantern | target |"
    echo "|---|---|---|"
    echo "| app start to interactive window (Xvfb) | not measured: $app_why | ≤ 1.5 s |"
    echo "| idle RSS of the app | not measured: $app_why | reported |"
  } > "$app_md"
fi

# ---- 4. a long session at a small context ----
long_md="$raw/long.md"
long_why=""
if $skip_model; then
  long_why="skipped with --skip-model"
elif $skip_long; then
  long_why="skipped with --skip-long-session"
fi
if [ -z "$long_why" ]; then
  say "step 4: a 60-step session at a 2,048-token context (about 15 minutes)"
  if (cd src-tauri && cargo test --release --locked -p lantern-llama --test long_session -- --ignored --nocapture) > "$raw/long.out" 2>&1; then
    summary=$(grep -E '^[0-9]+ steps in ' "$raw/long.out" | tail -1)
    {
      echo "| what | measured | target |"
      echo "|---|---|---|"
      echo "| 60 steps, scripted reads of thirty 150-line files, 2,048-token context | ${summary:-no summary printed} | no step fails; meter within 1 %; every compaction an event |"
    } > "$long_md"
  else
    long_why="the session failed: $(grep -E 'panicked|assert' "$raw/long.out" | head -3 | tr '\n' ' ')"
  fi
fi
if [ -n "$long_why" ]; then
  echo "Not measured: $long_why." > "$long_md"
fi

# ---- the report ----
load_after=$(uptime)
{
  echo "# Benchmarks: Lantern against the reference tools — $(date -u +'%Y-%m-%d %H:%M UTC') on $(hostname -s)"
  echo
  echo "Commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src-tauri ui scripts 2>/dev/null || echo ' (with local changes)'); $(nproc) CPUs ($(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)); $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; $(rg --version 2>/dev/null | head -1 || echo 'rg missing'); $("${fd_bin:-fd}" --version 2>/dev/null || echo 'fd missing')."
  echo
  echo "Load: before \`${load_before# }\`; after \`${load_after# }\`. Other work on the machine shares the CPUs; the tools take turns run by run, so both sides of a ratio see the same load."
  echo
  echo "## Search and listing"
  echo
  cat "$search_md"
  echo
  echo "## The code index"
  echo
  cat "$index_md"
  echo
  echo "## What MCP tools cost the prompt"
  echo
  cat "$mcp_md"
  echo
  echo "## Model backend"
  echo
  cat "$model_md"
  echo
  echo "## Desktop app"
  echo
  cat "$app_md"
  echo
  echo "## A long session at a small context"
  echo
  cat "$long_md"
  if [ -f "$raw/search.json" ] || [ -f "$raw/index.json" ] || [ -f "$raw/app.json" ]; then
    echo
    echo "## Raw"
    for f in search index app; do
      if [ -f "$raw/$f.json" ]; then
        echo
        echo "\`\`\`json"
        cat "$raw/$f.json"
        echo
        echo "\`\`\`"
      fi
    done
  fi
} > "$report"
sed -e '/^## Raw/,$d' "$report"
say "written to $report"
