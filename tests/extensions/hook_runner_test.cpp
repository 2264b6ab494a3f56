// Running command hooks (extensions.md section 3.1) with real /bin/sh children on a real event
// loop: the event's JSON on stdin, the environment, all handlers of an occurrence at once, exit
// statuses, the timeout that kills the group, a background child that does not hold the hook,
// the 1 MiB cap, a start failure, and cancel (an abort) that kills and answers nothing.

#include <doctest/doctest.h>
#include <signal.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "extensions/hook_runner.h"
#include "process/descendants.h"
#include "server/io/asio_scheduler.h"
#include "tests/support/proc_status.h"
#include "tests/support/temp_dir.h"

namespace ext = rebound::extensions;
using ext::HookEvent;
using ext::HookRun;
using rebound::testing::TempDir;
using namespace std::chrono_literals;

namespace {

// Runs `io` until `done()` holds (a safety bound of 20 s, not a timing assertion).
template <typename Predicate>
bool pump(boost::asio::io_context& io, Predicate done) {
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (!done() && std::chrono::steady_clock::now() < until) {
    if (io.stopped()) io.restart();  // out of work once: posts made later need a restart
    io.run_one_for(20ms);
  }
  return done();
}

struct Harness {
  // As in the server (main.cpp): a hook that exits before reading its stdin breaks the pipe.
  Harness() { std::signal(SIGPIPE, SIG_IGN); }
  boost::asio::io_context io;
  rebound::server::AsioScheduler scheduler{io.get_executor()};
  TempDir dir;
  ext::HookRunner runner{io.get_executor(), scheduler,
                         ext::HookEnvironment(dir.path().string(), {"PATH=/usr/bin:/bin"}, "s-1")};
  std::vector<ext::HookHandler> handlers;

