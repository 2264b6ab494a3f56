#!/usr/bin/python3
"""Validates every stdout line the end-to-end tests captured against schemas/output.schema.json.

usage: validate_output.py SCHEMA_DIR CAPTURE_DIR
Fails when a line is not JSON, does not match, or when nothing was captured at all.
Lines that differ only in their integer timestamps are validated once: the timestamps are set to
0 first (a timestamp that is not a non-negative integer is left as it is and still checked).
"""
import json
import os
import re
import sys

import schema_store

TIMESTAMP = re.compile(r'"timestamp":\d+(?=[,}])')


def main(schema_dir, capture_dir):
    store = schema_store.load(schema_dir)
    output = schema_store.validator(store, "output.schema.json")
    files = sorted(f for f in os.listdir(capture_dir) if f.endswith(".jsonl")) if os.path.isdir(capture_dir) else []
    lines = failures = 0
    kinds = {}
    seen = set()
    for name in files:
        with open(os.path.join(capture_dir, name), encoding="utf-8") as f:
            for number, raw in enumerate(f, 1):
                lines += 1
                masked = TIMESTAMP.sub('"timestamp":0', raw)
                if masked in seen:
                    continue
                seen.add(masked)
                try:
                    obj = json.loads(masked)
                except ValueError as e:
                    failures += 1
                    print(f"{name}:{number}: not JSON ({e}): {raw[:120]!r}")
                    continue
                if isinstance(obj, dict) and "jsonrpc" in obj:
                    kind = ("jsonrpc-notification" if "method" in obj else
                            "jsonrpc-error" if "error" in obj else "jsonrpc-response")
                else:
                    kind = obj.get("command") if obj.get("type") == "response" else obj.get("type")
                kinds[kind] = kinds.get(kind, 0) + 1
                errors = list(output.iter_errors(obj))
                if errors:
                    failures += 1
                    best = min(errors, key=lambda e: len(list(e.path)))
                    print(f"{name}:{number}: {best.message[:300]}\n   line: {raw[:300]}")
    print(f"validated {lines} lines ({len(seen)} distinct) from {len(files)} server runs; distinct by kind: "
          + ", ".join(f"{k}={v}" for k, v in sorted(kinds.items(), key=lambda kv: str(kv[0]))))
    if lines == 0:
        print("no captured output: the end-to-end tests did not run or did not capture")
        return 1
    print(f"{lines - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
