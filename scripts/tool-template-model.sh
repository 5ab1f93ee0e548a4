#!/usr/bin/env bash
# Makes the test model for native chat templates: a copy of the default model whose
# `tokenizer.chat_template` is replaced by a tool-aware ChatML template
# (tests/templates/chatml-tools.jinja), written with the `gguf` package from PyPI. The copy is
# kept in the user cache beside the default model and made again when the template changes.
#
# Prints the copy's path on stdout.
set -euo pipefail

cd "$(dirname "$0")/.."
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/lantern"
MODEL_DIR="${LANTERN_MODEL_DIR:-$CACHE/models}"
TEMPLATE=tests/templates/chatml-tools.jinja
TARGET="$MODEL_DIR/SmolLM2-135M-Instruct.tools.Q4_1.gguf"
GGUF_VERSION=0.17.1
GGUF_PY="$CACHE/gguf-py-$GGUF_VERSION"
say() { printf 'tool-template-model: %s\n' "$*" >&2; }

source_model=$(bash scripts/fetch-model.sh)
stamp="$TARGET.template-sha256"
want=$(sha256sum "$TEMPLATE" | cut -d' ' -f1)
if [ -f "$TARGET" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "$TARGET"
  exit 0
fi

if [ ! -f "$GGUF_PY/.complete" ]; then
  say "installing the gguf package $GGUF_VERSION (with numpy) into $GGUF_PY"
  rm -rf "$GGUF_PY"
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    --target "$GGUF_PY" "gguf==$GGUF_VERSION"
  touch "$GGUF_PY/.complete"
fi

say "writing $TEMPLATE into a copy of $(basename "$source_model")"
partial="$TARGET.partial-$$"
trap 'rm -f "$partial" "$partial.log"' EXIT
if ! PYTHONPATH="$GGUF_PY" python3 -m gguf.scripts.gguf_new_metadata --force \
  --general-name "SmolLM2-135M-Instruct (tool-aware template)" \
  --chat-template "$(cat "$TEMPLATE")" "$source_model" "$partial" >"$partial.log" 2>&1; then
  cat "$partial.log" >&2
  say "could not write the template into the copy"
  exit 1
fi
mv -f "$partial" "$TARGET"
echo "$want" > "$stamp"
say "made $TARGET"
echo "$TARGET"
