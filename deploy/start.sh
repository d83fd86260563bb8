#!/usr/bin/env bash
# Starts the whole stack locally: installs what is missing, builds, then runs the stack
# runner (gateway + six services, SQLite files under ./data). Ctrl-C stops everything.
# Extra arguments go to `stack` (try --help).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
configuration=${BUILD_CONFIGURATION:-debug}
swift build -c "$configuration"
exec ".build/$configuration/stack" "$@"
