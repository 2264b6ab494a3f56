// The basic ACP flows through the legacy client library of older editor builds (npm
// @zed-industries/agent-client-protocol 0.4.5, its ClientSideConnection): handshake, a prompt,
// a retry chain (the `_rebound/*` notifications reach extNotification without the underscore),
// cancel during a backoff, a permission request, files through the client, a custom request and
// session/load. This library predates `usage_update` and `notice` and drops them (acp.md
// section 15); nothing else may be lost.
// usage: node --test acp_legacy.test.mjs   (REBOUND_BINARY names the server binary)

import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClientSideConnection, ndJsonStream } from "@zed-industries/agent-client-protocol";
import { spawnAcp } from "./acp_harness.mjs";

// A client that records what the agent sends it; `permission` and `files` answer its requests.
class RecordingClient {
  constructor({ permission, files }) {
    this.updates = [];
    this.ext = [];
    this.permissionRequests = [];
    this.permission = permission;
    this.files = files ?? new Map();
  }
  async sessionUpdate(params) { this.updates.push(params); }
  async requestPermission(params) {
    this.permissionRequests.push(params);
    return { outcome: { outcome: "selected", optionId: this.permission ?? "reject_once" } };
  }
  async readTextFile(params) {
    if (!this.files.has(params.path)) throw new Error(`no buffer for ${params.path}`);
    return { content: this.files.get(params.path) };
  }
  async writeTextFile(params) {
    this.files.set(params.path, params.content);
    return null;  // what this library sends for an empty result
  }
  async extNotification(method, params) { this.ext.push({ method, params }); }
}

async function withLegacy(options, op) {
  const server = spawnAcp({ ...options, name: "legacy" });
  const client = new RecordingClient(options);
  const connection = new ClientSideConnection(() => client, ndJsonStream(server.output, server.input));
  try {
    const init = await connection.initialize({
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: !!options.files, writeTextFile: !!options.files } },
    });
    const session = async () => (await connection.newSession({ cwd: server.cwd, mcpServers: [] })).sessionId;
    const prompt = (sessionId, text) => connection.prompt({ sessionId, prompt: [{ type: "text", text }] });
    return await op({ connection, client, init, session, prompt, server });
  } finally {
    await server.finish();
  }
}

const chunks = (client, sessionId) => client.updates
  .filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === "agent_message_chunk")
  .map((u) => u.update.content.text).join("");

test("legacy: handshake, a prompt, a second session", { timeout: 30000 }, async () => {
  await withLegacy({ script: [{ text: "Hello there", chunks: 2 }] }, async (h) => {
    assert.equal(h.init.protocolVersion, 1);
    assert.equal(h.init.agentCapabilities.loadSession, false);
    const a = await h.session();
    const b = await h.session();
    assert.notEqual(a, b);
    const answer = await h.prompt(a, "hi");
    assert.equal(answer.stopReason, "end_turn");
    assert.equal(chunks(h.client, a), "Hello there");
    assert.equal((await h.prompt(b, "hi")).stopReason, "end_turn");
    assert.equal(chunks(h.client, b), "Hello there");
  });
});

test("legacy: a retry chain through extNotification, then cancel during a backoff", { timeout: 30000 }, async () => {
  await withLegacy({
    script: [{ error: "503 overloaded" }, { text: "recovered" }, { error: "503 overloaded" }],
    settings: { retry: { baseDelayMs: 50, maxRetries: 3 } },
  }, async (h) => {
    const s = await h.session();
    const answer = await h.prompt(s, "hi");
    assert.equal(answer.stopReason, "end_turn");
    assert.equal(chunks(h.client, s), "recovered");
    assert.deepEqual(h.client.ext.map((n) => n.method),
                     ["rebound/auto_retry_start", "rebound/auto_retry_end"]);
    assert.deepEqual(h.client.ext[0].params,
                     { sessionId: s, attempt: 1, maxAttempts: 3, delayMs: 50, errorMessage: "503 overloaded" });
    // The next prompt fails, its retry waits; a cancel during that backoff ends the turn.
    await h.connection.extMethod("rebound/set_retry_policy", { sessionId: s, baseDelayMs: 30000 });
    const pending = h.prompt(s, "again");
    while (h.client.ext.length < 3) await new Promise((r) => setTimeout(r, 10));
    const t0 = Date.now();
    await h.connection.cancel({ sessionId: s });
    assert.equal((await pending).stopReason, "cancelled");
    assert.ok(Date.now() - t0 < 1000);
    // Retry-control mode is on since set_retry_policy: the typed `reason` comes along.
    assert.deepEqual(h.client.ext.at(-1).params,
                     { sessionId: s, success: false, attempt: 1, finalError: "Retry cancelled",
                       reason: "cancelled" });
  });
});

test("legacy: permission requests and files through the client", { timeout: 30000 }, async () => {
  const files = new Map();
  await withLegacy({
    script: [
      { toolCalls: [{ name: "edit", arguments: { path: "a.txt", edits: [{ oldText: "old", newText: "new" }] } }] },
      { toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
      { text: "ok" },
    ],
    args: ["--acp-permissions", "ask"],
    permission: "allow_once",
    files,
  }, async (h) => {
    const path = join(h.server.cwd, "a.txt");
    files.set(path, "old text\n");
    const s = await h.session();
    assert.equal((await h.prompt(s, "go")).stopReason, "end_turn");
    assert.equal(h.client.permissionRequests.length, 1);
    assert.equal(h.client.permissionRequests[0].toolCall.title, "Edit a.txt");
    assert.equal(files.get(path), "new text\n");
    const finals = h.client.updates.map((u) => u.update)
      .filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    assert.deepEqual(finals[0].content, [{ type: "diff", path, oldText: "old text\n", newText: "new text\n" }]);
    assert.equal(finals[1].content[0].content.text, "new text\n");
  });
});

test("legacy: session/load replays through sessionUpdate", { timeout: 30000 }, async () => {
  const shared = mkdtempSync(join(tmpdir(), "rebound-acp-legacy-"));
  try {
    const id = await withLegacy({ script: [{ text: "noted: blue" }], shared, keepSessions: true }, async (h) => {
      assert.equal(h.init.agentCapabilities.loadSession, true);
      const s = await h.session();
      await h.prompt(s, "remember blue");
      return s;
    });
    await withLegacy({ script: [{ text: "again" }], shared, keepSessions: true }, async (h) => {
      await h.connection.loadSession({ sessionId: id, cwd: h.server.cwd, mcpServers: [] });
      assert.deepEqual(h.client.updates.map((u) => [u.update.sessionUpdate, u.update.content.text]),
                       [["user_message_chunk", "remember blue"], ["agent_message_chunk", "noted: blue"]]);
      const state = await h.connection.extMethod("rebound/get_retry_state", { sessionId: id });
      assert.equal(state.enabled, true);
    });
  } finally {
    rmSync(shared, { recursive: true, force: true });
  }
});
