#!/usr/bin/python3
"""Validates every line `rebound --mode acp` wrote in the tests against the ACP v1 schema that the
SDK ships (by method, acp.md section 15) and schemas/acp.schema.json for Rebound's own messages.

usage: validate_acp.py SCHEMA_DIR ACP_SCHEMA_JSON CAPTURE_DIR
CAPTURE_DIR holds the ACP tests' captures: one {"from":"client"|"agent","message":…} per line, in
the order they crossed the pipe, so a response is checked against the type of the request it
answers. Checked: `session/update` params against SessionNotification, every result against the
response type of its request's method (`_rebound/*` against acp.schema.json, the prompt answer's
`_meta` too), requests to the client against their request types, errors against the JSON-RPC
error shape. An agent line of any other kind, or no captured line at all, fails.
"""
import json
import os
import sys

import jsonschema

import schema_store

RESPONSES = {
    "initialize": "InitializeResponse",
    "authenticate": "AuthenticateResponse",
    "session/new": "NewSessionResponse",
    "session/load": "LoadSessionResponse",
    "session/resume": "ResumeSessionResponse",
    "session/close": "CloseSessionResponse",
    "session/prompt": "PromptResponse",
    "session/set_mode": "SetSessionModeResponse",
}
AGENT_REQUESTS = {
    "session/request_permission": "RequestPermissionRequest",
    "fs/read_text_file": "ReadTextFileRequest",
    "fs/write_text_file": "WriteTextFileRequest",
}
ERROR = {"type": "object", "required": ["jsonrpc", "id", "error"], "additionalProperties": False,
         "properties": {"jsonrpc": {"const": "2.0"}, "id": {"type": ["string", "integer", "null"]},
                        "error": {"type": "object", "required": ["code", "message"],
                                  "additionalProperties": False,
                                  "properties": {"code": {"type": "integer"},
                                                 "message": {"type": "string", "minLength": 1},
                                                 "data": {}}}}}


def main(schema_dir, acp_schema_path, capture_dir):
    with open(acp_schema_path) as f:
        acp = json.load(f)
    defs = acp["$defs"]
    store = schema_store.load(schema_dir)
    own = store["acp.schema.json"]

    def acp_validator(name):
        return jsonschema.Draft202012Validator({"$ref": "#/$defs/" + name, "$defs": defs})

    def own_validator(name):
        resolver = jsonschema.RefResolver(base_uri=own["$id"], referrer=own, store=store)
        return jsonschema.Draft202012Validator({"$ref": own["$id"] + "#/$defs/" + name},
                                               resolver=resolver)

    cache = {}

    def check(kind, name, value):
        key = (kind, name)
        if key not in cache:
            cache[key] = acp_validator(name) if kind == "acp" else own_validator(name)
        return list(cache[key].iter_errors(value))

    files = sorted(f for f in os.listdir(capture_dir) if f.endswith(".jsonl")) \
        if os.path.isdir(capture_dir) else []
    lines = failures = 0
    kinds = {}
    for name in files:
        pending = {}  # request id (as JSON text) -> method, for the client's requests
        with open(os.path.join(capture_dir, name), encoding="utf-8") as f:
            for number, raw in enumerate(f, 1):
                entry = json.loads(raw)
                message = entry["message"]
                if entry["from"] == "client":
                    if isinstance(message, dict) and "method" in message and "id" in message:
                        pending[json.dumps(message["id"])] = message["method"]
                    continue
                lines += 1
                errors = []
                if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                    kind = "not JSON-RPC 2.0"
                    errors = ["not a JSON-RPC 2.0 object"]
                elif "method" in message and "id" not in message:
                    method = message["method"]
                    kind = "notification " + method
                    if method == "session/update":
                        errors = check("acp", "SessionNotification", message.get("params"))
                    elif method.startswith("_rebound/"):
                        errors = check("own", method.replace("/", "."), message.get("params"))
                    else:
                        errors = [f"unexpected notification {method}"]
                elif "method" in message:
                    method = message["method"]
                    kind = "request " + method
                    if method in AGENT_REQUESTS:
                        errors = check("acp", AGENT_REQUESTS[method], message.get("params"))
                        if not isinstance(message["id"], int):
                            errors.append("the id of a request to the client is not an integer")
                    else:
                        errors = [f"unexpected request {method}"]
                elif "error" in message:
                    kind = "error"
                    errors = list(jsonschema.Draft202012Validator(ERROR).iter_errors(message))
                elif "result" in message:
                    method = pending.get(json.dumps(message.get("id")))
                    kind = f"result {method}"
                    result = message["result"]
                    if method in RESPONSES:
                        errors = check("acp", RESPONSES[method], result)
                        if method == "session/prompt":
                            errors += check("own", "prompt-meta", result.get("_meta"))
                    elif method and method.startswith("_rebound/"):
                        errors = check("own", "result." + method.replace("/", "."), result)
                    else:
                        errors = [f"a result for a request the client never sent (id {message.get('id')})"]
                else:
                    kind = "unknown"
                    errors = ["neither a notification, a request, a result nor an error"]
                kinds[kind] = kinds.get(kind, 0) + 1
                if errors:
                    failures += 1
                    text = errors[0] if isinstance(errors[0], str) else errors[0].message
                    print(f"{name}:{number}: {kind}: {text[:300]}\n   line: {raw[:300]}")
    print(f"validated {lines} agent lines from {len(files)} ACP runs; by kind: "
          + ", ".join(f"{k}={v}" for k, v in sorted(kinds.items())))
    if lines == 0:
        print("no captured ACP output: the ACP tests did not run or did not capture")
        return 1
    print(f"{lines - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
