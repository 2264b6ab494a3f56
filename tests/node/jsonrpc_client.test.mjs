// Rebound driven by an independent JSON-RPC 2.0 library (npm json-rpc-2.0 1.8.1): the events
// must arrive as notifications dispatched to the library's methods, answers as typed results,
// failures as JSONRPCErrorException with the codes of protocol.md section 9.
// usage: node --test jsonrpc_client.test.mjs   (REBOUND_BINARY names the server binary)

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync, appendFileSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import {
  JSONRPCClient,
  JSONRPCServer,
  JSONRPCServerAndClient,
  JSONRPCErrorException,
} from "json-rpc-2.0";

const binary = process.env.REBOUND_BINARY;
if (!binary) throw new Error("REBOUND_BINARY must name the rebound binary");

const EVENTS = [
  "agent_start", "agent_end", "turn_start", "turn_end", "message_start", "message_update",
  "message_end", "tool_execution_start", "tool_execution_update", "tool_execution_end",
  "auto_retry_start", "auto_retry_end", "auto_compaction_start", "auto_compaction_end",
];

// Servers still running when the tests end (a failed test never closed them) are killed, so a
// broken server fails the run instead of keeping it alive.
const children = new Set();
after(() => {
  for (const child of children) child.kill("SIGKILL");
});

