#!/usr/bin/env python3
"""Writes schemas/*.schema.json (except script.schema.json, which is written by hand).

Run it after changing a wire type: python3 schemas/generate.py. Unions are discriminated with
if/then on `type`, `command`, `success` and `role`, so a validator checks one branch per line.
`--check` writes nothing: it exits 1, naming each file, when a committed schema differs from
what this script writes (a test runs it).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = "--check" in sys.argv[1:]
BASE = "https://rebound.dev/schemas/"
def switch(field, cases, required=None):
    """One if/then per case of a const-valued discriminator field, plus an enum of the cases."""
    out = {"type": "object", "required": [field] + (required or []),
           "properties": {field: {"enum": list(cases)}},
           "allOf": [{"if": {"required": [field], "properties": {field: {"const": k}}}, "then": v}
                     for k, v in cases.items()]}
    return out


def ref(f, d=None): return {"$ref": (f if f != "#" else "") + (f"#/$defs/{d}" if d else "")}
def obj(props, required=None, extra=False):
    o = {"type": "object", "properties": props, "additionalProperties": extra}
    o["required"] = list(props) if required is None else required
    return o
S = {"type": "string"}; B = {"type": "boolean"}; I = {"type": "integer"}; N = {"type": "number"}
NN = {"type": "integer", "minimum": 0}
TS = {"type": "integer", "minimum": 0, "description": "epoch milliseconds"}
LEVEL = {"enum": ["off", "minimal", "low", "medium", "high", "xhigh"]}
QMODE = {"enum": ["all", "one-at-a-time"]}
IMODE = {"enum": ["immediate", "wait"]}
C = "common.schema.json"

cost = obj({"input": N, "output": N, "cacheRead": N, "cacheWrite": N})
common = {
 "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": BASE + C,
 "title": "Rebound shared wire types (protocol.md section 5 and 6)",
 "$defs": {
  "ThinkingLevel": LEVEL, "QueueMode": QMODE, "InterruptMode": IMODE,
  "ModelCost": cost,
  "Model": obj({"id": S, "name": S, "api": S, "provider": S, "baseUrl": S, "reasoning": B,
                "input": {"type": "array", "items": {"enum": ["text", "image"]}},
                "cost": ref("#", "ModelCost") | {}, "contextWindow": NN, "maxTokens": NN}),
  "Usage": obj({"input": NN, "output": NN, "cacheRead": NN, "cacheWrite": NN, "totalTokens": NN,
                "cost": obj({"input": N, "output": N, "cacheRead": N, "cacheWrite": N, "total": N})}),
  "TextContent": obj({"type": {"const": "text"}, "text": S, "textSignature": S}, ["type", "text"]),
  "ThinkingContent": obj({"type": {"const": "thinking"}, "thinking": S, "thinkingSignature": S,
                          "redacted": B},
                         ["type", "thinking"], extra=False),
  "ImageContent": obj({"type": {"const": "image"}, "data": S, "mimeType": S}),
  "ToolCall": obj({"type": {"const": "toolCall"}, "id": S, "name": S, "arguments": {"type": "object"},
                   "thoughtSignature": S}, ["type", "id", "name", "arguments"]),
  "UserMessage": obj({"role": {"const": "user"},
                      "content": {"type": "array", "items": {"oneOf": [ref("#", "TextContent"), ref("#", "ImageContent")]}},
                      "timestamp": TS}),
  "AssistantMessage": obj({"role": {"const": "assistant"},
                           "content": {"type": "array", "items": {"oneOf": [ref("#", "TextContent"), ref("#", "ThinkingContent"), ref("#", "ToolCall")]}},
                           "api": S, "provider": S, "model": S, "usage": ref("#", "Usage"),
                           "stopReason": {"enum": ["stop", "length", "toolUse", "error", "aborted"]},
                           "timestamp": TS, "responseId": S, "errorMessage": S},
                          ["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp"]),
  "Truncation": obj({"content": S, "truncated": B, "truncatedBy": {"enum": ["lines", "bytes", None]},
                     "totalLines": NN, "totalBytes": NN, "outputLines": NN, "outputBytes": NN,
                     "lastLinePartial": B, "firstLineExceedsLimit": B, "maxLines": NN, "maxBytes": NN}),
  "ToolDetails": obj({"truncation": ref("#", "Truncation"), "fullOutputPath": S, "diff": S,
                      "firstChangedLine": NN, "matchLimitReached": NN, "resultLimitReached": NN,
                      "entryLimitReached": NN, "linesTruncated": {"const": True},
                      # MCP tools (mcp.md sections 5 and 6): results, and progress updates
                      "server": S, "tool": S, "structuredContent": {},
                      "progress": N, "total": N, "message": S}, [], extra=True,
                     ) | {"description": "tools.md section 4 and mcp.md sections 5-6 (the keys named here are typed); "
                                         "an extension tool's details are its own (extensions.md section 4.5); {} in every error result"},
  "ToolResult": obj({"content": {"type": "array", "items": {"oneOf": [ref("#", "TextContent"), ref("#", "ImageContent")]}},
                     "details": ref("#", "ToolDetails")}, ["content"]),
  "RetryPolicy": obj({"maxRetries": NN, "baseDelayMs": NN, "maxDelayMs": NN, "jitter": {"type": "number", "minimum": 0, "maximum": 1},
                      "honorRetryAfter": B, "maxServerDelayMs": NN, "deadlineMs": NN, "source": {"enum": ["settings", "session"]}},
                     ["maxRetries", "baseDelayMs", "jitter", "honorRetryAfter", "source"]),
  "ErrorClass": {"enum": ["usage_limit", "rate_limit", "overloaded", "timeout", "network", "server_error", "unknown"]},
  "RetryState": obj({"enabled": B, "phase": {"enum": ["idle", "backoff", "request"]}, "attempt": NN,
                     "maxAttempts": NN, "delayMs": NN, "chainStartedAt": NN, "nextAttemptAt": NN,
                     "lastError": obj({"message": S, "errorClass": ref("#", "ErrorClass"),
                                       "httpStatus": {"type": "integer", "minimum": 100, "maximum": 599}},
                                      ["message", "errorClass"]),
                     "policy": ref("#", "RetryPolicy")}, ["enabled", "phase", "attempt", "policy"]),
  "ToolDefinition": obj({"name": S, "description": S,
                         "parameters": {"type": "object", "required": ["type"], "properties": {"type": {"const": "object"}}}}),
  "ToolResultMessage": obj({"role": {"const": "toolResult"}, "toolCallId": S, "toolName": S,
                            "content": {"type": "array", "items": {"oneOf": [ref("#", "TextContent"), ref("#", "ImageContent")]}},
                            "details": ref("#", "ToolDetails"), "isError": B, "timestamp": TS},
                           ["role", "toolCallId", "toolName", "content", "isError", "timestamp"]),
  "BashExecutionMessage": obj({"role": {"const": "bashExecution"}, "command": S, "output": S,
                               "exitCode": {"type": ["integer", "null"]}, "cancelled": B, "truncated": B,
                               "fullOutputPath": S, "timestamp": TS},
                              ["role", "command", "output", "exitCode", "cancelled", "truncated", "timestamp"]),
  "CompactionSummaryMessage": obj({"role": {"const": "compactionSummary"}, "summary": S,
                                   "tokensBefore": NN, "timestamp": TS}),
  # extensions.md section 7.4: pi's custom message (hook context, 3.9) and its session-file entry.
  "CustomMessage": obj({"role": {"const": "custom"}, "customType": S,
                        "content": {"oneOf": [S, {"type": "array", "items": {"oneOf": [ref("#", "TextContent"), ref("#", "ImageContent")]}}]},
                        "display": B, "details": {}, "timestamp": TS},
                       ["role", "customType", "content", "display", "timestamp"]),
  "CustomMessageEntry": obj({"type": {"const": "custom_message"}, "id": S, "parentId": {"type": ["string", "null"]},
                             "timestamp": S, "customType": S,
                             "content": {"oneOf": [S, {"type": "array", "items": {"oneOf": [ref("#", "TextContent"), ref("#", "ImageContent")]}}]},
                             "display": B, "details": {}},
                            ["type", "id", "parentId", "timestamp", "customType", "content", "display"]),
  "AgentMessage": switch("role", {"user": ref("#", "UserMessage"), "assistant": ref("#", "AssistantMessage"),
                                   "toolResult": ref("#", "ToolResultMessage"),
                                   "bashExecution": ref("#", "BashExecutionMessage"),
                                   "compactionSummary": ref("#", "CompactionSummaryMessage"),
                                   "custom": ref("#", "CustomMessage")}),
  "RpcSessionState": obj({"model": ref("#", "Model"), "thinkingLevel": ref("#", "ThinkingLevel"),
                          "isStreaming": B, "isCompacting": B, "steeringMode": ref("#", "QueueMode"),
                          "followUpMode": ref("#", "QueueMode"), "interruptMode": ref("#", "InterruptMode"),
                          "sessionFile": S, "sessionId": S, "sessionName": S, "autoCompactionEnabled": B,
                          "messageCount": NN, "queuedMessageCount": NN},
                         ["thinkingLevel", "isStreaming", "isCompacting", "steeringMode", "followUpMode",
                          "interruptMode", "sessionId", "autoCompactionEnabled", "messageCount", "queuedMessageCount"]),
  "EventFilter": obj({"events": {"oneOf": [{"type": "null"}, {"type": "array", "items": {"type": "string", "minLength": 1}}]},
                      "messageUpdates": {"enum": ["full", "delta"]}}),
  "CompactionResult": obj({"summary": S, "firstKeptEntryId": S, "tokensBefore": NN, "details": {}},
                          ["summary", "firstKeptEntryId", "tokensBefore"]),
  # mcp.md section 8: one MCP server as get_mcp_servers shows it.
  "McpServer": obj({"name": {"type": "string", "minLength": 1},
                    "status": {"enum": ["starting", "ready", "failed", "disabled"]},
                    "tools": {"type": "array", "items": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"}},
                    "error": S, "serverInfo": obj({"name": S, "version": S})},
                   ["name", "status", "tools"]),
 # extensions.md section 7.1: get_extensions and restart_extension.
 "ExtensionInfo": obj({"name": {"type": "string", "minLength": 1},
                       "status": {"enum": ["starting", "ready", "failed", "disabled", "untrusted"]},
                       "source": {"enum": ["user", "project", "cli"]},
                       "events": {"type": "array", "items": S},
                       "messageUpdates": {"enum": ["full", "delta"]},
                       "interceptors": {"type": "array", "items": {"const": "tool_call"}},
                       "tools": {"type": "array", "items": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"}},
                       "commands": {"type": "array", "items": S}, "failOpen": B, "error": S,
                       "serverInfo": obj({"name": S, "version": S})},
                      ["name", "status", "source", "events", "interceptors", "tools", "commands", "failOpen"]),
 "HookInfo": obj({"event": S, "matcher": S, "command": S, "timeoutMs": {"type": "integer", "minimum": 1},
                  "async": B, "source": {"enum": ["user", "project"]},
                  "status": {"enum": ["active", "invalid", "untrusted", "disabled"]}, "error": S, "lastError": S},
                 ["event", "command", "timeoutMs", "async", "source", "status"]),
 # policy.md section 7: the effective permission policy.
 "PermissionMode": {"enum": ["default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"]},
 "Policy": obj({"mode": ref("#", "PermissionMode"),
                "modeSource": {"enum": ["default", "global", "project", "cli", "session"]},
                "prompts": {"enum": ["client", "none"]}, "askTimeoutMs": {"type": "integer", "minimum": 1},
                "workingDirectories": {"type": "array", "items": S},
                "rules": {"type": "array", "items": obj({"behavior": {"enum": ["allow", "ask", "deny"]},
                                                         "rule": S, "tool": S, "specifier": S,
                                                         "source": {"enum": ["global", "project", "cli", "session"]}},
                                                        ["behavior", "rule", "tool", "source"])},
                "removedTools": {"type": "array", "items": S},
                "sandbox": obj({"enabled": B, "status": {"enum": ["off", "checking", "active", "unavailable"]},
                                "reason": S, "network": B, "bwrap": S, "bwrapVersion": S, "workspace": S,
                                "writableRoots": {"type": "array", "items": S},
                                "readOnlyPaths": {"type": "array", "items": S},
                                "denyRead": {"type": "array", "items": S},
                                "mcpServers": {"type": "array", "items": S}},
                               ["enabled", "status", "network", "workspace", "writableRoots", "readOnlyPaths",
                                "denyRead", "mcpServers"]),
                "sources": {"type": "array", "items": obj({"kind": {"enum": ["global", "project"]}, "path": S, "read": B})}}),
 "Extensions": obj({"extensions": {"type": "array", "items": ref("#", "ExtensionInfo")},
                    "hooks": {"type": "array", "items": ref("#", "HookInfo")}}),
 # extensions.md section 7.5, sessions.md section 11: one entry of get_commands.
 "SlashCommand": obj({"name": {"type": "string", "minLength": 1}, "description": S,
                      "source": {"enum": ["extension", "prompt", "skill"]},
                      "sourceInfo": obj({"path": S, "source": {"enum": ["auto", "local", "cli"]},
                                         "scope": {"enum": ["user", "project", "temporary"]},
                                         "origin": {"const": "top-level"}, "baseDir": S},
                                        ["path", "source", "scope", "origin", "baseDir"])},
                     ["name", "description", "source", "sourceInfo"]),
 }}
common["$defs"]["Model"]["properties"]["cost"] = ref("#", "ModelCost")

# Commands
images = {"type": "array", "items": ref(C, "ImageContent")}
cmds = {
 "prompt": {"message": S, "images": images, "streamingBehavior": {"enum": ["steer", "followUp"]}},
 "steer": {"message": S, "images": images},
 "follow_up": {"message": S, "images": images},
 "abort": {}, "new_session": {"parentSession": S}, "get_state": {},
 "set_model": {"provider": S, "modelId": S}, "cycle_model": {}, "get_available_models": {},
 "set_thinking_level": {"level": ref(C, "ThinkingLevel")}, "cycle_thinking_level": {},
 "set_steering_mode": {"mode": ref(C, "QueueMode")}, "set_follow_up_mode": {"mode": ref(C, "QueueMode")},
 "set_interrupt_mode": {"mode": ref(C, "InterruptMode")},
 "compact": {"customInstructions": S}, "set_auto_compaction": {"enabled": B}, "set_auto_retry": {"enabled": B},
 "abort_retry": {}, "bash": {"command": S}, "abort_bash": {}, "get_session_stats": {},
 "switch_session": {"sessionPath": S}, "get_last_assistant_text": {}, "get_messages": {},
 "get_tools": {},
 "get_retry_state": {}, "retry_now": {},
 "get_mcp_servers": {"wait": {"type": ["boolean", "null"]}}, "restart_mcp_server": {"name": S},
 "get_extensions": {"wait": {"type": ["boolean", "null"]}}, "restart_extension": {"name": S},
 "get_commands": {},
 # policy.md section 7
 "get_policy": {"wait": {"type": ["boolean", "null"]}}, "set_permission_mode": {"mode": ref(C, "PermissionMode")},
 # sessions.md section 2
 "fork": {"entryId": S}, "clone": {}, "get_fork_messages": {}, "set_session_name": {"name": S},
 "get_entries": {"since": S}, "export_html": {"outputPath": S},
 "extension_ui_response": {"id": S, "value": S, "confirmed": B, "cancelled": B},
 "set_event_filter": {"events": {"oneOf": [{"type": "null"}, {"type": "array", "items": {"type": "string", "minLength": 1}}]},
                      "messageUpdates": {"enum": ["full", "delta"]}},
 "set_retry_policy": {"reset": B, "maxRetries": {"type": ["integer", "null"], "minimum": 0, "maximum": 100},
                      "baseDelayMs": {"type": ["integer", "null"], "minimum": 0, "maximum": 3600000},
                      "maxDelayMs": {"type": ["integer", "null"], "minimum": 0, "maximum": 3600000},
                      "jitter": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                      "honorRetryAfter": {"type": ["boolean", "null"]},
                      "maxServerDelayMs": {"type": ["integer", "null"], "minimum": 0, "maximum": 86400000},
                      "deadlineMs": {"type": ["integer", "null"], "minimum": 0, "maximum": 86400000}},
}
required = {"prompt": ["message"], "steer": ["message"], "follow_up": ["message"], "set_model": ["provider", "modelId"],
            "set_thinking_level": ["level"], "set_steering_mode": ["mode"], "set_follow_up_mode": ["mode"],
            "set_interrupt_mode": ["mode"], "set_auto_compaction": ["enabled"], "set_auto_retry": ["enabled"],
            "bash": ["command"], "switch_session": ["sessionPath"], "restart_mcp_server": ["name"],
            "restart_extension": ["name"], "extension_ui_response": ["id"], "fork": ["entryId"],
            "set_session_name": ["name"], "set_permission_mode": ["mode"]}
cdefs = {}
for name, props in cmds.items():
    p = {"id": {}, "type": {"const": name}} | props
    cdefs[name] = {"type": "object", "properties": p, "required": ["type"] + required.get(name, []),
                   "additionalProperties": True, "description": "unknown extra fields are ignored"}
commands = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": BASE + "commands.schema.json",
            "title": "A command line on stdin (protocol.md section 2)",
            **switch("type", {n: ref("#", n) for n in cmds}), "$defs": cdefs}

# Responses
NODATA = "none"
# A session file entry (sessions.md section 1): its own keys after these are open.
ENTRY_ID = {"type": "string", "minLength": 1}
ENTRY = obj({"type": {"type": "string", "minLength": 1}, "id": ENTRY_ID,
             "parentId": {"oneOf": [ENTRY_ID, {"type": "null"}]}, "timestamp": S},
            ["type", "id", "parentId", "timestamp"], extra=True)
model = ref(C, "Model")
data = {
 "prompt": NODATA, "steer": NODATA, "follow_up": NODATA, "abort": NODATA,
 "new_session": obj({"cancelled": B}), "get_state": ref(C, "RpcSessionState"), "set_model": model,
 "cycle_model": {"oneOf": [{"type": "null"}, obj({"model": model, "thinkingLevel": ref(C, "ThinkingLevel"), "isScoped": B})]},
 "get_available_models": obj({"models": {"type": "array", "items": model}}),
 "set_thinking_level": NODATA,
 "cycle_thinking_level": {"oneOf": [{"type": "null"}, obj({"level": ref(C, "ThinkingLevel")})]},
 "set_steering_mode": NODATA, "set_follow_up_mode": NODATA, "set_interrupt_mode": NODATA,
 "compact": ref(C, "CompactionResult"), "set_auto_compaction": NODATA, "set_auto_retry": NODATA, "abort_retry": NODATA,
 "bash": obj({"output": S, "exitCode": {"type": ["integer", "null"]}, "cancelled": B, "truncated": B, "fullOutputPath": S},
             ["output", "exitCode", "cancelled", "truncated"]),
 "abort_bash": NODATA,
 "get_session_stats": obj({"sessionFile": S, "sessionId": S, "userMessages": NN, "assistantMessages": NN,
                           "toolCalls": NN, "toolResults": NN, "totalMessages": NN,
                           "tokens": obj({"input": NN, "output": NN, "cacheRead": NN, "cacheWrite": NN, "total": NN}),
                           "cost": N},
                          ["sessionId", "userMessages", "assistantMessages", "toolCalls", "toolResults", "totalMessages", "tokens", "cost"]),
 "switch_session": obj({"cancelled": B}),
 "get_last_assistant_text": {"oneOf": [obj({"text": S}), obj({}, [])]},
 "get_messages": obj({"messages": {"type": "array", "items": ref(C, "AgentMessage")}}),
 "get_tools": obj({"tools": {"type": "array", "items": ref(C, "ToolDefinition")}}),
 "get_retry_state": ref(C, "RetryState"),
 "get_mcp_servers": obj({"servers": {"type": "array", "items": ref(C, "McpServer")}}),
 "restart_mcp_server": ref(C, "McpServer"),
 "get_extensions": ref(C, "Extensions"),
 "restart_extension": ref(C, "ExtensionInfo"),
 "get_policy": ref(C, "Policy"),
 "set_permission_mode": obj({"mode": ref(C, "PermissionMode")}),
 "get_commands": obj({"commands": {"type": "array", "items": ref(C, "SlashCommand")}}),
 "set_event_filter": ref(C, "EventFilter"),
 # sessions.md section 14
 "get_fork_messages": obj({"messages": {"type": "array", "items": obj({"entryId": ENTRY_ID, "text": S})}}),
 "fork": obj({"text": S, "cancelled": {"const": False}}),
 "clone": obj({"cancelled": {"const": False}}),
 "set_session_name": NODATA,
 "export_html": obj({"path": {"type": "string", "pattern": "^/"}}),
 "get_entries": obj({"entries": {"type": "array", "items": ENTRY},
                     "leafId": {"oneOf": [ENTRY_ID, {"type": "null"}]}}),
 "set_retry_policy": ref(C, "RetryPolicy"),
 "retry_now": {"oneOf": [obj({"skipped": {"const": True}, "attempt": {"type": "integer", "minimum": 1}}),
                         obj({"skipped": {"const": False}, "phase": {"enum": ["idle", "request"]}})]},
}
rdefs = {
 "ParseError": obj({"id": {}, "type": {"const": "response"}, "command": {"const": "parse"}, "success": {"const": False},
                    "error": {"type": "string", "pattern": "^Failed to parse command: "}}, ["type", "command", "success", "error"]),
 "Error": obj({"id": {}, "type": {"const": "response"}, "command": {"type": "string", "not": {"const": "parse"}},
               "success": {"const": False}, "error": {"type": "string", "minLength": 1}}, ["type", "command", "success", "error"]),
}
success_refs = []
for name, d in data.items():
    props = {"id": {}, "type": {"const": "response"}, "command": {"const": name}, "success": {"const": True}}
    req = ["type", "command", "success"]
    if d != NODATA:
        props["data"] = d; req.append("data")
    key = "Success_" + name
    rdefs[key] = obj(props, req)
    success_refs.append(ref("#", key))
def when(cond, then):
    return {"if": {"required": list(cond), "properties": {k: {"const": v} for k, v in cond.items()}},
            "then": then}


responses = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": BASE + "responses.schema.json",
             "title": "A response line on stdout (protocol.md sections 3 and 4)",
             "type": "object", "required": ["type", "command", "success"],
             "properties": {"type": {"const": "response"}, "command": {"type": "string"}, "success": {"type": "boolean"}},
             "allOf": [when({"success": False, "command": "parse"}, ref("#", "ParseError")),
                       {"if": {"required": ["success", "command"],
                               "properties": {"success": {"const": False}, "command": {"not": {"const": "parse"}}}},
                        "then": ref("#", "Error")},
                       when({"success": True}, {"properties": {"command": {"enum": list(data)}}})]
                      + [when({"success": True, "command": name}, ref("#", "Success_" + name)) for name in data],
             "$defs": rdefs}

# Events
AM = ref(C, "AssistantMessage")
UUID4 = {"type": "string", "pattern": "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"}
POS = {"type": "integer", "minimum": 1}
def ame(t, extra, req_extra):
    return obj({"type": {"const": t}, "contentIndex": NN} | extra | {"partial": AM}, ["type", "contentIndex"] + req_extra + ["partial"])
ame_defs = {
 "text_start": ame("text_start", {}, []), "text_delta": ame("text_delta", {"delta": S}, ["delta"]),
 "text_end": ame("text_end", {"content": S}, ["content"]),
 "thinking_start": ame("thinking_start", {}, []), "thinking_delta": ame("thinking_delta", {"delta": S}, ["delta"]),
 "thinking_end": ame("thinking_end", {"content": S}, ["content"]),
 "toolcall_start": ame("toolcall_start", {}, []), "toolcall_delta": ame("toolcall_delta", {"delta": S}, ["delta"]),
 "toolcall_end": ame("toolcall_end", {"toolCall": ref(C, "ToolCall")}, ["toolCall"]),
}
# The delta form of protocol.md section 8: the same assistantMessageEvent without `partial`.
def amd(t):
    d = json.loads(json.dumps(ame_defs[t]))
    del d["properties"]["partial"]; d["required"].remove("partial")
    return d
tr = ref(C, "ToolResultMessage")
edefs = {
 "agent_start": obj({"type": {"const": "agent_start"}}),
 "agent_end": obj({"type": {"const": "agent_end"}, "messages": {"type": "array", "items": ref(C, "AgentMessage")}, "willRetry": B}),
 "turn_start": obj({"type": {"const": "turn_start"}}),
 "turn_end": obj({"type": {"const": "turn_end"}, "message": AM, "toolResults": {"type": "array", "items": tr}}),
 "message_start": obj({"type": {"const": "message_start"}, "message": ref(C, "AgentMessage")}),
 "message_update": {"oneOf": [
     obj({"type": {"const": "message_update"},
          "assistantMessageEvent": switch("type", {k: ref("#", "AME_" + k) for k in ame_defs}), "message": AM}),
     obj({"type": {"const": "message_update"},
          "assistantMessageEvent": switch("type", {k: ref("#", "AMD_" + k) for k in ame_defs}),
          "message": obj({"role": {"const": "assistant"}})})]},
 "message_end": obj({"type": {"const": "message_end"}, "message": ref(C, "AgentMessage")}),
 "tool_execution_start": obj({"type": {"const": "tool_execution_start"}, "toolCallId": S, "toolName": S, "args": {}}),
 "tool_execution_update": obj({"type": {"const": "tool_execution_update"}, "toolCallId": S, "toolName": S, "args": {},
                               "partialResult": ref(C, "ToolResult")}),
 "tool_execution_end": obj({"type": {"const": "tool_execution_end"}, "toolCallId": S, "toolName": S,
                            "result": ref(C, "ToolResult"), "isError": B}),
 "auto_retry_start": {"oneOf": [
     obj({"type": {"const": "auto_retry_start"}, "attempt": {"type": "integer", "minimum": 1},
          "maxAttempts": NN, "delayMs": NN, "errorMessage": S}),
     obj({"type": {"const": "auto_retry_start"}, "attempt": {"type": "integer", "minimum": 1},
          "maxAttempts": NN, "delayMs": NN, "errorMessage": S, "errorClass": ref(C, "ErrorClass"),
          "httpStatus": {"type": "integer", "minimum": 100, "maximum": 599},
          "delaySource": {"enum": ["backoff", "retry-after", "credential-switch"]}, "nextAttemptAt": NN},
         ["type", "attempt", "maxAttempts", "delayMs", "errorMessage", "errorClass", "delaySource", "nextAttemptAt"])]},
 "auto_retry_end": {"oneOf": [
     obj({"type": {"const": "auto_retry_end"}, "success": {"const": True}, "attempt": NN}),
     obj({"type": {"const": "auto_retry_end"}, "success": {"const": False}, "attempt": NN, "finalError": S}),
     obj({"type": {"const": "auto_retry_end"}, "success": {"const": True}, "attempt": NN, "reason": {"const": "success"}}),
     obj({"type": {"const": "auto_retry_end"}, "success": {"const": False}, "attempt": NN, "finalError": S,
          "reason": {"enum": ["exhausted", "cancelled", "non_retryable", "disabled", "deadline", "server_delay_too_long"]}})]},
 "auto_compaction_start": obj({"type": {"const": "auto_compaction_start"}, "reason": {"enum": ["overflow", "threshold"]}}),
 "auto_compaction_end": obj({"type": {"const": "auto_compaction_end"}, "result": ref(C, "CompactionResult"),
                             "aborted": B, "willRetry": B, "errorMessage": S}, ["type", "aborted", "willRetry"]),
 "mcp_server_update": obj({"type": {"const": "mcp_server_update"}, "name": {"type": "string", "minLength": 1},
                           "status": {"enum": ["starting", "ready", "failed", "disabled"]},
                           "tools": {"type": "array", "items": S}, "error": S},
                          ["type", "name", "status", "tools"]),
 # extensions.md section 6.1: a dialog of an extension (4.7's params, the effective timeout) or a
 # notice (a hook's or an extension's ui/notify), a variant per method.
 "extension_ui_request": {"oneOf": [
     obj({"type": {"const": "extension_ui_request"}, "id": UUID4,
          "method": {"const": "notify"}, "message": S, "notifyType": {"enum": ["info", "warning", "error"]}},
         ["type", "id", "method", "message"]),
     # policy.md section 6.1: a permission question carries `permission`.
     obj({"type": {"const": "extension_ui_request"}, "id": UUID4, "method": {"const": "select"},
          "title": S, "options": {"type": "array", "items": S}, "timeout": POS,
          "permission": obj({"toolCallId": S, "toolName": S, "args": {"type": "object"},
                             "reason": {"type": "string", "pattern": "^(mode [A-Za-z]+|rule .+ \\((global|project|cli|session)\\)|uncertain|hook)$"}})},
         ["type", "id", "method", "title", "options", "timeout"]),
     obj({"type": {"const": "extension_ui_request"}, "id": UUID4, "method": {"const": "confirm"},
          "title": S, "message": S, "timeout": POS}, ["type", "id", "method", "title", "timeout"]),
     obj({"type": {"const": "extension_ui_request"}, "id": UUID4, "method": {"const": "input"},
          "title": S, "placeholder": S, "timeout": POS}, ["type", "id", "method", "title", "timeout"]),
     obj({"type": {"const": "extension_ui_request"}, "id": UUID4, "method": {"const": "editor"},
          "title": S, "prefill": S, "timeout": POS}, ["type", "id", "method", "title", "timeout"])]},
 # sessions.md sections 5 and 8
 "queue_update": obj({"type": {"const": "queue_update"}, "steering": {"type": "array", "items": S},
                      "followUp": {"type": "array", "items": S}}),
 "session_info_changed": obj({"type": {"const": "session_info_changed"}, "name": {"type": "string", "minLength": 1}}),
 # runtime.md section 8 (amendment A7): a loaded session's call that has no result
 "tool_outcome_unknown": obj({"type": {"const": "tool_outcome_unknown"}, "toolCallId": {"type": "string", "minLength": 1},
                              "toolName": S, "startedAt": {"type": "integer", "minimum": 0}}),
 # extensions.md section 7.3: a hook ("hook:<command>") or an extension (its name) failed.
 "extension_error": obj({"type": {"const": "extension_error"}, "extensionPath": {"type": "string", "minLength": 1},
                         "event": {"type": "string", "minLength": 1}, "error": S}),
}
for k, v in ame_defs.items(): edefs["AME_" + k] = v
for k in ame_defs: edefs["AMD_" + k] = amd(k)
events = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": BASE + "events.schema.json",
          "title": "An event line on stdout (protocol.md section 5)",
          **switch("type", {k: ref("#", k) for k in edefs if not k.startswith("AM")}), "$defs": edefs}

# JSON-RPC 2.0 envelope (protocol.md section 9)
RPCID = {"type": ["string", "number", "null"]}
event_types = [k for k in edefs if not k.startswith("AM")]
jdefs = {
 "jsonrpc-request": obj({"jsonrpc": {"const": "2.0"}, "id": RPCID, "method": S, "params": {"type": "object"}},
                        ["jsonrpc", "method"]),
 "jsonrpc-response": obj({"jsonrpc": {"const": "2.0"}, "id": RPCID, "result": {}}),
 "jsonrpc-error": obj({"jsonrpc": {"const": "2.0"}, "id": RPCID,
                       "error": obj({"code": I, "message": S, "data": obj({"command": S})}, ["code", "message"])}),
 "jsonrpc-notification": {"allOf": [
     obj({"jsonrpc": {"const": "2.0"}, "method": {"enum": event_types}, "params": ref("events.schema.json")}),
     *[when({"method": k}, {"properties": {"params": {"properties": {"type": {"const": k}}}}}) for k in event_types]]},
}
jsonrpc = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": BASE + "jsonrpc.schema.json",
           "title": "A JSON-RPC 2.0 line on stdout (protocol.md section 9): a result, an error or an event notification",
           "type": "object", "required": ["jsonrpc"],
           "allOf": [{"if": {"required": ["method"]}, "then": ref("#", "jsonrpc-notification")},
                     {"if": {"required": ["result"]}, "then": ref("#", "jsonrpc-response")},
                     {"if": {"required": ["error"]}, "then": ref("#", "jsonrpc-error")},
                     {"oneOf": [{"required": ["method"]}, {"required": ["result"]}, {"required": ["error"]}]}],
           "$defs": jdefs}
output = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": BASE + "output.schema.json",
          "title": "Any line Rebound writes on stdout: a response or an event, or their JSON-RPC forms",
          "if": {"required": ["jsonrpc"]}, "then": ref("jsonrpc.schema.json"),
          "else": {"if": {"required": ["type"], "properties": {"type": {"const": "response"}}},
                   "then": ref("responses.schema.json"), "else": ref("events.schema.json")}}
# ACP mode's own messages (acp.md sections 8, 9 and 11): the `_rebound/*` notifications are the rpc
# events without `type`, `sessionId` first; the `_rebound/*` results are the rpc commands' data.
# Everything else of acp mode is checked against the ACP v1 schema that the SDK ships.
def with_session(d):
    d = json.loads(json.dumps(d))
    if "oneOf" in d:
        d["oneOf"] = [with_session(x) for x in d["oneOf"]]
        return d
    props = {"sessionId": S}
    props.update({k: v for k, v in d["properties"].items() if k != "type"})
    d["properties"] = props
    d["required"] = ["sessionId"] + [k for k in d["required"] if k != "type"]
    return d
def data_of(command):
    return json.loads(json.dumps(responses_defs["Success_" + command]["properties"].get("data", obj({}))))
responses_defs = responses["$defs"]
adefs = {
 "_rebound.auto_retry_start": with_session(edefs["auto_retry_start"]),
 "_rebound.auto_retry_end": with_session(edefs["auto_retry_end"]),
 "_rebound.auto_compaction_start": with_session(edefs["auto_compaction_start"]),
 "_rebound.auto_compaction_end": with_session(edefs["auto_compaction_end"]),
 "result._rebound.abort_retry": obj({}),
 "result._rebound.set_auto_retry": obj({}),
 "result._rebound.get_retry_state": data_of("get_retry_state"),
 "result._rebound.set_retry_policy": data_of("set_retry_policy"),
 "result._rebound.retry_now": data_of("retry_now"),
 "result._rebound.get_policy": data_of("get_policy"),
 "prompt-meta": obj({"rebound": obj({"outcome": {"enum": ["stop", "length", "cancelled", "error", "blocked", "handled", "stopped"]},
                                     "retries": NN, "errorMessage": S}, ["outcome", "retries"])}),
}
acp_schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": BASE + "acp.schema.json",
              "title": "ACP mode's own messages (acp.md): _rebound/* notification params and results, the prompt answer's _meta",
              "$defs": adefs}
# extensions.md section 4: every message between Rebound and an extension process, both ways.
J = {"const": "2.0"}
RID = {"type": "integer", "minimum": 1}          # Rebound's request ids
XID = {"type": ["string", "integer"]}            # an extension's request ids
def xreq(method, params, required=None, id_=RID):
    return obj({"jsonrpc": J, "id": id_, "method": {"const": method}, "params": obj(params, required)},
               ["jsonrpc", "id", "method", "params"])
def xnote(method, params=None, required=None):
    if params is None:
        return obj({"jsonrpc": J, "method": {"const": method}}, ["jsonrpc", "method"])
    return obj({"jsonrpc": J, "method": {"const": method}, "params": obj(params, required)},
               ["jsonrpc", "method", "params"])
content = {"oneOf": [S, {"type": "array", "items": {"oneOf": [ref("common.schema.json", "TextContent"),
                                                               ref("common.schema.json", "ImageContent")]}}]}
session_ref = obj({"sessionId": S, "sessionFile": S}, ["sessionId"])
xdefs = {
 # Rebound to the extension
 "initialize": xreq("initialize", {"protocolVersion": {"const": 1},
                                   "clientInfo": obj({"name": {"const": "rebound"}, "version": S}),
                                   "name": {"type": "string", "minLength": 1},
                                   "mode": {"enum": ["rpc", "acp", "print"]},
                                   "ui": {"enum": ["rpc", "acp", "none"]}, "cwd": S,
                                   "session": obj({"sessionId": S, "sessionFile": S}, [])}),
 "initialized": xnote("initialized"),
 "event": obj({"jsonrpc": J, "method": {"const": "event"}, "params": ref("events.schema.json")},
              ["jsonrpc", "method", "params"]),
 "session_start": xnote("session_start", {"reason": {"enum": ["startup", "new", "resume", "fork"]},
                                          "sessionId": S, "sessionFile": S, "previousSessionFile": S},
                        ["reason", "sessionId"]),
 "session_shutdown": xnote("session_shutdown", {"reason": {"enum": ["quit", "new", "resume", "fork", "close"]},
                                                "sessionId": S}),
 "cancelled": xnote("cancelled", {"id": RID, "reason": {"type": "string", "pattern": "^(Request was aborted|Timed out after [0-9]+ ms)$"}}),
 "tool_call": xreq("tool_call", {"toolCallId": S, "toolName": S, "input": {"type": "object"}}),
 "tools/call": xreq("tools/call", {"name": S, "toolCallId": S, "arguments": {"type": "object"}}),
 "commands/run": xreq("commands/run", {"name": S, "args": S}),
 "result": obj({"jsonrpc": J, "id": XID, "result": {}}, ["jsonrpc", "id", "result"]),
 "error": obj({"jsonrpc": J, "id": XID, "error": obj({"code": {"type": "integer"}, "message": S, "data": {}}, ["code", "message"])},
              ["jsonrpc", "id", "error"]),
 # The extension to Rebound
 "initialize-result": obj({"protocolVersion": {"const": 1}, "serverInfo": obj({"name": S, "version": S}, []),
                           "events": {"type": "array", "items": S}, "messageUpdates": {"enum": ["full", "delta"]},
                           "interceptors": {"type": "array", "items": S},
                           "tools": {"type": "array", "items": obj({"name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
                                                                    "description": S, "parameters": {"type": "object"}}, ["name"])},
                           "commands": {"type": "array", "items": obj({"name": S, "description": S}, ["name"])}},
                          ["protocolVersion"], extra=True),
 "tool_call-result": {"oneOf": [{"type": "null"}, obj({}, []),
                                obj({"action": {"const": "allow"}}, ["action"]),
                                obj({"action": {"const": "block"}, "reason": S}, ["action"]),
                                obj({"action": {"const": "modify"}, "input": {"type": "object"}}, ["action", "input"])]},
 "ui/select": xreq("ui/select", {"title": S, "options": {"type": "array", "items": S}, "timeout": POS}, ["title", "options"], XID),
 "ui/confirm": xreq("ui/confirm", {"title": S, "message": S, "timeout": POS}, ["title"], XID),
 "ui/input": xreq("ui/input", {"title": S, "placeholder": S, "timeout": POS}, ["title"], XID),
 "ui/editor": xreq("ui/editor", {"title": S, "prefill": S, "timeout": POS}, ["title"], XID),
 "ui/notify": xnote("ui/notify", {"message": S, "notifyType": {"enum": ["info", "warning", "error"]}}, ["message"]),
 "session/send_user_message": xreq("session/send_user_message", {"content": content, "deliverAs": {"enum": ["steer", "followUp"]}}, ["content"], XID),
 "session/get_state": xreq("session/get_state", {}, [], XID),
 "session/abort": xreq("session/abort", {}, [], XID),
 "ping": xreq("ping", {}, [], XID),
 "tools/update": xnote("tools/update", {"toolCallId": S, "partialResult": {}}),
}
# A def's name is its method with "/" as "." (a JSON pointer would read "/" as a step).
xdefs = {k.replace("/", "."): v for k, v in xdefs.items()}
to_extension = ["initialize", "initialized", "event", "session_start", "session_shutdown", "cancelled",
                "tool_call", "tools.call", "commands.run", "result", "error"]
extension_schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": BASE + "extension.schema.json",
                    "title": "A line Rebound writes to an extension process (extensions.md section 4); $defs also hold the extension's side",
                    "oneOf": [ref("#", n) for n in to_extension], "$defs": xdefs}
# extensions.md sections 3.3, 3.4, 3.6: a command hook's stdin (the common prefix, then the
# event's own fields; a variant per hook_event_name) and the JSON output it may print.
def hook_stdin(event, fields, required, mode=False):
    prefix = {"session_id": S, "transcript_path": S, "cwd": S, "prompt_id": UUID4}
    if mode: prefix["permission_mode"] = S
    props = prefix | {"hook_event_name": {"const": event}} | fields
    return obj(props, ["session_id", "cwd", "hook_event_name"] + (["permission_mode"] if mode else []) + required)
named = obj({"name": S})
tool = {"tool_name": S, "tool_input": {"type": "object"}}
def retry_fields(variant):
    d = json.loads(json.dumps(variant))
    return {k: v for k, v in d["properties"].items() if k != "type"}, [k for k in d["required"] if k != "type"]
hdefs = {
 "SessionStart": hook_stdin("SessionStart", {"source": {"enum": ["startup", "resume", "clear", "fork"]}, "model": S}, ["source"]),
 "UserPromptSubmit": hook_stdin("UserPromptSubmit", {"prompt": S}, ["prompt"], True),
 "PreToolUse": hook_stdin("PreToolUse", tool | {"tool_use_id": S, "mcp_server": named, "extension": named},
                          ["tool_name", "tool_input", "tool_use_id"], True),
 "PermissionRequest": hook_stdin("PermissionRequest", tool | {"tool_use_id": S}, ["tool_name", "tool_input", "tool_use_id"], True),
 "PostToolUse": hook_stdin("PostToolUse", tool | {"tool_response": ref("common.schema.json", "ToolResult"), "tool_use_id": S,
                                                   "duration_ms": NN, "mcp_server": named, "extension": named},
                           ["tool_name", "tool_input", "tool_response", "tool_use_id", "duration_ms"], True),
 "PostToolUseFailure": hook_stdin("PostToolUseFailure", tool | {"tool_use_id": S, "error": S, "is_interrupt": {"const": False},
                                                                 "duration_ms": NN, "mcp_server": named, "extension": named},
                                  ["tool_name", "tool_input", "tool_use_id", "error", "is_interrupt", "duration_ms"], True),
 "Stop": hook_stdin("Stop", {"stop_hook_active": B, "last_assistant_message": S}, ["stop_hook_active", "last_assistant_message"], True),
 "StopFailure": hook_stdin("StopFailure", {"error": {"enum": ["rate_limit", "overloaded", "timeout", "network", "server_error",
                                                              "usage_limit", "authentication_failed", "invalid_request",
                                                              "context_overflow", "unknown"]},
                                           "last_assistant_message": S}, ["error", "last_assistant_message"]),
 "PreCompact": hook_stdin("PreCompact", {"trigger": {"enum": ["manual", "auto"]}, "custom_instructions": {"type": ["string", "null"]}},
                          ["trigger", "custom_instructions"]),
 "SessionEnd": hook_stdin("SessionEnd", {"reason": {"enum": ["clear", "resume", "fork", "close", "other"]}}, ["reason"]),
 "Notification": hook_stdin("Notification", {"message": S, "notification_type": {"enum": ["permission_prompt", "idle_prompt"]}},
                            ["message", "notification_type"]),
 "AutoRetryStart": {"oneOf": [hook_stdin("AutoRetryStart", *retry_fields(v)) for v in edefs["auto_retry_start"]["oneOf"]]},
 "AutoRetryEnd": {"oneOf": [hook_stdin("AutoRetryEnd", *retry_fields(v)) for v in edefs["auto_retry_end"]["oneOf"]]},
 "output": obj({"continue": B, "stopReason": S, "suppressOutput": B, "systemMessage": S,
                "decision": {"enum": ["approve", "block"]}, "reason": S,
                "hookSpecificOutput": {"type": "object", "required": ["hookEventName"],
                                       "properties": {"hookEventName": S, "permissionDecision": {"enum": ["allow", "deny", "ask"]},
                                                      "permissionDecisionReason": S, "updatedInput": {"type": "object"},
                                                      "additionalContext": S, "decision": {"type": "object"}}}},
               [], extra=True),
}
hooks_schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": BASE + "hooks.schema.json",
                "title": "A command hook's stdin (extensions.md sections 3.3, 3.4); $defs.output is what it may print (3.6)",
                **switch("hook_event_name", {n: ref("#", n) for n in hdefs if n != "output"}), "$defs": hdefs}
# One-shot mode (oneshot.md section 17): the stream-json header, the heartbeat, the result; a
# stream-json line is one of them or an event.
ERRCLASS = {"enum": ["usage_limit", "rate_limit", "overloaded", "timeout", "network", "server_error",
                     "unknown", "context_overflow", "auth", "invalid_request"]}
def beat(kind, extra):
    props = {"type": {"const": "heartbeat"}, "seq": POS, "elapsedMs": NN, "waiting": {"const": kind},
             "sinceMs": NN} | extra
    return obj(props | {"deadlineInMs": NN}, list(props))
odefs = {
 "session-header": obj({"type": {"const": "session"}, "version": {"const": 3}, "id": S, "timestamp": S,
                        "cwd": S, "parentSession": S}, ["type", "version", "id", "timestamp", "cwd"]),
 "heartbeat": {"oneOf": [
   beat("stdin", {"bytes": NN}),
   beat("compaction", {"reason": {"enum": ["overflow", "threshold", "manual"]}}),
   beat("backoff", {"attempt": POS, "maxAttempts": NN, "errorClass": ERRCLASS, "nextAttemptInMs": NN}),
   beat("hook", {"hook": S}),
   beat("extension", {"extension": S, "toolCallId": S, "toolName": S}),
   beat("tool", {"tools": {"type": "array", "items": obj({"toolCallId": S, "toolName": S})}}),
   beat("mcp", {"servers": {"type": "array", "items": S}}),
   beat("model", {"provider": S, "model": S, "attempt": NN, "streaming": B})]},
 "oneshot-result": obj({
   "type": {"const": "result"},
   "subtype": {"enum": ["success", "error_during_execution", "error_max_turns", "error_max_budget_usd",
                        "error_max_structured_output_retries", "error_timeout", "error_interrupted"]},
   "is_error": B, "duration_ms": NN, "duration_api_ms": NN, "num_turns": NN, "result": S,
   "structured_output": {}, "errors": {"type": "array", "items": S, "minItems": 1, "maxItems": 1},
   "session_id": S, "total_cost_usd": {"type": "number", "minimum": 0},
   "usage": obj({"input_tokens": NN, "cache_creation_input_tokens": NN, "cache_read_input_tokens": NN,
                 "output_tokens": NN}),
   "permission_denials": {"type": "array", "items": obj({"tool_name": S, "tool_use_id": S,
                                                          "tool_input": {}, "message": S})},
   "unknown_outcomes": {"type": "array", "items": S, "minItems": 1,
                        "description": "the calls the session's load gave an unknown outcome (runtime.md section 8)"},
   "terminal_reason": {"enum": ["completed", "hook_stopped", "internal_error", "invalid_input", "api_error",
                                "retries_exhausted", "usage_limit", "context_overflow", "max_turns",
                                "budget_exhausted", "timeout", "structured_output_invalid", "interrupted"]},
   "api_error_status": I, "errorClass": ERRCLASS,
   "retries": {"type": "array", "items": obj({"attempt": POS, "delayMs": NN, "errorMessage": S,
                                              "errorClass": ERRCLASS, "httpStatus": I, "delaySource": S},
                                             ["attempt", "delayMs", "errorMessage", "errorClass", "delaySource"])},
   "compactions": NN, "model": S, "sessionFile": S},
   ["type", "subtype", "is_error", "duration_ms", "duration_api_ms", "num_turns", "result", "session_id",
    "total_cost_usd", "usage", "permission_denials", "terminal_reason", "retries", "compactions", "model"]),
}
oneshot_schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": BASE + "oneshot.schema.json",
                  "title": "One-shot mode's own lines (oneshot.md sections 5, 6, 9): the stream-json header, heartbeats and the result",
                  "$defs": odefs}

stale = []
for name, doc in [("oneshot", oneshot_schema), ("common", common), ("commands", commands), ("responses", responses), ("events", events), ("jsonrpc", jsonrpc), ("output", output), ("acp", acp_schema), ("extension", extension_schema), ("hooks", hooks_schema)]:
    text = json.dumps(doc, indent=1) + "\n"
    path = os.path.join(HERE, name + ".schema.json")
    if CHECK:
        with open(path, encoding="utf-8") as f:
            if f.read() != text:
                stale.append(path)
        continue
    with open(path, "w") as f:
        f.write(text)
if stale:
    for path in stale:
        print(f"{path} differs from what schemas/generate.py writes: run it and commit the result",
              file=sys.stderr)
    sys.exit(1)
