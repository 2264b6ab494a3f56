#!/usr/bin/env bash
# Builds rebound and runs the main job: an example conversation from examples/ piped into the
# server on its embedded default (the offline scripted provider's echo model), showing the
# event stream on stdout.
#   bash scripts/run.sh                      # examples/hello.jsonl, echo model
#   bash scripts/run.sh flaky                # examples/flaky*.*: two failures, two retries
# Only protocol lines reach stdout: apt and build output go to stderr. REBOUND_BUILD_DIR names
# another build directory (the tests use it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/deps.sh" >&2  # apt output is not protocol either
build="${REBOUND_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -G Ninja -DREBOUND_TESTS=OFF >/dev/null
cmake --build "$build" --target rebound >&2  # build output is not protocol: stderr
agent=$(mktemp -d)
trap 'rm -rf "$agent"' EXIT
args=(--agent-dir "$agent" --no-session)
example="$root/examples/hello.jsonl"
linger=0.5
if [ "${1:-}" = "flaky" ]; then
  example="$root/examples/flaky.jsonl"
  cp "$root/examples/flaky-settings.json" "$agent/settings.json"
  args+=(--provider scripted --script "$root/examples/flaky-script.json")
  linger=1.5
fi
echo "--- $(basename "$example") | rebound ${args[*]:2} (stdout: one JSON object per line)" >&2
# End of input is a shutdown request that aborts a running request, so stdin stays open until
# the answer had time to stream.
{ cat "$example"; sleep "$linger"; } | "$build/server/rebound" "${args[@]}"
