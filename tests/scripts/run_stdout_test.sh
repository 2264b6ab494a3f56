#!/usr/bin/env bash
# scripts/run.sh on a machine that still has to install packages and build: whatever apt and the
# build print must not reach stdout, which carries protocol lines only (`run.sh | jq` works on
# the first run too). apt-get, dpkg-query, sudo and cmake are replaced by fakes that print ~100
# lines on stdout; the server is the one this build made.
# Usage: run_stdout_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
root=$1
build=$2
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
for tool in apt-get cmake; do
  printf '#!/bin/sh\nfor i in $(seq 1 50); do echo "%s: noise $i"; done\n' "$tool" >"$fake/$tool"
done
printf '#!/bin/sh\nexit 1\n' >"$fake/dpkg-query"  # every package "missing"
printf '#!/bin/sh\nexec "$@"\n' >"$fake/sudo"
chmod +x "$fake"/*
out=$(PATH="$fake:$PATH" REBOUND_BUILD_DIR="$build" bash "$root/scripts/run.sh" 2>"$fake/stderr")
printf '%s\n' "$out" | python3 -c '
import json, sys
lines = sys.stdin.read().splitlines()
assert lines, "no output"
for n, line in enumerate(lines, 1):
    try:
        value = json.loads(line)
    except ValueError:
        sys.exit("stdout line %d is not JSON: %r" % (n, line[:120]))
    assert isinstance(value, dict), "stdout line %d is not an object" % n
assert any(json.loads(l).get("type") == "agent_end" for l in lines), "no agent_end"
print("%d protocol lines, nothing else" % len(lines))
'
grep -q "apt-get: noise 50" "$fake/stderr" || { echo "the fake apt-get did not run"; exit 1; }
grep -q "cmake: noise 50" "$fake/stderr" || { echo "the fake cmake did not run"; exit 1; }
