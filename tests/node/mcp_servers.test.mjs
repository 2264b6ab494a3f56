// Rebound's MCP client (mcp.md) against MCP servers nobody here wrote: npm
// @modelcontextprotocol/server-filesystem and server-everything (2026.8.31). What Rebound must
// show is computed in the test by asking the same servers through the official client,
// @modelcontextprotocol/sdk 1.32.2. Then a misbehaving server of the tests' own
// (mcp_rogue_server.mjs): pagination, odd and long names, a JSON-RPC error, list_changed at run
// time, a timeout, a crash mid-call, restart, a command that does not exist, and no server
// process left once Rebound has exited.
// usage: node --test mcp_servers.test.mjs   (REBOUND_BINARY names the server binary)

import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync, appendFileSync, mkdirSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const binary = process.env.REBOUND_BINARY;
if (!binary) throw new Error("REBOUND_BINARY must name the rebound binary");
const here = dirname(fileURLToPath(import.meta.url));
const EVERYTHING = join(here, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const FILESYSTEM = join(here, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const ROGUE = join(here, "mcp_rogue_server.mjs");
const TAP = join(here, "mcp_tap.mjs");
const SECRET = "sk-test-secret-never-passed-on";

const children = new Set();
const sdkClients = [];
after(async () => {
  for (const child of children) child.kill("SIGKILL");
  for (const c of sdkClients) await c.close().catch(() => {});
});

// ---- Rebound in rpc mode, driven line by line ----

function startRebound(dir, { script, mcpConfig, args = [], cwd = dir }) {
  mkdirSync(join(dir, "agent"), { recursive: true });
  writeFileSync(join(dir, "script.json"), JSON.stringify(script ?? [{ text: "ok" }]));
  writeFileSync(join(dir, "mcp.json"), JSON.stringify(mcpConfig));
  const child = spawn(binary,
    ["--agent-dir", join(dir, "agent"), "--no-session", "--provider", "scripted", "--script",
     join(dir, "script.json"), "--script-log", join(dir, "log.jsonl"), "--tools", "read",
     "--mcp-config", join(dir, "mcp.json"), ...args],
    { cwd, env: { ...process.env, HOME: dir, OPENAI_API_KEY: SECRET, ANTHROPIC_API_KEY: "" },
      stdio: ["pipe", "pipe", "pipe"] });
  children.add(child);
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => {
    children.delete(child);
    resolve({ code, signal });
  }));
  const capture = process.env.REBOUND_CAPTURE_DIR
    ? join(process.env.REBOUND_CAPTURE_DIR, `node-mcp-${child.pid}.jsonl`) : null;
  if (capture) mkdirSync(process.env.REBOUND_CAPTURE_DIR, { recursive: true });
  const lines = [];
  const pending = new Map();
  let waiters = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (capture) appendFileSync(capture, line + "\n");
    const message = JSON.parse(line);  // nothing but protocol lines on stdout
    lines.push(message);
    if (message.type === "response" && pending.has(message.id)) {
      pending.get(message.id)(message);
      pending.delete(message.id);
    }
    waiters = waiters.filter((w) => !w());
  });
  let nextId = 1;
  const send = (command) => new Promise((resolve, reject) => {
    const id = `c${nextId++}`;
    const timer = setTimeout(() => reject(new Error(`no answer to ${command.type}; stderr: ${stderr}`)), 20000);
    pending.set(id, (r) => { clearTimeout(timer); resolve(r); });
    child.stdin.write(JSON.stringify({ id, ...command }) + "\n");
  });
  // Resolves with the first line (from `from` on) that `match` accepts.
  const waitFor = (match, from = 0, ms = 20000) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`line not seen within ${ms} ms; stderr: ${stderr}`)), ms);
    const check = () => {
      const found = lines.slice(from).find(match);
      if (found) { clearTimeout(timer); resolve(found); return true; }
      return false;
    };
    if (!check()) waiters.push(check);
  });
  const prompt = async (message) => {
    const from = lines.length;
    const r = await send({ type: "prompt", message });
    assert.equal(r.success, true, JSON.stringify(r));
    await waitFor((l) => l.type === "agent_end", from);
    return lines.slice(from);
  };
  const close = async () => { child.stdin.end(); return exited; };
  return { child, lines, send, waitFor, prompt, close, stderr: () => stderr,
           scriptLog: () => readFileSync(join(dir, "log.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)) };
}

const toolEnds = (lines) => Object.fromEntries(
  lines.filter((l) => l.type === "tool_execution_end").map((l) => [l.toolCallId, l]));

// ---- what the official client sees ----

async function sdk(command, args, env = {}) {
  const transport = new StdioClientTransport({ command, args, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env }, stderr: "ignore" });
  const client = new Client({ name: "expectations", version: "1.0.0" });
  await client.connect(transport);
  sdkClients.push(client);
  return client;
}

const sanitize = (s) => s.replace(/[^A-Za-z0-9_-]/g, "_");

// A tool as mcp.md section 4.2 says the model receives it.
function offered(server, tool) {
  const parameters = { ...tool.inputSchema };
  if (parameters.type === undefined) parameters.type = "object";
  return { name: `mcp__${sanitize(server)}__${sanitize(tool.name)}`,
           description: tool.description ?? tool.title ?? tool.annotations?.title ?? "", parameters };
}

// A CallToolResult as mcp.md section 6 says the tool result reads (the blocks these servers send).
function converted(server, tool, result) {
  const content = (result.content ?? []).map((b) => {
    if (b.type === "text") return { type: "text", text: b.text };
    if (b.type === "image") return { type: "image", data: b.data, mimeType: b.mimeType };
    if (b.type === "resource_link") return { type: "text", text: `[Resource link: ${b.name}] ${b.uri}` + (b.description ? `\n${b.description}` : "") };
    throw new Error(`no expectation for ${b.type}`);
  });
  if (content.length === 0 && result.structuredContent) content.push({ type: "text", text: JSON.stringify(result.structuredContent) });
  const details = { server, tool };
  if (result.structuredContent) details.structuredContent = result.structuredContent;
  return { content, details, isError: result.isError === true };
}

function fnv1a32(text) {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, "utf8")) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}

