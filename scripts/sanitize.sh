#!/usr/bin/env bash
# Sanitizer runs (ASan+UBSan make every report fatal; ThreadSanitizer for the client's threads).
#   bash scripts/sanitize.sh fast   # -O0: protocol, session, tools, MCP, hooks and policy unit tests + the fuzz corpus
#                                   # replays; part of scripts/test.sh (a few minutes)
#   bash scripts/sanitize.sh fast-build  # the same build without running the tests
#   bash scripts/sanitize.sh full   # optimized: every test of the suite (the build alone takes
#                                   # about 12 minutes on 2 cores)
#   bash scripts/sanitize.sh tsan   # ThreadSanitizer: server_tests (the stdout writer thread and
#                                   # the file tools' worker threads, the real binary built with
#                                   # TSan), client_tests (RpcClient) and tools_tests (grep's
#                                   # searching threads)
# With CI=true warnings are errors, as in scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# The compiler cache keys on paths relative to the checkout, so a clone in another folder (CI's)
# reuses what an earlier build compiled from the same sources.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
# The test suites use precompiled headers, which the compiler cache takes only with these.
export CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
bash "$root/scripts/deps.sh" --test
mode=${1:-fast}
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}
jobs=$(nproc)
case "$mode" in
  fast|fast-build)
    build="$root/build-sanitize"
    # -O0 compiles about 3.5 times faster than -O2 under ASan; line tables keep reports useful.
    cmake -S "$root" -B "$build" -G Ninja -DREBOUND_SANITIZE=ON -DREBOUND_TESTS=ON \
      -DREBOUND_WERROR=$werror -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" >/dev/null
    # Every fuzz target's replay, as tests/fuzz/CMakeLists.txt declares them (so a new one is
    # never left out of the build while ctest below selects its test).
    replays=$(sed -n 's/^rebound_fuzzer(\([a-z_]*\).*/fuzz_replay_\1/p' "$root/tests/fuzz/CMakeLists.txt")
    # shellcheck disable=SC2086
    cmake --build "$build" --target protocol_tests session_tests tools_tests mcp_tests \
      extensions_tests policy_tests $replays
    [ "$mode" = fast-build ] && exit 0
    ctest --test-dir "$build" \
      -R '^(protocol_tests|session_tests|tools_tests|mcp_tests|extensions_tests|policy_tests|fuzz_replay)\.' \
      --output-on-failure -j "$jobs"
    ;;
  full)
    build="$root/build-asan"
    bash "$root/scripts/node_deps.sh"  # the tests against npm clients run here too
    cmake -S "$root" -B "$build" -G Ninja -DREBOUND_SANITIZE=ON -DREBOUND_TESTS=ON \
      -DREBOUND_WERROR=$werror >/dev/null
    cmake --build "$build"
    ctest --test-dir "$build" --output-on-failure -j "$jobs"
    ;;
  tsan)
    build="$root/build-tsan"
    cmake -S "$root" -B "$build" -G Ninja -DREBOUND_TSAN=ON -DREBOUND_TESTS=ON \
      -DREBOUND_WERROR=$werror >/dev/null
    cmake --build "$build" --target server_tests client_tests tools_tests rebound
    ctest --test-dir "$build" -R '^(server_tests|client_tests|tools_tests)\.' --output-on-failure \
      -j "$jobs"
    ;;
  *)
    echo "usage: bash scripts/sanitize.sh [fast|fast-build|full|tsan]" >&2
    exit 2
    ;;
esac
