#!/usr/bin/env bash
# rebound-chat in a real terminal (tmux): the retry line with its numbers counts down, Esc
# cancels it, the screen shows the failure with its error class, a later prompt works, Ctrl-R
# retries at once during a countdown; then plain-line mode with
# a pipe. Usage: chat_tmux_test.sh REBOUND_CHAT REBOUND
set -euo pipefail
chat=$1
server=$2
work=$(mktemp -d)
sock="rebound-chat-test-$$"
cleanup() { tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
export LANG=C.UTF-8 HOME="$work"
mkdir -p "$work/agent"
echo '{"retry":{"enabled":true,"maxRetries":3,"baseDelayMs":6000}}' >"$work/agent/settings.json"
echo '[{"error":"503 overloaded"},{"text":"second answer"},{"error":"503 overloaded"},{"text":"after retry now"},{"text":"never","hang":true}]' \
  >"$work/script.json"
server_args=(--agent-dir "$work/agent" --no-session --provider scripted --script "$work/script.json")

fail() { echo "FAIL: $*" >&2; echo "--- screen:" >&2; screen >&2; exit 1; }
screen() { tmux -L "$sock" capture-pane -p -t chat; }
# Waits up to $2 seconds for the screen to contain $1.
wait_for() {
  local deadline=$((SECONDS + $2))
  while [ $SECONDS -le $deadline ]; do
    screen | grep -qF -- "$1" && return 0
    sleep 0.1
  done
  fail "no '$1' on the screen within $2 s"
}

tmux -L "$sock" -u new-session -d -s chat -x 100 -y 20 \
  "$chat --server $server -- ${server_args[*]}"
wait_for ">" 5
tmux -L "$sock" send-keys -t chat "hello there" Enter
wait_for "Retrying (1/3) in 6s… (esc to cancel, ctrl-r to retry now)" 5
wait_for "(error: 503 overloaded)" 1
# It counts down.
wait_for "Retrying (1/3) in 4s… (esc to cancel, ctrl-r to retry now)" 4
echo "ok: the retry line appeared and counted down from 6s to 4s"
tmux -L "$sock" send-keys -t chat Escape
wait_for "Retry failed after 1 attempts: Retry cancelled (overloaded)" 3
screen | grep -qF "Retrying (" && fail "the retry line is still shown after Esc"
echo "ok: Esc cancelled the backoff"
tmux -L "$sock" send-keys -t chat "and again" Enter
wait_for "second answer" 5
echo "ok: a later prompt works"
tmux -L "$sock" send-keys -t chat "retry me" Enter
wait_for "Retrying (1/3) in 6s… (esc to cancel, ctrl-r to retry now)" 5
tmux -L "$sock" send-keys -t chat C-r
wait_for "after retry now" 2
screen | grep -qF "Retrying (" && fail "the retry line is still shown after Ctrl-R"
echo "ok: Ctrl-R retried at once during a 6 s countdown"
tmux -L "$sock" send-keys -t chat "third" Enter
wait_for "Working… (esc to interrupt)" 3
tmux -L "$sock" send-keys -t chat C-c
wait_for "(interrupted)" 3
screen | grep -qF "Working…" && fail "still working after Ctrl-C"
echo "ok: Working… shows while a run streams; Ctrl-C interrupts it"
tmux -L "$sock" send-keys -t chat C-d
for _ in $(seq 50); do
  tmux -L "$sock" has-session -t chat 2>/dev/null || break
  sleep 0.1
done
tmux -L "$sock" has-session -t chat 2>/dev/null && fail "Ctrl-D did not quit"
echo "ok: Ctrl-D quits"

# Plain lines when stdout is not a terminal.
echo '{"retry":{"enabled":true,"maxRetries":1,"baseDelayMs":50}}' >"$work/agent/settings.json"
echo '[{"error":"503 overloaded"}]' >"$work/script.json"
out=$(printf 'first\n' | "$chat" --server "$server" -- "${server_args[@]}" 2>/dev/null)
expected="you: first
(error: 503 overloaded)
Retrying (1/1) in 0s… (esc to cancel)
(error: 503 overloaded)
Retry failed after 1 attempts: 503 overloaded (overloaded)"
[ "$out" = "$expected" ] || { echo "FAIL: plain output was:"; echo "$out"; exit 1; } >&2
echo "ok: plain-line mode"

# Its own commands in plain-line mode: a name, the fork list, an export, a fork before the
# first message (its text comes back), a clone.
echo '[{"text":"the answer"}]' >"$work/script.json"
out=$(printf 'first\n:name demo run\n:fork\n:export %s\n:clone\n:fork 1\n:what\n' "$work/page.html" |
  "$chat" --server "$server" -- "${server_args[@]}" 2>/dev/null)
for want in "(named: demo run)" "  1  first" "(exported to $work/page.html)" \
  "(forked before message 1: a new session)" "(cloned into a new session)" ":name TEXT names the session"; do
  printf '%s\n' "$out" | grep -qF -- "$want" || { echo "FAIL: '$want' not in:"; echo "$out"; exit 1; } >&2
done
grep -qF "<title>demo run</title>" "$work/page.html" || { echo "FAIL: the export has no title" >&2; exit 1; }
echo "ok: :name, :fork, :export, :clone in plain-line mode"