function assertNoProcessMentions(marker) {
  let out = "";
  try { out = execFileSync("pgrep", ["-f", marker], { encoding: "utf8" }); } catch { out = ""; }
  assert.equal(out.trim(), "", `processes still running for ${marker}`);
}

// ---- the reference servers ----

test("filesystem and everything: the tools as the model receives them, and their calls, match the official client", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rebound-mcp-ref-"));
  const allowed = join(dir, "allowed");
  mkdirSync(allowed);
  writeFileSync(join(allowed, "note.txt"), "first line\nsecond line\n");
  writeFileSync(join(dir, "secret.txt"), "outside\n");
  const fsArgs = [FILESYSTEM, allowed];
  const evArgs = [EVERYTHING, "stdio"];
  const calls = [
    { name: "mcp__fs__read_text_file", arguments: { path: join(allowed, "note.txt") } },
    { name: "mcp__fs__read_text_file", arguments: { path: join(dir, "secret.txt") } },
    { name: "mcp__everything__echo", arguments: { message: "hello there" } },
    { name: "mcp__everything__get-sum", arguments: { a: 2, b: 40 } },
    { name: "mcp__everything__get-tiny-image", arguments: {} },
    { name: "mcp__everything__get-structured-content", arguments: { location: "New York" } },
  ];
  const rebound = startRebound(dir, {
    script: [{ toolCalls: calls }, { text: "done" }],
    mcpConfig: { mcpServers: { fs: { command: "node", args: fsArgs }, everything: { command: "node", args: evArgs } } },
  });
  const fsClient = await sdk("node", fsArgs);
  const evClient = await sdk("node", evArgs);

  // Listing: get_tools after the servers are ready, exactly what the official client lists.
  const servers = (await rebound.send({ type: "get_mcp_servers", wait: true })).data.servers;
  assert.deepEqual(servers.map((s) => [s.name, s.status]), [["fs", "ready"], ["everything", "ready"]]);
  assert.equal(servers[0].serverInfo.name, (await fsClient.getServerVersion()).name);
  const expected = [];
  for (const t of (await fsClient.listTools()).tools) expected.push(offered("fs", t));
  for (const t of (await evClient.listTools()).tools) {
    if (t.execution?.taskSupport === "required") continue;  // MCP tasks: not offered
    expected.push(offered("everything", t));
  }
  const got = (await rebound.send({ type: "get_tools" })).data.tools;
  assert.equal(got[0].name, "read");
  assert.deepEqual(got.slice(1), expected);
  assert.deepEqual(servers.flatMap((s) => s.tools), expected.map((t) => t.name));

  // Calls: each result is what the server really returns, converted as section 6 says.
  const lines = await rebound.prompt("go");
  const ends = toolEnds(lines);
  const log = rebound.scriptLog();
  assert.deepEqual(log[0].tools, ["read", ...expected.map((t) => t.name)]);
  for (let i = 0; i < calls.length; i++) {
    const [server, tool] = calls[i].name.split("__").slice(1);
    const client = server === "fs" ? fsClient : evClient;
    const result = await client.callTool({ name: tool, arguments: calls[i].arguments });
    const want = converted(server, tool, result);
    const end = ends[`call_${i + 1}`];
    assert.ok(end, `no end for ${calls[i].name}`);
    assert.deepEqual({ content: end.result.content, details: end.result.details, isError: end.isError }, want, calls[i].name);
  }
  // The file read, and the refusal outside the allowed directory with the server's own text.
  assert.equal(ends.call_1.result.content[0].text, "first line\nsecond line\n");
  assert.equal(ends.call_2.isError, true);
  assert.match(ends.call_2.result.content[0].text, /Access denied/);
  assert.equal(ends.call_5.result.content.some((b) => b.type === "image"), true);
  assert.ok(ends.call_6.result.details.structuredContent);
  // The results reach the model as tool results.
  assert.equal(log[1].messages.filter((m) => m.role === "toolResult").length, calls.length);

  await fsClient.close();
  await evClient.close();
  const exit = await rebound.close();
  assert.deepEqual(exit, { code: 0, signal: null }, rebound.stderr());
  assert.doesNotMatch(rebound.stderr(), new RegExp(SECRET));
  assertNoProcessMentions(allowed);
});