// Starts rebound on a script and connects a JSONRPCServerAndClient to its stdio. Every
// notification lands in `events` (in arrival order); `waitFor(type)` resolves when one came.
function connect(script, settings = "{}") {
  const dir = mkdtempSync(join(tmpdir(), "rebound-jsonrpc-"));
  mkdirSync(join(dir, "agent"));
  writeFileSync(join(dir, "agent", "settings.json"), settings);
  writeFileSync(join(dir, "script.json"), JSON.stringify(script));
  const child = spawn(
    binary,
    ["--agent-dir", join(dir, "agent"), "--no-session", "--provider", "scripted", "--script",
     join(dir, "script.json")],
    { cwd: dir, env: { ...process.env, HOME: dir, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" },
      stdio: ["pipe", "pipe", "pipe"] });
  children.add(child);
  child.on("exit", () => children.delete(child));
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  const capture = process.env.REBOUND_CAPTURE_DIR
    ? join(process.env.REBOUND_CAPTURE_DIR, `node-jsonrpc-${child.pid}.jsonl`) : null;
  if (capture) mkdirSync(process.env.REBOUND_CAPTURE_DIR, { recursive: true });

  const peer = new JSONRPCServerAndClient(
    new JSONRPCServer(),
    new JSONRPCClient((request) => { child.stdin.write(JSON.stringify(request) + "\n"); }));
  const events = [];
  const waiters = [];
  for (const name of EVENTS) {
    peer.addMethod(name, (params) => {
      events.push(params);
      for (const w of waiters.splice(0)) w();
    });
  }
  const lines = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(line);
    if (capture) appendFileSync(capture, line + "\n");
    peer.receiveAndSend(JSON.parse(line)).catch((e) => { lines.push(`unhandled: ${e}`); });
  });
  const waitFor = (type, count = 1) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${type} within 10 s; stderr: ${stderr}`)), 10000);
    const check = () => {
      if (events.filter((e) => e.type === type).length >= count) {
        clearTimeout(timer);
        resolve();
      } else {
        waiters.push(check);
      }
    };
    check();
  });
  const close = () => new Promise((resolve) => {
    child.on("exit", (code) => {
      rmSync(dir, { recursive: true, force: true });
      resolve(code);
    });
    child.stdin.end();
  });
  // Every request gives up after 5 s (a server that never answers fails the test, not hangs it).
  const call = (method, params) => peer.timeout(5000).request(method, params);
  return { peer, call, events, lines, waitFor, close };
}

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail("the request was expected to fail");
}

test("typed results, events as dispatched notifications, errors with their codes", { timeout: 30000 }, async () => {
  const s = connect([{ text: "Hello world", chunks: 2 }]);
  const state = await s.call("get_state");
  assert.equal(state.thinkingLevel, "off");
  assert.equal(state.isStreaming, false);
  assert.equal(state.model.provider, "scripted");

  assert.equal(await s.call("prompt", { message: "hi" }), null);
  await s.waitFor("agent_end");
  const types = s.events.map((e) => e.type);
  assert.equal(types[0], "agent_start");
  assert.equal(types.at(-1), "agent_end");
  assert.ok(types.includes("message_update"));
  const end = s.events.at(-1);
  assert.equal(end.messages.at(-1).content[0].text, "Hello world");
  assert.equal(end.willRetry, false);
  // The prompt's answer came before the first notification of its run.
  const answer = s.lines.findIndex((l) => JSON.parse(l).result === null);
  const first = s.lines.findIndex((l) => JSON.parse(l).method === "agent_start");
  assert.ok(answer >= 0 && answer < first);

  const notFound = await rejection(s.call("set_model", { provider: "x", modelId: "y" }));
  assert.ok(notFound instanceof JSONRPCErrorException);
  assert.equal(notFound.code, -32000);
  assert.equal(notFound.message, "Model not found: x/y");
  assert.deepEqual(notFound.data, { command: "set_model" });

  const unknown = await rejection(s.call("fly", {}));
  assert.equal(unknown.code, -32601);
  assert.equal(unknown.message, "Unknown command: fly");

  const invalid = await rejection(s.call("set_auto_retry", { enabled: "yes" }));
  assert.equal(invalid.code, -32602);
  assert.equal(invalid.message, "Invalid field 'enabled': expected boolean");

  const byPosition = await rejection(s.call("set_auto_retry", [true]));
  assert.equal(byPosition.code, -32602);
  assert.equal(byPosition.message, "Invalid params: params must be an object");

  // A notification does its work and is never answered.
  const before = s.lines.length;
  s.peer.notify("set_auto_compaction", { enabled: false });
  s.peer.notify("fly", {});
  const after = await s.call("get_state");
  assert.equal(after.autoCompactionEnabled, false);
  assert.equal(s.lines.length, before + 1);  // only get_state's answer
  assert.equal(await s.close(), 0);
});

test("the event filter and delta updates through the library", { timeout: 30000 }, async () => {
  const s = connect([{ text: "abcdef", chunks: 3 }]);
  const filter = await s.call("set_event_filter",
                                      { events: ["message_update", "agent_end"], messageUpdates: "delta" });
  assert.deepEqual(filter, { events: ["message_update", "agent_end"], messageUpdates: "delta" });
  await s.call("prompt", { message: "hi" });
  await s.waitFor("agent_end");
  assert.deepEqual([...new Set(s.events.map((e) => e.type))], ["message_update", "agent_end"]);
  let text = "";
  for (const e of s.events) {
    if (e.type !== "message_update") continue;
    assert.deepEqual(e.message, { role: "assistant" });
    assert.equal(e.assistantMessageEvent.partial, undefined);
    if (e.assistantMessageEvent.type === "text_delta") text += e.assistantMessageEvent.delta;
    if (e.assistantMessageEvent.type === "text_end") assert.equal(e.assistantMessageEvent.content, text);
  }
  assert.equal(text, "abcdef");
  const rejected = await rejection(s.call("set_event_filter", { messageUpdates: "partial" }));
  assert.equal(rejected.code, -32602);
  assert.equal(rejected.message, "Invalid field 'messageUpdates': expected one of full, delta");
  assert.equal(await s.close(), 0);
});

test("a retry chain as notifications, the typed retry state as a result", { timeout: 30000 }, async () => {
  const s = connect([{ error: "503 overloaded" }, { text: "recovered" }],
                    JSON.stringify({ retry: { enabled: true, maxRetries: 3, baseDelayMs: 20 } }));
  const retry = await s.call("get_retry_state");
  assert.equal(retry.enabled, true);
  assert.equal(retry.phase, "idle");
  await s.call("prompt", { message: "hi" });
  await s.waitFor("auto_retry_end");
  await s.waitFor("agent_end", 2);
  const start = s.events.find((e) => e.type === "auto_retry_start");
  assert.equal(start.attempt, 1);
  assert.equal(start.errorMessage, "503 overloaded");
  assert.equal(start.errorClass, "overloaded");  // retry-control mode: get_retry_state came first
  const firstEnd = s.events.find((e) => e.type === "agent_end");
  assert.equal(firstEnd.willRetry, true);
  const done = s.events.find((e) => e.type === "auto_retry_end");
  assert.deepEqual(done, { type: "auto_retry_end", success: true, attempt: 1, reason: "success" });
  // The successful attempt's agent_end, then the chain's end.
  assert.deepEqual(s.events.slice(-2).map((e) => e.type), ["agent_end", "auto_retry_end"]);
  assert.equal(s.events.at(-2).messages.at(-1).content[0].text, "recovered");
  assert.equal(await s.close(), 0);
});
