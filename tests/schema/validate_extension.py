#!/usr/bin/python3
"""Validates every line Rebound wrote to an extension process in the tests against
schemas/extension.schema.json (extensions.md section 12).

usage: validate_extension.py SCHEMA_DIR CAPTURE_DIR
CAPTURE_DIR holds what the test extension (tests/extensions/fixtures/ext_fixture.py) read, one
file per extension run, byte for byte. An event's params are also checked as the pi line they
are (events.schema.json, through the schema's reference). No captured line at all fails.
"""
import json
import os
import sys

import schema_store


def main():
    schema_dir, capture_dir = sys.argv[1], sys.argv[2]
    validator = schema_store.validator(schema_store.load(schema_dir), "extension.schema.json")
    lines = bad = 0
    kinds = {}
    for name in sorted(os.listdir(capture_dir)) if os.path.isdir(capture_dir) else []:
        with open(os.path.join(capture_dir, name), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                lines += 1
                message = json.loads(line)
                kind = message.get("method") or ("error" if "error" in message else "result")
                kinds[kind] = kinds.get(kind, 0) + 1
                errors = list(validator.iter_errors(message))
                if errors:
                    bad += 1
                    print(f"{name}:{number}: {errors[0].message[:300]}\n   line: {line[:300]}")
    print(f"validated {lines} lines written to extensions; by kind: "
          + ", ".join(f"{k}={v}" for k, v in sorted(kinds.items())))
    if lines == 0:
        print("no captured line: the extension tests did not run")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
