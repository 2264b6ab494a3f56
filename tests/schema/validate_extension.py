#!/usr/bin/python3
"""Validates what Rebound gave the user's code in the tests (extensions.md section 12): every
line written to an extension process against schemas/extension.schema.json, or every hook stdin
against schemas/hooks.schema.json.

usage: validate_extension.py SCHEMA_DIR CAPTURE_DIR [extension|hooks]
CAPTURE_DIR holds, one file per run, what the test extension
(tests/extensions/fixtures/ext_fixture.py) read, byte for byte (an event's params are also
checked as the pi line they are, events.schema.json), or the hook stdins the hook tests read
back. No captured line at all fails.
"""
import json
import os
import sys

import schema_store


def main():
    schema_dir, capture_dir = sys.argv[1], sys.argv[2]
    what = sys.argv[3] if len(sys.argv) > 3 else "extension"
    validator = schema_store.validator(schema_store.load(schema_dir), what + ".schema.json")
    lines = bad = 0
    kinds = {}
    for name in sorted(os.listdir(capture_dir)) if os.path.isdir(capture_dir) else []:
        with open(os.path.join(capture_dir, name), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                lines += 1
                message = json.loads(line)
                kind = (message.get("hook_event_name") or message.get("method") or
                        ("error" if "error" in message else "result"))
                kinds[kind] = kinds.get(kind, 0) + 1
                errors = list(validator.iter_errors(message))
                if errors:
                    bad += 1
                    print(f"{name}:{number}: {errors[0].message[:300]}\n   line: {line[:300]}")
    print(f"validated {lines} lines ({what}); by kind: "
          + ", ".join(f"{k}={v}" for k, v in sorted(kinds.items())))
    if lines == 0:
        print("no captured line: the tests did not run")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