test("hooks see an MCP tool's calls by its name, with mcp_server (extensions.md 3.4)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rebound-mcp-hooks-"));
  const log = join(dir, "hooks.log");
  mkdirSync(join(dir, "agent"), { recursive: true });
  const record = { type: "command", command: `cat >> ${log}` };
  writeFileSync(join(dir, "agent", "settings.json"), JSON.stringify({
    hooks: {
      PreToolUse: [{ matcher: "mcp__everything__.*", hooks: [record] }],
      PostToolUse: [{ matcher: "mcp__everything__echo", hooks: [record] }],
    },
  }));
  const rebound = startRebound(dir, {
    script: [{ toolCalls: [{ name: "mcp__everything__echo", arguments: { message: "hi" } }] },
             { text: "done" }],
    mcpConfig: { mcpServers: { everything: { command: "node", args: [EVERYTHING, "stdio"] } } },
  });
  const lines = await rebound.prompt("echo it");
  const end = lines.find((l) => l.type === "tool_execution_end");
  assert.equal(end.isError, false, JSON.stringify(end));
  const seen = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(seen.map((l) => l.hook_event_name), ["PreToolUse", "PostToolUse"]);
  for (const l of seen) {
    assert.equal(l.tool_name, "mcp__everything__echo");
    assert.deepEqual(l.tool_input, { message: "hi" });
    assert.deepEqual(l.mcp_server, { name: "everything" });
    assert.equal(Object.keys(l).at(-1), "mcp_server");  // the last key, as the spec orders them
  }
  assert.deepEqual(seen[1].tool_response, end.result);
  await rebound.close();
});

