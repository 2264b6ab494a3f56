#!/usr/bin/env python3
"""One-shot runs under pressure (oneshot.md section 16): RUNS runs of `rebound -p`, CONCURRENCY
at once, each with a seeded scenario, against the scripted provider (a 429 that never ends, a
stream that hangs, a bash call that never ends, a failure then success, a plain answer) or over
HTTP against the fake LLM of fake_llm_http.py on 127.0.0.1 (429s that never end, a socket reset
mid-stream, a stream that hangs, a plain answer), with deadlines of DEADLINE_MIN..DEADLINE_MAX s
and SIGTERM/SIGINT sent at random moments to some.

Every run must write exactly one result line, as its last stdout line, with the exit code its
subtype and terminal_reason imply, within its deadline + 1 s (or the signal + 1 s); nothing of
it may outlive it (its bash commands carry a marker that is looked for afterwards). Prints one
summary line and, with --json FILE, the timings: start-up (process start to its first request,
from the script log) and exit (the result line to the process's end).

usage: oneshot_soak.py REBOUND RUNS CONCURRENCY [--seed N] [--deadline-min S] [--deadline-max S]
                       [--json FILE]
"""

import argparse
import collections
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import oneshot_workdir
from fake_llm_http import FakeLlm

EXIT_OF = {  # (subtype, terminal_reason) -> exit code (oneshot.md section 7)
    ("success", "completed"): {0, 9},
    ("error_timeout", "timeout"): {7},
    ("error_interrupted", "interrupted"): {129, 130, 143},
    ("error_during_execution", "retries_exhausted"): {4},
    ("error_during_execution", "api_error"): {3},
}


# Over HTTP: the fake's behaviour and the retry settings of the run.
HTTP_KINDS = {
    "http_rate_limit_forever": ("rate_limit", {"retry": {"baseDelayMs": 1500, "maxRetries": 20}}),
    "http_dead_socket": ("dead_socket", {"retry": {"baseDelayMs": 100, "maxRetries": 3}}),
    "http_hung_stream": ("hung", {}),
    "http_plain": ("ok", {}),
}


def scenario(rng, marker):
    kind = rng.choice(["rate_limit_forever", "hung_stream", "hung_tool", "retry_then_ok", "plain"]
                      + sorted(HTTP_KINDS))
    if kind in HTTP_KINDS:
        return kind, [], HTTP_KINDS[kind][1]
    if kind == "rate_limit_forever":
        return kind, [{"error": "429 rate limited"}] * 20, {"retry": {"baseDelayMs": 1500, "maxRetries": 20}}
    if kind == "hung_stream":
        return kind, [{"text": "partial", "hang": True}], {}
    if kind == "hung_tool":
        return kind, [{"toolCalls": [{"name": "bash", "arguments": {"command": f"sleep {marker}"}}]},
                      {"text": "never"}], {}
    if kind == "retry_then_ok":
        return kind, [{"error": "503 overloaded"}, {"text": "fine"}], {"retry": {"baseDelayMs": 50}}
    return kind, [{"text": "hello"}], {}


