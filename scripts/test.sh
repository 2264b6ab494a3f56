#!/usr/bin/env bash
# Installs what it needs (apt packages, the npm packages of tests/node), builds the binary and
# runs every end-to-end test (over pipes, against npm clients and servers, schema validation of
# all server output, the shared conformance scenarios, the layer and size checks), then the fast
# sanitizer job: the core rooms' unit tests and every saved fuzz input under ASan+UBSan
# (scripts/sanitize.sh fast, about 8 minutes on 2 cores from a cold compiler cache, its build
# mostly while the end-to-end tests run). Every test runs once. With CI=true warnings are errors.
# Usage: bash scripts/test.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The compiler cache keys on paths relative to the checkout, so a clone in another folder (CI's)
# reuses what an earlier build compiled from the same sources.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
# The test suites use precompiled headers, which the compiler cache takes only with these.
export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
bash "$root/scripts/deps.sh" --test
bash "$root/scripts/node_deps.sh"
build="$root/build-test"
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
# The core rooms' unit tests and the fuzz replays are built and run once, in the sanitizer job
# below, not here too (REBOUND_UNIT_TESTS). -O1 with line tables only (-g1): a test build's
# objects need no variable info, and -O2 -g costs about two fifths more compile (the binaries
# measured in bench/ and installed by scripts/run.sh stay -O2).
cmake -S "$root" -B "$build" -G Ninja -DREBOUND_WERROR=$werror -DREBOUND_TESTS=ON \
  -DREBOUND_UNIT_TESTS=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" >/dev/null
cmake --build "$build"
# The sanitizer job's build runs meanwhile at the lowest priority: the end-to-end tests leave part
# of the machine idle (they wait on processes, pipes and sockets) and it takes only what they
# leave. Its log is shown when it fails.
nice -n 19 bash "$root/scripts/sanitize.sh" fast-build >"$build/sanitize-build.log" 2>&1 &
sanitize_build=$!
status=0
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" || status=$?
if ! wait "$sanitize_build"; then
  cat "$build/sanitize-build.log" >&2
  exit 1
fi
[ "$status" -eq 0 ] || exit "$status"
bash "$root/scripts/sanitize.sh" fast
