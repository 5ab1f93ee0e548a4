#!/usr/bin/env bash
# Installs the real MCP servers the tests start, pinned, into the user cache (never the clone):
#   mcp-server-time (PyPI)                      → $DIR/venv/bin/mcp-server-time
#   @modelcontextprotocol/server-everything (npm) → $DIR/npm/node_modules/.bin/mcp-server-everything
# The venv also holds the MCP Python SDK (`mcp`), which the sandbox tests' own probe server uses.
# Prints the folder. Safe to run again; offline once in place.
set -euo pipefail

TIME_VERSION=2026.10.19
EVERYTHING_VERSION=2026.8.31
DIR="${LANTERN_MCP_SERVERS:-${XDG_CACHE_HOME:-$HOME/.cache}/lantern/mcp-servers}"
mkdir -p "$DIR"

if [ "$(cat "$DIR/venv/.lantern-version" 2>/dev/null)" != "$TIME_VERSION" ]; then
  printf 'setup: installing mcp-server-time %s\n' "$TIME_VERSION" >&2
  rm -rf "$DIR/venv"
  python3 -m venv "$DIR/venv"
  "$DIR/venv/bin/pip" install --quiet --disable-pip-version-check "mcp-server-time==$TIME_VERSION"
  echo "$TIME_VERSION" > "$DIR/venv/.lantern-version"
fi

if [ "$(cat "$DIR/npm/.lantern-version" 2>/dev/null)" != "$EVERYTHING_VERSION" ]; then
  printf 'setup: installing @modelcontextprotocol/server-everything %s\n' "$EVERYTHING_VERSION" >&2
  rm -rf "$DIR/npm"
  mkdir -p "$DIR/npm"
  npm install --prefix "$DIR/npm" --no-audit --no-fund --loglevel=error \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" >&2
  echo "$EVERYTHING_VERSION" > "$DIR/npm/.lantern-version"
fi
echo "$DIR"
