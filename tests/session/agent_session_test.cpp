// AgentSession state and controls (protocol.md sections 2 and 6).

#include "session/agent_session.h"

#include <doctest/doctest.h>

#include "tests/support/session_harness.h"

using namespace rebound;
using protocol::Json;
using protocol::ThinkingLevel;
using testing::SessionHarness;

namespace {

protocol::Model reasoning_model() {
  protocol::Model m = session::scripted_model("script");
  m.reasoning = true;
  return m;
}

}  // namespace

TEST_CASE("state reflects the settings the session started with") {
  SessionHarness h(std::nullopt, Json::parse(R"({"steeringMode":"all","interruptMode":"wait",
                                                  "compaction":{"enabled":false}})"),
                   session::scripted_model("echo"));
  const auto st = h.session.state();
  CHECK(st.session_id == "sid-test");
  CHECK(st.model->id == "echo");
  CHECK(st.steering_mode == protocol::QueueMode::all);
  CHECK(st.follow_up_mode == protocol::QueueMode::one_at_a_time);
  CHECK(st.interrupt_mode == protocol::InterruptMode::wait);
  CHECK_FALSE(st.auto_compaction_enabled);
  CHECK_FALSE(st.is_streaming);
  CHECK(st.message_count == 0);
}

TEST_CASE("set_auto_retry changes the session and persists retry.enabled") {
  SessionHarness h(std::nullopt, Json::parse(R"({"retry":{"maxRetries":7}})"));
  CHECK(h.session.auto_retry_enabled());
  h.session.set_auto_retry(false);
  CHECK_FALSE(h.session.auto_retry_enabled());
  CHECK(h.store.data() == Json::parse(R"({"retry":{"maxRetries":7,"enabled":false}})"));
  h.session.set_auto_retry(true);
  CHECK(h.session.auto_retry_enabled());
  CHECK(h.store.patches.size() == 2);
}

TEST_CASE("set_auto_compaction shows in the state and persists compaction.enabled") {
  SessionHarness h;
  h.session.set_auto_compaction(false);
  CHECK_FALSE(h.session.state().auto_compaction_enabled);
  CHECK(h.store.data() == Json::parse(R"({"compaction":{"enabled":false}})"));
}

TEST_CASE("queue and interrupt modes are per session and not persisted") {
  SessionHarness h;
  h.session.set_steering_mode(protocol::QueueMode::all);
  h.session.set_follow_up_mode(protocol::QueueMode::all);
  h.session.set_interrupt_mode(protocol::InterruptMode::wait);
  const auto st = h.session.state();
  CHECK(st.steering_mode == protocol::QueueMode::all);
  CHECK(st.follow_up_mode == protocol::QueueMode::all);
  CHECK(st.interrupt_mode == protocol::InterruptMode::wait);
  CHECK(h.store.patches.empty());
}

TEST_CASE("thinking level is clamped to off for a model without reasoning") {
  SessionHarness h;
  h.session.set_thinking_level(ThinkingLevel::high);
  CHECK(h.session.state().thinking_level == ThinkingLevel::off);
  // The chosen level is kept (amendments A23): a model that reasons gets it.
  CHECK(h.store.data() == Json::parse(R"({"defaultThinkingLevel":"high"})"));
}

TEST_CASE("thinking level on a reasoning model is set and persisted when it changes") {
  SessionHarness h(std::nullopt, Json::object(), reasoning_model());
  h.session.set_thinking_level(ThinkingLevel::medium);
  CHECK(h.session.state().thinking_level == ThinkingLevel::medium);
  CHECK(h.store.data() == Json::parse(R"({"defaultThinkingLevel":"medium"})"));
  h.session.set_thinking_level(ThinkingLevel::medium);
  CHECK(h.store.patches.size() == 1);
}

TEST_CASE("the default thinking level from settings applies when the model can reason") {
  const Json settings = Json::parse(R"({"defaultThinkingLevel":"low"})");
  CHECK(SessionHarness(std::nullopt, settings, reasoning_model()).session.state().thinking_level ==
        ThinkingLevel::low);
  CHECK(SessionHarness(std::nullopt, settings).session.state().thinking_level ==
        ThinkingLevel::off);
}

