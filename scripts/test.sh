#!/usr/bin/env bash
# Installs what it needs (apt packages, the npm packages of tests/node), builds everything and
# runs every test (unit, end-to-end, tests against npm clients, schema validation of all server
# output, the shared conformance scenarios, the saved fuzz inputs), then the fast sanitizer job:
# the unit tests and fuzz inputs again under ASan+UBSan (scripts/sanitize.sh fast, about 5
# minutes on 2 cores from a cold compiler cache). With CI=true warnings are errors.
# Usage: bash scripts/test.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The compiler cache keys on paths relative to the checkout, so a clone in another folder (CI's)
# reuses what an earlier build compiled from the same sources.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
bash "$root/scripts/deps.sh" --test
bash "$root/scripts/node_deps.sh"
build="$root/build-test"
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
cmake -S "$root" -B "$build" -G Ninja -DREBOUND_WERROR=$werror -DREBOUND_TESTS=ON >/dev/null
cmake --build "$build"
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
bash "$root/scripts/sanitize.sh" fast
