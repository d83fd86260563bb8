#!/usr/bin/env bash
# Installs the Debian packages the build needs (libzmq, SQLite, OpenSSL, libcurl headers
# and pkg-config) when they are missing. Safe to run again: it does nothing when all are there.
set -euo pipefail

missing=()
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
for module in libzmq:libzmq3-dev sqlite3:libsqlite3-dev libcrypto:libssl-dev libcurl:libcurl4-openssl-dev; do
  name=${module%%:*}
  package=${module##*:}
  if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists "$name"; then
    missing+=("$package")
  fi
done

# The tests' fake SMTP relay, SMS webhook and Graph API are small Python scripts.
command -v python3 >/dev/null 2>&1 || missing+=(python3)

# The stats charts are checked by rendering their SVG to PNG with a real renderer.
command -v rsvg-convert >/dev/null 2>&1 || missing+=(librsvg2-bin)

if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v swift >/dev/null 2>&1; then
  echo "swift is not on PATH: install a Swift 6.1 or newer toolchain (see README)" >&2
  exit 1
fi
