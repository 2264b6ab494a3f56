// The bash tool and the command watch on the manual clock (tools.md section 4.4): a fake
// process behind WatchedProcess, so the 100 ms grace after the exit, the throttled progress,
// the timeout and abort are driven without a child or a sleep.

#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/support/manual_scheduler.h"
#include "tools/bash_tool.h"
#include "tools/command_watch.h"

using namespace rebound;
using protocol::Json;
using testing::ManualScheduler;
using tools::CommandWatch;
using tools::ShellSpawner;
using tools::WatchedProcess;

namespace {

// What a fake child does is the test's: it emits output, its end and its exit when told. Like
// process::ChildProcess it drops each handler once it is done (the handlers hold the watch, the
// watch holds the process: no cycle is left).
struct FakeChild {
  std::function<void(std::string_view)> data;
  std::function<void()> eof;
  std::function<void(int)> exited;
  void end() {
    auto e = std::move(eof);
    data = nullptr;
    eof = nullptr;
    if (e) e();
  }
  void exit(int status) {
    auto x = std::move(exited);
    exited = nullptr;
    if (x) x(status);
  }
  std::vector<int> signals;
  bool reaped = false;
  std::vector<std::string> argv;
  std::string cwd;
};

class FakeProcess : public WatchedProcess {
 public:
  explicit FakeProcess(std::shared_ptr<FakeChild> c) : c_(std::move(c)) {}
  ~FakeProcess() override {
    c_->reaped = true;
    c_->data = nullptr;
    c_->eof = nullptr;
    c_->exited = nullptr;
  }
  void read_output(std::function<void(std::string_view)> data, std::function<void()> eof) override {
    c_->data = std::move(data);
    c_->eof = std::move(eof);
  }
  void wait_exit(std::function<void(int)> exited) override { c_->exited = std::move(exited); }
  void kill_group(int signal) override { c_->signals.push_back(signal); }
  void close_output() override {}
  void keep_group() override {}

 private:
  std::shared_ptr<FakeChild> c_;
};

// Every child the spawner made, newest last.
struct FakeSpawn {
  std::vector<std::shared_ptr<FakeChild>> children;
  ShellSpawner::Spawn spawn() {
    return [this](const std::vector<std::string>& argv, const std::string& cwd, std::string&) {
      auto c = std::make_shared<FakeChild>();
      c->argv = argv;
      c->cwd = cwd;
      children.push_back(c);
      return std::make_unique<FakeProcess>(c);
    };
  }
};

constexpr int kExit0 = 0;         // a wait status: exited with 0
constexpr int kKilled = SIGKILL;  // a wait status: terminated by SIGKILL
constexpr int kExit3 = 3 << 8;    // exited with 3

}  // namespace

TEST_CASE("command watch: an exit completes after the 100 ms grace unless the output ends first") {
  ManualScheduler clock;
  FakeSpawn fake;
  ShellSpawner spawner(clock, fake.spawn());
  std::string seen;
  std::vector<int> done;
  std::string error;
  auto watch = spawner.start(
      {"bash", "-c", "x"}, "/w",
      {[&](std::string_view d) { seen += d; }, [&](int status) { done.push_back(status); }}, error);
  REQUIRE(watch);
  auto& child = *fake.children.at(0);
  CHECK(child.argv == std::vector<std::string>{"bash", "-c", "x"});
  child.data("one\n");
  child.exit(kExit3);  // a background job keeps the pipe open
  clock.advance(99);
  CHECK(done.empty());
  clock.advance(1);
  CHECK(done == std::vector<int>{kExit3});
  child.data("late\n");  // read and dropped
  CHECK(seen == "one\n");
  // Released while the pipe is open: it lingers until kill_background().
  watch->release();
  watch.reset();
  CHECK_FALSE(child.reaped);
  spawner.kill_background();
  CHECK(child.signals == std::vector<int>{SIGKILL});

  // The output's end before the exit: complete at the exit, no timer left.
  auto second =
      spawner.start({"bash", "-c", "y"}, "", {nullptr, [&](int s) { done.push_back(s); }}, error);
  auto& other = *fake.children.at(1);
  other.end();
  other.exit(kExit0);
  CHECK(done.back() == kExit0);
  CHECK(clock.pending_timers() == 0);
  second->release();
}

TEST_CASE("bash tool: progress at most every 100 ms, the last update before the result") {
  ManualScheduler clock;
  FakeSpawn fake;
  tools::BashTool tool(clock, fake.spawn(), {});
  std::vector<std::string> updates;
  std::optional<session::ToolResult> result;
  session::ToolContext context;
  context.cwd = "/";
  auto call = tool.start(
      Json{{"command", "make"}}, context,
      [&](session::ToolResult p) {
        updates.push_back(p.content.empty() ? "(empty)" : p.content[0].text);
      },
      [&](session::ToolResult r) { result = std::move(r); });
  auto& child = *fake.children.at(0);
  CHECK(child.argv.at(2) == "make");
  CHECK(child.cwd == "/");
  clock.run_ready();
  CHECK(updates == std::vector<std::string>{"(empty)"});
  child.data("a\n");  // the first output goes at once
  child.data("b\n");  // within 100 ms: waits
  clock.advance(50);
  child.data("c\n");
  CHECK(updates.size() == 2);
  clock.advance(50);  // the interval ends: what came during it
  CHECK(updates == std::vector<std::string>{"(empty)", "a\n", "a\nb\nc\n"});
  clock.advance(500);  // nothing new: no update
  CHECK(updates.size() == 3);
  child.data("d\n");
  child.end();
  child.exit(kExit0);
  REQUIRE(result);
  CHECK_FALSE(result->is_error);
  CHECK(result->content[0].text == "a\nb\nc\nd\n");
  CHECK(updates.back() == "a\nb\nc\nd\n");
}

TEST_CASE("bash tool: the timeout kills the group at its time, abort ends it too") {
  ManualScheduler clock;
  FakeSpawn fake;
  tools::BashTool tool(clock, fake.spawn(), {});
  session::ToolContext context;
  context.cwd = "/";
  std::optional<session::ToolResult> timed;
  auto call = tool.start(Json{{"command", "sleep 9"}, {"timeout", 2}}, context, nullptr,
                         [&](session::ToolResult r) { timed = std::move(r); });
  auto& child = *fake.children.at(0);
  clock.advance(1999);
  CHECK(child.signals.empty());
  clock.advance(1);
  CHECK(child.signals == std::vector<int>{SIGKILL});
  child.end();
  child.exit(kKilled);
  REQUIRE(timed);
  CHECK(timed->is_error);
  CHECK(timed->content[0].text == "Command timed out after 2 seconds");

  std::optional<session::ToolResult> aborted;
  auto second = tool.start(Json{{"command", "sleep 9"}}, context, nullptr,
                           [&](session::ToolResult r) { aborted = std::move(r); });
  auto& other = *fake.children.at(1);
  other.data("partial\n");
  second->cancel();
  CHECK(other.signals == std::vector<int>{SIGKILL});
  other.end();
  other.exit(kKilled);
  REQUIRE(aborted);
  CHECK(aborted->content[0].text == "partial\n\n\nCommand aborted");
  CHECK(clock.pending_timers() == 0);
}
