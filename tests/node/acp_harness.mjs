// Starts `rebound --mode acp` for the ACP client tests (acp_sdk.test.mjs, acp_legacy.test.mjs):
// a temporary directory with the agent dir, a project dir and the script, the process on pipes,
// every line in both directions kept for the schema check (REBOUND_CAPTURE_DIR/acp, one
// {"from","message"} per line; tests/schema/validate_acp.py), and a bounded, checked exit.

import { spawn } from "node:child_process";
import { after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync, appendFileSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";

const binary = process.env.REBOUND_BINARY;
if (!binary) throw new Error("REBOUND_BINARY must name the rebound binary");

// Servers still running when the tests end (a failed test never closed them) are killed.
const children = new Set();
after(() => {
  for (const child of children) child.kill("SIGKILL");
});

// `shared`: a directory kept by the caller (and reused by a second process) instead of a fresh
// one; `keepSessions`: session files under it instead of --no-session; `name`: the capture
// file's prefix. Returns the web streams a client library connects to, the raw lines the
// server wrote, and finish(), which ends stdin and checks the exit status.
export function spawnAcp({ script, settings = {}, args = [], shared, keepSessions, name = "acp" }) {
  const dir = shared ?? mkdtempSync(join(tmpdir(), "rebound-acp-"));
  mkdirSync(join(dir, "agent"), { recursive: true });
  mkdirSync(join(dir, "proj"), { recursive: true });
  writeFileSync(join(dir, "agent", "settings.json"), JSON.stringify(settings));
  writeFileSync(join(dir, "script.json"), JSON.stringify(script));
  const child = spawn(
    binary,
    ["--mode", "acp", "--agent-dir", join(dir, "agent"),
     ...(keepSessions ? ["--session-dir", join(dir, "sessions")] : ["--no-session"]),
     "--provider", "scripted", "--script", join(dir, "script.json"), ...args],
    { cwd: dir, env: { ...process.env, HOME: dir, OPENAI_API_KEY: "", ANTHROPIC_API_KEY: "" },
      stdio: ["pipe", "pipe", "pipe"] });
  children.add(child);
  const exited = new Promise((resolve) => child.on("exit", (code) => {
    children.delete(child);
    resolve(code);
  }));
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  const captureDir = process.env.REBOUND_CAPTURE_DIR ? join(process.env.REBOUND_CAPTURE_DIR, "acp") : null;
  const capture = captureDir ? join(captureDir, `${name}-${child.pid}.jsonl`) : null;
  if (capture) mkdirSync(captureDir, { recursive: true });
  const keep = (from, line) => {
    if (capture) appendFileSync(capture, `{"from":"${from}","message":${line}}\n`);
  };
  // Splits a byte stream into lines for `each`.
  const splitter = (each) => {
    let partial = "";
    return (d) => {
      partial += d;
      let nl;
      while ((nl = partial.indexOf("\n")) >= 0) {
        each(partial.slice(0, nl));
        partial = partial.slice(nl + 1);
      }
    };
  };
  // What the client writes passes through here on its way to the server's stdin.
  const toAgent = new PassThrough();
  toAgent.pipe(child.stdin);
  const sent = [];  // what the client wrote, parsed
  toAgent.on("data", splitter((line) => {
    sent.push(JSON.parse(line));
    keep("client", line);
  }));
  const lines = [];
  child.stdout.on("data", splitter((line) => {
    lines.push(JSON.parse(line));
    keep("agent", line);
  }));
  const finish = async () => {
    toAgent.end();
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r("timeout"), 5000))]);
    if (!shared) rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, `exit status; stderr: ${stderr}`);
  };
  return {
    dir, cwd: join(dir, "proj"), lines, sent, finish, stderr: () => stderr,
    output: Writable.toWeb(toAgent), input: Readable.toWeb(child.stdout),
  };
}
