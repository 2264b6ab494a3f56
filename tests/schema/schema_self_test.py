#!/usr/bin/python3
"""Checks that the schemas are valid draft 2020-12 and not vacuous: hand-written samples of
commands, responses and events must pass, and broken variants of them must fail.

usage: schema_self_test.py SCHEMA_DIR
"""
import json
import sys

import schema_store

MODEL = {"id": "echo", "name": "Echo", "api": "scripted", "provider": "scripted", "baseUrl": "",
         "reasoning": False, "input": ["text"],
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
         "contextWindow": 128000, "maxTokens": 16384}
USAGE = {"input": 1, "output": 2, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 3,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
ASSISTANT = {"role": "assistant", "content": [{"type": "text", "text": "hi"}], "api": "scripted",
             "provider": "scripted", "model": "echo", "usage": USAGE, "stopReason": "stop",
             "timestamp": 1733234567890}
ERROR_ASSISTANT = dict(ASSISTANT, content=[], stopReason="error", errorMessage="503 overloaded")
USER = {"role": "user", "content": [{"type": "text", "text": "hello"}], "timestamp": 1733234567890}
STATE = {"model": MODEL, "thinkingLevel": "off", "isStreaming": False, "isCompacting": False,
         "steeringMode": "one-at-a-time", "followUpMode": "one-at-a-time",
         "interruptMode": "immediate", "sessionId": "s", "autoCompactionEnabled": True,
         "messageCount": 0, "queuedMessageCount": 0}

VALID = {
    "commands.schema.json": [
        {"id": "1", "type": "prompt", "message": "hi", "images": [{"type": "image", "data": "AA", "mimeType": "image/png"}]},
        {"type": "set_auto_retry", "enabled": False},
        {"type": "abort_retry"},
        {"type": "set_thinking_level", "level": "high"},
        {"type": "set_event_filter", "events": ["agent_end"], "messageUpdates": "delta"},
        {"type": "set_event_filter", "events": None},
    ],
    "script.schema.json": [
        [{"error": "503 overloaded"}, {"text": "hello world", "chunks": 2}],
        [{"text": "Hello there", "chunks": 3, "delayMs": 0, "chunkDelayMs": 0, "thinking": "t",
          "toolCalls": [{"name": "bash", "arguments": {"command": "ls"}}],
          "usage": {"input": 10, "output": 4}, "error": "503 overloaded", "stopReason": "length",
          "hang": False}],
    ],
    "output.schema.json": [
        {"id": 1, "type": "response", "command": "get_state", "success": True, "data": STATE},
        {"type": "response", "command": "abort_retry", "success": True},
        {"type": "response", "command": "cycle_model", "success": True, "data": None},
        {"id": "x", "type": "response", "command": "set_model", "success": False, "error": "Model not found: x/y"},
        {"type": "response", "command": "parse", "success": False, "error": "Failed to parse command: expected a JSON object"},
        {"type": "agent_start"},
        {"type": "message_start", "message": USER},
        {"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "h", "partial": ASSISTANT}, "message": ASSISTANT},
        {"type": "message_end", "message": ERROR_ASSISTANT},
        {"type": "turn_end", "message": ASSISTANT, "toolResults": []},
        {"type": "agent_end", "messages": [USER, ERROR_ASSISTANT], "willRetry": True},
        {"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000, "errorMessage": "503 overloaded"},
        {"type": "auto_retry_end", "success": True, "attempt": 1},
        {"type": "auto_retry_end", "success": False, "attempt": 3, "finalError": "503 overloaded"},
        {"type": "auto_compaction_start", "reason": "overflow"},
        {"type": "auto_compaction_end", "aborted": False, "willRetry": False, "errorMessage": "Context overflow recovery failed: x"},
        {"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "h"}, "message": {"role": "assistant"}},
        {"type": "message_update", "assistantMessageEvent": {"type": "toolcall_end", "contentIndex": 2, "toolCall": {"type": "toolCall", "id": "c", "name": "bash", "arguments": {"command": "ls"}}}, "message": {"role": "assistant"}},
        {"id": "f1", "type": "response", "command": "set_event_filter", "success": True, "data": {"events": None, "messageUpdates": "delta"}},
        {"jsonrpc": "2.0", "id": 1, "result": STATE},
        {"jsonrpc": "2.0", "id": "p1", "result": None},
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32000, "message": "Model not found: x/y", "data": {"command": "set_model"}}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Failed to parse command: invalid JSON"}},
        {"jsonrpc": "2.0", "method": "agent_start", "params": {"type": "agent_start"}},
        {"jsonrpc": "2.0", "method": "message_update", "params": {"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "h"}, "message": {"role": "assistant"}}},
    ],
    "jsonrpc.schema.json": [
        {"jsonrpc": "2.0", "id": 1, "result": None},
    ],
}
INVALID = {
    "script.schema.json": [
        [],
        [{"chunks": 0}],
        [{"textt": "typo"}],
        [{"stopReason": "done"}],
        [{"toolCalls": [{"arguments": {}}]}],
        {"text": "not an array"},
    ],
    "commands.schema.json": [
        {"type": "set_auto_retry"},
        {"type": "set_auto_retry", "enabled": "yes"},
        {"type": "prompt"},
        {"type": "set_thinking_level", "level": "max"},
        {"type": "no_such_command"},
        {"type": "set_event_filter", "events": [""]},
        {"type": "set_event_filter", "messageUpdates": "partial"},
    ],
    "output.schema.json": [
        {"type": "response", "command": "get_state", "success": True},                     # data missing
        {"type": "response", "command": "get_state", "success": True, "data": dict(STATE, autoRetryEnabled=True)},
        {"type": "response", "command": "abort_retry", "success": True, "data": None},      # no data allowed
        {"type": "response", "command": "parse", "success": False, "error": "oops"},
        {"type": "response", "command": "x", "success": False},                            # no error text
        {"type": "auto_retry_end", "success": True, "attempt": 1, "finalError": "x"},
        {"type": "auto_retry_end", "success": False, "attempt": 1},
        {"type": "auto_retry_start", "attempt": 0, "maxAttempts": 3, "delayMs": 1, "errorMessage": "e"},
        {"type": "agent_end", "messages": []},
        {"type": "message_update", "assistantMessageEvent": {"type": "text_bogus", "contentIndex": 0, "partial": ASSISTANT}, "message": ASSISTANT},
        {"type": "message_end", "message": dict(ASSISTANT, stopReason="finished")},
        {"type": "no_such_event"},
        {"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "h"}, "message": ASSISTANT},
        {"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "contentIndex": 0, "delta": "h"}, "message": {"role": "assistant", "content": []}},
        {"type": "response", "command": "set_event_filter", "success": True, "data": {"events": None}},
        {"jsonrpc": "2.0", "id": 1, "result": None, "error": {"code": 1, "message": "x"}},
        {"jsonrpc": "2.0", "id": {}, "result": None},
        {"jsonrpc": "1.0", "id": 1, "result": None},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}},
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "m", "data": {"command": 1}}},
        {"jsonrpc": "2.0", "method": "agent_start", "params": {"type": "agent_end", "messages": [], "willRetry": False}},
        {"jsonrpc": "2.0", "method": "agent_start", "params": {"type": "agent_start"}, "id": 1},
        {"jsonrpc": "2.0", "method": "bogus", "params": {"type": "bogus"}},
    ],
}

# acp.schema.json has only definitions (validate_acp.py picks one per message): (def, sample).
ACP_VALID = [
    ("_rebound.auto_retry_start", {"sessionId": "S", "attempt": 1, "maxAttempts": 3, "delayMs": 2000, "errorMessage": "503 overloaded"}),
    ("_rebound.auto_retry_end", {"sessionId": "S", "success": False, "attempt": 3, "finalError": "503 overloaded"}),
    ("_rebound.auto_compaction_end", {"sessionId": "S", "aborted": False, "willRetry": True}),
    ("result._rebound.abort_retry", {}),
    ("prompt-meta", {"rebound": {"outcome": "error", "retries": 2, "errorMessage": "503 overloaded"}}),
]
ACP_INVALID = [
    ("_rebound.auto_retry_start", {"attempt": 1, "maxAttempts": 3, "delayMs": 2000, "errorMessage": "e"}),
    ("_rebound.auto_retry_start", {"sessionId": "S", "type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000, "errorMessage": "e"}),
    ("_rebound.auto_retry_end", {"sessionId": "S", "success": True, "attempt": 1, "finalError": "x"}),
    ("result._rebound.set_auto_retry", {"enabled": True}),
    ("prompt-meta", {"rebound": {"outcome": "failed", "retries": 0}}),
    ("prompt-meta", {"rebound": {"outcome": "stop"}}),
]


def acp_definitions(store):
    import jsonschema
    own = store["acp.schema.json"]
    resolver = jsonschema.RefResolver(base_uri=own["$id"], referrer=own, store=store)
    failed = passed = 0
    for expect, samples in ((True, ACP_VALID), (False, ACP_INVALID)):
        for name, doc in samples:
            v = jsonschema.Draft202012Validator({"$ref": own["$id"] + "#/$defs/" + name}, resolver=resolver)
            if v.is_valid(doc) == expect:
                passed += 1
            else:
                failed += 1
                print(f"should {'pass' if expect else 'fail'} acp {name}: {json.dumps(doc)[:160]}")
    return passed, failed


def conformance_scripts():
    """The shared conformance scenarios' scripts, when the shared folder is beside the repo."""
    import glob
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    pattern = os.path.join(here, "..", "..", "..", "shared", "conformance", "scenarios", "*.json")
    scripts = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            scenario = json.load(f)
        if "script" in scenario:
            scripts.append(scenario["script"])
    return scripts


def main(schema_dir):
    store = schema_store.load(schema_dir)
    VALID["script.schema.json"].extend(conformance_scripts())
    failed = passed = 0
    for name, docs in VALID.items():
        v = schema_store.validator(store, name)
        for d in docs:
            errs = list(v.iter_errors(d))
            if errs:
                failed += 1
                print(f"should pass {name}: {json.dumps(d)[:160]}\n   {errs[0].message[:200]}")
            else:
                passed += 1
    for name, docs in INVALID.items():
        v = schema_store.validator(store, name)
        for d in docs:
            if v.is_valid(d):
                failed += 1
                print(f"should fail {name}: {json.dumps(d)[:160]}")
            else:
                passed += 1
    acp_passed, acp_failed = acp_definitions(store)
    passed += acp_passed
    failed += acp_failed
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
