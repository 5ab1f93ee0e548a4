#!/usr/bin/env bash
# Sets everything up, builds Lantern and opens it on a folder: the one given
# (`npm start -- ~/src/shop`), else the folder npm was started from.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# npm runs scripts from the package root; INIT_CWD is where the user typed the command.
from="${INIT_CWD:-$PWD}"
if [ -n "${1:-}" ]; then
  folder=$(cd "$from" && realpath -- "$1")
else
  folder=$from
fi
bin=$(bash scripts/build-app.sh)
echo "start: opening Lantern on $folder"
exec "$bin" "$folder"
