#!/usr/bin/env python3
# A PreToolUse guard in the style Claude Code's hook documentation teaches: it reads the call
# from stdin and refuses dangerous shell commands with exit 2 and a reason on stderr. Written for
# Claude Code (matcher "Bash", tool_input.command); run unchanged by Rebound's tests.
import json
import re
import sys

BLOCKED = [
    (r"\brm\s+-rf\s+/", "Refusing to delete from the root"),
    (r"\bgit\s+push\s+(--force|-f)\b", "Force pushes are not allowed"),
]

try:
    data = json.load(sys.stdin)
except json.JSONDecodeError as e:
    print(f"Error: invalid JSON input: {e}", file=sys.stderr)
    sys.exit(1)

command = data.get("tool_input", {}).get("command", "")
for pattern, message in BLOCKED:
    if re.search(pattern, command):
        print(f"{message}: {command}", file=sys.stderr)
        sys.exit(2)
sys.exit(0)