namespace {

// A provider that streams one answer whose blocks carry signatures (as the Responses and
// Gemini decoders give them at each block's end).
class SigningProvider : public session::llm::Provider {
 public:
  explicit SigningProvider(session::Scheduler& scheduler) : scheduler_(scheduler) {}
  std::unique_ptr<session::llm::StreamHandle> stream(const session::llm::LlmRequest&,
                                                     session::llm::StreamHandler handler) override {
    scheduler_.post([handler = std::move(handler)] { answer(handler); });
    return nullptr;
  }

 private:
  static void answer(const session::llm::StreamHandler& handler) {
    using Kind = session::llm::StreamEvent::Kind;
    auto event = [](Kind kind, std::string text = {}, std::string signature = {}) {
      session::llm::StreamEvent e{};
      e.kind = kind;
      e.text = std::move(text);
      e.signature = std::move(signature);
      return e;
    };
    handler(event(Kind::thinking_start));
    handler(event(Kind::thinking_delta, "plan"));
    handler(event(Kind::thinking_end, {}, R"({"id":"rs_1","type":"reasoning"})"));
    handler(event(Kind::text_start));
    handler(event(Kind::text_delta, "hello"));
    handler(event(Kind::text_end, {}, R"({"v":1,"id":"msg_1"})"));
    handler(event(Kind::text_start));
    handler(event(Kind::text_delta, "plain"));
    handler(event(Kind::text_end));
    handler(event(Kind::done));
  }
  session::Scheduler& scheduler_;
};

}  // namespace

TEST_CASE("a block's signature from the stream reaches its text_end, message_end and the file") {
  SessionHarness h;
  SigningProvider signing(h.scheduler);
  testing::CapturingSink sink;
  session::SessionDeps deps{h.scheduler, sink,    signing, h.credentials,
                            h.store,     h.files, h.shell, h.tools};
  session::AgentSession s(
      {session::scripted_model("script"), "sid-sign", [](const std::string&) { return true; }},
      session::ModelRegistry::with_builtins(), deps);
  REQUIRE(s.prompt({"hi", {}}, std::nullopt, [] {}, {}));
  h.scheduler.run_all();
  const auto ends = sink.of_type("message_end");
  REQUIRE(ends.size() == 2);
  const Json& content = ends[1]["message"]["content"];
  CHECK(content[0]["thinkingSignature"] == R"({"id":"rs_1","type":"reasoning"})");
  CHECK(content[1]["textSignature"] == R"({"v":1,"id":"msg_1"})");
  CHECK_FALSE(content[2].contains("textSignature"));
  // The text_end update of the signed block already holds it.
  bool seen = false;
  for (const auto& u : sink.of_type("message_update"))
    if (u["assistantMessageEvent"]["type"] == "text_end" &&
        u["assistantMessageEvent"]["contentIndex"] == 1)
      seen = u["message"]["content"][1].value("textSignature", "") == R"({"v":1,"id":"msg_1"})";
  CHECK(seen);
  // Kept in the context the next request is built from.
  CHECK(s.messages().back().content[1].signature == R"({"v":1,"id":"msg_1"})");
}

TEST_CASE("the highest <name>_<n> call id counts, so a resumed Gemini session numbers on") {
  using session::call_number;
  CHECK(call_number("read_7") == 7);
  CHECK(call_number("my_tool_12") == 12);
  CHECK(call_number("read_1796111669643_1") == 1);
  CHECK(call_number("call_abc") == 0);
  CHECK(call_number("toolu_01AbC") == 0);
  CHECK(call_number("read_") == 0);
  CHECK(call_number("_5") == 0);
  CHECK(call_number("x_1234567890123456") == 0);  // past 15 digits: not a session count
  session::MessageStats stats;
  protocol::AgentMessage m;
  m.role = protocol::Role::assistant;
  m.content = {protocol::ContentBlock::make_tool_call("read_7", "read", Json::object()),
               protocol::ContentBlock::make_tool_call("call_xyz|fc_1", "bash", Json::object())};
  stats.add(m);
  CHECK(stats.tool_calls == 2);
  CHECK(stats.highest_call_number == 7);
  stats.subtract(stats);
  CHECK(stats.highest_call_number == 7);  // never goes down
}
