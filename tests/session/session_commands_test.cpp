// Sessions on disk through AgentSession (runtime.md section 4): what the file holds after a
// retry, resuming it, new_session and switch_session during a backoff, and bash.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support/event_summary.h"
#include "tests/support/jsonl.h"
#include "tests/support/session_harness.h"

using namespace rebound;
using protocol::Json;
using testing::SessionHarness;
using testing::summarize;
using V = std::vector<std::string>;

namespace {

session::LoadedSession load(SessionHarness& h, const std::string& path) {
  auto loaded = h.files.load(path);
  REQUIRE(loaded.ok());
  return loaded.value();
}

session::ShellResult ran(std::string output, int code) {
  session::ShellResult r;
  r.output = std::move(output);
  r.exit_code = code;
  return r;
}

}  // namespace

TEST_CASE("after an overload and a retry the file holds user, error, and the answer as its child") {
  SessionHarness h(R"([{"error":"503 overloaded"},{"text":"hello"}])");
  const std::string path = *h.session.session_file();
  CHECK(path == "/sessions/sid-test.jsonl");
  h.prompt("hi");
  h.scheduler.run_all();
  const auto lines = testing::parse_jsonl(h.files.files.at(path));
  REQUIRE(lines.size() == 6);
  CHECK(lines[0]["type"] == "session");
  CHECK(lines[0]["id"] == "sid-test");
  CHECK(lines[0]["cwd"] == "/work");
  CHECK(lines[1]["type"] == "model_change");
  CHECK(lines[1]["provider"] == "scripted");
  CHECK(lines[1]["modelId"] == "script");
  CHECK(lines[2]["type"] == "thinking_level_change");
  CHECK(lines[3]["message"]["role"] == "user");
  CHECK(lines[4]["message"]["stopReason"] == "error");
  CHECK(lines[4]["message"]["errorMessage"] == "503 overloaded");
  CHECK(lines[5]["message"]["content"][0]["text"] == "hello");
  CHECK(lines[5]["parentId"] == lines[4]["id"]);
  // One write created the file (header + 4 entries), then one write per entry.
  CHECK(h.files.writes[path] == 2);
  // get_messages leaves the error out; a resumed session has the same context.
  REQUIRE(h.session.messages().size() == 2);
  testing::CapturingSink other_sink;
  session::AgentSession resumed(
      {session::scripted_model("echo"), "ignored", nullptr, path, load(h, path)},
      session::ModelRegistry::with_builtins(), h.deps(other_sink));
  CHECK(protocol::to_json(resumed.messages()) == protocol::to_json(h.session.messages()));
  CHECK(resumed.session_id() == "sid-test");
  CHECK(resumed.state().model->id == "script");  // the model the file last used
  CHECK(resumed.stats().assistant_messages == 2);
  CHECK(resumed.session_file() == path);
  // Appending to a resumed file continues the chain from its leaf.
  // Clamped to off on this model, but the chosen level changes: one entry (amendments A23),
  // the child of the file's leaf.
  resumed.set_thinking_level(protocol::ThinkingLevel::high);
  CHECK(resumed.state().thinking_level == protocol::ThinkingLevel::off);
  const auto after = testing::parse_jsonl(h.files.files.at(path));
  REQUIRE(after.size() == 7);
  CHECK(after[6]["type"] == "thinking_level_change");
  CHECK(after[6]["thinkingLevel"] == "high");
  CHECK(after[6]["parentId"] == lines[5]["id"]);
}

TEST_CASE("a model change is appended as an entry, the file starts only with an answer") {
  SessionHarness h;
  h.unavailable.clear();
  REQUIRE((h.session.set_model("scripted", "echo")));
  CHECK(h.files.files.empty());
  h.prompt("hi");
  h.scheduler.run_all();
  const auto lines = testing::parse_jsonl(h.files.files.at(*h.session.session_file()));
  REQUIRE(lines.size() == 6);
  CHECK(lines[3]["type"] == "model_change");
  CHECK(lines[3]["modelId"] == "echo");
}

TEST_CASE("--no-session: nothing on disk and no sessionFile") {
  SessionHarness h;
  h.files.no_session = true;
  h.session.new_session(std::nullopt);
  h.prompt("hi");
  h.scheduler.run_all();
  CHECK(h.files.opens == 0);
  CHECK_FALSE(h.session.state().session_file);
}

TEST_CASE("switch_session during a backoff: the chain ends cancelled, then the other session") {
  SessionHarness h(R"([{"text":"first answer"},{"error":"503 overloaded"},{"text":"x"}])");
  h.prompt("first");
  h.scheduler.run_all();
  const std::string first_path = *h.session.session_file();
  const std::string first_id = h.session.session_id();
  h.session.new_session(std::string("parent.jsonl"));
  CHECK(h.session.session_id() != first_id);
  CHECK(h.session.messages().empty());
  const std::string second_path = *h.session.session_file();
  h.prompt("second");
  h.scheduler.run_ready();
  REQUIRE(h.session.is_retrying());
  h.prompt("queued");  // waits as a follow-up during the backoff
  CHECK(h.session.state().queued_message_count == 1);
  h.sink.clear();
  CHECK(h.session.switch_session(first_path));
  CHECK(summarize(h.sink.events) == V{"auto_retry_end:false:1:Retry cancelled", "queue_update"});
  CHECK(h.session.session_id() == first_id);
  CHECK(h.session.state().message_count == 2);
  CHECK(h.session.state().queued_message_count == 0);
  CHECK(h.session.session_file() == first_path);
  h.scheduler.advance(10000);
  CHECK(h.sink.events.size() == 2);  // nothing retried, nothing queued ran
  // The second session's file has the parent in its header and its error entry.
  const auto second = testing::parse_jsonl(h.files.files.at(second_path));
  CHECK(second[0]["parentSession"] == "parent.jsonl");
  CHECK(second.back()["message"]["stopReason"] == "error");
}