test("everything: progress updates, then an abort: the server receives notifications/cancelled", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rebound-mcp-long-"));
  const tapLog = join(dir, "tap.jsonl");
  const rebound = startRebound(dir, {
    script: [{ toolCalls: [{ name: "mcp__everything__trigger-long-running-operation", arguments: { duration: 15, steps: 30 } }] }, { text: "done" }],
    mcpConfig: { mcpServers: { everything: { command: "node", args: [TAP, "--", "node", EVERYTHING, "stdio"], env: { TAP_LOG: tapLog } } } },
  });
  assert.equal((await rebound.send({ type: "prompt", message: "long" })).success, true);
  const update = await rebound.waitFor((l) => l.type === "tool_execution_update");
  assert.deepEqual(update.partialResult, { content: [], details: { progress: 1, total: 30 } });
  assert.equal(update.toolName, "mcp__everything__trigger-long-running-operation");
  const second = await rebound.waitFor((l) => l.type === "tool_execution_update" && l.partialResult.details.progress === 2);
  assert.deepEqual(second.args, { duration: 15, steps: 30 });
  const from = rebound.lines.length;
  const abortedAt = Date.now();
  assert.equal((await rebound.send({ type: "abort" })).success, true);
  const end = await rebound.waitFor((l) => l.type === "tool_execution_end", from);
  assert.ok(Date.now() - abortedAt < 1000, "the call ends at once");
  assert.deepEqual(end.result, { content: [{ type: "text", text: "Operation aborted" }], details: {} });
  assert.equal(end.isError, true);
  await rebound.waitFor((l) => l.type === "agent_end", from);

  // The tap is another process: it may log the cancellation after agent_end reached us (a bound
  // of 10 s, not a timing check).
  const readTap = () => readFileSync(tapLog, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  let sent = readTap();
  for (let i = 0; i < 200 && !sent.some((m) => m.method === "notifications/cancelled"); i++) {
    await new Promise((r) => setTimeout(r, 50));
    sent = readTap();
  }
  const call = sent.find((m) => m.method === "tools/call");
  assert.deepEqual(call.params._meta, { progressToken: call.id });
  assert.deepEqual(sent[0].params.capabilities, {});
  assert.equal(sent[0].params.protocolVersion, "2025-11-25");
  const cancelled = sent.find((m) => m.method === "notifications/cancelled");
  assert.deepEqual(cancelled, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: call.id, reason: "Request was aborted" } });

  const exit = await rebound.close();
  assert.deepEqual(exit, { code: 0, signal: null });
  assertNoProcessMentions(tapLog);
});

// ---- a server that misbehaves ----

