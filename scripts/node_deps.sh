#!/usr/bin/env bash
# Installs the npm packages of tests/node (the pinned versions of its package-lock.json) with
# `npm ci`, only when node_modules does not match the lock already (idempotent). Node and npm
# come from the machine, or from apt (scripts/deps.sh) when missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir="$root/tests/node"
stamp="$dir/node_modules/.rebound-lock.sha256"
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
echo "node-deps: npm ci in tests/node" >&2
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
echo "$want" >"$stamp"
