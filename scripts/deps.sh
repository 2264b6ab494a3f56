#!/usr/bin/env bash
# Installs the Debian packages Rebound builds and tests with, only when one is missing
# (idempotent; needs root or sudo, and apt access the first time). Usage: deps.sh [--test]
set -euo pipefail
packages=(cmake ninja-build ccache g++ libboost1.81-dev nlohmann-json3-dev libspdlog-dev
  libfmt-dev doctest-dev libcli11-dev libssl-dev python3 python3-jsonschema clang
  libclang-rt-14-dev openssl ca-certificates tmux libpcre2-dev pkg-config libcmark-dev
  bubblewrap libseccomp-dev)
# --test: also what only the tests use (a real browser for export_html's page).
if [ "${1:-}" = "--test" ]; then packages+=(chromium); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# Node and npm for the tests against npm packages (tests/node): this machine kind has them;
# elsewhere Debian's own packages do.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "deps: installing nodejs npm" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nodejs npm
fi
