// Runs an MCP server (the command after "--") and appends every line Rebound writes to it to the
// file named by TAP_LOG, so a test can see what really reached a server it did not write
// (notifications/cancelled, the handshake). stdout and stderr pass through; the exit status is
// the server's.
// usage: TAP_LOG=file node mcp_tap.mjs -- command args…

import { appendFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const args = process.argv.slice(process.argv.indexOf("--") + 1);
const server = spawn(args[0], args.slice(1), { stdio: ["pipe", "inherit", "inherit"] });
createInterface({ input: process.stdin }).on("line", (line) => {
  if (process.env.TAP_LOG) appendFileSync(process.env.TAP_LOG, line + "\n");
  server.stdin.write(line + "\n");
}).on("close", () => server.stdin.end());
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
