// The tool seam in the agent loop (tools.md sections 6 and 7): a batch's calls start in order,
// run concurrently and end in completion order; the toolResult messages follow in call order;
// progress becomes tool_execution_update; abort cancels running calls and is answered after the
// run's end; completions of a run that was left are dropped; the definitions go to the model.

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/support/event_summary.h"
#include "tests/support/fake_tool.h"
#include "tests/support/session_harness.h"

using namespace rebound;
using protocol::Json;
using testing::SessionHarness;
using testing::summarize;
using V = std::vector<std::string>;

namespace {

constexpr const char* kTwoCalls =
    R"([{"toolCalls":[{"name":"slow","arguments":{"n":1}},{"name":"slow","arguments":{"n":2}}]},
        {"text":"done"}])";

std::vector<std::string> tool_events(const testing::CapturingSink& sink) {
  std::vector<std::string> out;
  for (const auto& e : sink.events) {
    const std::string type = e["type"];
    if (type.rfind("tool_execution", 0) == 0)
      out.push_back(type + ":" + e["toolCallId"].get<std::string>());
    if ((type == "message_end") && e["message"]["role"] == "toolResult")
      out.push_back("result:" + e["message"]["toolCallId"].get<std::string>());
    if (type == "turn_end" || type == "agent_end") out.push_back(type);
  }
  return out;
}

// Registers the fake tool "slow" and sends a prompt that the script answers with tool calls.
std::shared_ptr<testing::FakeTool> start_with_tool(SessionHarness& h,
                                                   bool finish_on_cancel = true) {
  auto tool = std::make_shared<testing::FakeTool>("slow", h.scheduler);
  tool->finish_on_cancel = finish_on_cancel;
  h.tools.add(tool);
  h.prompt("go");
  h.scheduler.run_ready();
  return tool;
}

}  // namespace

TEST_CASE("calls run concurrently: ends in completion order, results in call order") {
  SessionHarness h(kTwoCalls);
  auto tool = start_with_tool(h);
  REQUIRE(tool->calls.size() == 2);  // both started before either ended
  CHECK(tool->calls[0]->args == Json{{"n", 1}});
  tool->calls[1]->progress([] {
    session::ToolResult partial;
    partial.content.push_back(protocol::ContentBlock::make_text("half"));
    partial.details = Json::object();
    return partial;
  }());
  tool->finish(1, "two");
  tool->finish(0, "one");
  h.scheduler.run_all();
  CHECK(tool_events(h.sink) == V{"tool_execution_start:call_1", "tool_execution_start:call_2",
                                 "tool_execution_update:call_2", "tool_execution_end:call_2",
                                 "tool_execution_end:call_1", "result:call_1", "result:call_2",
                                 "turn_end", "turn_end", "agent_end"});
  const auto update = h.sink.of_type("tool_execution_update")[0];
  CHECK(update["args"] == Json{{"n", 2}});
  CHECK(update["partialResult"] ==
        Json::parse(R"({"content":[{"type":"text","text":"half"}],"details":{}})"));
  const auto end = h.sink.of_type("tool_execution_end")[0];
  CHECK(end["result"] == Json::parse(R"({"content":[{"type":"text","text":"two"}]})"));
  CHECK(end["isError"] == false);
  // The follow-up request carries both results after the assistant message, in call order.
  REQUIRE(h.requests.size() == 2);
  const auto& sent = h.requests[1]["messages"];
  REQUIRE(sent.size() == 4);
  CHECK(sent[2]["toolCallId"] == "call_1");
  CHECK(sent[3]["toolCallId"] == "call_2");
  CHECK(sent[3]["content"][0]["text"] == "two");
  // A completion that comes again is ignored: exactly one end per call.
  tool->finish(0, "again");
  h.scheduler.run_all();
  CHECK(h.sink.of_type("tool_execution_end").size() == 2);
}

