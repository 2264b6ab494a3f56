#!/usr/bin/env bash
# Installs the build into a temporary prefix, builds tests/client/consumer against the installed
# package (find_package(Rebound), Rebound::client) and runs it against the installed server.
# Usage: consumer_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$source/tests/client/consumer" -B "$work/build" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
HOME="$work" "$work/build/consumer" "$work/prefix/bin/rebound"
