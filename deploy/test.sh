#!/usr/bin/env bash
# Runs every test: installs what is missing, builds all targets (the integration tests
# start the built executables), then runs the unit and integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
swift build --build-tests
if [ $# -gt 0 ]; then
  exec swift test --skip-build "$@"
fi
# Two runs: the integration tests (whole stacks, floods of 1 MB requests, SIGKILLs) start
# dozens of processes on the machine's two cores; run beside the timing-sensitive unit and
# in-process tests, they would make those wait for a core rather than for the code.
# The unit and in-process tests themselves run at most four at a time: all at once, the
# hashing floods and request storms of some starve the deadlines others measure.
swift test --skip-build --experimental-maximum-parallelization-width 4 --skip IntegrationTests
swift test --skip-build --filter IntegrationTests
