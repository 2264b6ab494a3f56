// `rebound --mode acp` driven by the official ACP client library (npm @agentclientprotocol/sdk
// 2.4.0) with the scripted provider: handshake, prompts, retry progress, cancellation, tool
// calls, several sessions and the error codes of acp.md. Every line the server writes is kept
// with what the client sent (REBOUND_CAPTURE_DIR/acp, one {"from","message"} per line) for the
// schema check (tests/schema/validate_acp.py).
// usage: node --test acp_sdk.test.mjs   (REBOUND_BINARY names the server binary)

import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { spawnAcp } from "./acp_harness.mjs";

// Connects the SDK's client app to a fresh server and runs `op` with a harness: the SDK
// context, every update and custom notification in arrival order, every raw line the server
// wrote, and helpers. `handlers(app)` registers the client's request handlers (permissions,
// files); the other options go to spawnAcp (acp_harness.mjs).
async function withAgent({ capabilities = {}, handlers, ...spawnOptions }, op) {
  const server = spawnAcp({ ...spawnOptions, name: "sdk" });
  const { dir, cwd, lines } = server;
  const seen = [];  // {method, params} of every notification, in order
  const waiters = [];
  const record = (method, params) => {
    seen.push({ method, params });
    for (const w of waiters.splice(0)) w();
  };
  const app = acp.client({ name: "rebound-test" })
    .onNotification("session/update", ({ params }) => record("session/update", params))
    .onNotification("*", ({ method, params }) => record(method, params));
  if (handlers) handlers(app);
  const stream = acp.ndJsonStream(server.output, server.input);
  const waitFor = (predicate, what) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${what} within 10 s; stderr: ${server.stderr()}`)), 10000);
    const check = () => {
      const hit = seen.find(predicate);
      if (hit) {
        clearTimeout(timer);
        resolve(hit);
      } else {
        waiters.push(check);
      }
    };
    check();
  });
  const updates = (sessionId) => seen.filter((n) => n.method === "session/update" &&
                                                    n.params.sessionId === sessionId)
    .map((n) => n.params.update);
  try {
    return await app.connectWith(stream, async (ctx) => {
      const init = await ctx.request("initialize", {
        protocolVersion: 1,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, ...capabilities },
        clientInfo: { name: "rebound-test", version: "1" },
      });
      const h = {
        ctx, init, seen, lines, waitFor, updates, dir, cwd, sent: server.sent,
        stderr: server.stderr,
        newSession: async () => (await ctx.request("session/new", { cwd, mcpServers: [] })).sessionId,
        prompt: (sessionId, text) => ctx.request("session/prompt",
                                                 { sessionId, prompt: [{ type: "text", text }] }),
      };
      return await op(h);
    });
  } finally {
    await server.finish();
  }
}

// The index of the response to request `id` among the raw lines.
const responseIndex = (lines, id) => lines.findIndex((l) => l.id === id && !("method" in l));
// Lines that concern `sessionId` (its notifications).
const forSession = (line, sessionId) => line.method && line.params && line.params.sessionId === sessionId;

const text = (updates) => updates.filter((u) => u.sessionUpdate === "agent_message_chunk")
  .map((u) => u.content.text).join("");

test("handshake: capabilities, agent info, a session", { timeout: 30000 }, async () => {
  await withAgent({ script: [{ text: "hi" }] }, async (h) => {
    assert.equal(h.init.protocolVersion, 1);
    assert.deepEqual(h.init.agentCapabilities.promptCapabilities,
                     { image: true, audio: false, embeddedContext: true });
    assert.deepEqual(h.init.agentCapabilities.mcpCapabilities, { http: false, sse: false });
    assert.deepEqual(h.init.agentCapabilities._meta.rebound.methods,
                     ["_rebound/abort_retry", "_rebound/set_auto_retry", "_rebound/get_retry_state",
                      "_rebound/retry_now", "_rebound/set_retry_policy", "_rebound/get_policy"]);
    assert.equal(h.init.agentInfo.name, "rebound");
    assert.deepEqual(h.init.authMethods, []);
    const id = await h.newSession();
    assert.match(id, /^[0-9a-f-]{36}$/);
    // Nothing was written before the first request, nothing but the two answers since.
    assert.equal(h.lines.length, 2);
  });
});

test("a plain prompt: chunks, usage, end_turn with the outcome", { timeout: 30000 }, async () => {
  await withAgent({ script: [{ text: "Hello there", chunks: 2, usage: { input: 30, output: 12 } }] },
                  async (h) => {
    const s = await h.newSession();
    const answer = await h.prompt(s, "say hello");
    assert.equal(answer.stopReason, "end_turn");
    assert.deepEqual(answer._meta, { rebound: { outcome: "stop", retries: 0 } });
    const ups = h.updates(s);
    assert.deepEqual(ups.map((u) => u.sessionUpdate),
                     ["agent_message_chunk", "agent_message_chunk", "usage_update"]);
    assert.equal(text(ups), "Hello there");
    assert.equal(ups[0].messageId, ups[1].messageId);
    assert.equal(ups[2].used, 42);
    assert.equal(ups[2].size, 128000);
    assert.deepEqual(ups[2].cost, { amount: 0, currency: "USD" });
    // A second prompt's message has another id.
    await h.prompt(s, "again");
    const later = h.updates(s).filter((u) => u.sessionUpdate === "agent_message_chunk");
    assert.notEqual(later[2].messageId, later[0].messageId);
  });
});

test("a 503 then success: retry notifications and notices before the answer, nothing after", { timeout: 30000 }, async () => {
  await withAgent({
    script: [{ error: "503 overloaded" }, { text: "Hello" }],
    settings: { retry: { baseDelayMs: 50 } },
    capabilities: { session: { notices: {} } },
  }, async (h) => {
    const s = await h.newSession();
    const answer = await h.ctx.request("session/prompt", { sessionId: s, prompt: [{ type: "text", text: "hi" }] });
    assert.equal(answer.stopReason, "end_turn");
    assert.deepEqual(answer._meta, { rebound: { outcome: "stop", retries: 1 } });
    const kinds = h.seen.filter((n) => n.params.sessionId === s)
      .map((n) => n.method === "session/update" ? n.params.update.sessionUpdate : n.method);
    assert.deepEqual(kinds, ["_rebound/auto_retry_start", "notice", "agent_message_chunk",
                             "usage_update", "_rebound/auto_retry_end", "notice"]);
    const start = h.seen.find((n) => n.method === "_rebound/auto_retry_start").params;
    assert.deepEqual(start, { sessionId: s, attempt: 1, maxAttempts: 3, delayMs: 50,
                              errorMessage: "503 overloaded" });
    const notices = h.updates(s).filter((u) => u.sessionUpdate === "notice");
    assert.equal(notices[0].title, "Retrying (1/3) in 50 ms");
    assert.equal(notices[0].severity, "warning");
    assert.equal(notices[0].description, "503 overloaded");
    assert.equal(notices[1].title, "Recovered after 1 retry");
    const end = h.seen.find((n) => n.method === "_rebound/auto_retry_end").params;
    assert.deepEqual(end, { sessionId: s, success: true, attempt: 1 });
    // The failed attempt's text is not written as retry progress; the answer is the last line.
    await new Promise((r) => setTimeout(r, 200));
    const last = h.lines.length - 1;
    assert.equal(h.lines[last].result?.stopReason, "end_turn");
  });
});

test("without notices: the custom notifications only", { timeout: 30000 }, async () => {
  await withAgent({
    script: [{ error: "503 overloaded" }, { text: "Hello" }],
    settings: { retry: { baseDelayMs: 1500 } },
  }, async (h) => {
    const s = await h.newSession();
    await h.prompt(s, "hi");
    assert.equal(h.updates(s).filter((u) => u.sessionUpdate === "notice").length, 0);
    const start = h.seen.find((n) => n.method === "_rebound/auto_retry_start").params;
    assert.equal(start.delayMs, 1500);
  });
});

test("cancel during a long backoff answers cancelled within 1 s, the chain's end first", { timeout: 30000 }, async () => {
  await withAgent({
    script: [{ error: "503 overloaded" }, { text: "never" }],
    settings: { retry: { baseDelayMs: 30000 } },
  }, async (h) => {
    const s = await h.newSession();
    const pending = h.prompt(s, "hi");
    await h.waitFor((n) => n.method === "_rebound/auto_retry_start", "auto_retry_start");
    const t0 = Date.now();
    await h.ctx.notify("session/cancel", { sessionId: s });
    const answer = await pending;
    const elapsed = Date.now() - t0;
    assert.ok(elapsed < 1000, `cancelled after ${elapsed} ms`);
    assert.equal(answer.stopReason, "cancelled");
    assert.deepEqual(answer._meta, { rebound: { outcome: "cancelled", retries: 1 } });
    const end = h.seen.find((n) => n.method === "_rebound/auto_retry_end").params;
    assert.deepEqual(end, { sessionId: s, success: false, attempt: 1, finalError: "Retry cancelled" });
    // The chain's end comes before the answer; nothing of the session after it.
    const endAt = h.lines.findIndex((l) => l.method === "_rebound/auto_retry_end");
    const answerAt = h.lines.findIndex((l) => l.result?.stopReason === "cancelled");
    assert.ok(endAt < answerAt);
    assert.ok(!h.lines.slice(answerAt + 1).some((l) => forSession(l, s)));
    // The session still works.
    const next = await h.prompt(s, "again");
    assert.equal(next.stopReason, "end_turn");
  });
});

test("cancel during a hanging request answers cancelled within 1 s", { timeout: 30000 }, async () => {
  await withAgent({ script: [{ hang: true }, { text: "after" }] }, async (h) => {
    const s = await h.newSession();
    const pending = h.prompt(s, "hi");
    await new Promise((r) => setTimeout(r, 200));  // the request hangs (streams nothing)
    const t0 = Date.now();
    await h.ctx.notify("session/cancel", { sessionId: s });
    const answer = await pending;
    assert.ok(Date.now() - t0 < 1000);
    assert.equal(answer.stopReason, "cancelled");
    assert.equal(answer._meta.rebound.outcome, "cancelled");
    // An aborted message gets no usage update and no error text.
    assert.ok(!h.updates(s).some((u) => u.sessionUpdate === "usage_update"));
    assert.ok(!text(h.updates(s)).includes("Error"));
  });
});

test("retries exhausted: end_turn, the outcome error and the error as text", { timeout: 30000 }, async () => {
  await withAgent({
    script: [{ error: "503 overloaded" }],
    settings: { retry: { baseDelayMs: 10, maxRetries: 2 } },
  }, async (h) => {
    const s = await h.newSession();
    const answer = await h.prompt(s, "hi");
    assert.equal(answer.stopReason, "end_turn");
    assert.deepEqual(answer._meta,
                     { rebound: { outcome: "error", retries: 2, errorMessage: "503 overloaded" } });
    const ends = h.seen.filter((n) => n.method === "_rebound/auto_retry_end");
    assert.deepEqual(ends.map((n) => n.params),
                     [{ sessionId: s, success: false, attempt: 2, finalError: "503 overloaded" }]);
    const chunks = h.updates(s).filter((u) => u.sessionUpdate === "agent_message_chunk");
    assert.equal(chunks.length, 1);
    assert.equal(chunks[0].content.text, "Error: 503 overloaded");
  });
});

test("tool calls: kinds, titles, locations, raw input and output, the edit's diff", { timeout: 30000 }, async () => {
  const script = [
    // The calls of one message may run at once: the file is written by a message of its own.
    { toolCalls: [{ name: "write", arguments: { path: "notes.txt", content: "hello world\n" } }] },
    { toolCalls: [
      { name: "read", arguments: { path: "notes.txt", offset: 1 } },
      { name: "bash", arguments: { command: "echo out; cat notes.txt\nexit 0" } },
      { name: "ls", arguments: {} },
      { name: "grep", arguments: { pattern: "hello", path: "." } },
      { name: "find", arguments: { pattern: "*.txt" } },
    ] },
    { toolCalls: [{ name: "edit", arguments: { path: "notes.txt", edits: [{ oldText: "hello", newText: "goodbye" }] } }] },
    { toolCalls: [{ name: "read", arguments: { path: "missing.txt" } }] },
    { text: "Done." },
  ];
  await withAgent({ script, args: ["--tools", "read,bash,edit,write,grep,find,ls"] }, async (h) => {
    const s = await h.newSession();
    const answer = await h.prompt(s, "work");
    assert.equal(answer.stopReason, "end_turn");
    const ups = h.updates(s);
    const calls = ups.filter((u) => u.sessionUpdate === "tool_call");
    const abs = join(h.cwd, "notes.txt");
    assert.deepEqual(calls.map((c) => [c.kind, c.title, c.status]), [
      ["edit", "Write notes.txt", "pending"],
      ["read", "Read notes.txt", "pending"],
      ["execute", "echo out; cat notes.txt", "pending"],
      ["read", "ls .", "pending"],
      ["search", "grep hello in .", "pending"],
      ["search", "find *.txt", "pending"],
      ["edit", "Edit notes.txt", "pending"],
      ["read", "Read missing.txt", "pending"],
    ]);
    assert.deepEqual(calls[0].locations, [{ path: abs }]);
    assert.deepEqual(calls[1].locations, [{ path: abs, line: 1 }]);
    assert.equal(calls[2].locations, undefined);
    assert.deepEqual(calls[3].locations, [{ path: h.cwd }]);
    assert.deepEqual(calls[4].locations, [{ path: h.cwd }]);
    assert.equal(calls[5].locations, undefined);
    assert.deepEqual(calls[6].rawInput, script[2].toolCalls[0].arguments);

    const finals = ups.filter((u) => u.sessionUpdate === "tool_call_update" && u.status &&
                                     u.status !== "in_progress");
    const byId = Object.fromEntries(finals.map((u) => [u.toolCallId, u]));
    const write = byId[calls[0].toolCallId];
    assert.equal(write.status, "completed");
    assert.deepEqual(write.content, [{ type: "diff", path: abs, oldText: null, newText: "hello world\n" }]);
    const read = byId[calls[1].toolCallId];
    assert.deepEqual(read.content, [{ type: "content", content: { type: "text", text: "hello world\n" } }]);
    assert.equal(read.rawOutput.content[0].text, "hello world\n");
    const bash = byId[calls[2].toolCallId];
    assert.equal(bash.status, "completed");
    assert.equal(bash.content[0].content.text, "out\nhello world\n");
    const edit = byId[calls[6].toolCallId];
    assert.equal(edit.status, "completed");
    assert.deepEqual(edit.content, [{ type: "diff", path: abs, oldText: "hello world\n", newText: "goodbye world\n" }]);
    assert.equal(typeof edit.rawOutput.details.diff, "string");
    const missing = byId[calls[7].toolCallId];
    assert.equal(missing.status, "failed");
    assert.equal(missing.content[0].type, "content");
    assert.match(missing.content[0].content.text, /missing\.txt/);
    // Every call went pending → in_progress → its final state, in that order.
    for (const call of calls) {
      const states = ups.filter((u) => u.toolCallId === call.toolCallId)
        .map((u) => u.status ?? "content");
      assert.equal(states[0], "pending");
      assert.equal(states[1], "in_progress");
      assert.ok(["completed", "failed"].includes(states.at(-1)), states.join(","));
    }
    assert.equal(readFileSync(abs, "utf8"), "goodbye world\n");
    assert.equal(text(ups), "Done.");
  });
});

test("two sessions at once, each with its own updates and answer", { timeout: 30000 }, async () => {
  await withAgent({ script: [{ text: "same answer", chunks: 3, chunkDelayMs: 20 }] }, async (h) => {
    const a = await h.newSession();
    const b = await h.newSession();
    assert.notEqual(a, b);
    const [ra, rb] = await Promise.all([h.prompt(a, "one"), h.prompt(b, "two")]);
    assert.equal(ra.stopReason, "end_turn");
    assert.equal(rb.stopReason, "end_turn");
    assert.equal(text(h.updates(a)), "same answer");
    assert.equal(text(h.updates(b)), "same answer");
    // Closing one leaves the other usable.
    assert.deepEqual(await h.ctx.request("session/close", { sessionId: a }), {});
    assert.equal((await h.prompt(b, "three")).stopReason, "end_turn");
  });
});

test("a new prompt while one runs cancels the first", { timeout: 30000 }, async () => {
  await withAgent({ script: [{ hang: true }, { text: "second" }] }, async (h) => {
    const s = await h.newSession();
    const first = h.prompt(s, "one");
    await new Promise((r) => setTimeout(r, 100));
    const second = h.prompt(s, "two");
    assert.equal((await first).stopReason, "cancelled");
    assert.equal((await second).stopReason, "end_turn");
  });
});

test("custom requests: retry state, session policy, session-scoped auto-retry", { timeout: 30000 }, async () => {
  await withAgent({ script: [{ error: "503 overloaded" }, { text: "ok" }],
                    settings: { retry: { baseDelayMs: 10 } } }, async (h) => {
    const s = await h.newSession();
    const state = await h.ctx.request("_rebound/get_retry_state", { sessionId: s });
    assert.equal(state.enabled, true);
    const policy = await h.ctx.request("_rebound/set_retry_policy", { sessionId: s, maxRetries: 5 });
    assert.equal(policy.maxRetries, 5);
    await assert.rejects(h.ctx.request("_rebound/set_retry_policy", { sessionId: s, maxRetries: "x" }),
                         (e) => e.code === -32602 && /^Invalid params: maxRetries: expected/.test(e.message));
    assert.deepEqual(await h.ctx.request("_rebound/set_auto_retry", { sessionId: s, enabled: false }), {});
    const answer = await h.prompt(s, "hi");
    assert.deepEqual(answer._meta.rebound, { outcome: "error", retries: 0, errorMessage: "503 overloaded" });
    // Not persisted: the settings file is as it was.
    assert.deepEqual(JSON.parse(readFileSync(join(h.dir, "agent", "settings.json"), "utf8")),
                     { retry: { baseDelayMs: 10 } });
    assert.deepEqual(await h.ctx.request("_rebound/abort_retry", { sessionId: s }), {});
  });
});

test("error codes of acp.md section 10", { timeout: 30000 }, async () => {
  await withAgent({ script: [{ text: "hi" }] }, async (h) => {
    const code = async (promise) => {
      try {
        await promise;
      } catch (e) {
        return [e.code, e.message];
      }
      assert.fail("expected an error");
    };
    assert.deepEqual(await code(h.ctx.request("session/prompt", { sessionId: "nope", prompt: [{ type: "text", text: "x" }] })),
                     [-32602, "Invalid params: unknown session: nope"]);
    assert.deepEqual(await code(h.ctx.request("session/new", { cwd: "relative/dir", mcpServers: [] })),
                     [-32602, "Invalid params: cwd must be an absolute path"]);
    assert.deepEqual(await code(h.ctx.request("session/new", { cwd: "/nonexistent/dir", mcpServers: [] })),
                     [-32602, "Invalid params: cwd is not a directory: /nonexistent/dir"]);
    assert.deepEqual(await code(h.ctx.request("session/set_mode", { sessionId: "x", modeId: "y" })),
                     [-32602, "Invalid params: unknown session: x"]);
    assert.deepEqual(await code(h.ctx.request("session/set_config_option", { sessionId: "x" })),
                     [-32601, "Method not found: session/set_config_option"]);
    assert.deepEqual(await code(h.ctx.request("_rebound/unknown", {})),
                     [-32601, "Method not found: _rebound/unknown"]);
    assert.deepEqual(await code(h.ctx.request("authenticate", { methodId: "key" })),
                     [-32602, "Invalid params: unknown auth method: key"]);
    const s = await h.newSession();
    assert.deepEqual(await code(h.ctx.request("session/prompt", { sessionId: s, prompt: [{ type: "audio", data: "AA==", mimeType: "audio/wav" }] })),
                     [-32602, "Invalid params: unsupported content block: audio"]);
    assert.deepEqual(await code(h.ctx.request("_rebound/set_auto_retry", { sessionId: s })),
                     [-32602, "Invalid params: enabled: expected boolean"]);
    assert.deepEqual(await code(h.ctx.request("_rebound/get_retry_state", {})),
                     [-32602, "Invalid params: sessionId: expected string"]);
    // The SDK turns -32002 for session/close into success; the raw line carries the code.
    await h.ctx.request("session/close", { sessionId: "gone" });
    const closeError = h.lines.find((l) => l.error?.code === -32002);
    assert.equal(closeError.error.message, "Resource not found: session gone");
    // The session is intact after all that.
    assert.equal((await h.prompt(s, "hi")).stopReason, "end_turn");
  });
});

test("session/load replays the conversation before its answer; resume replays nothing", { timeout: 30000 }, async () => {
  const shared = mkdtempSync(join(tmpdir(), "rebound-acp-load-"));
  try {
    const script = [
      { text: "noted: blue", toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] },
      { error: "503 overloaded" },
      { text: "done" },
    ];
    const id = await withAgent({ script, shared, keepSessions: true, settings: { retry: { baseDelayMs: 10 } } },
                               async (h) => {
      assert.equal(h.init.agentCapabilities.loadSession, true);
      assert.deepEqual(h.init.agentCapabilities.sessionCapabilities, { resume: {}, close: {} });
      const created = await h.ctx.request("session/new", { cwd: h.cwd, mcpServers: [] });
      assert.match(created._meta.rebound.sessionFile, new RegExp(`_${created.sessionId}\\.jsonl$`));
      await h.prompt(created.sessionId, "remember blue");
      return created.sessionId;
    });
    await withAgent({ script: [{ text: "again" }], shared, keepSessions: true }, async (h) => {
      const before = h.lines.length;
      const answer = await h.ctx.request("session/load", { sessionId: id, cwd: h.cwd, mcpServers: [] });
      assert.deepEqual(Object.keys(answer), ["modes"]);
      assert.equal(answer.modes.currentModeId, "bypassPermissions");
      const replayed = h.lines.slice(before, -1).map((l) => l.params.update);
      assert.deepEqual(replayed.map((u) => u.sessionUpdate),
                       ["user_message_chunk", "agent_message_chunk", "tool_call", "agent_message_chunk"]);
      assert.equal(replayed[0].content.text, "remember blue");
      assert.equal(replayed[1].content.text, "noted: blue");
      assert.notEqual(replayed[0].messageId, replayed[1].messageId);
      const call = replayed[2];
      assert.deepEqual(Object.keys(call), ["sessionUpdate", "toolCallId", "title", "kind", "status",
                                           "content", "rawInput", "rawOutput"]);
      assert.equal(call.kind, "execute");
      assert.equal(call.status, "completed");
      assert.deepEqual(call.content, [{ type: "content", content: { type: "text", text: "hi\n" } }]);
      assert.deepEqual(call.rawInput, { command: "echo hi" });
      // The failed attempt that was retried is not replayed; the retry's answer is.
      assert.equal(replayed[3].content.text, "done");
      // The answer came last; the loaded session works.
      assert.deepEqual(h.lines.at(-1).result, answer);
      assert.equal((await h.prompt(id, "more")).stopReason, "end_turn");
      const code = async (promise) => promise.then(() => null, (e) => [e.code, e.message]);
      assert.deepEqual(await code(h.ctx.request("session/load", { sessionId: id, cwd: h.cwd, mcpServers: [] })),
                       [-32602, `Invalid params: session already open: ${id}`]);
      assert.deepEqual(await code(h.ctx.request("session/resume", { sessionId: "no-such", cwd: h.cwd })),
                       [-32002, "Resource not found: session no-such"]);
      await h.ctx.request("session/close", { sessionId: id });
      const count = h.lines.length;
      assert.deepEqual(await h.ctx.request("session/resume", { sessionId: id, cwd: h.cwd, mcpServers: [] }),
                       { modes: answer.modes });
      assert.equal(h.lines.length, count + 1);  // the answer only
      assert.equal((await h.prompt(id, "after resume")).stopReason, "end_turn");
    });
  } finally {
    rmSync(shared, { recursive: true, force: true });
  }
});

test("session/load of a session a crash left: the open call replays failed, with its unknown outcome", { timeout: 30000 }, async () => {
  // runtime.md section 8 (amendments A7): the load appends the result, the replay shows it, and
  // no tool_call_update is written for the event. The file is what a kill -9 during a bash
  // call leaves: the call without a result, its output spooled beside the file.
  const shared = mkdtempSync(join(tmpdir(), "rebound-acp-crash-"));
  try {
    const id = "0190d8a0-0000-7000-8000-00000000c0de";
    const ts = "2026-12-07T08:00:00.000Z";
    const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15,
                    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    mkdirSync(join(shared, "sessions"), { recursive: true });
    const base = join(shared, "sessions", `2026-12-07T08-00-00-000Z_${id}`);
    const entries = [
      { type: "session", version: 3, id, timestamp: ts, cwd: join(shared, "proj") },
      { type: "message", id: "a0000001", parentId: null, timestamp: ts,
        message: { role: "user", content: [{ type: "text", text: "deploy" }], timestamp: 1796630400000 } },
      { type: "message", id: "a0000002", parentId: "a0000001", timestamp: ts,
        message: { role: "assistant", content: [{ type: "toolCall", id: "call_9", name: "bash",
                                                  arguments: { command: "make deploy" } }],
                   api: "openai-completions", provider: "scripted", model: "scripted", usage,
                   stopReason: "toolUse", timestamp: 1796630401000 } },
    ];
    writeFileSync(`${base}.jsonl`, entries.map((e) => JSON.stringify(e)).join("\n") + "\n");
    mkdirSync(`${base}.d`, { mode: 0o700 });
    writeFileSync(join(`${base}.d`, "call_9.out"), "uploading...\n", { mode: 0o600 });
    await withAgent({ script: [{ text: "checked" }], shared, keepSessions: true }, async (h) => {
      const before = h.lines.length;
      const answer = await h.ctx.request("session/load", { sessionId: id, cwd: h.cwd, mcpServers: [] });
      assert.deepEqual(h.lines.at(-1).result, answer);
      const replayed = h.lines.slice(before, -1).map((l) => l.params.update);
      assert.deepEqual(replayed.map((u) => u.sessionUpdate), ["user_message_chunk", "tool_call"]);
      const call = replayed[1];
      assert.equal(call.toolCallId, "call_9");
      assert.equal(call.status, "failed");
      const shown = call.content[0].content.text;
      assert.match(shown, /^Outcome unknown: Rebound stopped while this call was running \(started 20/);
      assert.ok(shown.endsWith("Check the current state before repeating it.\n\nuploading...\n"), shown);
      assert.equal(call.rawOutput.details.outcome, "unknown");
      // The spool went with the result entry; the session goes on from there.
      assert.equal(existsSync(join(`${base}.d`, "call_9.out")), false);
      assert.equal((await h.prompt(id, "status?")).stopReason, "end_turn");
      assert.equal(h.lines.filter((l) => l.params?.update?.sessionUpdate === "tool_call_update").length, 0);
      const onFile = readFileSync(`${base}.jsonl`, "utf8").trim().split("\n").map((l) => JSON.parse(l));
      const settled = onFile.find((e) => e.message?.role === "toolResult");
      assert.equal(settled.message.toolCallId, "call_9");
      assert.equal(settled.message.isError, true);
      // A second process may not take the session up while this one holds it (amendments A3).
      await withAgent({ script: [{ text: "x" }], shared, keepSessions: true }, async (h2) => {
        const refused = await h2.ctx.request("session/load", { sessionId: id, cwd: h2.cwd, mcpServers: [] })
          .then(() => null, (e) => [e.code, e.message]);
        assert.deepEqual(refused, [-32603, `Internal error: Session file is in use by another Rebound process: ${base}.jsonl`]);
      });
    });
  } finally {
    rmSync(shared, { recursive: true, force: true });
  }
});

test("with --no-session there is nothing to load", { timeout: 30000 }, async () => {
  await withAgent({ script: [{ text: "hi" }] }, async (h) => {
    assert.equal(h.init.agentCapabilities.loadSession, false);
    assert.deepEqual(h.init.agentCapabilities.sessionCapabilities, { close: {} });
    await assert.rejects(h.ctx.request("session/load", { sessionId: "x", cwd: h.cwd, mcpServers: [] }),
                         (e) => e.code === -32601 && e.message === "Method not found: session/load");
  });
});

test("--acp-permissions ask: allow, always allow, reject; refused calls never run", { timeout: 30000 }, async () => {
  const script = [
    { toolCalls: [{ name: "bash", arguments: { command: "echo one > one.txt" } }] },
    { toolCalls: [{ name: "write", arguments: { path: "two.txt", content: "two" } }] },
    { toolCalls: [{ name: "bash", arguments: { command: "echo three > three.txt" } }] },
    { toolCalls: [{ name: "read", arguments: { path: "one.txt" } }] },
    { toolCalls: [{ name: "bash", arguments: { command: "echo four > four.txt" } }] },
    { text: "done" },
  ];
  const asked = [];
  const answers = ["allow_once", "reject_once", "allow_always"];
  await withAgent({
    script, args: ["--acp-permissions", "ask"],
    handlers: (app) => app.onRequest("session/request_permission", ({ params }) => {
      asked.push(params);
      return { outcome: { outcome: "selected", optionId: answers[asked.length - 1] ?? "reject_once" } };
    }),
  }, async (h) => {
    const s = await h.newSession();
    assert.equal((await h.prompt(s, "go")).stopReason, "end_turn");
    // bash (allowed once), write (rejected), bash (always), read (never asks), bash (allowed always).
    assert.deepEqual(asked.map((p) => p.toolCall.kind), ["execute", "edit", "execute"]);
    assert.deepEqual(asked[0].options.map((o) => o.optionId), ["allow_once", "allow_always", "reject_once"]);
    // Key order as written (the SDK hands the handler a re-parsed object).
    const raw = h.lines.find((l) => l.method === "session/request_permission");
    assert.deepEqual(Object.keys(raw.params), ["sessionId", "toolCall", "options"]);
    assert.deepEqual(Object.keys(raw.params.toolCall), ["toolCallId", "title", "kind", "status", "rawInput"]);
    assert.equal(asked[0].sessionId, s);
    assert.equal(asked[1].toolCall.title, "Write two.txt");
    const files = (name) => { try { return readFileSync(join(h.cwd, name), "utf8"); } catch { return null; } };
    assert.equal(files("one.txt"), "one\n");
    assert.equal(files("two.txt"), null);  // refused: never written
    assert.equal(files("three.txt"), "three\n");
    assert.equal(files("four.txt"), "four\n");
    const ups = h.updates(s);
    const write = ups.find((u) => u.sessionUpdate === "tool_call" && u.title === "Write two.txt");
    const states = ups.filter((u) => u.toolCallId === write.toolCallId).map((u) => u.status ?? "content");
    assert.deepEqual(states, ["pending", "failed"]);  // no in_progress for a refused call
    const refused = ups.filter((u) => u.toolCallId === write.toolCallId).at(-1);
    assert.equal(refused.content[0].content.text, "Permission denied by the user");
    const bash = ups.find((u) => u.sessionUpdate === "tool_call" && u.kind === "execute");
    assert.deepEqual(ups.filter((u) => u.toolCallId === bash.toolCallId).map((u) => u.status ?? "content")
                       .filter((x) => x !== "content"), ["pending", "in_progress", "completed"]);
    // The permission request came after the call's tool_call update and before its in_progress.
    const requestAt = h.lines.findIndex((l) => l.method === "session/request_permission");
    const pendingAt = h.lines.findIndex((l) => l.params?.update?.toolCallId === bash.toolCallId);
    const progressAt = h.lines.findIndex((l) => l.params?.update?.toolCallId === bash.toolCallId &&
                                                l.params.update.status === "in_progress");
    assert.ok(pendingAt < requestAt && requestAt < progressAt);
    assert.equal(h.lines[requestAt].id, 0);  // Rebound's own ids count from 0
  });
});

test("cancel while a permission request is pending: the call fails, the prompt answers cancelled", { timeout: 30000 }, async () => {
  let release;
  await withAgent({
    script: [{ toolCalls: [{ name: "bash", arguments: { command: "echo x > x.txt" } }] }, { text: "after" }],
    args: ["--acp-permissions", "ask"],
    handlers: (app) => app.onRequest("session/request_permission", () => new Promise((r) => { release = r; })),
  }, async (h) => {
    const s = await h.newSession();
    const pending = h.prompt(s, "go");
    await h.waitFor((n) => n.params?.update?.sessionUpdate === "tool_call", "tool_call");
    while (!release) await new Promise((r) => setTimeout(r, 10));
    await h.ctx.notify("session/cancel", { sessionId: s });
    const answer = await pending;
    assert.equal(answer.stopReason, "cancelled");
    const final = h.updates(s).filter((u) => u.sessionUpdate === "tool_call_update").at(-1);
    assert.equal(final.status, "failed");
    // A cancel counts as a refusal (policy.md section 5), not as an abort.
    assert.equal(final.content[0].content.text, "Permission denied by the user");
    // The late answer is ignored; nothing ran.
    release({ outcome: { outcome: "selected", optionId: "allow_once" } });
    await new Promise((r) => setTimeout(r, 100));
    assert.throws(() => readFileSync(join(h.cwd, "x.txt")));
  });
});

// policy.md section 7's modes, exactly as the spec writes them.
const MODES = [
  { id: "default", name: "Default", description: "Ask before edits, commands and reads outside the project" },
  { id: "acceptEdits", name: "Accept edits", description: "Edit files in the project without asking" },
  { id: "plan", name: "Plan", description: "Read and plan; no file changes" },
  { id: "dontAsk", name: "Don't ask", description: "Deny whatever would need approval" },
  { id: "bypassPermissions", name: "Bypass permissions", description: "Run every tool call without asking" },
];

test("permission modes: in the session/new answer, session/set_mode, _rebound/get_policy", { timeout: 30000 }, async () => {
  const script = [
    { toolCalls: [{ name: "write", arguments: { path: "plan.txt", content: "x" } }] },
    { text: "planned" },
    { toolCalls: [{ name: "bash", arguments: { command: "echo y > y.txt" } }] },
    { text: "refused" },
  ];
  const asked = [];
  await withAgent({
    script, args: ["--acp-permissions", "ask"],
    handlers: (app) => app.onRequest("session/request_permission", ({ params }) => {
      asked.push(params);
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    }),
  }, async (h) => {
    const created = await h.ctx.request("session/new", { cwd: h.cwd, mcpServers: [] });
    const raw = h.lines.at(-1);
    assert.deepEqual(Object.keys(raw.result), ["sessionId", "modes"]);
    assert.deepEqual(raw.result.modes, { currentModeId: "default", availableModes: MODES });
    const s = created.sessionId;
    const policy = await h.ctx.request("_rebound/get_policy", { sessionId: s });
    assert.equal(policy.mode, "default");
    assert.equal(policy.modeSource, "cli");
    assert.deepEqual(policy.workingDirectories, [h.cwd]);
    assert.equal(policy.sandbox.status, "off");
    // The session's own project file, not the process's working directory's.
    assert.deepEqual(policy.sources.map((x) => x.path),
                     [join(h.dir, "agent", "settings.json"), join(h.cwd, ".rebound", "settings.json")]);
    const code = async (promise) => promise.then(() => null, (e) => [e.code, e.message]);
    assert.deepEqual(await code(h.ctx.request("session/set_mode", { sessionId: s, modeId: "bogus" })),
                     [-32602, "Invalid params: unknown mode: bogus"]);
    assert.deepEqual(await code(h.ctx.request("session/set_mode", { sessionId: s })),
                     [-32602, "Invalid params: modeId: expected string"]);
    assert.deepEqual(await h.ctx.request("session/set_mode", { sessionId: s, modeId: "plan" }), {});
    assert.equal((await h.prompt(s, "write it")).stopReason, "end_turn");
    const ups = h.updates(s);
    const write = ups.filter((u) => u.toolCallId === ups.find((u) => u.sessionUpdate === "tool_call").toolCallId);
    assert.deepEqual(write.map((u) => u.status), ["pending", "failed"]);
    assert.equal(write.at(-1).content[0].content.text,
                 `Cannot write to ${join(h.cwd, "plan.txt")} while in plan mode.`);
    const after = await h.ctx.request("_rebound/get_policy", { sessionId: s, wait: true });
    assert.equal(after.mode, "plan");
    assert.equal(after.modeSource, "session");
    // dontAsk: what would ask is refused without a question; no current_mode_update is written.
    assert.deepEqual(await h.ctx.request("session/set_mode", { sessionId: s, modeId: "dontAsk" }), {});
    assert.equal((await h.prompt(s, "bash it")).stopReason, "end_turn");
    const bash = h.updates(s).filter((u) => u.sessionUpdate === "tool_call_update").at(-1);
    assert.equal(bash.status, "failed");
    assert.match(bash.content[0].content.text, /^Permission to use bash has been denied because Rebound is running in don't ask mode\./);
    assert.equal(asked.length, 0);
    assert.throws(() => readFileSync(join(h.cwd, "y.txt")));
    assert.equal(h.updates(s).filter((u) => u.sessionUpdate === "current_mode_update").length, 0);
  });
});

test("each session reads its own project's policy: ask rules without always-allow, removed tools, an invalid file", { timeout: 30000 }, async () => {
  const script = [
    { toolCalls: [{ name: "bash", arguments: { command: "echo asked > asked.txt" } }, { name: "write", arguments: { path: "w.txt", content: "w" } }] },
    { text: "done" },
  ];
  const asked = [];
  await withAgent({
    script,
    handlers: (app) => app.onRequest("session/request_permission", ({ params }) => {
      asked.push(params);
      return { outcome: { outcome: "selected", optionId: "allow_always" } };
    }),
  }, async (h) => {
    // A project that asks before echo and takes write away (both tighten: no trust needed).
    mkdirSync(join(h.cwd, ".rebound"), { recursive: true });
    writeFileSync(join(h.cwd, ".rebound", "settings.json"),
                  JSON.stringify({ permissions: { ask: ["Bash(echo:*)"], deny: ["write"] } }));
    const bad = join(h.dir, "bad");
    mkdirSync(join(bad, ".rebound"), { recursive: true });
    writeFileSync(join(bad, ".rebound", "settings.json"), JSON.stringify({ permissions: { deny: ["Bash("] } }));
    await assert.rejects(h.ctx.request("session/new", { cwd: bad, mcpServers: [] }),
                         (e) => e.code === -32603 &&
                                e.message.startsWith(`Internal error: Invalid permission rule 'Bash(' (permissions.deny[0] in ${join(bad, ".rebound", "settings.json")}): `));
    const created = await h.ctx.request("session/new", { cwd: h.cwd, mcpServers: [] });
    assert.equal(created.modes.currentModeId, "bypassPermissions");
    const s = created.sessionId;
    assert.equal((await h.prompt(s, "go")).stopReason, "end_turn");
    // An ask rule's question offers no "always allow" (policy.md section 6), so that answer refuses.
    assert.equal(asked.length, 1);
    assert.deepEqual(asked[0].options.map((o) => o.optionId), ["allow_once", "reject_once"]);
    assert.equal(asked[0].toolCall.title, "echo asked > asked.txt");
    const ups = h.updates(s);
    const last = (id) => ups.filter((u) => u.toolCallId === id).at(-1);
    const [bash, write] = ups.filter((u) => u.sessionUpdate === "tool_call");
    assert.equal(last(bash.toolCallId).content[0].content.text, "Permission denied by the user");
    assert.throws(() => readFileSync(join(h.cwd, "asked.txt")));
    assert.equal(last(write.toolCallId).content[0].content.text, "Tool write not found");
    assert.throws(() => readFileSync(join(h.cwd, "w.txt")));
    const policy = await h.ctx.request("_rebound/get_policy", { sessionId: s });
    assert.deepEqual(policy.removedTools, ["write"]);
    assert.deepEqual(policy.rules.map((r) => [r.behavior, r.rule, r.source]),
                     [["ask", "Bash(echo:*)", "project"], ["deny", "write", "project"]]);
  });
});

test("--sandbox: each session's commands run in a sandbox of its own cwd", { timeout: 30000 }, async () => {
  const script = [
    { toolCalls: [{ name: "bash", arguments: { command: "touch here.txt && touch ../escaped.txt" } }] },
    { text: "one" },
    { toolCalls: [{ name: "bash", arguments: { command: "touch there.txt; ls ../proj" } }] },
    { text: "two" },
  ];
  await withAgent({ script, args: ["--sandbox"] }, async (h) => {
    const other = join(h.dir, "other");
    mkdirSync(other);
    const a = (await h.ctx.request("session/new", { cwd: h.cwd, mcpServers: [] })).sessionId;
    const b = (await h.ctx.request("session/new", { cwd: other, mcpServers: [] })).sessionId;
    const pa = await h.ctx.request("_rebound/get_policy", { sessionId: a, wait: true });
    const pb = await h.ctx.request("_rebound/get_policy", { sessionId: b, wait: true });
    assert.equal(pa.sandbox.status, "active", JSON.stringify(pa.sandbox));
    assert.equal(pa.sandbox.workspace, h.cwd);
    assert.equal(pb.sandbox.workspace, other);
    assert.equal((await h.prompt(a, "a")).stopReason, "end_turn");
    const endOf = (s) => h.updates(s).filter((u) => u.sessionUpdate === "tool_call_update").at(-1);
    // The workspace is written; its parent (the test's $HOME, an empty scratch directory inside)
    // is not the host's.
    assert.equal(endOf(a).status, "completed");
    assert.equal(readFileSync(join(h.cwd, "here.txt"), "utf8"), "");
    assert.throws(() => readFileSync(join(h.dir, "escaped.txt")));
    // The second session's workspace is its own cwd; the first one's is not visible from it.
    assert.equal((await h.prompt(b, "b")).stopReason, "end_turn");
    assert.equal(readFileSync(join(other, "there.txt"), "utf8"), "");
    assert.match(endOf(b).content[0].content.text, /No such file or directory/);
  });
});

test("files through the client: read and edit see the editor's buffer, writes go to the editor", { timeout: 30000 }, async () => {
  const buffers = new Map();
  const requests = [];
  const script = [
    { toolCalls: [{ name: "read", arguments: { path: "notes.txt" } }] },
    { toolCalls: [{ name: "edit", arguments: { path: "notes.txt", edits: [{ oldText: "unsaved", newText: "saved" }] } }] },
    { toolCalls: [{ name: "write", arguments: { path: "sub/new.txt", content: "fresh\n" } }] },
    { toolCalls: [{ name: "read", arguments: { path: "gone.txt" } }] },
    { text: "Done." },
  ];
  await withAgent({
    script,
    capabilities: { fs: { readTextFile: true, writeTextFile: true } },
    handlers: (app) => app
      .onRequest("fs/read_text_file", ({ params }) => {
        requests.push(["read", params]);
        if (!buffers.has(params.path)) throw acp.RequestError.resourceNotFound(params.path);
        return { content: buffers.get(params.path) };
      })
      .onRequest("fs/write_text_file", ({ params }) => {
        requests.push(["write", params]);
        buffers.set(params.path, params.content);
        return {};
      }),
  }, async (h) => {
    const notes = join(h.cwd, "notes.txt");
    writeFileSync(notes, "on disk\n");
    buffers.set(notes, "unsaved buffer\n");
    const s = await h.newSession();
    assert.equal((await h.prompt(s, "go")).stopReason, "end_turn");
    const ups = h.updates(s);
    const finals = ups.filter((u) => u.sessionUpdate === "tool_call_update" &&
                                     ["completed", "failed"].includes(u.status));
    assert.equal(finals[0].status, "completed");
    assert.equal(finals[0].content[0].content.text, "unsaved buffer\n");
    assert.deepEqual(finals[1].content, [{ type: "diff", path: notes, oldText: "unsaved buffer\n",
                                           newText: "saved buffer\n" }]);
    assert.equal(buffers.get(notes), "saved buffer\n");
    assert.equal(readFileSync(notes, "utf8"), "on disk\n");  // the disk was not touched
    const created = join(h.cwd, "sub", "new.txt");
    assert.deepEqual(finals[2].content, [{ type: "diff", path: created, oldText: null, newText: "fresh\n" }]);
    assert.equal(buffers.get(created), "fresh\n");
    assert.equal(finals[3].status, "failed");
    assert.match(finals[3].content[0].content.text, /not found/i);
    assert.deepEqual(requests.map(([kind, p]) => [kind, p.path]), [
      ["read", notes], ["read", notes], ["write", notes], ["read", created], ["write", created],
      ["read", join(h.cwd, "gone.txt")],
    ]);
    const raw = h.lines.filter((l) => l.method?.startsWith("fs/"));
    assert.deepEqual(Object.keys(raw[0].params), ["sessionId", "path"]);
    assert.deepEqual(Object.keys(raw[2].params), ["sessionId", "path", "content"]);
  });
});

test("compaction: overflow recovery inside the turn, as notifications and compaction updates", { timeout: 30000 }, async () => {
  await withAgent({
    script: [{ text: "first answer" }, { error: "prompt is too long" }, { text: "THE SUMMARY" },
             { text: "second answer" }],
    settings: { compaction: { enabled: true, keepRecentTokens: 1 } },
    capabilities: { session: { compaction: {} } },
  }, async (h) => {
    const s = await h.newSession();
    await h.prompt(s, "one");
    const answer = await h.prompt(s, "two");
    assert.deepEqual(answer._meta, { rebound: { outcome: "stop", retries: 0 } });
    const start = h.seen.find((n) => n.method === "_rebound/auto_compaction_start");
    assert.deepEqual(start.params, { sessionId: s, reason: "overflow" });
    const end = h.seen.find((n) => n.method === "_rebound/auto_compaction_end");
    assert.equal(end.params.sessionId, s);
    assert.equal(end.params.result.summary, "THE SUMMARY");
    const updates = h.updates(s).filter((u) => u.sessionUpdate === "compaction_update");
    assert.equal(updates.length, 2);
    assert.match(updates[0].compactionId, /^[0-9a-f]{16}$/);
    assert.equal(updates[1].compactionId, updates[0].compactionId);
    assert.deepEqual(updates.map((u) => u.status), ["in_progress", "completed"]);
    assert.deepEqual(updates[1].summary, [{ type: "text", text: "THE SUMMARY" }]);
    // The continued run's answer is part of the turn; the answer came after it.
    assert.ok(text(h.updates(s)).endsWith("second answer"));
  });
});

test("compaction: a failed overflow recovery ends the turn with the outcome error", { timeout: 30000 }, async () => {
  await withAgent({
    script: [{ error: "prompt is too long" }, { error: "summary model exploded" }],
    settings: { compaction: { enabled: true, keepRecentTokens: 1 } },
    capabilities: { session: { notices: {} } },
  }, async (h) => {
    const s = await h.newSession();
    const answer = await h.prompt(s, "one");
    assert.equal(answer.stopReason, "end_turn");
    assert.equal(answer._meta.rebound.outcome, "error");
    assert.match(answer._meta.rebound.errorMessage, /overflow recovery failed: summary model exploded/);
    const notice = h.updates(s).find((u) => u.sessionUpdate === "notice");
    assert.equal(notice.title, "Compacting the conversation (overflow)");
    const last = h.updates(s).filter((u) => u.sessionUpdate === "agent_message_chunk").at(-1);
    assert.equal(last.content.text, `Error: ${answer._meta.rebound.errorMessage}`);
  });
});

test("thinking as thought chunks; cancel while bash runs; $/cancel_request; _rebound/* as a notification", { timeout: 30000 }, async () => {
  await withAgent({
    script: [{ thinking: "let me think", text: "answer" },
             { toolCalls: [{ name: "bash", arguments: { command: "sleep 30" } }] },
             { hang: true },
             { text: "after" }],
  }, async (h) => {
    const s = await h.newSession();
    await h.prompt(s, "think");
    const first = h.updates(s).filter((u) => u.sessionUpdate.endsWith("_chunk"));
    assert.deepEqual(first.map((u) => [u.sessionUpdate, u.content.text]),
                     [["agent_thought_chunk", "let me think"], ["agent_message_chunk", "answer"]]);
    assert.equal(first[0].messageId, first[1].messageId);

    // A running bash call: the cancel kills its process group; the answer within 1 s.
    const pending = h.prompt(s, "run");
    await h.waitFor((n) => n.params?.update?.status === "in_progress", "the bash call running");
    let t0 = Date.now();
    await h.ctx.notify("session/cancel", { sessionId: s });
    assert.equal((await pending).stopReason, "cancelled");
    assert.ok(Date.now() - t0 < 1000, `${Date.now() - t0} ms`);
    const bashEnd = h.updates(s).filter((u) => u.sessionUpdate === "tool_call_update").at(-1);
    assert.equal(bashEnd.status, "failed");

    // $/cancel_request naming the pending prompt's id acts as session/cancel (the SDK picks
    // the id; it is read off the wire).
    const hanging = h.prompt(s, "hang");
    await h.ctx.request("_rebound/get_retry_state", { sessionId: s });  // the prompt is running
    const promptId = h.sent.filter((m) => m.method === "session/prompt").at(-1).id;
    t0 = Date.now();
    await h.ctx.notify("$/cancel_request", { requestId: promptId });
    assert.equal((await hanging).stopReason, "cancelled");
    assert.ok(Date.now() - t0 < 1000);

    // A custom request sent as a notification runs and is not answered.
    const before = h.lines.length;
    await h.ctx.notify("_rebound/set_auto_retry", { sessionId: s, enabled: false });
    const state = await h.ctx.request("_rebound/get_retry_state", { sessionId: s });
    assert.equal(state.enabled, false);
    assert.equal(h.lines.length, before + 1);  // get_retry_state's answer only
  });
});

test("MCP servers from session/new: their tools run, read-only ones without asking, stopped at session/close", { timeout: 30000 }, async () => {
  const rogue = join(dirname(fileURLToPath(import.meta.url)), "mcp_rogue_server.mjs");
  const longName = "a_tool_name_that_goes_on_and_on_well_past_the_sixty_four_characters_limit";
  let h32 = 0x811c9dc5;
  for (const byte of Buffer.from(`rogue/${longName}`)) h32 = Math.imul(h32 ^ byte, 0x01000193) >>> 0;
  const readOnly = `mcp__rogue__${longName}`.slice(0, 55) + "_" + h32.toString(16).padStart(8, "0");
  const script = [
    { toolCalls: [{ name: "mcp__rogue__odd_tool_name", arguments: { n: 1 } }, { name: readOnly, arguments: { text: "r" } }] },
    { toolCalls: [{ name: "mcp__rogue__fail", arguments: {} }] },
    { toolCalls: [{ name: "mcp__rogue__pid", arguments: {} }] },
    { text: "done" },
  ];
  const asked = [];
  await withAgent({
    script, args: ["--acp-permissions", "ask"],
    handlers: (app) => app.onRequest("session/request_permission", ({ params }) => {
      asked.push(params.toolCall.title);
      return { outcome: { outcome: "selected", optionId: "allow_once" } };
    }),
  }, async (h) => {
    const log = join(h.dir, "rogue.jsonl");
    const { sessionId: s } = await h.ctx.request("session/new", { cwd: h.cwd, mcpServers: [
      { name: "rogue", command: process.execPath, args: [rogue], env: [{ name: "ROGUE_LOG", value: log }] },
      { type: "http", name: "web", url: "https://mcp.example.invalid/mcp", headers: [] },
    ] });
    // The first prompt waits for the server to be ready, so its tools are offered at once.
    const answer = await h.ctx.request("session/prompt", { sessionId: s, prompt: [{ type: "text", text: "go" }] });
    assert.equal(answer.stopReason, "end_turn");
    const ups = h.updates(s);
    const calls = ups.filter((u) => u.sessionUpdate === "tool_call");
    assert.deepEqual(calls.map((u) => [u.title, u.kind]),
                     [["mcp__rogue__odd_tool_name", "other"], [readOnly, "other"], ["mcp__rogue__fail", "other"], ["mcp__rogue__pid", "other"]]);
    const last = (id) => ups.filter((u) => u.toolCallId === id).at(-1);
    const [readOnlyCall] = calls.splice(1, 1);
    assert.equal(last(readOnlyCall.toolCallId).rawOutput.content[0].text, `${longName}: {"text":"r"}`);
    assert.equal(last(calls[0].toolCallId).status, "completed");
    assert.equal(last(calls[0].toolCallId).rawOutput.content[0].text, 'odd.tool name: {"n":1}');
    assert.equal(last(calls[1].toolCallId).status, "failed");
    assert.equal(last(calls[1].toolCallId).content[0].content.text, "MCP error -32000: rogue refuses");
    // Every MCP tool asks unless its server marked it read-only (the long-named one ran unasked).
    assert.deepEqual(asked, ["mcp__rogue__odd_tool_name", "mcp__rogue__fail", "mcp__rogue__pid"]);
    const pid = Number(last(calls[2].toolCallId).rawOutput.content[0].text);
    assert.ok(pid > 0);
    process.kill(pid, 0);  // running while the session is open
    await h.ctx.request("session/close", { sessionId: s });
    const deadline = Date.now() + 3000;
    let alive = true;
    while (alive && Date.now() < deadline) {
      try { process.kill(pid, 0); await new Promise((r) => setTimeout(r, 20)); } catch { alive = false; }
    }
    assert.equal(alive, false, "the session's MCP server outlived session/close");
  });
});

test("an extension's ui/confirm during its tool_call is session/request_permission for that call", { timeout: 30000 }, async () => {
  const fixture = new URL("../extensions/fixtures/ext_fixture.py", import.meta.url).pathname;
  const script = [
    { toolCalls: [{ name: "bash", arguments: { command: "echo first" } }] },
    { text: "done" },
    { toolCalls: [{ name: "bash", arguments: { command: "echo second" } }] },
    { text: "done" },
  ];
  const asked = [];
  const answers = ["allow_once", "reject_once"];
  await withAgent({
    script,
    settings: { extensions: { guard: { command: "python3", args: [fixture], env: { EXT_MODE: "confirm" } } } },
    handlers: (app) => app.onRequest("session/request_permission", ({ params }) => {
      asked.push(params);
      return { outcome: { outcome: "selected", optionId: answers[asked.length - 1] } };
    }),
  }, async (h) => {
    const s = await h.newSession();
    assert.equal((await h.prompt(s, "first")).stopReason, "end_turn");
    assert.equal((await h.prompt(s, "second")).stopReason, "end_turn");
    assert.equal(asked.length, 2);
    const calls = h.updates(s).filter((u) => u.sessionUpdate === "tool_call");
    assert.equal(calls.length, 2);
    // The dialog names the call the extension's tool_call request is about (extensions.md 6.2).
    const raw = h.lines.find((l) => l.method === "session/request_permission");
    assert.deepEqual(raw.params, {
      sessionId: s, toolCall: { toolCallId: calls[0].toolCallId },
      options: [{ optionId: "allow_once", name: "Allow", kind: "allow_once" },
                { optionId: "reject_once", name: "Reject", kind: "reject_once" }],
      _meta: { rebound: { dialog: { title: "Allow bash?", message: '{"command": "echo first"}' } } },
    });
    assert.equal(asked[1].toolCall.toolCallId, calls[1].toolCallId);
    const final = (id) => h.updates(s).filter((u) => u.toolCallId === id && u.status &&
                                                 u.status !== "in_progress").at(-1);
    assert.equal(final(calls[0].toolCallId).status, "completed");
    assert.equal(final(calls[0].toolCallId).content[0].content.text, "first\n");
    assert.equal(final(calls[1].toolCallId).status, "failed");
    assert.equal(final(calls[1].toolCallId).content[0].content.text, "the user said no");
  });
});

test("an extension's slash command ends the turn as handled, and is advertised after session/new", { timeout: 30000 }, async () => {
  const fixture = new URL("../extensions/fixtures/ext_fixture.py", import.meta.url).pathname;
  const init = JSON.stringify({ protocolVersion: 1, commands: [
    { name: "todos", description: "Show the to-do list" }, { name: "fail" }, { name: "hang" }] });
  await withAgent({
    script: [{ text: "from the model" }],
    settings: { extensions: { guard: { command: "python3", args: [fixture],
                                       env: { EXT_INIT: init, EXT_START_DELAY: "0.3" } } } },
  }, async (h) => {
    const s = await h.newSession();
    // The one update outside a prompt, once the extension is up (sessions.md section 15).
    const advertised = await h.waitFor((n) => n.method === "session/update" &&
      n.params.update.sessionUpdate === "available_commands_update", "available_commands_update");
    assert.deepEqual(advertised.params, { sessionId: s, update: {
      sessionUpdate: "available_commands_update",
      availableCommands: [{ name: "todos", description: "Show the to-do list" },
                          { name: "fail", description: "" }, { name: "hang", description: "" }] } });
    const updateAt = h.lines.findIndex((l) => l.params && l.params.update &&
      l.params.update.sessionUpdate === "available_commands_update");
    assert.ok(updateAt > h.lines.findIndex((l) => l.result && l.result.sessionId === s),
              "the update came before session/new's answer");
    // No run: no agent text, the command's own outcome (extensions.md section 9).
    assert.deepEqual(await h.prompt(s, "/todos today"),
                     { stopReason: "end_turn", _meta: { rebound: { outcome: "handled", retries: 0 } } });
    assert.deepEqual(await h.prompt(s, "/fail"), { stopReason: "end_turn", _meta: { rebound: {
      outcome: "error", retries: 0, errorMessage: "Extension command /fail failed: JSON-RPC error -32000: no todos" } } });
    assert.equal(text(h.updates(s)), "Error: Extension command /fail failed: JSON-RPC error -32000: no todos");
    // A cancel answers a hung command at once; the next prompt then runs.
    const hung = h.prompt(s, "/hang");
    await new Promise((r) => setTimeout(r, 200));
    await h.ctx.notify("session/cancel", { sessionId: s });
    assert.equal((await hung).stopReason, "cancelled");
    // Any other text reaches the model.
    assert.equal((await h.prompt(s, "/elsewhere")).stopReason, "end_turn");
    assert.ok(text(h.updates(s)).endsWith("from the model"));
  });
});

test("an extension's notices and failures are notice updates for a client that takes them", { timeout: 30000 }, async () => {
  const fixture = new URL("../extensions/fixtures/ext_fixture.py", import.meta.url).pathname;
  const script = [
    { toolCalls: [{ name: "bash", arguments: { command: "echo first" } }] },
    { text: "done" },
  ];
  for (const [mode, takesNotices] of [["notify", true], ["error", true], ["error", false]]) {
    await withAgent({
      script,
      capabilities: takesNotices ? { session: { notices: {} } } : {},
      settings: { extensions: { guard: { command: "python3", args: [fixture], env: { EXT_MODE: mode } } } },
    }, async (h) => {
      const s = await h.newSession();
      assert.equal((await h.prompt(s, "go")).stopReason, "end_turn");
      const notices = h.updates(s).filter((u) => u.sessionUpdate === "notice");
      if (!takesNotices) {
        assert.deepEqual(notices, []);
        // The log line (stderr is read as it comes).
        const logged = /guard failed \(tool_call\): JSON-RPC error -32000: guard broke/;
        for (let i = 0; i < 250 && !logged.test(h.stderr()); ++i) await new Promise((r) => setTimeout(r, 20));
        assert.match(h.stderr(), logged);
      } else if (mode === "notify") {
        assert.deepEqual(notices, [{ sessionUpdate: "notice", severity: "warning", title: "checking bash" }]);
      } else {
        assert.deepEqual(notices, [{ sessionUpdate: "notice", severity: "error", title: "Extension error: guard",
                                     description: "JSON-RPC error -32000: guard broke" }]);
      }
    });
  }
});

test("an extension's tools are offered and called in an ACP session", { timeout: 30000 }, async () => {
  const fixture = new URL("../extensions/fixtures/ext_fixture.py", import.meta.url).pathname;
  const init = JSON.stringify({ protocolVersion: 1, tools: [{ name: "todo_add", description: "Add a to-do item",
    parameters: { type: "object", required: ["text"], properties: { text: { type: "string" } } } }] });
  await withAgent({
    script: [{ toolCalls: [{ name: "todo_add", arguments: { text: "ship it" } }] }, { text: "done" }],
    settings: { extensions: { todo: { command: "python3", args: [fixture], env: { EXT_INIT: init } } } },
  }, async (h) => {
    const s = await h.newSession();
    assert.equal((await h.prompt(s, "add it")).stopReason, "end_turn");
    const calls = h.updates(s).filter((u) => u.sessionUpdate === "tool_call");
    assert.equal(calls.length, 1);
    assert.equal(calls[0].title, "todo_add");
    const final = h.updates(s).filter((u) => u.toolCallId === calls[0].toolCallId && u.status === "completed");
    assert.equal(final.length, 1);
    assert.equal(final[0].content[0].content.text, "added: ship it");
  });
});

test("hooks in an ACP session: SessionStart context, a UserPromptSubmit refusal, a PreToolUse deny, SessionEnd at session/close", { timeout: 30000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "rebound-acp-hooks-"));
  const ends = join(dir, "ends.log");
  const log = join(dir, "requests.jsonl");
  const guard = "grep -q forbidden && { echo 'no forbidden words' >&2; exit 2; }; exit 0";
  const deny = `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no bash here"}}'`;
  const settings = { hooks: {
    SessionStart: [{ hooks: [{ type: "command", command: "echo 'the project colour is blue'" }] }],
    UserPromptSubmit: [{ hooks: [{ type: "command", command: guard }] }],
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: deny }] }],
    SessionEnd: [{ hooks: [{ type: "command", command: `cat >> ${ends}; echo >> ${ends}` }] }],
  } };
  const script = [{ toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] }, { text: "done" }];
  await withAgent({ script, settings, shared: dir, args: ["--script-log", log] }, async (h) => {
    const s = await h.newSession();
    // A refusal ends the turn at once: its text as agent text, `refusal`, `blocked`.
    const blocked = `UserPromptSubmit operation blocked by hook:\n[${guard}]: no forbidden words`;
    assert.deepEqual(await h.prompt(s, "a forbidden prompt"), { stopReason: "refusal",
      _meta: { rebound: { outcome: "blocked", retries: 0, errorMessage: blocked } } });
    assert.equal(text(h.updates(s)), blocked);
    assert.equal(existsSync(log) ? readFileSync(log, "utf8") : "", "", "the refused prompt reached the model");
    // The next one runs: the SessionStart text ends the system prompt, bash is denied.
    assert.equal((await h.prompt(s, "go")).stopReason, "end_turn");
    const requests = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    assert.ok(requests[0].systemPrompt.includes("the project colour is blue"), requests[0].systemPrompt);
    const call = h.updates(s).find((u) => u.sessionUpdate === "tool_call");
    const final = h.updates(s).filter((u) => u.toolCallId === call.toolCallId && u.status === "failed");
    assert.equal(final.length, 1);
    assert.equal(final[0].content[0].content.text, "PreToolUse:bash hook error: no bash here");
    // session/close: SessionEnd with reason close, after the answer.
    assert.deepEqual(await h.ctx.request("session/close", { sessionId: s }), {});
    for (let i = 0; i < 250 && !(existsSync(ends) && readFileSync(ends, "utf8").includes("close")); ++i)
      await new Promise((r) => setTimeout(r, 20));
    const end = JSON.parse(readFileSync(ends, "utf8").trim());
    assert.equal(end.hook_event_name, "SessionEnd");
    assert.equal(end.reason, "close");
    assert.equal(end.session_id, s);
  });
  rmSync(dir, { recursive: true, force: true });
});