test("a misbehaving server: pages, names, errors, list_changed, timeout, crash, restart; a missing command; no orphans", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rebound-mcp-rogue-"));
  const rogueLog = join(dir, "rogue.jsonl");
  const longName = "a_tool_name_that_goes_on_and_on_well_past_the_sixty_four_characters_limit";
  const hashed = `mcp__rogue__${longName}`.slice(0, 55) + "_" + fnv1a32(`rogue/${longName}`);
  const rebound = startRebound(dir, {
    script: [
      { toolCalls: [{ name: "mcp__rogue__fail", arguments: { text: "x" } },
                    { name: "mcp__rogue__odd_tool_name", arguments: {} },
                    { name: hashed, arguments: { text: "long" } },
                    { name: "mcp__rogue__add_tool", arguments: {} }] },
      { toolCalls: [{ name: "mcp__rogue__late", arguments: { text: "late" } }] },
      { toolCalls: [{ name: "mcp__rogue__hang", arguments: {} }] },
      { toolCalls: [{ name: "mcp__rogue__crash", arguments: {} }] },
      { toolCalls: [{ name: "mcp__rogue__pid", arguments: {} }] },
      { text: "part one" },
      { toolCalls: [{ name: "mcp__rogue__pid", arguments: {} }] },
      { text: "done" },
    ],
    mcpConfig: { mcpServers: {
      ghost: { command: join(dir, "no-such-mcp-server") },
      rogue: { command: "node", args: [ROGUE], env: { ROGUE_LOG: rogueLog }, toolTimeoutMs: 700 },
      off: { command: "node", args: [ROGUE], disabled: true },
    } },
  });
  const servers = (await rebound.send({ type: "get_mcp_servers", wait: true })).data.servers;
  const rogueTools = ["mcp__rogue__fail", "mcp__rogue__odd_tool_name", hashed, "mcp__rogue__crash",
                      "mcp__rogue__hang", "mcp__rogue__add_tool", "mcp__rogue__pid"];
  assert.deepEqual(servers, [
    { name: "ghost", status: "failed", tools: [], error: "Failed to start: No such file or directory" },
    { name: "rogue", status: "ready", tools: rogueTools, serverInfo: { name: "rogue", version: "0.0.1" } },
    { name: "off", status: "disabled", tools: [] },
  ]);
  const tools = (await rebound.send({ type: "get_tools" })).data.tools;
  assert.deepEqual(tools.find((t) => t.name === "mcp__rogue__odd_tool_name"),
                   { name: "mcp__rogue__odd_tool_name", description: "Odd name", parameters: { properties: {}, type: "object" } });
  assert.equal(tools.find((t) => t.name === hashed).description, "Long");

  // The environment: only the allowed variables and the entry's own; no provider key.
  const started = readFileSync(rogueLog, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const allowedEnv = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ", "ROGUE_LOG"];
  for (const key of started[0].env) assert.ok(allowedEnv.includes(key), `${key} reached the server`);

  const lines = await rebound.prompt("part one");
  const ends = toolEnds(lines);
  const text = (id) => ends[id].result.content[0].text;
  assert.equal(text("call_1"), "MCP error -32000: rogue refuses");
  assert.equal(ends.call_1.isError, true);
  assert.deepEqual(ends.call_1.result.details, {});
  assert.equal(text("call_2"), "odd.tool name: {}");
  assert.equal(text("call_3"), `${longName}: {"text":"long"}`);
  assert.equal(text("call_4"), "added");
  // list_changed during a call: the very next request offers the new tool, and it runs.
  const log = rebound.scriptLog();
  assert.ok(!log[0].tools.includes("mcp__rogue__late"));
  assert.ok(log[1].tools.includes("mcp__rogue__late"));
  assert.equal(text("call_5"), 'late: {"text":"late"}');
  // A timeout: the error result, and the server is told.
  assert.equal(text("call_6"), "MCP tool call timed out after 700 ms");
  // A crash mid-call.
  const crashText = "Exited with code 3: rogue: crashing on purpose";
  assert.equal(text("call_7"), `MCP server rogue stopped during the call: ${crashText}`);
  const update = lines.find((l) => l.type === "mcp_server_update" && l.status === "failed");
  assert.deepEqual(update, { type: "mcp_server_update", name: "rogue", status: "failed", tools: [], error: crashText });
  // Its tools are no longer offered: a later call is an unknown tool.
  assert.equal(text("call_8"), "Tool mcp__rogue__pid not found");
  assert.equal(lines.filter((l) => l.type === "agent_end").length, 1);

  const received = readFileSync(rogueLog, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const hang = received.find((m) => m.method === "tools/call" && m.params.name === "hang");
  assert.deepEqual(received.find((m) => m.method === "notifications/cancelled").params,
                   { requestId: hang.id, reason: "Timed out after 700 ms" });
  assert.equal(received.filter((m) => m.method === "tools/list").length >= 6, true);  // 3 pages, twice

  // The session goes on; restart brings the server back (a new process).
  assert.equal((await rebound.send({ type: "get_state" })).success, true);
  const restarted = await rebound.send({ type: "restart_mcp_server", name: "rogue" });
  assert.equal(restarted.success, true, JSON.stringify(restarted));
  assert.deepEqual({ ...restarted.data, serverInfo: undefined }, { name: "rogue", status: "ready", tools: rogueTools, serverInfo: undefined });
  assert.deepEqual(await rebound.send({ type: "restart_mcp_server", name: "nobody" }).then((r) => [r.success, r.error]),
                   [false, "MCP server not found: nobody"]);
  assert.deepEqual(await rebound.send({ type: "restart_mcp_server", name: "off" }).then((r) => [r.success, r.error]),
                   [false, "MCP server off is disabled"]);
  const second = Object.values(toolEnds(await rebound.prompt("part two")));
  const pids = readFileSync(rogueLog, "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((e) => e.pid).map((e) => e.pid);
  assert.equal(pids.length, 2);
  assert.equal(second.length, 1);
  assert.equal(second[0].result.content[0].text, String(pids[1]));

  const exit = await rebound.close();
  assert.deepEqual(exit, { code: 0, signal: null }, rebound.stderr());
  for (const pid of pids) assert.throws(() => process.kill(pid, 0), /ESRCH/, `process ${pid} outlived rebound`);
  assert.match(rebound.stderr(), /mcp\[rogue\] rogue: crashing on purpose/);
  assert.doesNotMatch(rebound.stderr(), new RegExp(SECRET));
});

test("sandboxed servers (policy.md 8.8): in their own pid namespace, writing the workspace; sandbox:false stays out; an invisible script fails", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rebound-mcp-sandbox-"));
  const work = join(dir, "work");
  mkdirSync(work);
  mkdirSync(join(dir, "agent"), { recursive: true });
  // The tests' directory (the rogue script) is visible read-only; a copy in $HOME is not.
  writeFileSync(join(dir, "agent", "settings.json"), JSON.stringify(
    { sandbox: { enabled: true, mcpServers: true, readOnlyPaths: [here] } }));
  const hidden = join(dir, "rogue-copy.mjs");
  writeFileSync(hidden, readFileSync(ROGUE));
  const rebound = startRebound(dir, {
    cwd: work,
    script: [
      { toolCalls: [{ name: "mcp__inside__pid", arguments: {} }, { name: "mcp__outside__pid", arguments: {} }] },
      { text: "done" },
    ],
    mcpConfig: { mcpServers: {
      inside: { command: "node", args: [ROGUE], env: { ROGUE_LOG: join(work, "inside.jsonl") } },
      outside: { command: "node", args: [ROGUE], env: { ROGUE_LOG: join(dir, "outside.jsonl") }, sandbox: false },
      hidden: { command: "node", args: [hidden] },
    } },
  });
  const servers = (await rebound.send({ type: "get_mcp_servers", wait: true })).data.servers;
  assert.deepEqual(servers.map((x) => [x.name, x.status, x.error]), [
    ["inside", "ready", undefined], ["outside", "ready", undefined],
    ["hidden", "failed", `Sandbox: ${hidden} is not visible inside the sandbox; add it to sandbox.readOnlyPaths`]]);
  const policy = (await rebound.send({ type: "get_policy", wait: true })).data;
  assert.equal(policy.sandbox.status, "active", JSON.stringify(policy.sandbox));
  assert.deepEqual(policy.sandbox.mcpServers, ["inside", "hidden"]);
  const ends = Object.values(toolEnds(await rebound.prompt("pids")));
  const pidOf = (name) => Number(ends.find((e) => e.toolName === `mcp__${name}__pid`).result.content[0].text);
  // Inside its own pid namespace the server is one of the first processes; outside it is not.
  assert.ok(pidOf("inside") < 10, `inside pid ${pidOf("inside")}`);
  const outsidePid = JSON.parse(readFileSync(join(dir, "outside.jsonl"), "utf8").split("\n")[0]).pid;
  assert.equal(pidOf("outside"), outsidePid);
  // It wrote its log through the workspace, with TMPDIR=/tmp and no key in its environment.
  const inside = JSON.parse(readFileSync(join(work, "inside.jsonl"), "utf8").split("\n")[0]);
  assert.ok(inside.env.includes("TMPDIR"));
  assert.ok(!inside.env.includes("OPENAI_API_KEY"));
  const exit = await rebound.close();
  assert.deepEqual(exit, { code: 0, signal: null }, rebound.stderr());
  assert.throws(() => process.kill(outsidePid, 0), /ESRCH/);
  // Nothing of the sandboxed server is left: no process runs the rogue script.
  const left = execFileSync("ps", ["-eo", "args"], { encoding: "utf8" }).split("\n")
    .filter((l) => l.includes(ROGUE) && l.includes("node "));
  assert.deepEqual(left, []);
});

test("end of input while a server never answers: the pending wait is answered, SIGTERM stops it, exit in about 1 s", async () => {
  const dir = mkdtempSync(join(tmpdir(), "rebound-mcp-mute-"));
  const marker = join(dir, "mute");
  // A "server" that reads nothing and answers nothing (it ignores its stdin closing).
  const rebound = startRebound(dir, { mcpConfig: { mcpServers: { mute: { command: "bash", args: ["-c", "sleep 30; true", marker] } } } });
  const answer = rebound.send({ type: "get_mcp_servers", wait: true });
  // Until its process runs (spawned on the loop's first turns).
  for (let i = 0; i < 250; i++) {
    try { if (execFileSync("pgrep", ["-f", marker], { encoding: "utf8" }).trim()) break; } catch {}
    await new Promise((r) => setTimeout(r, 20));
  }
  const t0 = Date.now();
  const exit = await rebound.close();
  const took = Date.now() - t0;
  assert.deepEqual(exit, { code: 0, signal: null }, rebound.stderr());
  const r = await answer;
  assert.equal(r.success, true);
  assert.deepEqual(r.data.servers.map((s) => [s.name, s.status]), [["mute", "starting"]]);
  // stdin closed, 1000 ms, SIGTERM: sleep dies of it; well before the 30 s start-up timeout.
  assert.ok(took >= 900 && took < 2500, `exit took ${took} ms`);
  assertNoProcessMentions(marker);
});
