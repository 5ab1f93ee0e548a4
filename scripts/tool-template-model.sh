#!/usr/bin/env bash
# Makes the test models for native chat templates: copies of the default model whose
# `tokenizer.chat_template` is replaced by a tool-aware template (tests/templates/), written
# with the `gguf` package from PyPI. The copies
# are kept in the user cache beside the default model and made again when the template changes.
#
#   scripts/tool-template-model.sh             the template as it is
#   scripts/tool-template-model.sh thinking    the template with `<think>` opening every reply,
#                                              as reasoning models' templates do, and its first
#                                              words (the default model would close it at once)
#   scripts/tool-template-model.sh llama3      a Llama 3.x-style template
#                                              (tests/templates/llama3-tools.jinja)
#   scripts/tool-template-model.sh mistral     a Mistral-style template
#                                              (tests/templates/mistral-tools.jinja)
#
# Prints the copy's path on stdout.
set -euo pipefail

cd "$(dirname "$0")/.."
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/lantern"
MODEL_DIR="${LANTERN_MODEL_DIR:-$CACHE/models}"
TEMPLATE=tests/templates/chatml-tools.jinja
case "${1:-tools}" in
  tools)
    TARGET="$MODEL_DIR/SmolLM2-135M-Instruct.tools.Q4_1.gguf"
    template=$(cat "$TEMPLATE")
    ;;
  thinking)
    TARGET="$MODEL_DIR/SmolLM2-135M-Instruct.thinking-tools.Q4_1.gguf"
    # The last `<|im_start|>assistant` line is the generation prompt's.
    template=$(python3 -c '
import sys
text = open(sys.argv[1]).read()
head = "<|im_start|>assistant\n"
at = text.rindex(head)
print(text[:at] + head + "<think>\nFirst, " + text[at + len(head):], end="")
' "$TEMPLATE")
    ;;
  llama3)
    TEMPLATE=tests/templates/llama3-tools.jinja
    TARGET="$MODEL_DIR/SmolLM2-135M-Instruct.llama3-tools.Q4_1.gguf"
    template=$(cat "$TEMPLATE")
    ;;
  mistral)
    TEMPLATE=tests/templates/mistral-tools.jinja
    TARGET="$MODEL_DIR/SmolLM2-135M-Instruct.mistral-tools.Q4_1.gguf"
    template=$(cat "$TEMPLATE")
    ;;
  *)
    printf 'tool-template-model: unknown variant %s (known: tools, thinking, llama3, mistral)\n' "$1" >&2
    exit 2
    ;;
esac
GGUF_VERSION=0.17.1
GGUF_PY="$CACHE/gguf-py-$GGUF_VERSION"
say() { printf 'tool-template-model: %s\n' "$*" >&2; }

source_model=$(bash scripts/fetch-model.sh)
stamp="$TARGET.template-sha256"
want=$(printf '%s' "$template" | sha256sum | cut -d' ' -f1)
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

say "writing $TEMPLATE (${1:-tools}) into a copy of $(basename "$source_model")"
partial="$TARGET.partial-$$"
trap 'rm -f "$partial" "$partial.log"' EXIT
if ! PYTHONPATH="$GGUF_PY" python3 -m gguf.scripts.gguf_new_metadata --force \
  --general-name "SmolLM2-135M-Instruct (tool-aware template)" \
  --chat-template "$template" "$source_model" "$partial" >"$partial.log" 2>&1; then
  cat "$partial.log" >&2
  say "could not write the template into the copy"
  exit 1
fi
mv -f "$partial" "$TARGET"
echo "$want" > "$stamp"
say "made $TARGET"
echo "$TARGET"