test("a hook's continue:false ends the ACP turn with the outcome stopped", { timeout: 30000 }, async () => {
  const stop = `echo '{"continue":false,"stopReason":"enough for today"}'`;
  await withAgent({
    script: [{ toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] }, { text: "never asked" }],
    settings: { hooks: { PostToolUse: [{ hooks: [{ type: "command", command: stop }] }] } },
  }, async (h) => {
    const s = await h.newSession();
    assert.deepEqual(await h.prompt(s, "go"),
                     { stopReason: "end_turn", _meta: { rebound: { outcome: "stopped", retries: 0 } } });
    assert.equal(text(h.updates(s)), "");
    // The next turn ends normally again.
    assert.equal((await h.prompt(s, "again")).stopReason, "end_turn");
  });
});

test("templates and skills: expanded in session/prompt, advertised after session/new, load and resume", { timeout: 30000 }, async () => {
  const shared = mkdtempSync(join(tmpdir(), "rebound-acp-prompts-"));
  const write = (path, text) => {
    mkdirSync(dirname(join(shared, path)), { recursive: true });
    writeFileSync(join(shared, path), text);
  };
  write("proj/.rebound/prompts/greet.md",
        "---\ndescription: Greet people by name\nargument-hint: <name> [more names]\n---\nHello $1 and ${@:2}!\n");
  write("agent/skills/demo-skill/SKILL.md", "---\nname: demo-skill\ndescription: Demo skill.\n---\nSteps.\n");
  const log = join(shared, "log.jsonl");
  const expected = { sessionUpdate: "available_commands_update", availableCommands: [
    { name: "greet", description: "Greet people by name", input: { hint: "<name> [more names]" } },
    { name: "skill:demo-skill", description: "Demo skill." }] };
  // The one available_commands_update not seen yet; it must follow the answer at `answerAt`.
  const advertisedAfter = async (h, answerAt) => {
    const n = await h.waitFor((x) => x.method === "session/update" && !h.used.has(x) &&
      x.params.update.sessionUpdate === "available_commands_update", "available_commands_update");
    h.used.add(n);
    const at = h.lines.findIndex((l, i) => i > answerAt && l.params && l.params.update &&
      l.params.update.sessionUpdate === "available_commands_update");
    assert.ok(answerAt >= 0 && at > answerAt, "the update follows the answer");
    return n.params;
  };
  const answerFrom = (h, before) => h.lines.findIndex((l, i) => i >= before && "result" in l && !("method" in l));
  try {
    const id = await withAgent({ script: [{ text: "ok" }], shared, keepSessions: true,
                                 args: ["--script-log", log] }, async (h) => {
      h.used = new Set();
      const created = await h.ctx.request("session/new", { cwd: h.cwd, mcpServers: [] });
      const s = created.sessionId;
      const params = await advertisedAfter(h, h.lines.findIndex((l) => l.result && l.result.sessionId === s));
      assert.deepEqual(params, { sessionId: s, update: expected });
      assert.equal((await h.prompt(s, "/greet Ann \"Bo Li\" Cy")).stopReason, "end_turn");
      assert.equal((await h.prompt(s, "/skill:demo-skill go")).stopReason, "end_turn");
      return s;
    });
    const sent = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const lastUser = (r) => r.messages.filter((m) => m.role === "user").at(-1).content[0].text;
    assert.equal(lastUser(sent[0]), "Hello Ann and Bo Li Cy!");
    assert.ok(lastUser(sent[1]).startsWith(`<skill name="demo-skill" location="${join(shared, "agent/skills/demo-skill/SKILL.md")}">`));
    assert.ok(lastUser(sent[1]).endsWith("Steps.\n</skill>\n\ngo"));
    await withAgent({ script: [{ text: "again" }], shared, keepSessions: true }, async (h) => {
      h.used = new Set();
      let before = h.lines.length;
      await h.ctx.request("session/load", { sessionId: id, cwd: h.cwd, mcpServers: [] });
      assert.deepEqual((await advertisedAfter(h, answerFrom(h, before))).update, expected);
      await h.ctx.request("session/close", { sessionId: id });
      before = h.lines.length;
      await h.ctx.request("session/resume", { sessionId: id, cwd: h.cwd, mcpServers: [] });
      assert.deepEqual((await advertisedAfter(h, answerFrom(h, before))).update, expected);
    });
  } finally {
    rmSync(shared, { recursive: true, force: true });
  }
});
