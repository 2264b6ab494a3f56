#!/usr/bin/env python3
"""One-shot start-up and exit (oneshot.md section 16), runs one after another on an idle machine:
start-up is the process's start (just before the spawn) to its first LLM request (the scripted
provider's log time), exit is the result line read to the process reaped. PROMPT given, stdin
/dev/null, no MCP server, the scripted provider.

usage: oneshot_timing.py REBOUND [RUNS]
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time
import json

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "oneshot"))
import oneshot_workdir  # noqa: E402


def main(binary, runs):
    startups, exits = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="rebound-timing-") as d:
            env = oneshot_workdir.prepare(d, [{"text": "hello"}], {})
            cmd = [binary, "-p", "hi", "--output-format", "json", "--no-session", "--agent-dir",
                   os.path.join(d, "agent"), "--provider", "scripted", "--script",
                   os.path.join(d, "script.json"), "--script-log", os.path.join(d, "log.jsonl")]
            start = time.time()
            p = subprocess.Popen(cmd, cwd=os.path.join(d, "work"), env=env, stdin=subprocess.DEVNULL,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            p.stdout.readline()
            result_at = time.time()
            p.wait()
            ended = time.time()
            with open(os.path.join(d, "log.jsonl")) as f:
                startups.append(json.loads(f.readline())["t"] - start * 1000.0)
            exits.append((ended - result_at) * 1000.0)
    q = lambda v, f: sorted(v)[int(len(v) * f)]
    print(json.dumps({"runs": runs, "startup_ms_median": round(statistics.median(startups), 2),
                      "startup_ms_p90": round(q(startups, 0.9), 2),
                      "exit_ms_median": round(statistics.median(exits), 2),
                      "exit_ms_p90": round(q(exits, 0.9), 2)}))


if __name__ == "__main__":
    main(os.path.abspath(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 200)
