#include "protocol/responses.h"

#include <doctest/doctest.h>

#include "protocol/json_line.h"
#include "protocol/wire_types.h"

using namespace rebound::protocol;

TEST_CASE("responses keep the spec's key order") {
  CHECK(to_line(success_response(Json("req_2"), "abort_retry")) ==
        "{\"id\":\"req_2\",\"type\":\"response\",\"command\":\"abort_retry\",\"success\":true}\n");
  CHECK(to_line(success_response(std::nullopt, "cycle_model", Json(nullptr))) ==
        "{\"type\":\"response\",\"command\":\"cycle_model\",\"success\":true,\"data\":null}\n");
  CHECK(to_line(error_response(Json(1), "set_model", "Model not found: x/y")) ==
        "{\"id\":1,\"type\":\"response\",\"command\":\"set_model\",\"success\":false,"
        "\"error\":\"Model not found: x/y\"}\n");
  CHECK(to_line(success_response(Json(nullptr), "get_state")) ==
        "{\"id\":null,\"type\":\"response\",\"command\":\"get_state\",\"success\":true}\n");
}

TEST_CASE("RpcSessionState serializes in order, omitting absent model and sessionFile") {
  RpcSessionState s;
  s.session_id = "abc";
  CHECK(to_line(to_json(s)) ==
        "{\"thinkingLevel\":\"off\",\"isStreaming\":false,\"isCompacting\":false,"
        "\"steeringMode\":\"one-at-a-time\",\"followUpMode\":\"one-at-a-time\","
        "\"interruptMode\":\"immediate\",\"sessionId\":\"abc\",\"autoCompactionEnabled\":true,"
        "\"messageCount\":0,\"queuedMessageCount\":0}\n");
  s.session_file = "/tmp/s.jsonl";
  s.model = Model{"m",
                  "M",
                  "openai-completions",
                  "openai",
                  "https://x",
                  true,
                  {"text", "image"},
                  ModelCost{0.15, 0.6, 0.075, 0},
                  128000,
                  16384,
                  {},
                  false};
  const Json j = to_json(s);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it)
    keys.push_back(it.key());
  CHECK(keys == std::vector<std::string>{"model", "thinkingLevel", "isStreaming", "isCompacting",
                                         "steeringMode", "followUpMode", "interruptMode",
                                         "sessionFile", "sessionId", "autoCompactionEnabled",
                                         "messageCount", "queuedMessageCount"});
  CHECK(to_line(j["model"]) ==
        "{\"id\":\"m\",\"name\":\"M\",\"api\":\"openai-completions\",\"provider\":\"openai\","
        "\"baseUrl\":\"https://x\",\"reasoning\":true,\"input\":[\"text\",\"image\"],"
        "\"cost\":{\"input\":0.15,\"output\":0.6,\"cacheRead\":0.075,\"cacheWrite\":0},"
        "\"contextWindow\":128000,\"maxTokens\":16384}\n");
}

TEST_CASE("enum spellings round-trip") {
  for (auto level : all_thinking_levels()) {
    CHECK(thinking_level_from_string(to_string(level)) == level);
  }
  CHECK(queue_mode_from_string("one-at-a-time") == QueueMode::one_at_a_time);
  CHECK_FALSE(queue_mode_from_string("one_at_a_time"));
  CHECK(interrupt_mode_from_string("wait") == InterruptMode::wait);
}