  void add(std::string command, std::int64_t timeout_ms = 10000) {
    ext::HookHandler h;
    h.command = std::move(command);
    h.timeout_ms = timeout_ms;
    handlers.push_back(std::move(h));
  }
  // Runs every handler for `event` and the loop until they have ended (a safety bound of 20 s
  // on the loop, not a timing assertion: a hang fails the REQUIRE).
  std::vector<HookRun> run(HookEvent event, const std::string& input = "{}") {
    std::vector<const ext::HookHandler*> hs;
    for (const auto& h : handlers)
      hs.push_back(&h);
    std::optional<std::vector<HookRun>> runs;
    runner.run(event, hs, input, [&](std::vector<HookRun> r) { runs = std::move(r); });
    REQUIRE(pump(io, [&] { return runs.has_value(); }));
    return std::move(*runs);
  }
};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("hook runner: stdin, environment, cwd, exit statuses, in the handlers' order") {
  Harness h;
  h.add("cat");
  h.add(
      "printf '%s|%s|%s|%s|%s' \"$REBOUND_HOOK_EVENT\" \"$CLAUDE_PROJECT_DIR\" "
      "\"$REBOUND_PROJECT_DIR\" \"$REBOUND_SESSION_ID\" \"$(pwd)\"");
  h.add("echo 'no rm' >&2; exit 2");
  h.add("nosuch-command-xyz");
  h.add("kill -SEGV $$");
  const auto runs = h.run(HookEvent::pre_tool_use, R"({"tool_name":"bash"})");
  REQUIRE(runs.size() == 5);
  CHECK(runs[0].out == "{\"tool_name\":\"bash\"}\n");
  const std::string cwd = h.dir.path().string();
  CHECK(runs[1].out == "PreToolUse|" + cwd + "|" + cwd + "|s-1|" + cwd);
  CHECK(runs[2].code == 2);
  CHECK(runs[2].err == "no rm\n");
  CHECK(runs[3].code == 127);
  CHECK(runs[3].err.find("not found") != std::string::npos);
  CHECK(runs[4].end == HookRun::End::signalled);
  CHECK(runs[4].code == SIGSEGV);
  CHECK(ext::read_hook_run(HookEvent::pre_tool_use, runs[4]).failure ==
        "Hook was killed by signal 11");
}

TEST_CASE("hook runner: the handlers of one occurrence run at once") {
  // Each hook waits for the other's mark: only hooks that run at the same time both finish.
  Harness h;
  const std::string a = (h.dir.path() / "a").string(), b = (h.dir.path() / "b").string();
  h.add("touch " + a + "; i=0; while [ ! -e " + b +
        " ] && [ $i -lt 100 ]; do sleep 0.05; "
        "i=$((i+1)); done; [ -e " +
        b + " ] && echo saw-b");
  h.add("touch " + b + "; i=0; while [ ! -e " + a +
        " ] && [ $i -lt 100 ]; do sleep 0.05; "
        "i=$((i+1)); done; [ -e " +
        a + " ] && echo saw-a");
  const auto runs = h.run(HookEvent::stop);
  CHECK(runs[0].out == "saw-b\n");
  CHECK(runs[1].out == "saw-a\n");
}

TEST_CASE("hook runner: a timeout kills the hook's group, a background child does not hold it") {
  Harness h;
  const auto pid_file = h.dir.path() / "pid";
  h.add("sleep 30 & echo $! > " + pid_file.string() + "; wait", 300);
  h.add("sleep 31.5 >/dev/null 2>&1 & echo started");  // its child keeps no pipe
  h.add("sleep 31.5 & echo holding");                  // its child holds stdout
  const auto runs = h.run(HookEvent::pre_tool_use);
  CHECK(runs[0].end == HookRun::End::timed_out);
  CHECK(ext::read_hook_run(HookEvent::pre_tool_use, runs[0]).failure ==
        "Hook timed out after 300 ms");
  CHECK(runs[1].out == "started\n");
  CHECK(runs[1].code == 0);
  CHECK(runs[2].out == "holding\n");  // ended 100 ms after its exit, not when the sleep ends
  CHECK(runs[2].code == 0);
  // The timed-out hook's background sleep was killed with its group.
  const pid_t sleeper = std::stoi(slurp(pid_file));
  CHECK(rebound::testing::process_ended(sleeper));
  ::system("pkill -f '^sleep 31.5$' >/dev/null 2>&1");  // the two left by design (until shutdown)
}

TEST_CASE("hook runner: at most 1 MiB of each stream, invalid UTF-8 replaced") {
  Harness h;
  h.add("head -c 3000000 /dev/zero | tr '\\0' a; printf '\\377' >&2");
  const auto runs = h.run(HookEvent::session_start);
  CHECK(runs[0].out.size() == ext::kMaxHookStream);
  CHECK(runs[0].err == "\xef\xbf\xbd");
}

TEST_CASE("hook runner: a hook that cannot start, none at all, and cancel") {
  Harness h;
  h.add("true");
  TempDir gone;
  ext::HookRunner elsewhere(h.io.get_executor(), h.scheduler,
                            ext::HookEnvironment((gone.path() / "missing").string(), {}, "s"));
  std::optional<std::vector<HookRun>> runs;
  std::vector<const ext::HookHandler*> hs{&h.handlers[0]};
  elsewhere.run(HookEvent::stop, hs, "{}", [&](std::vector<HookRun> r) { runs = std::move(r); });
  REQUIRE(pump(h.io, [&] { return runs.has_value(); }));
  CHECK((*runs)[0].end == HookRun::End::not_started);
  CHECK(ext::read_hook_run(HookEvent::stop, (*runs)[0]).failure ==
        "Hook could not start: No such file or directory");

  runs.reset();
  h.runner.run(HookEvent::stop, {}, "{}", [&](std::vector<HookRun> r) { runs = std::move(r); });
  REQUIRE(pump(h.io, [&] { return runs.has_value(); }));
  CHECK(runs->empty());

  // Cancel: the hook is killed at once and its done never runs.
  h.handlers.clear();
  const auto pid_file = h.dir.path() / "cancelled";
  h.add("echo $$ > " + pid_file.string() + "; exec sleep 30");
  hs = {&h.handlers[0]};
  bool answered = false;
  const auto id = h.runner.run(HookEvent::pre_tool_use, hs, "{}", [&](auto) { answered = true; });
  REQUIRE(
      pump(h.io, [&] { return std::filesystem::exists(pid_file) && !slurp(pid_file).empty(); }));
  const pid_t pid = std::stoi(slurp(pid_file));
  h.runner.cancel(id);
  CHECK(h.runner.running() == 0);
  h.io.restart();
  h.io.run_for(300ms);  // a window in which a wrong answer would come
  CHECK(!answered);
  CHECK(::kill(pid, 0) != 0);  // killed and reaped
}

TEST_CASE("hook runner: 60 occurrences in a row never wait on a child (issue 50)") {
  // The mix of the server's hook runs: a hook that reads its stdin, one that exits without
  // reading 200 KB of it, one that leaves a child, one killed by its timeout; with the server's
  // orphan reaper between occurrences. Every occurrence ends; a blocking wait would hang here.
  Harness h;
  h.add("cat > /dev/null; exit 0");
  h.add("exit 0");
  h.add("(sleep 2 &); echo left");
  h.add("exec sleep 5", 20);
  const std::string input = "{\"big\":\"" + std::string(200 * 1024, 'x') + "\"}";
  for (int i = 0; i < 60; ++i) {
    INFO("occurrence " << i);
    const auto runs = h.run(HookEvent::post_tool_use, input);
    REQUIRE(runs.size() == 4);
    CHECK(runs[0].code == 0);
    CHECK(runs[2].out == "left\n");
    CHECK(runs[3].end == HookRun::End::timed_out);
    rebound::process::reap_orphans();
  }
  ::system("pkill -f '^sleep 2$' >/dev/null 2>&1");
}
