#!/usr/bin/env bash
# Installs what Lantern needs to build, run and test, and nothing twice: system packages (with
# apt when run as root; otherwise it prints the exact command and stops), npm packages, the
# default model, and with --tests the WebDriver server the end-to-end tests drive the window
# through, the checkers the get_diagnostics tests run (Go from apt, ruff from PyPI; TypeScript
# is an npm devDependency), and the real llama-server and second model (Gemma 3 270M) the
# server-backend tests run against, and the MCP servers the MCP client's tests start. Safe to run again at any time; offline once everything
# is in place.
#
#   scripts/setup.sh [--tests]
set -euo pipefail
cd "$(dirname "$0")/.."

for_tests=false
[ "${1:-}" = "--tests" ] && for_tests=true

say() { printf 'setup: %s\n' "$*"; }

# command-or-file check, then the Debian package that provides it
REQUIRED=(
  "cc:build-essential"
  "pkg-config:pkg-config"
  "git:git"
  "unzip:unzip"
  "sha256sum:coreutils"
  "python3:python3"
  "cmake:cmake"
  "clang:clang"
  "curl:curl"
  "wget:wget"
  "file:file"
  # run_command's sandbox: no network, only the workspace writable
  "bwrap:bubblewrap"
  # the end-to-end tests: a virtual display and WebKit's WebDriver server
  "xvfb-run:xvfb"
  "xauth:xauth"
  "WebKitWebDriver:webkit2gtk-driver"
)
# Libraries without a command of their own: the Debian package is checked directly.
REQUIRED_LIBS=(
  libclang-dev
  # the desktop app (Tauri on WebKitGTK)
  libwebkit2gtk-4.1-dev
  libxdo-dev
  libssl-dev
  libayatana-appindicator3-dev
  librsvg2-dev
)

# The get_diagnostics tests run the real checkers; the MCP tests make a certificate.
$for_tests && REQUIRED+=("go:golang-go" "openssl:openssl")

missing=()
for pair in "${REQUIRED[@]}"; do
  cmd=${pair%%:*}
  pkg=${pair#*:}
  command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
done
for pkg in "${REQUIRED_LIBS[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ! python3 -m pip --version >/dev/null 2>&1; then
  missing+=("python3-pip")
fi

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing system packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    say "missing system packages: ${missing[*]}"
    say "install them with:  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}"
    exit 1
  fi
fi

# Rust: the workspace needs 1.88 or newer (Debian's own cargo is too old).
if ! command -v cargo >/dev/null 2>&1; then
  say "Rust is not installed. Install it with rustup (see https://rustup.rs), then run this again."
  exit 1
fi
rust_minor=$(rustc --version | sed -E 's/^rustc 1\.([0-9]+).*/\1/')
if [ "${rust_minor:-0}" -lt 88 ]; then
  say "Rust $(rustc --version | cut -d' ' -f2) is too old; Lantern needs 1.88 or newer (rustup update)."
  exit 1
fi

# npm packages: installed when missing or when the lockfile changed since the last install.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm packages"
  npm install --no-audit --no-fund --loglevel=error
fi

bash scripts/fetch-model.sh >/dev/null
$for_tests && bash scripts/fetch-model.sh gemma3 >/dev/null
# The default model with a tool-aware chat template, for the tests of native templates.
$for_tests && bash scripts/tool-template-model.sh >/dev/null
$for_tests && bash scripts/tool-template-model.sh thinking >/dev/null
$for_tests && bash scripts/tool-template-model.sh llama3 >/dev/null
$for_tests && bash scripts/tool-template-model.sh mistral >/dev/null

# llama.cpp's own server, built from the sources on PyPI (about seven minutes on two cores, once;
# it is kept in the user cache).
$for_tests && bash scripts/build-llama-tools.sh

# ruff, the Python checker, pinned: the tests assert its exact findings. As root it goes to
# /usr/local/bin (Debian's Python is "externally managed", hence the flag); otherwise to
# ~/.local/bin.
RUFF_VERSION=0.17.6
if $for_tests && [ "$(ruff --version 2>/dev/null)" != "ruff $RUFF_VERSION" ]; then
  say "installing ruff $RUFF_VERSION"
  if [ "$(id -u)" -eq 0 ]; then
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
      --break-system-packages "ruff==$RUFF_VERSION"
  else
    python3 -m pip install --quiet --disable-pip-version-check --user \
      --break-system-packages "ruff==$RUFF_VERSION"
  fi
fi

# The real MCP servers the MCP client's tests start (PyPI and npm, pinned, in the user cache).
$for_tests && bash scripts/mcp-servers.sh >/dev/null

# tauri-driver bridges WebDriver clients to WebKitWebDriver and the app (2.x: the newest
# release is a 3.0 alpha).
if $for_tests && ! command -v tauri-driver >/dev/null 2>&1; then
  say "installing tauri-driver 2.1.0 (cargo install, about a minute and a half)"
  cargo install tauri-driver --locked --version 2.1.0 --quiet
fi
say "ready"
