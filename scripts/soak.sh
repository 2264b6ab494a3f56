#!/usr/bin/env bash
# Builds the release binary and the soak driver (bench/soak.cpp), then runs it: one server,
# PROMPTS prompts (default 10000) against the fake LLM server with a seeded mix of failures.
# Usage: bash scripts/soak.sh [PROMPTS] [SEED]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh"
build="$root/build-bench"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DREBOUND_BENCH=ON >/dev/null
cmake --build "$build" --target bench_soak
"$build/bench/bench_soak" "${1:-10000}" "${2:-20261130}"
