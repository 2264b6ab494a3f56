#!/usr/bin/env python3
# A Rebound extension that appends every retry event of the session to retries.log.
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        answer = {"protocolVersion": 1, "events": ["auto_retry_start", "auto_retry_end"]}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": answer}), flush=True)
    elif msg.get("method") == "event":
        open("retries.log", "a").write(json.dumps(msg["params"]) + "\n")
