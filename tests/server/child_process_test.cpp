// ChildProcess on a real io_context: stdin kept open and written, stdout and stderr apart,
// working directory and environment, the exit status, killing the whole group, and destroying
// a running child (no callback afterwards, nothing of its group left).

#include "process/child_process.h"
#include "process/descendants.h"

#include <signal.h>
#include <sys/wait.h>

#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "tests/support/proc_status.h"

using namespace rebound::process;
using namespace std::chrono_literals;

namespace {

// Runs the loop until `done` or the limit (a failing test, not a hang).
template <typename Pred>
bool run_until(boost::asio::io_context& io, Pred done, std::chrono::milliseconds limit = 5000ms) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!done() && std::chrono::steady_clock::now() < end) {
    io.run_for(10ms);
    io.restart();
  }
  return done();
}

}  // namespace

TEST_CASE("stdin stays open for writing, output comes back, closing stdin ends the child") {
  boost::asio::io_context io;
  ChildSpec spec;
  spec.argv = {"cat"};
  spec.input = ChildSpec::Input::pipe;
  std::string error;
  auto child = ChildProcess::spawn(io.get_executor(), spec, error);
  REQUIRE_MESSAGE(child, error);
  std::string out;
  bool eof = false;
  int status = -1;
  child->read_stdout([&](std::string_view d) { out += d; }, [&] { eof = true; });
  child->wait_exit([&](int s) { status = s; });
  child->write_stdin("one\n");
  CHECK(run_until(io, [&] { return out == "one\n"; }));
  CHECK_FALSE(child->exited());  // still waiting for more input
  child->write_stdin("two\n");
  child->close_stdin();
  CHECK(run_until(io, [&] { return eof && status != -1; }));
  CHECK(out == "one\ntwo\n");
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("separate stderr, working directory, environment and exit status") {
  boost::asio::io_context io;
  ChildSpec spec;
  spec.argv = {"sh", "-c", "echo \"$GREETING\"; pwd; echo oops >&2; exit 7"};
  spec.cwd = "/tmp";
  spec.env = std::vector<std::string>{"GREETING=hi", "PATH=/usr/bin:/bin"};
  spec.output = ChildSpec::Output::separate;
  std::string error;
  auto child = ChildProcess::spawn(io.get_executor(), spec, error);
  REQUIRE_MESSAGE(child, error);
  std::string out, err;
  int ends = 0, status = -1;
  child->read_stdout([&](std::string_view d) { out += d; }, [&] { ++ends; });
  child->read_stderr([&](std::string_view d) { err += d; }, [&] { ++ends; });
  child->wait_exit([&](int s) { status = s; });
  CHECK(run_until(io, [&] { return ends == 2 && status != -1; }));
  CHECK(out == "hi\n/tmp\n");
  CHECK(err == "oops\n");
  CHECK(WEXITSTATUS(status) == 7);
}

TEST_CASE("a program that does not exist is an error, not a child") {
  boost::asio::io_context io;
  ChildSpec spec;
  spec.argv = {"/nonexistent/program"};
  std::string error;
  CHECK_FALSE(ChildProcess::spawn(io.get_executor(), spec, error));
  CHECK(error.find("No such file or directory") != std::string::npos);
}

TEST_CASE("the group is killed as a whole, destroying a child leaves nothing behind") {
  boost::asio::io_context io;
  ChildSpec spec;
  spec.argv = {"sh", "-c", "sleep 30 & echo $!; sleep 30"};
  std::string error;
  auto child = ChildProcess::spawn(io.get_executor(), spec, error);
  REQUIRE_MESSAGE(child, error);
  std::string out;
  int status = -1;
  child->read_stdout([&](std::string_view d) { out += d; }, [] {});
  child->wait_exit([&](int s) { status = s; });
  CHECK(run_until(io, [&] { return out.find('\n') != std::string::npos; }));
  const pid_t background = std::stoi(out);
  CHECK(child->group_alive());
  CHECK(child->kill_group(SIGKILL));
  CHECK(run_until(io, [&] { return status != -1; }));
  CHECK(WIFSIGNALED(status));
  CHECK(run_until(io, [&] { return !child->group_alive(); }));
  CHECK(rebound::testing::process_ended(background));  // the background sleep went with its group

  // Destroyed while running: no callback afterwards, the group is gone.
  auto second = ChildProcess::spawn(io.get_executor(), spec, error);
  REQUIRE(second);
  bool called = false;
  second->wait_exit([&](int) { called = true; });
  const pid_t pid = second->pid();
  second.reset();
  io.run_for(50ms);
  CHECK_FALSE(called);
  // Killed at once; an orphaned member is a zombie until whoever adopted it reaps it.
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (group_has_live_member(pid) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(20ms);  // watching other processes
  CHECK(!group_has_live_member(pid));
}
