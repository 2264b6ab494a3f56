// The session's side of the hooks (extensions.md sections 3.9, 5.1 to 5.3, 8) with fakes the
// test answers by hand on manual time: after-call hooks hold a call's end and their texts follow
// the results; Stop continues the same run; submitted messages are judged one after the other;
// SessionStart's texts reach the first request; an abort drops every wait. No processes.

#include <doctest/doctest.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "session/run_hooks.h"
#include "tests/support/fake_tool.h"
#include "tests/support/session_harness.h"

using namespace rebound;
using protocol::Json;
using testing::SessionHarness;

namespace {

// A wait whose end the test sees.
class FakeWait : public session::Waiting {
 public:
  explicit FakeWait(std::shared_ptr<bool> dropped) : dropped_(std::move(dropped)) {}
  ~FakeWait() override { *dropped_ = true; }

 private:
  std::shared_ptr<bool> dropped_;
};

template <typename Verdict>
struct Pending {
  std::function<void(Verdict)> done;
  std::shared_ptr<bool> dropped = std::make_shared<bool>(false);
};

// Both hook seams, each call kept for the test to answer.
class FakeHooks : public session::ToolPreflight, public session::RunHooks {
 public:
  std::unique_ptr<session::Waiting> check(const session::PreflightCall&,
                                          std::function<void(session::PreflightVerdict)>) override {
    return nullptr;  // nothing before the calls
  }
  std::unique_ptr<session::Waiting> after_call(
      const session::FinishedCall& call,
      std::function<void(session::AfterCallVerdict)> done) override {
    finished.push_back(call.id + ":" + call.result.content[0].text);
    return hold(after, std::move(done));
  }
  std::unique_ptr<session::Waiting> stop(const session::StopCall& call,
                                         std::function<void(session::StopVerdict)> done) override {
    stop_continuations.push_back(call.continuations);
    return hold(stops, std::move(done));
  }
  std::unique_ptr<session::Waiting> prompt_submitted(
      const std::string& text, const std::string& prompt_id,
      std::function<void(session::PromptVerdict)> done) override {
    submitted.push_back(text);
    prompt_ids.push_back(prompt_id);
    return hold(prompts, std::move(done));
  }
  std::unique_ptr<session::Waiting> session_start(
      std::string_view, const std::string&,
      std::function<void(std::vector<std::string>)> done) override {
    return hold(starts, std::move(done));
  }

  std::vector<std::string> finished, submitted, prompt_ids;
  std::vector<std::int64_t> stop_continuations;
  std::vector<Pending<session::AfterCallVerdict>> after;
  std::vector<Pending<session::StopVerdict>> stops;
  std::vector<Pending<session::PromptVerdict>> prompts;
  std::vector<Pending<std::vector<std::string>>> starts;

 private:
  template <typename Verdict>
  static std::unique_ptr<session::Waiting> hold(std::vector<Pending<Verdict>>& into,
                                                std::function<void(Verdict)> done) {
    into.push_back({std::move(done)});
    return std::make_unique<FakeWait>(into.back().dropped);
  }
};

session::ContextNote note(const std::string& text) {
  return session::ContextNote("hook", text, Json{{"hookEvent", "Test"}});
}

// The types of the captured events, message_end with the message's role.
std::vector<std::string> kinds(const testing::CapturingSink& sink) {
  std::vector<std::string> out;
  for (const auto& e : sink.events) {
    std::string type = e["type"];
    if (type == "message_start" || type == "message_update") continue;
    if (type == "message_end") type += ":" + e["message"]["role"].get<std::string>();
    if (type == "tool_execution_end") type += ":" + e["toolCallId"].get<std::string>();
    out.push_back(type);
  }
  return out;
}

using V = std::vector<std::string>;

constexpr const char* kTwoCalls =
    R"([{"toolCalls":[{"name":"slow","arguments":{}},{"name":"slow","arguments":{}}]},
        {"text":"done"}])";

