#!/usr/bin/env python3
# A UserPromptSubmit hook in Claude Code's style: blocks prompts that carry a password with a
# JSON decision, otherwise prints context (plain stdout becomes context for the model).
import json
import sys

data = json.load(sys.stdin)
prompt = data.get("prompt", "")
if "password" in prompt.lower():
    print(json.dumps({"decision": "block", "reason": "Prompts must not contain passwords"}))
    sys.exit(0)
print(f"Project directory: {data['cwd']}")
