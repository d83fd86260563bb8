#!/usr/bin/env bash
# Starts the whole stack locally: installs what is missing, builds, then runs the stack
# runner (gateway + six services + the HTTP edge, SQLite files under ./data). Ctrl-C stops
# everything. Extra arguments go to `stack` (try --help). BACKEND_SKIP_BUILD=1 runs what is
# already built (the tests do, from inside `swift test`).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
configuration=${BUILD_CONFIGURATION:-debug}
if [ "${BACKEND_SKIP_BUILD:-0}" != "1" ]; then
  swift build -c "$configuration"
fi
exec ".build/$configuration/stack" "$@"
