#!/usr/bin/python3
"""Runs `rebound -p` in a few ways and checks every stdout line against the schemas (oneshot.md
section 17): in stream-json the session header first, then events (events.schema.json) and
heartbeats, and the result last; in json the result alone.

usage: validate_oneshot.py REBOUND SCHEMA_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

import schema_store

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "oneshot"))
import oneshot_workdir  # noqa: E402

RUNS = [
    # (name, script, settings, extra args)
    ("plain", [{"text": "Hello there"}], {}, []),
    ("tool call", [{"toolCalls": [{"name": "bash", "arguments": {"command": "echo hi"}}]}, {"text": "done"}], {}, []),
    ("retry then ok", [{"error": "503 overloaded"}, {"text": "ok"}], {"retry": {"baseDelayMs": 300}},
     ["--heartbeat-ms", "100"]),
    ("backoff cut by the deadline", [{"error": "429 rate limited"}] * 3, {"retry": {"baseDelayMs": 60000}},
     ["--timeout", "0.4", "--heartbeat-ms", "100"]),
    ("hung tool", [{"toolCalls": [{"name": "bash", "arguments": {"command": "sleep 30"}}]}], {},
     ["--timeout", "0.4", "--heartbeat-ms", "100"]),
    ("refused request", [{"error": "401 Incorrect API key provided"}], {}, []),
    ("denied call", [{"toolCalls": [{"name": "bash", "arguments": {"command": "rm -rf x"}}]}, {"text": "ok"}], {},
     ["--disallowed-tools", "Bash(rm:*)"]),
    ("max turns", [{"toolCalls": [{"name": "bash", "arguments": {"command": "true"}}]}, {"text": "x"}], {},
     ["--max-turns", "1"]),
    ("structured output", [{"text": "plain"}, {"toolCalls": [{"name": "structured_output", "arguments": {"n": 1}}]}],
     {}, ["--json-schema", '{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}']),
    ("no structured output", [{"text": "plain"}], {},
     ["--json-schema", '{"type":"object","required":["n"]}', "--json-schema-retries", "1"]),
    ("slow answer", [{"text": "ok", "delayMs": 350}], {}, ["--heartbeat-ms", "100"]),
    ("slow hook", [{"toolCalls": [{"name": "bash", "arguments": {"command": "true"}}]}, {"text": "ok"}],
     {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "sleep 0.35"}]}]}},
     ["--heartbeat-ms", "100"]),
    ("interceptor pending", [{"toolCalls": [{"name": "bash", "arguments": {"command": "true"}}]}, {"text": "ok"}],
     {"extensions": {"guard": {"command": "python3", "timeoutMs": 20000, "env": {"EXT_MODE": "hang"},
                               "args": [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                     "extensions", "fixtures", "ext_fixture.py")]}}},
     ["--heartbeat-ms", "100", "--timeout", "1.5"]),
    ("MCP server starting", [{"text": "ok"}],
     {"mcpServers": {"slow": {"command": "sleep", "args": ["30"], "startupTimeoutMs": 350}}},
     ["--heartbeat-ms", "100"]),
    ("overflow compaction", [{"toolCalls": [{"name": "bash", "arguments": {"command": "true"}}]},
                             {"error": "400 This model's maximum context length is 128000 tokens"},
                             {"text": "summary", "delayMs": 350}, {"text": "ok"}], {},
     ["--heartbeat-ms", "100"]),
]


def run(binary, script, settings, extra, fmt):
    with tempfile.TemporaryDirectory(prefix="rebound-oneshot-schema-") as d:
        env = oneshot_workdir.prepare(d, script, settings)
        out = subprocess.run([binary, "-p", "go", "--output-format", fmt, "--agent-dir", os.path.join(d, "agent"),
                              "--provider", "scripted", "--script", os.path.join(d, "script.json"), *extra],
                             cwd=os.path.join(d, "work"), env=env, stdin=subprocess.DEVNULL,
                             capture_output=True, timeout=30)
        return [l for l in out.stdout.decode().split("\n") if l]


def main(binary, schema_dir):
    store = schema_store.load(schema_dir)
    one = {name: jsonschema_for(store, name) for name in ("session-header", "heartbeat", "oneshot-result")}
    events = schema_store.validator(store, "events.schema.json")
    failures = lines = 0
    kinds = {}

    def check(validator, obj, where):
        nonlocal failures
        errors = list(validator.iter_errors(obj))
        if errors:
            failures += 1
            print(f"{where}: {errors[0].message[:300]}\n   line: {json.dumps(obj)[:300]}")

    for name, script, settings, extra in RUNS:
        for fmt in ("stream-json", "json"):
            out = run(binary, script, settings, extra, fmt)
            lines += len(out)
            parsed = [json.loads(l) for l in out]
            where = f"{name} ({fmt})"
            if not parsed or parsed[-1].get("type") != "result":
                failures += 1
                print(f"{where}: the last line is not the result")
                continue
            if sum(1 for p in parsed if p.get("type") == "result") != 1:
                failures += 1
                print(f"{where}: more than one result line")
            check(one["oneshot-result"], parsed[-1], where)
            if fmt == "json":
                if len(parsed) != 1:
                    failures += 1
                    print(f"{where}: {len(parsed)} lines")
                continue
            check(one["session-header"], parsed[0], where + " header")
            for p in parsed[1:-1]:
                kind = p.get("type") + (":" + p["waiting"] if p.get("type") == "heartbeat" else "")
                kinds[kind] = kinds.get(kind, 0) + 1
                check(one["heartbeat"] if p.get("type") == "heartbeat" else events, p, where)
    print(f"validated {lines} lines; middle lines by type: "
          + ", ".join(f"{k}={v}" for k, v in sorted(kinds.items())))
    for waiting in ("model", "backoff", "tool", "hook", "extension", "mcp", "compaction"):
        if "heartbeat:" + waiting not in kinds:
            failures += 1
            print(f"no heartbeat waiting for {waiting} was seen")
    print(f"{failures} failed")
    return 1 if failures else 0


def jsonschema_for(store, name):
    """A validator of one $defs entry of oneshot.schema.json."""
    import jsonschema
    doc = store["oneshot.schema.json"]
    resolver = jsonschema.RefResolver(base_uri=doc["$id"], referrer=doc, store=store)
    return jsonschema.Draft202012Validator(doc["$defs"][name], resolver=resolver)


if __name__ == "__main__":
    sys.exit(main(os.path.abspath(sys.argv[1]), sys.argv[2]))
