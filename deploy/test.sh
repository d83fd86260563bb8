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
# Installs Debian packages whose command is missing: apt_install <command> <package>...
apt_install() {
  local command=$1
  shift
  command -v "$command" >/dev/null 2>&1 && return 0
  echo "installing: $* (apt)"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "$@" >/dev/null
}
# The admin panel's tests drive a real headless Chromium through Selenium.
apt_install chromium chromium chromium-driver
apt_install chromedriver chromium-driver
# The compose file must parse: Debian's docker-compose checks it without a Docker engine.
apt_install docker-compose docker-compose
# The encrypted-links test captures the wire with tshark; the deployment test puts each
# process in a network namespace of its own (ip netns).
apt_install tshark tshark
apt_install ip iproute2
BACKEND_EDGE_SECRET=0000000000000000000000000000000000000000000000000000000000000000 \
  docker-compose -f docker-compose.yml config -q
echo "docker-compose.yml: docker-compose config passes"
# The Kubernetes manifests must be valid objects of a current Kubernetes (kubernetes-validate
# checks them against its schemas offline; kustomization.yaml is kustomize's, not an object).
if ! python3 -c "import kubernetes_validate" >/dev/null 2>&1; then
  echo "installing: kubernetes-validate (pip)"
  python3 -m pip install --quiet kubernetes-validate
fi
manifests=$(ls deploy/k8s/*.yaml | grep -v kustomization.yaml)
# shellcheck disable=SC2086
python3 -m kubernetes_validate --strict --quiet $manifests
echo "deploy/k8s: kubernetes-validate --strict passes"
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
# The edge's process tests (EdgeFlowTests, EdgeStackTests: whole stacks, a fuzzer) and the
# namespaced deployment run with the integration tests. The admin panel's browser test runs last, alone: Chromium beside
# the floods of 1 MB requests would make both wait for a core rather than for the code.
whole_stacks='IntegrationTests|EdgeFlowTests|EdgeStackTests|NamespacedDeploymentTests'
# Two suites run alone, one after the other: auth's hashing-flood tests compare a sign-in's
# time during a flood with its time alone, and the hashes run at niceness 15, so beside
# other tests' load they wait for a core, not for the queue (a CI run timed one out at
# 4 s); the gateway's memory test floods it with 384 MB of requests while timing small
# calls (beside the whole stacks, their median reached 5.3 s against 0.5 s alone).
alone='AuthHashingFloodTests|GatewayMemoryTests'
swift test --skip-build --experimental-maximum-parallelization-width 4 --skip "$whole_stacks|AdminBrowserTests|$alone"
for suite in ${alone//|/ }; do swift test --skip-build --filter "$suite"; done
# The fault drill (SIGKILLs under write load) and the request fuzzer (every operation
# hammered for 30 s) run after them, together: beside the memory floods they made those
# wait for a core past their deadlines.
hostile='FaultDrillTests|RequestFuzzTests'
swift test --skip-build --filter "$whole_stacks" --skip "$hostile|$alone"
swift test --skip-build --filter "$hostile"
swift test --skip-build --filter AdminBrowserTests
