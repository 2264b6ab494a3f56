#!/usr/bin/env bash
# Builds rebound and runs the main job: an example conversation from examples/ piped into the
# server on its embedded default (the offline scripted provider), showing the event stream.
# Usage: bash scripts/run.sh [examples/FILE.jsonl]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh"
build="$root/build"
cmake -S "$root" -B "$build" -G Ninja -DREBOUND_TESTS=OFF >/dev/null
cmake --build "$build" --target rebound
example=${1:-$root/examples/hello.jsonl}
echo "--- $example | rebound --no-session (stdout: one JSON object per line)" >&2
agent=$(mktemp -d)
trap 'rm -rf "$agent"' EXIT
"$build/server/rebound" --agent-dir "$agent" --no-session < "$example"