TEST_CASE("a call of an unknown tool ends at once, before the next call starts") {
  SessionHarness h(
      R"([{"toolCalls":[{"name":"nope","arguments":{}},{"name":"slow","arguments":{}}]},{"text":"ok"}])");
  auto tool = start_with_tool(h);
  CHECK(tool_events(h.sink) == V{"tool_execution_start:call_1", "tool_execution_end:call_1",
                                 "tool_execution_start:call_2"});
  CHECK(h.sink.of_type("tool_execution_end")[0]["result"]["content"][0]["text"] ==
        "Tool nope not found");
  tool->finish(0, "fine");
  h.scheduler.run_all();
  CHECK(h.sink.of_type("agent_end").size() == 1);
}

TEST_CASE("abort during a batch: calls cancelled, the aborted turn, then the abort answer") {
  SessionHarness h(kTwoCalls);
  auto tool = start_with_tool(h);
  tool->finish(0, "one");  // the first is over before the abort
  h.scheduler.run_ready();
  h.sink.clear();
  bool answered = false;
  h.session.abort([&] { answered = true; });
  CHECK_FALSE(tool->calls[0]->cancelled);
  CHECK(tool->calls[1]->cancelled);
  CHECK_FALSE(answered);  // the running call has not ended yet
  h.scheduler.run_all();
  CHECK(answered);
  CHECK(summarize(h.sink.events) ==
        V{"tool_execution_end", "message_start:toolResult", "message_end:toolResult",
          "message_start:toolResult", "message_end:toolResult", "turn_end:assistant:toolUse",
          "turn_start", "message_start:assistant:aborted", "message_end:assistant:aborted",
          "turn_end:assistant:aborted", "agent_end:willRetry=false"});
  const auto aborted = h.sink.of_type("message_end").back()["message"];
  CHECK(aborted["content"] == Json::array());
  CHECK(aborted["errorMessage"] == "Request was aborted");
  CHECK(h.sink.of_type("tool_execution_end")[0]["result"]["content"][0]["text"] ==
        "Operation aborted");
  CHECK(h.requests.size() == 1);  // the aborted turn sent no request
  CHECK(h.session.is_idle());
}

TEST_CASE("new_session during a batch ends it at once, the old calls' completions are dropped") {
  SessionHarness h(kTwoCalls);
  auto tool = start_with_tool(h, false);
  h.session.new_session(std::nullopt);
  CHECK(tool->calls[0]->destroyed);  // stopped without a completion
  CHECK(h.sink.of_type("agent_end").size() == 1);
  CHECK(h.sink.of_type("tool_execution_end").size() == 2);
  const std::size_t before = h.sink.events.size();
  tool->finish(0, "late");  // a completion from the run that was left
  h.scheduler.run_all();
  CHECK(h.sink.events.size() == before);
  CHECK(h.session.messages().empty());
}

TEST_CASE("events carry the session's slot") {
  SessionHarness h(R"([{"text":"hi"}])");
  h.prompt("x");
  h.scheduler.run_all();
  REQUIRE_FALSE(h.sink.slots.empty());
  for (auto slot : h.sink.slots)
    CHECK(slot == 0);  // a session outside any host
}

namespace {

// Tools that come and go (MCP servers): unsettled until the test says so.
class FakeDynamicTools : public session::DynamicTools {
 public:
  struct Wait : session::Waiting {
    explicit Wait(FakeDynamicTools& owner) : owner_(owner) {}
    ~Wait() override { owner_.waiter = nullptr; }
    FakeDynamicTools& owner_;
  };
  std::unique_ptr<session::Waiting> when_settled(std::function<void()> settled_fn) override {
    if (settled) return nullptr;
    on_settled = std::move(settled_fn);
    auto w = std::make_unique<Wait>(*this);
    waiter = w.get();
    return w;
  }
  std::vector<std::shared_ptr<session::Tool>> offered(std::size_t room) override {
    rooms.push_back(room);
    return tools;
  }
  void settle() {
    settled = true;
    if (waiter) on_settled();
  }
  bool settled = false;
  Wait* waiter = nullptr;
  std::function<void()> on_settled;
  std::vector<std::shared_ptr<session::Tool>> tools;
  std::vector<std::size_t> rooms;
};

struct DynamicHarness {
  explicit DynamicHarness(const char* script) : h(script) {
    tool = std::make_shared<testing::FakeTool>("mcp__srv__t", h.scheduler);
    h.tools.add(std::make_shared<testing::FakeTool>("read", h.scheduler));
    dynamic.tools.push_back(tool);
    auto deps = h.deps(sink);
    deps.dynamic_tools = &dynamic;
    session.emplace(session::SessionOptions{session::scripted_model("script"), "sid-dyn",
                                            [](const std::string&) { return true; }},
                    session::ModelRegistry::with_builtins(), deps);
  }
  SessionHarness h;
  testing::CapturingSink sink;
  FakeDynamicTools dynamic;
  std::shared_ptr<testing::FakeTool> tool;
  std::optional<session::AgentSession> session;
};

}  // namespace

