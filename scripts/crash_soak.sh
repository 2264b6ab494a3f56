#!/usr/bin/env bash
# The crash soak of runtime.md section 8: builds the release binary, then RUNS runs (default
# 1000), CONCURRENCY at once (default 4), each killed with SIGKILL at a random moment of a
# scripted batch of bash and write calls and loaded again with --session; the summary goes to
# stdout (tests/crash/crash_soak.py says what is checked).
# Usage: bash scripts/crash_soak.sh [RUNS] [CONCURRENCY] [SEED]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh"
build="$root/build-bench"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREBOUND_BENCH=ON >/dev/null
cmake --build "$build" --target rebound
python3 "$root/tests/crash/crash_soak.py" "$build/server/rebound" "${1:-1000}" "${2:-4}" \
  --seed "${3:-20261207}"
