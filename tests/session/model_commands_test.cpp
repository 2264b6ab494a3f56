// get_available_models, set_model, cycle_model, cycle_thinking_level (protocol.md section 2).

#include <doctest/doctest.h>

#include "tests/support/session_harness.h"

using namespace rebound;
using protocol::Json;
using protocol::ThinkingLevel;
using testing::SessionHarness;

namespace {
std::vector<std::string> ids(const std::vector<protocol::Model>& models) {
  std::vector<std::string> out;
  for (const auto& m : models)
    out.push_back(m.provider + "/" + m.id);
  return out;
}
}  // namespace

TEST_CASE("available models are those whose provider has a key or needs none") {
  SessionHarness h;
  CHECK(ids(h.session.available_models()) ==
        std::vector<std::string>{"scripted/echo", "scripted/script"});
  h.unavailable.erase("anthropic");
  CHECK(ids(h.session.available_models()) ==
        std::vector<std::string>{"scripted/echo", "scripted/script", "anthropic/claude-sonnet-4-5",
                                 "anthropic/claude-haiku-4-5"});
}

TEST_CASE("set_model switches, persists and reports unknown or keyless models") {
  SessionHarness h;
  const auto ok = h.session.set_model("scripted", "echo");
  REQUIRE((ok));
  CHECK(h.session.state().model->id == "echo");
  CHECK(h.store.data() == Json::parse(R"({"defaultProvider":"scripted","defaultModel":"echo"})"));
  CHECK(testing::error_of(h.session.set_model("x", "y")) == "Model not found: x/y");
  CHECK(testing::error_of(h.session.set_model("openai", "gpt-4o")) ==
        "No API key for provider openai");
  CHECK(h.session.state().model->id == "echo");  // unchanged by the failures
}

TEST_CASE("the next request uses the new model") {
  SessionHarness h(R"([{"text":"a"},{"text":"b"}])");
  h.prompt("one");
  h.scheduler.run_all();
  REQUIRE((h.session.set_model("scripted", "echo")));
  h.prompt("two");
  h.scheduler.run_all();
  REQUIRE(h.requests.size() == 2);
  CHECK(h.requests[0]["model"] == "script");
  CHECK(h.requests[1]["model"] == "echo");
}

TEST_CASE("cycle_model wraps through the available models, one model gives nullopt") {
  SessionHarness h;  // starts on scripted/script
  auto next = h.session.cycle_model();
  REQUIRE(next);
  CHECK(next->model.id == "echo");
  h.unavailable.erase("anthropic");
  CHECK(h.session.cycle_model()->model.id == "script");
  CHECK(h.session.cycle_model()->model.id == "claude-sonnet-4-5");
  CHECK(h.session.cycle_model()->model.id == "claude-haiku-4-5");
  CHECK(h.session.cycle_model()->model.id == "echo");
  h.unavailable.insert("scripted");
  h.session.set_model("anthropic", "claude-haiku-4-5");
  h.unavailable.insert("anthropic");
  CHECK_FALSE(h.session.cycle_model());
}

TEST_CASE("cycle_thinking_level: nullopt without reasoning, wraps through levels with it") {
  SessionHarness h;
  CHECK_FALSE(h.session.cycle_thinking_level());
  h.unavailable.erase("anthropic");
  REQUIRE((h.session.set_model("anthropic", "claude-sonnet-4-5")));
  CHECK(h.session.cycle_thinking_level() == ThinkingLevel::minimal);
  CHECK(h.session.cycle_thinking_level() == ThinkingLevel::low);
  h.session.set_thinking_level(ThinkingLevel::xhigh);
  CHECK(h.session.cycle_thinking_level() == ThinkingLevel::off);
  CHECK(h.store.data()["defaultThinkingLevel"] == "off");
}

TEST_CASE("switching to a model without reasoning clamps the thinking level to off") {
  SessionHarness h;
  h.unavailable.erase("anthropic");
  h.session.set_model("anthropic", "claude-sonnet-4-5");
  h.session.set_thinking_level(ThinkingLevel::high);
  h.session.set_model("scripted", "echo");
  CHECK(h.session.state().thinking_level == ThinkingLevel::off);
}