// The fake tool "slow" and the hooks as the preflight; a prompt whose answer calls it twice.
std::shared_ptr<testing::FakeTool> start_batch(SessionHarness& h, FakeHooks& hooks) {
  h.session.set_tool_preflight(&hooks);
  auto tool = std::make_shared<testing::FakeTool>("slow", h.scheduler);
  h.tools.add(tool);
  h.prompt("go");
  h.scheduler.run_ready();
  return tool;
}

}  // namespace

TEST_CASE("after-call hooks hold each call's end, their texts follow the batch's results") {
  SessionHarness h(kTwoCalls);
  FakeHooks hooks;
  const auto tool = start_batch(h, hooks);
  REQUIRE(tool->calls.size() == 2);
  tool->finish(0, "one");
  tool->finish(1, "two", true);
  h.scheduler.run_ready();
  CHECK(hooks.finished == V{"call_1:one", "call_2:two"});
  CHECK(h.sink.of_type("tool_execution_end").empty());  // both held by their hooks
  REQUIRE(hooks.after.size() == 2);
  session::AfterCallVerdict second;
  second.context.push_back(note("about two"));
  hooks.after[1].done(std::move(second));  // the second ends first
  session::AfterCallVerdict first;
  first.context.push_back(note("about one"));
  first.stop_run = "Operation stopped by hook";
  hooks.after[0].done(std::move(first));
  h.scheduler.run_all();
  // Ends in hook order, results in call order, then the texts per call in call order; the
  // stop ends the run after the batch (no second request).
  CHECK(kinds(h.sink) == V{"agent_start", "turn_start", "message_end:user", "message_end:assistant",
                           "tool_execution_start", "tool_execution_start",
                           "tool_execution_end:call_2", "tool_execution_end:call_1",
                           "message_end:toolResult", "message_end:toolResult", "message_end:custom",
                           "message_end:custom", "turn_end", "agent_end"});
  const auto customs = h.sink.of_type("message_end");
  CHECK(customs[customs.size() - 2]["message"]["content"] == "about one");
  CHECK(customs.back()["message"]["content"] == "about two");
  CHECK(h.requests.size() == 1);
  CHECK(*hooks.after[0].dropped);  // each wait let go once answered
  CHECK(*hooks.after[1].dropped);
  CHECK(h.session.messages().size() == 6);
}

TEST_CASE("abort while after-call hooks run: the call ends with its result, texts dropped") {
  SessionHarness h(kTwoCalls);
  FakeHooks hooks;
  const auto tool = start_batch(h, hooks);
  tool->finish(0, "one");  // in its hooks; call_2 still running
  h.scheduler.run_ready();
  REQUIRE(hooks.after.size() == 1);
  bool answered = false;
  h.session.abort([&] { answered = true; });
  h.scheduler.run_all();
  CHECK(answered);
  CHECK(*hooks.after[0].dropped);  // the hooks were killed
  CHECK(hooks.after.size() == 1);  // the aborted call_2 got none
  const auto ends = h.sink.of_type("tool_execution_end");
  REQUIRE(ends.size() == 2);
  CHECK(ends[0]["toolCallId"] == "call_1");
  CHECK(ends[0]["result"]["content"][0]["text"] == "one");
  CHECK(h.sink.of_type("agent_end").size() == 1);
  for (const auto& m : h.session.messages())
    CHECK(m.role != protocol::Role::custom);
}

TEST_CASE("Stop: a continuation is a new turn of the same run, an abort ends the wait") {
  SessionHarness h(R"([{"text":"first"},{"text":"second"},{"text":"third"}])");
  FakeHooks hooks;
  h.session.set_run_hooks(&hooks);
  h.prompt("go");
  h.scheduler.run_ready();
  REQUIRE(hooks.stops.size() == 1);
  CHECK(h.session.is_streaming());  // the run is not over while Stop runs
  CHECK(h.sink.of_type("agent_end").empty());
  session::StopVerdict go_on;
  go_on.continue_run = true;
  go_on.context.push_back(note("not done"));
  hooks.stops[0].done(std::move(go_on));
  h.scheduler.run_ready();
  REQUIRE(hooks.stops.size() == 2);
  CHECK(hooks.stop_continuations == std::vector<std::int64_t>{0, 1});
  REQUIRE(h.requests.size() == 2);
  CHECK(h.requests[1]["messages"].back()["role"] == "custom");
  bool answered = false;
  h.session.abort([&] { answered = true; });
  h.scheduler.run_all();
  CHECK(answered);
  CHECK(*hooks.stops[1].dropped);
  CHECK(h.sink.of_type("agent_start").size() == 1);
  CHECK(h.sink.of_type("agent_end").size() == 1);
  CHECK(!h.session.is_streaming());
  CHECK(h.requests.size() == 2);
}

