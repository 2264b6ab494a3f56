// A small MCP server that misbehaves on purpose, for tests/node/mcp_servers.test.mjs: its tool
// list comes in three pages and holds odd and over-long names, a tool answers with a JSON-RPC
// error, one crashes the server mid-call, one never answers, one adds a tool at run time
// (notifications/tools/list_changed), and every message it receives is appended to the log file
// named by ROGUE_LOG (with its pid first), so a test can see what reached it.
// usage: node mcp_rogue_server.mjs        (stdio, one JSON-RPC message per line)

import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";

const log = process.env.ROGUE_LOG;
const record = (entry) => { if (log) appendFileSync(log, JSON.stringify(entry) + "\n"); };
record({ pid: process.pid, env: Object.keys(process.env).sort() });

const schema = { type: "object", properties: { text: { type: "string" } } };
const longName = "a_tool_name_that_goes_on_and_on_well_past_the_sixty_four_characters_limit";
const pages = [
  [{ name: "fail", description: "answers with a JSON-RPC error", inputSchema: schema },
   { name: "odd.tool name", title: "Odd name", inputSchema: { properties: {} } }],
  [{ name: longName, annotations: { title: "Long", readOnlyHint: true }, inputSchema: schema },
   { name: "crash", description: "exits mid-call", inputSchema: schema },
   { name: "bad schema", description: "skipped: not an object schema", inputSchema: { type: "string" } }],
  [{ name: "hang", description: "never answers", inputSchema: schema },
   { name: "add_tool", description: "adds the tool late", inputSchema: schema },
   { name: "pid", description: "its process id", inputSchema: schema }],
];
let late = false;

const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
const text = (t) => ({ content: [{ type: "text", text: t }] });

createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  record(message);
  const { id, method, params } = message;
  if (id === undefined) return;  // notifications: logged only
  switch (method) {
    case "initialize":
      send({ id, result: { protocolVersion: "2025-06-18", capabilities: { tools: { listChanged: true } },
                           serverInfo: { name: "rogue", version: "0.0.1" } } });
      return;
    case "tools/list": {
      const page = params && params.cursor ? Number(params.cursor) : 0;
      const tools = [...pages[page]];
      if (page === pages.length - 1 && late) tools.push({ name: "late", description: "added at run time", inputSchema: schema });
      send({ id, result: page + 1 < pages.length ? { tools, nextCursor: String(page + 1) } : { tools } });
      return;
    }
    case "tools/call":
      switch (params.name) {
        case "fail":
          send({ id, error: { code: -32000, message: "rogue refuses" } });
          return;
        case "crash":
          process.stderr.write("rogue: crashing on purpose\n", () => process.exit(3));
          return;
        case "hang":
          return;
        case "add_tool":
          late = true;
          send({ method: "notifications/tools/list_changed" });
          send({ id, result: text("added") });
          return;
        case "pid":
          send({ id, result: text(String(process.pid)) });
          return;
        default:
          send({ id, result: text(`${params.name}: ${JSON.stringify(params.arguments)}`) });
          return;
      }
    default:
      send({ id, error: { code: -32601, message: "Method not found" } });
  }
});
