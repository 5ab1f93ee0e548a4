#!/usr/bin/env bash
# End-to-end tests of the desktop window: builds the app with its UI embedded, then drives it
# through WebDriver on a virtual display. Arguments are passed on (a test-name filter).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(bash scripts/build-app.sh)
# Any later build with other features re-links the same path: the tests run their own copy.
copy="$(dirname "$bin")/lantern-app-e2e"
cp "$bin" "$copy"
LANTERN_APP="$copy" xvfb-run --auto-servernum --server-args="-screen 0 1920x1080x24" node tests/e2e/run.mjs "$@"
