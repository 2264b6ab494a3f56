#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan+UBSan) and runs each for SECONDS (default 60),
# starting from the saved inputs in tests/fuzz/corpus/<target>.tar.gz (unpacked into
# build-fuzz/seeds/). New inputs go to build-fuzz/corpus/, crashes to build-fuzz/artifacts/.
# To keep new inputs: merge them with the seeds into a fresh directory
# (fuzz_<target> -merge=1 DIR build-fuzz/seeds/<target> build-fuzz/corpus/<target>), then
# python3 scripts/fuzz_corpus.py pack <target> DIR.
# Usage: bash scripts/fuzz.sh [SECONDS] [TARGET...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh"
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(protocol json_fast sse retry_text script session_file walker regex edit acp mcp hooks extension prompts policy json_schema responses gemini json_template anthropic request deny_forms)
build="$root/build-fuzz"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DREBOUND_FUZZ=ON -DREBOUND_TESTS=OFF >/dev/null
cmake --build "$build" --target $(printf 'fuzz_%s ' "${targets[@]}")
mkdir -p "$build/artifacts"
for t in "${targets[@]}"; do
  mkdir -p "$build/corpus/$t"
  rm -rf "$build/seeds/$t"
  python3 "$root/scripts/fuzz_corpus.py" unpack "$t" "$build/seeds/$t"
  echo "=== fuzz_$t for ${seconds}s" >&2
  "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t-" "$build/corpus/$t" "$build/seeds/$t" \
    2>&1 | grep -E "^(stat::number_of_executed_units|stat::new_units_added|==|SUMMARY|.*ERROR)" || true
done
