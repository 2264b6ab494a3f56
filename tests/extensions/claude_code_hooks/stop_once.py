#!/usr/bin/env python3
# A Stop hook in Claude Code's style: asks for one more turn, and uses stop_hook_active (as
# Claude Code's documentation recommends) so that it never loops.
import json
import sys

data = json.load(sys.stdin)
if data.get("stop_hook_active"):
    sys.exit(0)
print(json.dumps({"decision": "block", "reason": "Run the tests before you stop."}))
