#!/usr/bin/env bash
# Installs the build into a temporary prefix, builds tests/client/consumer against the installed
# package (find_package(Rebound), Rebound::client) and runs it against the installed server.
# Usage: consumer_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log="$work/log"
run() { "$@" >>"$log" 2>&1 || { cat "$log" >&2; echo "FAIL: $*" >&2; exit 1; }; }
run cmake --install "$build" --prefix "$work/prefix"
run cmake -S "$source/tests/client/consumer" -B "$work/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix"
run cmake --build "$work/build"
HOME="$work" "$work/build/consumer" "$work/prefix/bin/rebound"