TEST_CASE("submitted messages: judged in arrival order, a refusal answered, abort drops them") {
  SessionHarness h(R"([{"text":"ok"}])");
  FakeHooks hooks;
  h.session.set_run_hooks(&hooks);
  std::vector<std::string> answers;
  const auto answer = [&answers](std::string name) {
    return [&answers, name](session::Status s) {
      answers.push_back(name + ":" + (s ? std::string("ok") : s.error().message));
    };
  };
  h.session.submit({"first", {}}, session::SubmitKind::prompt, std::nullopt, answer("first"));
  CHECK(h.session.state().is_streaming);  // busy while its hooks run
  h.session.submit({"again", {}}, session::SubmitKind::prompt, std::nullopt, answer("again"));
  h.session.submit({"later", {}}, session::SubmitKind::follow_up, std::nullopt, answer("later"));
  CHECK(answers == V{"again:" + std::string("Agent is already processing. Specify "
                                            "streamingBehavior ('steer' or 'followUp') to queue "
                                            "the message.")});
  REQUIRE(hooks.prompts.size() == 1);  // the follow-up waits for the first's verdict
  session::PromptVerdict refused;
  refused.refused = "no";
  hooks.prompts[0].done(std::move(refused));
  h.scheduler.run_ready();
  CHECK(answers.back() == "first:no");
  REQUIRE(hooks.prompts.size() == 2);
  CHECK(hooks.submitted == V{"first", "later"});
  CHECK(hooks.prompt_ids[0] != hooks.prompt_ids[1]);
  CHECK(h.requests.empty());  // nothing ran
  CHECK(h.session.messages().empty());
  h.session.abort({});
  CHECK(answers.back() == "later:Operation aborted");
  CHECK(*hooks.prompts[1].dropped);
  // An accepted one carries its texts after the user message, and becomes the prompt_id.
  h.session.submit({"go", {}}, session::SubmitKind::prompt, std::nullopt, answer("go"));
  session::PromptVerdict taken;
  taken.context.push_back(note("context for go"));
  hooks.prompts[2].done(std::move(taken));
  h.scheduler.run_ready();
  CHECK(answers.back() == "go:ok");
  REQUIRE(h.session.messages().size() >= 2);
  CHECK(h.session.messages()[1].role == protocol::Role::custom);
  CHECK(h.session.prompt_id() == hooks.prompt_ids[2]);
}

TEST_CASE("SessionStart: the first request waits for the texts, which end the system prompt") {
  SessionHarness h(R"([{"text":"ok"}])");
  FakeHooks hooks;
  h.session.set_run_hooks(&hooks);
  h.session.start_session_hooks("startup");
  REQUIRE(hooks.starts.size() == 1);
  h.prompt("go");
  h.scheduler.run_ready();
  CHECK(h.requests.empty());  // held
  CHECK(h.session.is_streaming());
  hooks.starts[0].done({"first text", "second text"});
  h.scheduler.run_all();
  REQUIRE(h.requests.size() == 1);
  const std::string prompt = h.requests[0]["systemPrompt"];
  const std::string tail = "\n\nfirst text\n\nsecond text";
  REQUIRE(prompt.size() >= tail.size());
  CHECK(prompt.substr(prompt.size() - tail.size()) == tail);
  REQUIRE(hooks.stops.size() == 1);  // the fake's Stop holds the end: let it pass
  hooks.stops[0].done(session::StopVerdict());
  h.scheduler.run_all();
  CHECK(h.sink.of_type("agent_end").size() == 1);
}