TEST_CASE("switch_session to a file that does not load changes nothing") {
  SessionHarness h(R"([{"error":"503 overloaded"},{"text":"x"}])");
  h.prompt("hi");
  h.scheduler.run_ready();
  h.sink.clear();
  CHECK(testing::error_of(h.session.switch_session("/nope.jsonl")) ==
        "Session file not found: /nope.jsonl");
  h.files.files["/bad.jsonl"] = "{\"type\":\"session\",\"version\":1,\"id\":\"x\"}\n";
  CHECK(testing::error_of(h.session.switch_session("/bad.jsonl"))
            .find("unsupported session file version 1") != std::string::npos);
  CHECK(h.sink.events.empty());
  CHECK(h.session.is_retrying());  // the backoff goes on
  CHECK(h.session.session_id() == "sid-test");
}

TEST_CASE("new_session aborts a running run first") {
  SessionHarness h(R"([{"text":"slow","hang":true}])");
  h.prompt("hi");
  h.scheduler.run_ready();
  h.sink.clear();
  h.session.new_session(std::nullopt);
  CHECK(summarize(h.sink.events) == V{"message_start:assistant:aborted",
                                      "message_end:assistant:aborted", "turn_end:assistant:aborted",
                                      "agent_end:willRetry=false"});
  CHECK_FALSE(h.session.is_streaming());
  CHECK(h.session.messages().empty());
}

TEST_CASE("bash when idle: the result joins the context, the file and the next request") {
  SessionHarness h;
  std::vector<protocol::AgentMessage> answers;
  CHECK(h.session.bash("ls", [&](const protocol::AgentMessage& m) { answers.push_back(m); }));
  REQUIRE(h.shell.jobs.size() == 1);
  CHECK(h.shell.jobs[0]->command == "ls");
  CHECK(testing::error_of(h.session.bash("pwd", [](const protocol::AgentMessage&) {})) ==
        "A bash command is already running");
  h.shell.finish(0, ran("a.txt\n", 0));
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].output == "a.txt\n");
  CHECK(answers[0].exit_code == 0);
  REQUIRE(h.session.messages().size() == 1);
  CHECK(h.session.messages()[0].role == protocol::Role::bash_execution);
  h.prompt("what is there?");
  h.scheduler.run_all();
  REQUIRE(h.requests.size() == 1);
  CHECK(h.requests[0]["messages"][0]["role"] == "bashExecution");
  CHECK(h.requests[0]["messages"][0]["command"] == "ls");
  const auto lines = testing::parse_jsonl(h.files.files.at(*h.session.session_file()));
  CHECK(lines[3]["message"]["role"] == "bashExecution");
  // A second command may run now.
  CHECK(h.session.bash("pwd", [](const protocol::AgentMessage&) {}));
}

TEST_CASE("bash that ends during a run waits for the run to end") {
  SessionHarness h(R"([{"text":"answer","hang":true}])");
  h.prompt("hi");
  h.scheduler.run_ready();
  CHECK(h.session.bash("echo x", [](const protocol::AgentMessage&) {}));
  h.shell.finish(0, ran("x\n", 0));
  CHECK(h.session.messages().size() == 1);  // not between the request and its answer
  h.session.abort();
  REQUIRE(h.session.messages().size() == 3);
  CHECK(h.session.messages()[2].role == protocol::Role::bash_execution);
}

TEST_CASE("abort_bash cancels, new_session drops a running command's result") {
  SessionHarness h;
  std::vector<protocol::AgentMessage> answers;
  auto keep = [&](const protocol::AgentMessage& m) { answers.push_back(m); };
  CHECK(h.session.bash("sleep 9", keep));
  h.session.abort_bash();
  CHECK(h.shell.jobs[0]->cancelled);
  session::ShellResult killed;
  killed.cancelled = true;
  h.shell.finish(0, killed);
  REQUIRE(answers.size() == 1);
  CHECK(answers[0].cancelled);
  CHECK_FALSE(answers[0].exit_code);
  CHECK(h.session.messages().size() == 1);  // a cancelled command is still what happened

  CHECK(h.session.bash("sleep 9", keep));
  h.session.new_session(std::nullopt);
  CHECK(h.shell.jobs[1]->cancelled);
  CHECK(h.session.bash("true", keep));  // the old command no longer blocks
  h.shell.finish(1, killed);
  CHECK(answers.size() == 2);
  CHECK(h.session.messages().empty());
}

TEST_CASE("a shell that cannot start gives the error") {
  SessionHarness h;
  h.shell.refuse = true;
  CHECK(testing::error_of(h.session.bash("ls", [](const protocol::AgentMessage&) {})) ==
        "Cannot run bash: refused");
  h.shell.refuse = false;
  CHECK(h.session.bash("ls", [](const protocol::AgentMessage&) {}));
}
