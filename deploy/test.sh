#!/usr/bin/env bash
# Runs every test: installs what is missing, builds all targets (the integration tests
# start the built executables), then runs the unit and integration tests.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
# The edge's OpenAPI document is checked by a validator and a fuzzer from PyPI.
if ! python3 -c "import schemathesis, openapi_spec_validator" >/dev/null 2>&1; then
  echo "installing: schemathesis openapi-spec-validator (pip)"
  python3 -m pip install --quiet schemathesis openapi-spec-validator
fi
# The admin panel's tests drive a real headless Chromium through Selenium.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  echo "installing: chromium chromium-driver (apt)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq chromium chromium-driver >/dev/null
fi
# The compose file must parse: Debian's docker-compose checks it without a Docker engine.
if ! command -v docker-compose >/dev/null 2>&1; then
  echo "installing: docker-compose (apt)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq docker-compose >/dev/null
fi
BACKEND_EDGE_SECRET=0000000000000000000000000000000000000000000000000000000000000000 \
  docker-compose -f docker-compose.yml config -q
echo "docker-compose.yml: docker-compose config passes"
if ! python3 -c "import selenium" >/dev/null 2>&1; then
  echo "installing: selenium (pip)"
  python3 -m pip install --quiet selenium
fi
swift build --build-tests
if [ $# -gt 0 ]; then
  exec swift test --skip-build "$@"
fi
# Three runs: the integration tests (whole stacks, floods of 1 MB requests, SIGKILLs) start
# dozens of processes on the machine's two cores; run beside the timing-sensitive unit and
# in-process tests, they would make those wait for a core rather than for the code.
# The unit and in-process tests themselves run at most four at a time: all at once, the
# hashing floods and request storms of some starve the deadlines others measure.
# The edge's process tests (EdgeFlowTests, EdgeStackTests: whole stacks, a fuzzer) run with
# the integration tests. The admin panel's browser test runs last, alone: Chromium beside
# the floods of 1 MB requests would make both wait for a core rather than for the code.
whole_stacks='IntegrationTests|EdgeFlowTests|EdgeStackTests'
swift test --skip-build --experimental-maximum-parallelization-width 4 --skip "$whole_stacks|AdminBrowserTests"
swift test --skip-build --filter "$whole_stacks"
swift test --skip-build --filter AdminBrowserTests
