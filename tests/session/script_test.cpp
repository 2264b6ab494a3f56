#include "session/llm/script.h"

#include <doctest/doctest.h>

using namespace rebound::session::llm;
using rebound::protocol::Json;

TEST_CASE("a full step parses") {
  const auto r = parse_script(Json::parse(R"([{"text":"Hello there","chunks":3,"delayMs":5,
      "chunkDelayMs":2,"thinking":"hmm","toolCalls":[{"name":"bash","arguments":{"command":"ls"}}],
      "usage":{"input":10,"output":4},"error":"503 overloaded","stopReason":"length","hang":false}])"));
  REQUIRE(r.error.empty());
  REQUIRE(r.steps.size() == 1);
  const auto& s = r.steps[0];
  CHECK(s.text == "Hello there");
  CHECK(s.chunks == 3);
  CHECK(s.delay_ms == 5);
  CHECK(s.chunk_delay_ms == 2);
  CHECK(s.thinking == "hmm");
  REQUIRE(s.tool_calls.size() == 1);
  CHECK(s.tool_calls[0].arguments["command"] == "ls");
  CHECK(s.usage->total_tokens == 14);
  CHECK(s.error == "503 overloaded");
  CHECK(s.stop_reason == rebound::protocol::StopReason::length);
}

TEST_CASE("unusable scripts are refused with a reason") {
  CHECK(parse_script(Json::parse("[]")).error == "the script has no steps");
  CHECK(parse_script(Json::parse("{}")).error == "the script must be a JSON array of steps");
  CHECK(parse_script(Json::parse("[1]")).error == "step 0: a step must be an object");
  CHECK(parse_script(Json::parse(R"([{},{"chunks":0}])")).error ==
        "step 1: 'chunks' must be at least 1");
  CHECK(parse_script(Json::parse(R"([{"textt":"typo"}])")).error ==
        "step 0: unknown field 'textt'");
  CHECK(parse_script(Json::parse(R"([{"delayMs":-1}])")).error.find("delayMs") !=
        std::string::npos);
  CHECK(parse_script(Json::parse(R"([{"stopReason":"done"}])")).error.find("stopReason") !=
        std::string::npos);
  CHECK(parse_script(Json::parse(R"([{"toolCalls":[{"arguments":{}}]}])")).error.find("name") !=
        std::string::npos);
}

TEST_CASE("text is split into equal pieces by characters, never inside a UTF-8 sequence") {
  CHECK(split_into_chunks("hello world", 2) == std::vector<std::string>{"hello ", "world"});
  CHECK(split_into_chunks("abcdef", 3) == std::vector<std::string>{"ab", "cd", "ef"});
  CHECK(split_into_chunks("ab", 5) == std::vector<std::string>{"a", "b"});
  CHECK(split_into_chunks("", 3).empty());
  CHECK(split_into_chunks("\xC3\xA9\xE2\x82\xAC", 2) ==
        std::vector<std::string>{"\xC3\xA9", "\xE2\x82\xAC"});
}

TEST_CASE("echo text is split into words with their spaces") {
  CHECK(split_words("echo: hello  world") ==
        std::vector<std::string>{"echo: ", "hello  ", "world"});
  CHECK(split_words("one") == std::vector<std::string>{"one"});
}
