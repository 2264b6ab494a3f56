#!/usr/bin/env python3
"""A crash repeats nothing and hides nothing (runtime.md section 8): RUNS runs, CONCURRENCY at
once. Each run starts Rebound on a session file with a scripted batch of tool calls (bash calls
that append their call id to a counter file and sleep a little, `write` calls that create a file
per call id), kills it with SIGKILL at a random moment, then loads the file again with
`--session` and asks for the state.

Checked for every run:
- the counter holds each call id at most once (nothing ran twice: Rebound re-runs nothing);
- the file loads (the second process answers get_state);
- every call on the file has exactly one toolResult entry after the load;
- every call that had none before the load is reported exactly once by a
  `tool_outcome_unknown` event, before the first response, and its entry says
  `"outcome":"unknown"`; a call that had one is not reported;
- a second load reports nothing (the entries are on the file now);
- no spool file is left beside the session (`s.d/*.out`: each goes once its result is on file,
  and these outputs are never long enough to be kept as a full output).

Prints one summary line (runs, kills before/during/after the batch, calls without a result,
failures) and exits 1 on any failure.

usage: crash_soak.py REBOUND RUNS CONCURRENCY [--seed N] [--calls N]
"""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time


def script(calls, work):
    steps = []
    batch = []
    for i in range(calls):
        if i % 3 == 2:
            batch.append({"name": "write", "arguments": {"path": f"{work}/w{i}.txt",
                                                         "content": str(i)}})
        else:
            batch.append({"name": "bash", "arguments": {
                "command": f"echo call_{len(batch) + 1} >> {work}/counter; sleep 0.0{i % 5}"}})
    steps.append({"toolCalls": batch})
    steps.append({"text": "done"})
    return steps


def entries(path):
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass  # a torn last line
    except FileNotFoundError:
        pass
    return out


def calls_and_results(path):
    calls, results = [], {}
    for e in entries(path):
        if e.get("type") != "message":
            continue
        m = e.get("message", {})
        if m.get("role") == "assistant" and m.get("stopReason") in ("toolUse", "length"):
            calls += [b["id"] for b in m.get("content", []) if b.get("type") == "toolCall"]
        if m.get("role") == "toolResult":
            results.setdefault(m.get("toolCallId"), []).append(m)
    return calls, results


def load(rebound, agent, session, cwd):
    """Loads the session, asks for the state; the lines before the response and the response."""
    p = subprocess.Popen([rebound, "--agent-dir", agent, "--provider", "scripted", "--script",
                          os.path.join(agent, "..", "idle.json"), "--session", session],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         cwd=cwd, text=True)
    out, _ = p.communicate('{"id":"s","type":"get_state"}\n', timeout=30)
    lines = [json.loads(l) for l in out.splitlines() if l.strip()]
    before = []
    for l in lines:
        if l.get("type") == "response":
            return before, l
        before.append(l)
    return before, None


def one_run(rebound, n, rng, calls, totals, failures, lock):
    with tempfile.TemporaryDirectory(prefix="rebound-crash-") as d:
        agent = os.path.join(d, "agent")
        work = os.path.join(d, "work")
        os.makedirs(agent)
        os.makedirs(work)
        with open(os.path.join(agent, "settings.json"), "w") as f:
            f.write("{}")
        with open(os.path.join(d, "script.json"), "w") as f:
            json.dump(script(calls, work), f)
        with open(os.path.join(d, "idle.json"), "w") as f:
            json.dump([{"text": "idle"}], f)
        session = os.path.join(d, "s.jsonl")
        p = subprocess.Popen([rebound, "--agent-dir", agent, "--provider", "scripted", "--script",
                              os.path.join(d, "script.json"), "--session", session],
                             stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, cwd=work, text=True)
        p.stdin.write('{"id":"p","type":"prompt","message":"go"}\n')
        p.stdin.flush()
        time.sleep(rng.uniform(0.0, 0.35))
        p.send_signal(signal.SIGKILL)
        p.wait()
        problems = []
        counter = os.path.join(work, "counter")
        seen = []
        if os.path.exists(counter):
            with open(counter) as f:
                seen = f.read().split()
        for cid in set(seen):
            if seen.count(cid) > 1:
                problems.append(f"{cid} ran {seen.count(cid)} times")
        calls_before, results_before = calls_and_results(session)
        open_before = [c for c in calls_before if c not in results_before]
        before, response = load(rebound, agent, session, work)
        if response is None or not response.get("success"):
            problems.append("the file did not load")
        reported = [l["toolCallId"] for l in before if l.get("type") == "tool_outcome_unknown"]
        if sorted(reported) != sorted(open_before):
            problems.append(f"reported {reported}, open before the load {open_before}")
        calls_after, results_after = calls_and_results(session)
        for c in calls_after:
            got = results_after.get(c, [])
            if len(got) != 1:
                problems.append(f"{c} has {len(got)} results")
            elif c in open_before and got[0].get("details") != {"outcome": "unknown"}:
                problems.append(f"{c}'s result is not an unknown outcome")
        again, _ = load(rebound, agent, session, work)
        if any(l.get("type") == "tool_outcome_unknown" for l in again):
            problems.append("a second load reported again")
        spool = os.path.join(d, "s.d")
        left = sorted(os.listdir(spool)) if os.path.isdir(spool) else []
        if left:
            problems.append(f"spool files left: {left}")
        with lock:
            totals["runs"] += 1
            totals["open"] += len(open_before)
            totals["stage"][0 if not calls_before else 1 if open_before else 2] += 1
            if problems:
                failures.append((n, problems))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("rebound")
    ap.add_argument("runs", type=int)
    ap.add_argument("concurrency", type=int)
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--calls", type=int, default=9)
    a = ap.parse_args()
    a.rebound = os.path.abspath(a.rebound)
    totals = {"runs": 0, "open": 0, "stage": [0, 0, 0]}
    failures = []
    lock = threading.Lock()
    todo = list(range(a.runs))

    def worker(k):
        while True:
            with lock:
                if not todo:
                    return
                n = todo.pop()
            one_run(a.rebound, n, random.Random(a.seed + n), a.calls, totals, failures, lock)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(a.concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s = totals["stage"]
    print(f"crash soak: {totals['runs']} runs; killed before the batch was on file {s[0]}, "
          f"with calls open {s[1]}, after every call had its result {s[2]}; "
          f"{totals['open']} calls without a result reported; {len(failures)} failures")
    for n, problems in failures[:10]:
        print(f"  run {n}: {'; '.join(problems)}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
