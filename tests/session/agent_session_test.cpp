#include "session/agent_session.h"

#include <doctest/doctest.h>

#include "tests/support/memory_settings_store.h"

using namespace rebound;
using protocol::Json;
using protocol::ThinkingLevel;

namespace {

session::AgentSession make_session(testing::MemorySettingsStore& store,
                                   protocol::Model model = session::scripted_model("echo")) {
  return session::AgentSession({std::move(model), "sid-1"}, session::ModelRegistry::with_builtins(),
                               store);
}

protocol::Model reasoning_model() {
  protocol::Model m = session::scripted_model("script");
  m.reasoning = true;
  return m;
}

}  // namespace

TEST_CASE("state reflects the settings the session started with") {
  testing::MemorySettingsStore store(Json::parse(
      R"({"steeringMode":"all","interruptMode":"wait","compaction":{"enabled":false}})"));
  auto s = make_session(store);
  const auto st = s.state();
  CHECK(st.session_id == "sid-1");
  CHECK(st.model->id == "echo");
  CHECK(st.steering_mode == protocol::QueueMode::all);
  CHECK(st.follow_up_mode == protocol::QueueMode::one_at_a_time);
  CHECK(st.interrupt_mode == protocol::InterruptMode::wait);
  CHECK_FALSE(st.auto_compaction_enabled);
  CHECK_FALSE(st.is_streaming);
  CHECK(st.message_count == 0);
}

TEST_CASE("set_auto_retry changes the session and persists retry.enabled") {
  testing::MemorySettingsStore store(Json::parse(R"({"retry":{"maxRetries":7}})"));
  auto s = make_session(store);
  CHECK(s.auto_retry_enabled());
  s.set_auto_retry(false);
  CHECK_FALSE(s.auto_retry_enabled());
  CHECK(store.data() == Json::parse(R"({"retry":{"maxRetries":7,"enabled":false}})"));
  s.set_auto_retry(true);
  CHECK(s.auto_retry_enabled());
  CHECK(store.patches.size() == 2);
}

TEST_CASE("set_auto_compaction shows in the state and persists compaction.enabled") {
  testing::MemorySettingsStore store;
  auto s = make_session(store);
  s.set_auto_compaction(false);
  CHECK_FALSE(s.state().auto_compaction_enabled);
  CHECK(store.data() == Json::parse(R"({"compaction":{"enabled":false}})"));
}

TEST_CASE("queue and interrupt modes are per session and not persisted") {
  testing::MemorySettingsStore store;
  auto s = make_session(store);
  s.set_steering_mode(protocol::QueueMode::all);
  s.set_follow_up_mode(protocol::QueueMode::all);
  s.set_interrupt_mode(protocol::InterruptMode::wait);
  const auto st = s.state();
  CHECK(st.steering_mode == protocol::QueueMode::all);
  CHECK(st.follow_up_mode == protocol::QueueMode::all);
  CHECK(st.interrupt_mode == protocol::InterruptMode::wait);
  CHECK(store.patches.empty());
}

TEST_CASE("thinking level is clamped to off for a model without reasoning") {
  testing::MemorySettingsStore store;
  auto s = make_session(store);
  s.set_thinking_level(ThinkingLevel::high);
  CHECK(s.state().thinking_level == ThinkingLevel::off);
  CHECK(store.patches.empty());
}

TEST_CASE("thinking level on a reasoning model is set and persisted when it changes") {
  testing::MemorySettingsStore store;
  auto s = make_session(store, reasoning_model());
  s.set_thinking_level(ThinkingLevel::medium);
  CHECK(s.state().thinking_level == ThinkingLevel::medium);
  CHECK(store.data() == Json::parse(R"({"defaultThinkingLevel":"medium"})"));
  s.set_thinking_level(ThinkingLevel::medium);
  CHECK(store.patches.size() == 1);
}

TEST_CASE("the default thinking level from settings applies when the model can reason") {
  testing::MemorySettingsStore store(Json::parse(R"({"defaultThinkingLevel":"low"})"));
  CHECK(make_session(store, reasoning_model()).state().thinking_level == ThinkingLevel::low);
  CHECK(make_session(store).state().thinking_level == ThinkingLevel::off);
}
