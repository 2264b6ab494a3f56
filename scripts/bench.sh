#!/usr/bin/env bash
# Builds the release binary and the benchmarks, then runs them. Results go to stdout; the
# figures recorded in docs/benchmarks.md come from this command.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh"
# ripgrep, the comparison of bench_tools' grep (only the benchmarks need it).
if ! command -v rg >/dev/null 2>&1; then
  sudo=$([ "$(id -u)" -eq 0 ] || echo sudo)
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends ripgrep >&2
fi
build="$root/build-bench"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREBOUND_BENCH=ON >/dev/null
cmake --build "$build" --target bench_lifecycle bench_retry bench_stream bench_tools bench_load bench_hooks bench_cache
# Five runs each; docs/benchmarks.md gives the median of the five run medians.
for run in 1 2 3 4 5; do
  echo "--- run $run" >&2
  "$build/bench/bench_lifecycle" 31
  "$build/bench/bench_retry" 40 50
done
"$build/bench/bench_stream" 20000 5
"$build/bench/bench_stream" 20000 5 extension
# The three wire APIs side by side (providers.md): end to end, then the decoders alone.
"$build/bench/bench_stream" 20000 9 apis
"$build/bench/bench_stream" 20000 15 decode
"$build/bench/bench_tools"
"$build/bench/bench_load" 1000000 200
"$build/bench/bench_load" 100000 4000
"$build/bench/bench_hooks" 100 3
# The session tree's commands on 1,000 to 100,000 entries, beside the pi agent 0.73.1 in the same
# run (npm, installed into build-bench/pi once).
pi_dir="$build/pi"
pi_cli="$pi_dir/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"
if [ ! -f "$pi_cli" ]; then
  mkdir -p "$pi_dir"
  (cd "$pi_dir" && npm install --no-audit --no-fund @mariozechner/pi-coding-agent@0.73.1 >&2)
fi
python3 "$root/bench/session_tree_bench.py" "$build/server/rebound" "$pi_cli"
# get_entries on 100,000 entries: memory against the answer, and a command waiting behind it.
python3 "$root/bench/get_entries_bench.py" "$build/server/rebound"
# A 30-turn tool session's input cost on Claude with and without prompt caching, beside pi, on
# the strict fake (providers.md section 7.3).
"$build/bench/bench_cache" 30 "$pi_cli"
