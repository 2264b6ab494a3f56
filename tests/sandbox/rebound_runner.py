#!/usr/bin/env python3
"""A runner for escape.sh (tests/sandbox/README.md) that is a thin client of Rebound: the probe
runs through Rebound's own bash tool with the sandbox on, so what is measured is Rebound's
sandbox and nothing of this script's.

Usage: rebound_runner.py REBOUND-BINARY sh -c SCRIPT

It hands Rebound everything it inherited unchanged (environment, every open descriptor, the
working directory), writes a one-call scripted-provider script, sends one prompt, prints the
call's result text and exits with the command's exit code."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: rebound_runner.py REBOUND-BINARY COMMAND...")
    rebound = sys.argv[1]
    command = shlex.join(sys.argv[2:])
    scratch = tempfile.mkdtemp(prefix="rebound-runner-")
    try:
        agent = os.path.join(scratch, "agent")
        os.makedirs(agent)
        with open(os.path.join(agent, "settings.json"), "w") as f:
            json.dump({"sandbox": {"enabled": True}}, f)
        script = os.path.join(scratch, "script.json")
        with open(script, "w") as f:
            json.dump([{"toolCalls": [{"name": "bash",
                                       "arguments": {"command": command, "timeout": 9}}]},
                       {"text": "done"}], f)
        # Every descriptor this process has stays open in Rebound (7 and 9 of the harness too).
        inherited = [int(fd) for fd in os.listdir("/proc/self/fd") if int(fd) > 2]
        for fd in inherited:
            try:
                os.set_inheritable(fd, True)
            except OSError:
                pass
        proc = subprocess.Popen(
            [rebound, "--provider", "scripted", "--script", script, "--no-session",
             "--agent-dir", agent, "--log-level", "error"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, close_fds=False)
        proc.stdin.write(b'{"id":"p","type":"prompt","message":"run it"}\n')
        proc.stdin.flush()
        text, code = "", 1
        for raw in proc.stdout:
            line = json.loads(raw)
            if line.get("type") == "tool_execution_end":
                text = "".join(b.get("text", "") for b in line["result"]["content"])
                m = re.search(r"Command exited with code (\d+)$", text)
                code = int(m.group(1)) if m else (1 if line.get("isError") else 0)
                break
        proc.stdin.close()
        proc.wait(timeout=10)
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
        sys.stdout.flush()
        sys.exit(code)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