def one_run(binary, index, rng, args, results, lock):
    marker = f"{1000 + index}.{rng.randrange(1000, 9999)}"
    kind, script, settings = scenario(rng, marker)
    deadline = round(rng.uniform(args.deadline_min, args.deadline_max), 3)
    sig = rng.choice([None, None, None, signal.SIGTERM, signal.SIGINT])
    sig_at = rng.uniform(0.05, deadline) if sig else None
    with tempfile.TemporaryDirectory(prefix="rebound-soak-") as d:
        env = oneshot_workdir.prepare(d, script, settings)
        cmd = [binary, "-p", "go", "--output-format", "json", "--no-session", "--timeout", str(deadline),
               "--agent-dir", os.path.join(d, "agent")]
        if kind in HTTP_KINDS:
            with open(os.path.join(d, "agent", "models.json"), "w") as f:
                json.dump({"providers": {"fake": {
                    "baseUrl": args.fake.base_url(HTTP_KINDS[kind][0]), "api": "openai-completions",
                    "apiKey": "soak-key", "models": [{"id": "soak"}]}}}, f)
            cmd += ["--provider", "fake", "--model", "soak"]
        else:
            cmd += ["--provider", "scripted", "--script", os.path.join(d, "script.json"),
                    "--script-log", os.path.join(d, "log.jsonl")]
        started = time.time()
        proc = subprocess.Popen(cmd, cwd=os.path.join(d, "work"), env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        timer = None
        if sig:
            timer = threading.Timer(sig_at, lambda: proc.poll() is None and proc.send_signal(sig))
            timer.start()
        limit = deadline + 1.0 + 5.0  # a hang is anything past the deadline + 1 s; stop waiting later
        out = b""
        result_at = None
        try:
            for line in proc.stdout:
                out += line
                if b'"type":"result"' in line:
                    result_at = time.time()
            code = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = None
        ended = time.time()
        if timer:
            timer.cancel()
        problems = []
        outcome = None
        lines = [l for l in out.decode("utf-8", "replace").split("\n") if l]
        if code is None:
            problems.append("hung")
        results_lines = [l for l in lines if '"type":"result"' in l]
        if len(results_lines) != 1 or not lines or '"type":"result"' not in lines[-1]:
            problems.append(f"{len(results_lines)} result lines")
        elif code is not None:
            r = json.loads(lines[-1])
            outcome = f"{r['terminal_reason']}/{code}"
            allowed = EXIT_OF.get((r["subtype"], r["terminal_reason"]))
            if allowed is None or code not in allowed:
                problems.append(f"exit {code} for {r['subtype']}/{r['terminal_reason']}")
        bound = min(deadline, sig_at or deadline) + 1.0
        if result_at is not None and result_at - started > bound + 0.25:  # process start slack
            problems.append(f"result after {result_at - started:.2f} s (bound {bound:.2f} s)")
        startup = None
        try:
            with open(os.path.join(d, "log.jsonl")) as f:
                first = json.loads(f.readline())
                startup = first["t"] - started * 1000.0
        except (OSError, ValueError, KeyError):
            pass
        left = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True).stdout.split()
        if left:
            problems.append(f"left running: {left}")
            for pid in left:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
        with lock:
            results.append({"kind": kind, "problems": problems, "startup_ms": startup, "outcome": outcome,
                            "exit_ms": (ended - result_at) * 1000.0 if result_at else None})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("runs", type=int)
    p.add_argument("concurrency", type=int)
    p.add_argument("--seed", type=int, default=20261206)
    p.add_argument("--deadline-min", type=float, default=1.0)
    p.add_argument("--deadline-max", type=float, default=5.0)
    p.add_argument("--json")
    args = p.parse_args()
    args.binary = os.path.abspath(args.binary)
    args.fake = FakeLlm()
    rng = random.Random(args.seed)
    seeds = [rng.randrange(1 << 30) for _ in range(args.runs)]
    results, lock = [], threading.Lock()
    pending = list(range(args.runs))
    started = time.time()

    def worker():
        while True:
            with lock:
                if not pending:
                    return
                i = pending.pop(0)
            one_run(args.binary, i, random.Random(seeds[i]), args, results, lock)

    threads = [threading.Thread(target=worker) for _ in range(args.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = [r for r in results if r["problems"]]
    startups = [r["startup_ms"] for r in results if r["startup_ms"] is not None]
    exits = [r["exit_ms"] for r in results if r["exit_ms"] is not None]
    outcomes = {}  # kind -> "terminal_reason/exit code" -> runs
    for r in results:
        outcomes.setdefault(r["kind"], collections.Counter())[str(r["outcome"])] += 1
    summary = {
        "runs": len(results), "failed": len(failed), "seconds": round(time.time() - started, 1),
        "startup_ms_median": round(statistics.median(startups), 2) if startups else None,
        "exit_ms_median": round(statistics.median(exits), 2) if exits else None,
        "kinds": {k: sum(1 for r in results if r["kind"] == k) for k in sorted({r["kind"] for r in results})},
        "outcomes": {k: dict(sorted(c.items())) for k, c in sorted(outcomes.items())},
        "fake_llm_requests": dict(sorted(args.fake.server.requests.items())),
    }
    args.fake.close()
    for r in failed[:10]:
        print(f"FAILED {r['kind']}: {'; '.join(r['problems'])}")
    print(json.dumps(summary))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    print("SOAK PASSED" if not failed and len(results) == args.runs else "SOAK FAILED")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
