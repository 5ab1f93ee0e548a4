#!/usr/bin/env bash
# What tools from MCP servers cost a local model's prompt: the system prompt's tokens (the
# default model's template and tokenizer) with the built-in tools only, with every tool of two
# real servers (mcp-server-time and server-everything, 15 tools), and as turns on three
# messages are offered it (at most 8 MCP tools, those that fit the message). Prints a markdown
# table.
#
#   scripts/bench-mcp-prompt.sh LANTERN_BINARY
set -euo pipefail
cd "$(dirname "$0")/.."
lantern=${1:?usage: scripts/bench-mcp-prompt.sh LANTERN_BINARY}
servers=$(bash scripts/mcp-servers.sh)
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
mkdir -p "$home/none/config" "$home/two/config"
cat > "$home/two/config/mcp.json" <<JSON
{"mcpServers": {
  "time": {"command": "$servers/venv/bin/mcp-server-time", "args": ["--local-timezone", "UTC"]},
  "every": {"command": "$servers/npm/node_modules/.bin/mcp-server-everything", "args": ["stdio"]}
}}
JSON

# "N tokens … (K of M tools listed)" from the command's stderr.
measure() {
  local home_dir=$1; shift
  LANTERN_HOME="$home_dir" "$lantern" prompt --tokens "$@" 2>&1 >/dev/null \
    | sed -n 's/.*prompt is \([0-9]*\) tokens.*(\([0-9]*\) of \([0-9]*\) tools listed).*/\1 \2 \3/p'
}

row() {
  local label=$1; shift
  read -r tokens listed all < <(measure "$@")
  echo "| $label | $listed of $all | $tokens |"
}

echo "| system prompt | tools listed | tokens |"
echo "|---|---|---|"
row "built-in tools only" "$home/none"
row "every tool of both servers" "$home/two"
row "a turn on \"Convert 14:30 from Europe/Warsaw time to Asia/Tokyo time\"" "$home/two" --message "Convert 14:30 from Europe/Warsaw time to Asia/Tokyo time"
row "a turn on \"Echo the word hello back\"" "$home/two" --message "Echo the word hello back"
row "a turn on \"Where is parse_args defined?\"" "$home/two" --message "Where is parse_args defined?"