TEST_CASE(
    "dynamic tools: the request waits until they settle, then offers them after the built-in "
    "ones") {
  DynamicHarness d(R"([{"toolCalls":[{"name":"mcp__srv__t","arguments":{"not":"in its schema"}}]},
                       {"text":"done"}])");
  REQUIRE(d.session->prompt({"go", {}}, std::nullopt, [] {}, {}));
  d.h.scheduler.run_ready();
  CHECK(d.h.requests.empty());  // waiting for the servers
  CHECK(d.session->state().is_streaming);
  REQUIRE(d.dynamic.waiter != nullptr);
  d.dynamic.settle();
  d.h.scheduler.run_ready();
  REQUIRE(d.h.requests.size() == 1);
  CHECK(d.h.requests[0]["tools"] == Json::parse(R"(["read","mcp__srv__t"])"));
  CHECK(d.dynamic.rooms.front() == session::kMaxOfferedTools - 1);
  // External tools get their arguments unchecked (their server validates them).
  REQUIRE(d.tool->calls.size() == 1);
  CHECK(d.tool->calls[0]->args == Json::parse(R"({"not":"in its schema"})"));
  d.tool->finish(0, "ok");
  d.h.scheduler.run_ready();
  CHECK(d.h.requests.size() == 2);
  // get_tools shows the same set, at this moment.
  const auto defs = d.session->tool_definitions();
  REQUIRE(defs.size() == 2);
  CHECK(defs[1].name == "mcp__srv__t");
}

TEST_CASE(
    "dynamic tools: abort while waiting ends the request like an abort before its first event") {
  DynamicHarness d(R"([{"text":"never"}])");
  REQUIRE(d.session->prompt({"go", {}}, std::nullopt, [] {}, {}));
  d.h.scheduler.run_ready();
  REQUIRE(d.dynamic.waiter != nullptr);
  bool answered = false;
  d.session->abort([&] { answered = true; });
  d.h.scheduler.run_ready();
  CHECK(answered);
  CHECK(d.dynamic.waiter == nullptr);  // the wait was dropped
  CHECK(d.h.requests.empty());
  CHECK_FALSE(d.session->state().is_streaming);
  const auto& end = d.sink.events.back();
  CHECK(end["type"] == "agent_end");
  CHECK(end["messages"].back()["stopReason"] == "aborted");
  CHECK(end["messages"].back()["errorMessage"] == "Request was aborted");
}

TEST_CASE("dynamic tools: a name already offered is offered once, the first holding it") {
  // Issue 50: every API refuses two tools of one name (an extension's tool named like the
  // one-shot structured_output tool, or like a built-in one).
  DynamicHarness d(R"([{"toolCalls":[{"name":"read","arguments":{}}]},{"text":"done"}])");
  auto again = std::make_shared<testing::FakeTool>("read", d.h.scheduler);
  auto twice = std::make_shared<testing::FakeTool>("mcp__srv__t", d.h.scheduler);
  d.dynamic.tools.push_back(again);
  d.dynamic.tools.push_back(twice);
  d.dynamic.settle();
  REQUIRE(d.session->prompt({"go", {}}, std::nullopt, [] {}, {}));
  d.h.scheduler.run_ready();
  REQUIRE(d.h.requests.size() == 1);
  CHECK(d.h.requests[0]["tools"] == Json::parse(R"(["read","mcp__srv__t"])"));
  CHECK(d.session->tool_definitions().size() == 2);
  // The call goes to the tool that holds the name: the built-in one.
  CHECK(again->calls.empty());
}
