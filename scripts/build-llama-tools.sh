#!/usr/bin/env bash
# Builds llama.cpp's own llama-server and llama-bench into
# ${XDG_CACHE_HOME:-$HOME/.cache}/lantern/llama-tools/bin/, from the llama.cpp sources vendored in
# the llama-cpp-python sdist on PyPI (the registry we can reach that ships them).
#
# llama-server is the real server of the OpenAI-compatible backend's tests
# (crates/openai/tests/llama_server.rs, the end-to-end server test); llama-bench measures
# llama.cpp alone, to compare with Lantern's in-process backend. The app needs neither. The build
# takes about seven minutes on two cores; `scripts/setup.sh --tests` (npm test) runs this.
#
# Idempotent: does nothing when both binaries of this version are installed; a download or an
# unpacked source left by an interrupted run is reused. Prints the time of each stage.
set -euo pipefail

VERSION="0.3.36"
TOOLS_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/lantern/llama-tools"
BIN_DIR="$TOOLS_DIR/bin"
STAMP="$BIN_DIR/.built-from-llama-cpp-python-$VERSION"
JOBS="${LLAMA_TOOLS_JOBS:-2}"

say() { printf 'build-llama-tools: %s\n' "$*" >&2; }

if [ -x "$BIN_DIR/llama-server" ] && [ -x "$BIN_DIR/llama-bench" ] && [ -f "$STAMP" ]; then
  say "already built: $BIN_DIR"
  exit 0
fi
for cmd in python3 cmake c++ make tar; do
  if ! command -v "$cmd" >/dev/null 2>&1; then
    say "needs $cmd; run scripts/setup.sh first"
    exit 1
  fi
done

started=$(date +%s)
SRC_DIR="$TOOLS_DIR/src"
SDIST="$SRC_DIR/llama_cpp_python-$VERSION.tar.gz"
UNPACKED="$SRC_DIR/llama_cpp_python-$VERSION"
LLAMA_DIR="$UNPACKED/vendor/llama.cpp"
mkdir -p "$SRC_DIR"
if [ ! -f "$SDIST" ]; then
  say "downloading the llama-cpp-python $VERSION sdist from PyPI"
  python3 -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$SRC_DIR"
fi
if [ ! -f "$LLAMA_DIR/CMakeLists.txt" ]; then
  rm -rf "$UNPACKED"
  tar -xzf "$SDIST" -C "$SRC_DIR"
fi
if [ ! -f "$LLAMA_DIR/CMakeLists.txt" ]; then
  say "the sdist has no vendor/llama.cpp; cannot build"
  exit 1
fi
fetched=$(date +%s)

# Static, CPU-only, no OpenMP (its busy-waiting workers starve a small machine, as in the
# in-process backend). GGML_NATIVE=OFF builds for AVX2/FMA/F16C rather than this exact CPU, the
# same instruction sets Lantern's own llama.cpp build uses, so llama-bench numbers compare. No
# web UI (it would be downloaded), no HTTPS, no tests, examples or the unified app binary.
BUILD_DIR="$TOOLS_DIR/build-$VERSION"
say "configuring llama.cpp (log: $TOOLS_DIR/configure.log)"
if ! cmake -S "$LLAMA_DIR" -B "$BUILD_DIR" \
  -DCMAKE_BUILD_TYPE=Release \
  -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=OFF \
  -DGGML_OPENMP=OFF \
  -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF \
  -DLLAMA_BUILD_APP=OFF \
  -DLLAMA_BUILD_TOOLS=ON \
  -DLLAMA_BUILD_SERVER=ON \
  -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_OPENSSL=OFF \
  >"$TOOLS_DIR/configure.log" 2>&1; then
  tail -n 30 "$TOOLS_DIR/configure.log" >&2
  say "configuring failed"
  exit 1
fi
configured=$(date +%s)

say "building llama-server and llama-bench with -j$JOBS (log: $TOOLS_DIR/build.log)"
if ! cmake --build "$BUILD_DIR" --config Release --target llama-server llama-bench -j "$JOBS" \
  >"$TOOLS_DIR/build.log" 2>&1; then
  tail -n 30 "$TOOLS_DIR/build.log" >&2
  say "building failed"
  exit 1
fi
built=$(date +%s)

mkdir -p "$BIN_DIR"
install -m 0755 "$BUILD_DIR/bin/llama-server" "$BUILD_DIR/bin/llama-bench" "$BIN_DIR/"
rm -f "$BIN_DIR"/.built-from-llama-cpp-python-*
touch "$STAMP"

say "installed llama-server and llama-bench in $BIN_DIR"
say "time: fetch $((fetched - started)) s, configure $((configured - fetched)) s, build $((built - configured)) s, total $((built - started)) s"
