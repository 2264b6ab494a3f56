#!/usr/bin/env bash
# The one-shot soak of oneshot.md section 16: builds the release binary, then RUNS one-shot runs
# (default 1000), CONCURRENCY at once (default 16), with deadlines of 1 to 5 s, hung streams and
# tools, 429s that never end and random signals; the summary goes to stdout and, as JSON, to
# build-bench/oneshot_soak.json.
# Usage: bash scripts/oneshot_soak.sh [RUNS] [CONCURRENCY] [SEED]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh"
build="$root/build-bench"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREBOUND_BENCH=ON >/dev/null
cmake --build "$build" --target rebound
python3 "$root/tests/oneshot/oneshot_soak.py" "$build/server/rebound" "${1:-1000}" "${2:-16}" \
  --seed "${3:-20261206}" --json "$build/oneshot_soak.json"
