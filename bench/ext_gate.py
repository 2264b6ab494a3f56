#!/usr/bin/env python3
# The benchmarks' extensions (bench/hooks_bench.cpp, bench/stream_bench.cpp). `gate`: a tool_call
# interceptor that allows every call at once, subscribed to no event. `sink`: subscribed to every
# event in the delta form, reading them and doing nothing else.
import json
import sys

role = sys.argv[1] if len(sys.argv) > 1 else "gate"
answer = ({"protocolVersion": 1, "interceptors": ["tool_call"]} if role == "gate" else
          {"protocolVersion": 1, "events": ["*"], "messageUpdates": "delta"})
for line in sys.stdin.buffer:
    if b'"method":"event"' in line[:50]:
        continue
    message = json.loads(line)
    if message.get("method") == "initialize":
        result = answer
    elif message.get("method") == "tool_call":
        result = {"action": "allow"}
    else:
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
    sys.stdout.flush()
