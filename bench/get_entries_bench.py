#!/usr/bin/env python3
"""get_entries on a large session: memory against the answer's size, and how long another
command waits meanwhile.

A linear session of N entries (session_tree_bench.py's shape) is opened with --session. For each
binary given, in the same run:
  answer     the size of the get_entries response line
  peak       how much the process's peak resident memory (VmHWM, reset after the load) rose
             during get_entries, as a multiple of the answer
  first      from writing get_entries to its answer's first byte (the loop's work on it)
  behind     from writing get_entries to the answer of a get_state written right after it
  alone      the round trip of get_state on the idle server
Each try is a fresh process (memory a first get_entries takes, not what an earlier one left);
the figures are medians of REPS tries.

Usage: get_entries_bench.py REBOUND [OLD_REBOUND] [--entries 100000] [--reps 5]
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import session_tree_bench as tree  # noqa: E402  (its session writer and set-up)

args = sys.argv[1:]
entries = 100000
reps = 5
if "--entries" in args:
    i = args.index("--entries")
    entries = int(args[i + 1])
    del args[i:i + 2]
if "--reps" in args:
    i = args.index("--reps")
    reps = int(args[i + 1])
    del args[i:i + 2]
binaries = [os.path.abspath(a) for a in args]


def vm_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def reset_hwm(pid):
    # Writing 5 to clear_refs resets the peak resident set size (proc(5)).
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def read_response(proc, want, parse=True):
    """The response line to `want` (the first line whose head names it): its size, its first
    byte's arrival, and its JSON when `parse` (a large answer is only checked, never parsed)."""
    while True:
        line = proc.stdout.readline()
        arrived = time.perf_counter()
        if not line:
            raise RuntimeError("the server ended")
        head = line[:200].decode("utf-8", "replace")
        if f'"id":"{want}"' not in head or '"type":"response"' not in head:
            continue
        if not parse:
            if '"success":true' not in head:
                raise RuntimeError(f"failed: {head}")
            return len(line), arrived, None
        return len(line), arrived, json.loads(line)


def one_try(binary, source, agent, env, work):
    """A fresh process: loaded, its peak memory reset, then get_entries and a get_state behind
    it."""
    argv = [binary, "--agent-dir", agent, "--session", source, "--no-extensions", "--no-mcp"]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=work, bufsize=1 << 20)
    try:
        def send(cid, kind):
            proc.stdin.write((json.dumps({"id": cid, "type": kind}) + "\n").encode())
            proc.stdin.flush()

        send("s0", "get_state")
        read_response(proc, "s0")
        alone = []
        for k in range(5):
            start = time.perf_counter()
            send(f"a{k}", "get_state")
            read_response(proc, f"a{k}")
            alone.append((time.perf_counter() - start) * 1000)
        time.sleep(0.2)
        reset_hwm(proc.pid)
        base = vm_hwm_kib(proc.pid)
        start = time.perf_counter()
        send("e", "get_entries")
        send("s1", "get_state")
        size, first, _ = read_response(proc, "e", parse=False)
        _, behind, _ = read_response(proc, "s1")
        peak = (vm_hwm_kib(proc.pid) - base) * 1024
        return {"answer": size, "peak": peak, "alone": statistics.median(alone),
                "first": (first - start) * 1000, "behind": (behind - start) * 1000}
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()


def measure(binary, source, agent, env, work):
    tries = [one_try(binary, source, agent, env, work) for _ in range(reps)]
    return {k: statistics.median(t[k] for t in tries) for k in tries[0]}


work = tempfile.mkdtemp(prefix="rebound-entries-bench-")
try:
    agent, env = tree.setup(work)
    source = os.path.join(work, "sessions", f"2026-12-01T08-00-00-000Z_entries-{entries}.jsonl")
    os.makedirs(os.path.dirname(source), exist_ok=True)
    tree.make_session(source, entries, work)
    print(f"{entries:,} entries, file {os.path.getsize(source) / 1e6:.1f} MB; reps {reps}; "
          f"medians; {time.strftime('%Y-%m-%d %H:%M')}", flush=True)
    print("| binary | answer | peak memory rise | × answer | answer's first byte | "
          "get_state behind it | get_state alone |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for b in binaries:
        r = measure(b, source, agent, env, work)
        print(f"| {b} | {r['answer'] / 1e6:.1f} MB | {r['peak'] / 1e6:.1f} MB | "
              f"{r['peak'] / r['answer']:.2f} | {r['first']:.0f} ms | {r['behind']:.0f} ms | "
              f"{r['alone']:.2f} ms |", flush=True)
finally:
    shutil.rmtree(work, ignore_errors=True)
