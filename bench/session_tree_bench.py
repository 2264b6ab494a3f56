#!/usr/bin/env python3
"""The session tree's commands on large sessions, Rebound beside the pi agent (issue 29).

A linear session file of N entries (a long day's work: user messages, assistant messages with a
tool call, tool results of about 1 KB, answers) is written in pi's JSONL v3 shape. For each
implementation, in the same run, and for each N:
  open       spawn with --session FILE until the answer to a first get_state (start-up included)
  get_entries  the round trip of get_entries (pi 0.73.1 answers Unknown command)
  fork       the round trip of fork before the last user message (the process then switches
             back to the source file with switch_session, not timed)
  export     the round trip of export_html to a file
Each figure is the median of REPS tries (a fresh process per try for `open`).

Usage: session_tree_bench.py REBOUND [PI_CLI_JS] [--sizes 1000,10000,100000] [--reps 5]
The pi agent: npm @mariozechner/pi-coding-agent@0.73.1 (scripts/bench.sh installs it into
build-bench/pi); without PI_CLI_JS only Rebound is measured.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sizes = [1000, 10000, 100000]
reps = 5
rebound = None
pi_cli = None


def parse_args(argv):
    global sizes, reps, rebound, pi_cli
    args = list(argv)
    if "--sizes" in args:
        i = args.index("--sizes")
        sizes = [int(x) for x in args[i + 1].split(",")]
        del args[i:i + 2]
    if "--reps" in args:
        i = args.index("--reps")
        reps = int(args[i + 1])
        del args[i:i + 2]
    rebound = os.path.abspath(args[0])
    pi_cli = os.path.abspath(args[1]) if len(args) > 1 else None


USAGE = {"input": 1200, "output": 80, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1280,
         "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}


def make_session(path, n, cwd):
    """n entries after the header: cycles of user, assistant+toolCall, toolResult, answer."""
    ts = "2026-12-01T08:00:00.000Z"
    lines = [{"type": "session", "version": 3, "id": "0190d8a0-0000-7000-8000-000000000001",
              "timestamp": ts, "cwd": cwd},
             {"type": "model_change", "id": "00000001", "parentId": None, "timestamp": ts,
              "provider": "fake", "modelId": "fake-model"},
             {"type": "thinking_level_change", "id": "00000002", "parentId": "00000001",
              "timestamp": ts, "thinkingLevel": "off"}]
    parent = "00000002"
    k = 2
    t = 1796112585000
    while k < n:
        k += 1
        t += 1000
        i = k
        kind = i % 4
        if kind == 3:
            m = {"role": "user", "content": [{"type": "text", "text": f"step {i}: please look at the module and fix what fails. " * 3}], "timestamp": t}
        elif kind == 0:
            m = {"role": "assistant", "content": [{"type": "text", "text": "Let me run the tests first."},
                                                 {"type": "toolCall", "id": f"call_{i}", "name": "bash",
                                                  "arguments": {"command": f"cd src && make test TARGET={i}"}}],
                 "api": "openai-completions", "provider": "fake", "model": "fake-model", "usage": USAGE,
                 "stopReason": "toolUse", "timestamp": t}
        elif kind == 1:
            m = {"role": "toolResult", "toolCallId": f"call_{i - 1}", "toolName": "bash",
                 "content": [{"type": "text", "text": ("test_%d ... ok\n" % i) * 70}],
                 "isError": False, "timestamp": t}
        else:
            m = {"role": "assistant", "content": [{"type": "text", "text": f"All tests pass after change {i}. " * 8}],
                 "api": "openai-completions", "provider": "fake", "model": "fake-model", "usage": USAGE,
                 "stopReason": "stop", "timestamp": t}
        eid = "%08x" % (0x10000000 + i)
        lines.append({"type": "message", "id": eid, "parentId": parent, "timestamp": ts, "message": m})
        parent = eid
    with open(path, "w") as f:
        for line in lines:
            f.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")


class Server:
    def __init__(self, argv, env, cwd):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.n = 0

    def call(self, command, timeout=600):
        self.n += 1
        command = dict(command, id=f"b{self.n}")
        start = time.perf_counter()
        self.proc.stdin.write((json.dumps(command) + "\n").encode())
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{command['type']}: the server ended")
            obj = json.loads(line)
            # pi 0.73.1 answers an unknown command without its id.
            if obj.get("type") == "response" and (obj.get("id") == command["id"] or (
                    "id" not in obj and obj.get("command") == command["type"])):
                return (time.perf_counter() - start) * 1000, obj

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()


def setup(work):
    agent = os.path.join(work, "agent")
    os.makedirs(agent, exist_ok=True)
    models = {"providers": {"fake": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
                                     "apiKey": "bench", "models": [{"id": "fake-model", "name": "fake",
                                                                    "contextWindow": 200000, "maxTokens": 8192}]}}}
    with open(os.path.join(agent, "models.json"), "w") as f:
        json.dump(models, f)
    with open(os.path.join(agent, "settings.json"), "w") as f:
        json.dump({"defaultProvider": "fake", "defaultModel": "fake-model", "quietStartup": True,
                   "enableInstallTelemetry": False}, f)
    env = dict(os.environ, HOME=work, PI_CODING_AGENT_DIR=agent, REBOUND_AGENT_DIR=agent,
               OPENAI_API_KEY="", ANTHROPIC_API_KEY="")
    return agent, env


def argv_of(impl, agent, session, work):
    if impl == "rebound":
        return [rebound, "--agent-dir", agent, "--session", session, "--no-extensions", "--no-mcp"]
    return ["node", pi_cli, "--mode", "rpc", "--session", session,
            "--session-dir", os.path.join(work, "sessions")]


def measure(impl, n, work):
    agent, env = setup(work)
    sessions = os.path.join(work, "sessions")
    os.makedirs(sessions, exist_ok=True)
    source = os.path.join(sessions, f"2026-12-01T08-00-00-000Z_bench-{n}.jsonl")
    make_session(source, n, work)
    size = os.path.getsize(source)
    out = {"size_mb": size / 1e6}
    opens = []
    for _ in range(reps):
        start = time.perf_counter()
        s = Server(argv_of(impl, agent, source, work), env, work)
        s.call({"type": "get_state"})
        opens.append((time.perf_counter() - start) * 1000)
        s.close()
    out["open"] = statistics.median(opens)
    s = Server(argv_of(impl, agent, source, work), env, work)
    ms, r = s.call({"type": "get_entries"})
    out["get_entries"] = None
    if r.get("success"):
        times = [ms] + [s.call({"type": "get_entries"})[0] for _ in range(reps - 1)]
        out["get_entries"] = statistics.median(times)
    _, listed = s.call({"type": "get_fork_messages"})
    last = listed["data"]["messages"][-1]["entryId"]
    forks, exports = [], []
    for i in range(reps):
        ms, r = s.call({"type": "fork", "entryId": last})
        if not r.get("success"):
            raise RuntimeError(f"{impl} fork: {r}")
        forks.append(ms)
        s.call({"type": "switch_session", "sessionPath": source})
        ms, r = s.call({"type": "export_html", "outputPath": os.path.join(work, f"export-{i}.html")})
        if not r.get("success"):
            raise RuntimeError(f"{impl} export_html: {r}")
        exports.append(ms)
    out["fork"] = statistics.median(forks)
    out["export"] = statistics.median(exports)
    s.close()
    return out


def main():
    parse_args(sys.argv[1:])
    impls = ["rebound"] + (["pi"] if pi_cli else [])
    print(f"reps {reps}; medians in ms; {time.strftime('%Y-%m-%d %H:%M')}", flush=True)
    print("| entries | file | implementation | open (--session) | get_entries | fork | export_html |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for n in sizes:
        for impl in impls:
            work = tempfile.mkdtemp(prefix=f"rebound-tree-bench-{impl}-")
            try:
                r = measure(impl, n, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            ge = "Unknown command" if r["get_entries"] is None else f"{r['get_entries']:.1f}"
            print(f"| {n:,} | {r['size_mb']:.1f} MB | {impl} | {r['open']:.1f} | {ge} | {r['fork']:.1f} | "
                  f"{r['export']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
