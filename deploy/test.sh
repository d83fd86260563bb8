#!/usr/bin/env bash
# Runs every test: installs what is missing, builds all targets (the integration tests
# start the built executables), then runs the unit and integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
swift build --build-tests
swift test --skip-build "$@"
