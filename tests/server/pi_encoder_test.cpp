// PiEventEncoder: the incremental message_update lines equal the slow path (the event as JSON,
// serialised) byte for byte over real session streams (text, thinking, tool calls, usage
// between deltas, several messages), and other events are the pi dialect's objects.

#include "server/events/pi_encoder.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "protocol/json_line.h"
#include "tests/support/session_harness.h"

using namespace rebound;

namespace {

// Encodes each event twice: incrementally, and through the slow path.
class ComparingSink : public session::EventSink {
 public:
  void on_event(const session::Event& event) override {
    const std::string fast = encoder.line(event);
    const std::string slow = protocol::to_line(server::pi_event_json(event));
    if (fast != slow) ++mismatches;
    if (std::holds_alternative<session::ev::MessageUpdate>(event.body)) ++updates;
    ++lines;
  }
  server::PiEventEncoder encoder;
  int lines = 0, updates = 0, mismatches = 0;
};

}  // namespace

TEST_CASE("incremental lines equal the slow path over whole runs") {
  testing::SessionHarness h(
      R"([{"thinking":"let me \"think\" é","text":"héllo\nworld 🙂","chunks":5,"usage":{"input":3,"output":2},
           "toolCalls":[{"name":"x","arguments":{"a":"b"}}]},
          {"text":"second answer","chunks":4}])");
  ComparingSink sink;
  session::AgentSession s({session::scripted_model("script"), "sid", nullptr},
                          session::ModelRegistry::with_builtins(), h.deps(sink));
  REQUIRE(s.prompt({"go", {}}, std::nullopt, [] {}));
  h.scheduler.run_all();
  CHECK(sink.updates > 10);
  CHECK(sink.mismatches == 0);
}

TEST_CASE("tool and retry events in the pi dialect") {
  const std::string id = "call_1", name = "bash";
  const protocol::Json args = {{"command", "ls"}};
  const auto result = session::ToolResult::error("Tool bash not found");
  const auto end = server::pi_event_json({3, session::ev::ToolExecutionEnd{id, name, result}});
  CHECK(
      protocol::to_line(end) ==
      R"({"type":"tool_execution_end","toolCallId":"call_1","toolName":"bash","result":{"content":[{"type":"text","text":"Tool bash not found"}],"details":{}},"isError":true})"
      "\n");
  const std::string error = "503 overloaded";
  CHECK(
      protocol::to_line(
          server::pi_event_json({1, session::ev::AutoRetryStart{1, 3, 2000, error}})) ==
      R"({"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"503 overloaded"})"
      "\n");
  CHECK(protocol::to_line(server::pi_event_json(
            {1, session::ev::AutoRetryEnd{false, 2, std::string_view("Retry cancelled")}})) ==
        R"({"type":"auto_retry_end","success":false,"attempt":2,"finalError":"Retry cancelled"})"
        "\n");
}

TEST_CASE("usage reported between deltas, as Gemini does in every event, re-serialises nothing") {
  // The session bumps usage_version (not partial_version) for a usage change: the encoder
  // replaces only the keys after the content and its lines still equal the slow path.
  ComparingSink sink;
  protocol::AgentMessage m;
  m.role = protocol::Role::assistant;
  m.api = "google-generative-ai";
  m.provider = "google";
  m.model = "gemini-2.5-flash";
  m.timestamp = 1796605794331;
  using K = session::AssistantUpdateKind;
  std::uint64_t version = 1, usage_version = 0;
  const auto send = [&](K kind, std::string_view delta) {
    sink.on_event({1, session::ev::MessageUpdate{m, kind, m.content.size() - 1, delta, version,
                                                 usage_version}});
  };
  m.content.push_back(protocol::ContentBlock::make_text(""));
  send(K::text_start, "");
  for (int i = 0; i < 50; ++i) {
    const std::string d = i % 7 == 0 ? "é\"" : "ab";
    m.content.back().text += d;
    send(K::text_delta, d);
    m.usage.input = 12;
    m.usage.output = i + 1;
    m.usage.cost_total = 0.001 * i;
    ++usage_version;
  }
  // A tool call last (nothing to append to), then usage again.
  m.content.push_back(
      protocol::ContentBlock::make_tool_call("f_1", "read", protocol::Json::object()));
  ++version;
  send(K::toolcall_start, "");
  m.usage.output = 99;
  ++usage_version;
  send(K::toolcall_delta, "{}");
  CHECK(sink.updates == 53);
  CHECK(sink.mismatches == 0);
}
