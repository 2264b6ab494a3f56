#include "session/settings.h"

#include <doctest/doctest.h>

using namespace rebound::session;
using rebound::protocol::Json;

TEST_CASE("defaults when nothing is set") {
  std::vector<std::string> warnings;
  const Settings s = settings_from_json(Json::object(), warnings);
  CHECK(warnings.empty());
  CHECK(s.retry.enabled);
  CHECK(s.retry.max_retries == 3);
  CHECK(s.retry.base_delay_ms == 2000);
  CHECK(s.compaction.enabled);
  CHECK(s.compaction.reserve_tokens == 16384);
  CHECK(s.compaction.keep_recent_tokens == 20000);
  CHECK_FALSE(s.default_provider);
}

TEST_CASE("values are read from the pi-shaped file") {
  std::vector<std::string> warnings;
  const Settings s =
      settings_from_json(Json::parse(R"({"defaultProvider":"openai","defaultModel":"gpt-4o-mini",
        "defaultThinkingLevel":"high","steeringMode":"all","followUpMode":"all",
        "interruptMode":"wait","retry":{"enabled":false,"maxRetries":5,"baseDelayMs":100},
        "compaction":{"enabled":false,"reserveTokens":1,"keepRecentTokens":2}})"),
                         warnings);
  CHECK(warnings.empty());
  CHECK(s.default_provider == "openai");
  CHECK(s.default_model == "gpt-4o-mini");
  CHECK(s.default_thinking_level == rebound::protocol::ThinkingLevel::high);
  CHECK(s.steering_mode == rebound::protocol::QueueMode::all);
  CHECK(s.interrupt_mode == rebound::protocol::InterruptMode::wait);
  CHECK_FALSE(s.retry.enabled);
  CHECK(s.retry.max_retries == 5);
  CHECK(s.retry.base_delay_ms == 100);
  CHECK_FALSE(s.compaction.enabled);
  CHECK(s.compaction.keep_recent_tokens == 2);
}

TEST_CASE("a wrong type, a negative or a fractional value is reported and the default used") {
  std::vector<std::string> warnings;
  const Settings s = settings_from_json(
      Json::parse(R"({"retry":{"enabled":"yes","maxRetries":-1,"baseDelayMs":1.5},
                      "steeringMode":"sometimes"})"),
      warnings);
  CHECK(s.retry.enabled);
  CHECK(s.retry.max_retries == 3);
  CHECK(s.retry.base_delay_ms == 2000);
  CHECK(s.steering_mode == rebound::protocol::QueueMode::one_at_a_time);
  REQUIRE(warnings.size() == 4);
  CHECK(warnings[0].find("'steeringMode'") != std::string::npos);
  CHECK(warnings[1].find("'retry.enabled'") != std::string::npos);
  CHECK(warnings[2].find("'retry.maxRetries'") != std::string::npos);
  CHECK(warnings[3].find("'retry.baseDelayMs'") != std::string::npos);
}

TEST_CASE("deep_merge merges objects key by key and replaces everything else") {
  const Json merged = deep_merge(Json::parse(R"({"a":1,"retry":{"enabled":true,"maxRetries":3}})"),
                                 Json::parse(R"({"b":2,"retry":{"enabled":false},"a":[1]})"));
  CHECK(merged == Json::parse(R"({"a":[1],"retry":{"enabled":false,"maxRetries":3},"b":2})"));
}
