// Google's Gemini API end to end (providers.md section 3): one-shot runs against a fake server
// on 127.0.0.1 that streams GenerateContentResponse events: the request's shape and key header,
// text, thoughts and their signatures carried into the next request, a tool call round trip
// with session-numbered ids, usage, the finish reasons, and every failure of sections 3.3 and 4.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/support/provider_run.h"
#include "tests/support/provider_streams.h"

using namespace rebound;
using namespace rebound::testing;
using namespace std::chrono_literals;
using protocol::Json;

namespace {

const std::vector<ProviderScenario> kScenarios = gemini_scenarios();

FakeResponse scenario(const std::string& name) {
  return provider_scenario(kScenarios, name).response;
}

FakeResponse text_answer(const std::string& a, const std::string& b) {
  return gemini_text(a, b);
}

ProviderRunOptions gemini(bool reasoning = false, const std::string& thinking = "off") {
  ProviderRunOptions o;
  o.api = "google-generative-ai";
  o.base_path = "/v1beta";
  o.reasoning = reasoning;
  o.thinking = thinking;
  return o;
}

}  // namespace

TEST_CASE("gemini: the request's shape and key header, a text answer, usage and cost") {
  FakeLlmServer fake({text_answer("Hel", "lo")});
  ProviderRun run(fake, gemini());
  const auto events = run.events();
  CHECK(events.back()["subtype"] == "success");
  CHECK(events.back()["result"] == "Hello");
  const Json message = last_assistant(events);
  CHECK(message["api"] == "google-generative-ai");
  CHECK(message["stopReason"] == "stop");
  CHECK(message["content"] == Json::parse(R"([{"type":"text","text":"Hello"}])"));
  CHECK(message["usage"]["input"] == 6);
  CHECK(message["usage"]["cacheRead"] == 4);
  CHECK(message["usage"]["output"] == 3);
  CHECK(message["usage"]["totalTokens"] == 13);
  // $1 per million uncached input, $0.5 cached, $2 output.
  CHECK(message["usage"]["cost"]["total"].get<double>() ==
        doctest::Approx((6 * 1 + 4 * 0.5 + 3 * 2) / 1e6));
  const auto requests = fake.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].target == "/v1beta/models/m1:streamGenerateContent?alt=sse");
  CHECK(requests[0].headers.at("x-goog-api-key") == kCanaryKey);
  CHECK_FALSE(requests[0].headers.count("authorization"));
  const Json body = Json::parse(requests[0].body);
  CHECK(keys_of(body) ==
        std::vector<std::string>{"contents", "systemInstruction", "tools", "generationConfig"});
  CHECK(body["contents"] == Json::parse(R"([{"role":"user","parts":[{"text":"go"}]}])"));
  CHECK(body["systemInstruction"]["parts"][0]["text"].get<std::string>().size() > 0);
  CHECK(body["tools"].size() == 1);
  CHECK(body["tools"][0]["functionDeclarations"][0].contains("parametersJsonSchema"));
  CHECK(body["generationConfig"] == Json::parse(R"({"maxOutputTokens":4096})"));
  run.check_no_key(events);
}

TEST_CASE("gemini: thoughts and a signed call, sent back to the same model, ids by session") {
  const FakeResponse first = scenario("thoughts_signed_call");
  FakeResponse second;
  second.chunks = {gemini_event(
      Json::array({Json{{"functionCall", {{"name", "bash"}, {"args", {{"command", "echo 2"}}}}}}}),
      "STOP")};
  FakeResponse third;
  third.chunks = {gemini_event(
      Json::array({Json{{"text", "done"}, {"thoughtSignature", "ZmFrZS1zaWctMQ=="}}}), "STOP")};
  FakeLlmServer fake({first, second, third});
  ProviderRun run(fake, gemini(true, "low"));
  const auto events = run.events();
  CHECK(events.back()["result"] == "done");
  std::vector<Json> answers;
  for (const auto& e : of_type(events, "message_end"))
    if (e["message"]["role"] == "assistant") answers.push_back(e["message"]);
  REQUIRE(answers.size() == 3);
  CHECK(answers[0]["stopReason"] == "toolUse");
  CHECK(answers[0]["content"] == Json::parse(R"([{"type":"thinking","thinking":"I will read it."},
          {"type":"text","text":"Let me read it."},
          {"type":"toolCall","id":"bash_1","name":"bash","arguments":{"command":"echo hi"},
           "thoughtSignature":"ZmFrZS1zaWctMA=="}])"));
  CHECK(answers[0]["usage"]["output"] == 6);          // candidates + thoughts
  CHECK(answers[1]["content"][0]["id"] == "bash_2");  // counted over the session
  CHECK(answers[2]["content"][0]["textSignature"] == "ZmFrZS1zaWctMQ==");
  const auto tool_ends = of_type(events, "tool_execution_end");
  REQUIRE(tool_ends.size() == 2);
  CHECK(tool_ends[0]["toolCallId"] == "bash_1");

  const auto requests = fake.requests();
  REQUIRE(requests.size() == 3);
  CHECK(Json::parse(requests[0].body)["generationConfig"]["thinkingConfig"] ==
        Json::parse(R"({"includeThoughts":true,"thinkingBudget":-1})"));
  const Json contents = Json::parse(requests[2].body)["contents"];
  REQUIRE(contents.size() == 5);
  CHECK(contents[1] == Json::parse(R"({"role":"model","parts":[
          {"text":"I will read it.","thought":true},{"text":"Let me read it."},
          {"functionCall":{"name":"bash","args":{"command":"echo hi"}},"thoughtSignature":"ZmFrZS1zaWctMA=="}]})"));
  CHECK(contents[2] == Json::parse(R"({"role":"user","parts":[
          {"functionResponse":{"name":"bash","response":{"output":"hi\n"}}}]})"));
  CHECK(contents[4]["parts"][0]["functionResponse"]["response"]["output"] == "2\n");
}

TEST_CASE("gemini: finish reasons and a blocked prompt") {
  SUBCASE("MAX_TOKENS is a length stop") {
    FakeLlmServer fake({scenario("max_tokens")});
    ProviderRun run(fake, gemini());
    CHECK(last_assistant(run.events())["stopReason"] == "length");
  }
  SUBCASE("SAFETY keeps the text, says why, is not retried") {
    FakeLlmServer fake({scenario("safety")});
    ProviderRun run(fake, gemini());
    const auto events = run.events();
    const Json message = last_assistant(events);
    CHECK(message["stopReason"] == "error");
    CHECK(message["errorMessage"] == "finish reason SAFETY");
    CHECK(message["content"][0]["text"] == "I cannot");
    CHECK(of_type(events, "auto_retry_start").empty());
    CHECK(fake.requests().size() == 1);
  }
  SUBCASE("promptFeedback.blockReason without candidates") {
    FakeLlmServer fake({scenario("prompt_blocked")});
    ProviderRun run(fake, gemini());
    const auto events = run.events();
    CHECK(last_assistant(events)["errorMessage"] == "prompt blocked: SAFETY");
    CHECK(of_type(events, "auto_retry_start").empty());
  }
}

TEST_CASE("gemini: failures in the service's words, retried exactly when retry.md says") {
  struct Case {
    const char* name;
    FakeResponse failure;
    std::string message;  // the first attempt's errorMessage
    bool retried;
  };
  const FakeResponse drop = scenario("dropped");
  const FakeResponse cut = scenario("cut");  // a clean end without a finish reason
  const FakeResponse in_stream = scenario("in_stream_error");
  const std::vector<Case> cases{
      {"429 with RetryInfo", scenario("http_429"),
       "429 Resource has been exhausted (e.g. check quota). retry-after-ms=1500", true},
      {"500", gemini_http_error(500, "INTERNAL", "An internal error has occurred."),
       "500 An internal error has occurred.", true},
      {"503 overloaded",
       gemini_http_error(503, "UNAVAILABLE", "The model is overloaded. Please try again later."),
       "503 The model is overloaded. Please try again later.", true},
      {"504",
       gemini_http_error(504, "DEADLINE_EXCEEDED",
                         "Deadline expired before operation could complete."),
       "504 Deadline expired before operation could complete.", true},
      {"a drop mid-stream", drop, "connection error:", true},
      {"a clean end without a finish reason", cut,
       "connection error: stream ended before the response was complete", true},
      {"an error object in the 200 stream", in_stream,
       "503 The model is overloaded. Please try again later.", true},
      {"a bad key",
       gemini_http_error(400, "INVALID_ARGUMENT",
                         "API key not valid. Please pass a valid API key."),
       "400 API key not valid. Please pass a valid API key.", false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    FakeLlmServer fake({c.failure, text_answer("o", "k")});
    ProviderRun run(fake, gemini());
    const auto events = run.events();
    std::string first_error;
    for (const auto& e : of_type(events, "message_end"))
      if (e["message"]["role"] == "assistant" && first_error.empty())
        first_error = e["message"].value("errorMessage", "");
    CHECK(first_error.starts_with(c.message));
    CHECK(of_type(events, "auto_retry_start").size() == (c.retried ? 1u : 0u));
    CHECK(events.back()["subtype"] == (c.retried ? "success" : "error_during_execution"));
    if (c.retried) CHECK(events.back()["result"] == "ok");
    run.check_no_key(events);
  }
}

TEST_CASE("gemini: context overflow in the API's words goes to compaction, not retry") {
  FakeLlmServer fake(
      {gemini_http_error(400, "INVALID_ARGUMENT",
                         "The input token count (1200000) exceeds the maximum number of "
                         "tokens allowed (1048576).")});
  ProviderRun run(fake, gemini());
  const auto events = run.events();
  const auto starts = of_type(events, "auto_compaction_start");
  REQUIRE(starts.size() == 1);
  CHECK(starts[0]["reason"] == "overflow");
  CHECK(of_type(events, "auto_retry_start").empty());
}

TEST_CASE("gemini: the built-in google provider, its models and both key variables") {
  for (const char* variable : {"GEMINI_API_KEY", "GOOGLE_API_KEY"}) {
    CAPTURE(variable);
    FakeLlmServer fake({text_answer("gem", "ini")});
    SubprocessOptions o;
    o.cwd = "@DIR@/work";
    o.stdin_file = "/dev/null";
    o.env["OPENAI_API_KEY"] = "";
    o.env["ANTHROPIC_API_KEY"] = "";
    o.env[variable] = "AIza-test-canary-789";
    ReboundProcess r({"--no-session", "-p", "go", "--output-format", "json", "--provider", "google",
                      "--base-url", fake.base_url() + "/v1beta", "--model", "gemini-2.5-pro"},
                     o, {{"work/.keep", ""}});
    r.expect_any_exit();
    const auto lines = r.proc().read_all_lines(20000ms);
    REQUIRE(!lines.empty());
    const Json result = Json::parse(lines.back());
    CHECK(result["result"] == "gemini");
    CHECK(result["model"] == "google/gemini-2.5-pro");
    CHECK(result["total_cost_usd"].get<double>() ==
          doctest::Approx((6 * 1.25 + 4 * 0.125 + 3 * 10) / 1e6));
    const auto requests = fake.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].target == "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
    CHECK(requests[0].headers.at("x-goog-api-key") == "AIza-test-canary-789");
    const Json body = Json::parse(requests[0].body);
    CHECK(body["generationConfig"] == Json::parse(R"({"maxOutputTokens":65536})"));  // off: none
    CHECK(lines.back().find("canary") == std::string::npos);
    CHECK(r.proc().stderr_text().find("canary") == std::string::npos);
  }
}

TEST_CASE("the new APIs' key headers: the key in no output, trace log or session file") {
  // providers.md sections 2.1, 2.5, 3.1: Authorization, api-key, x-goog-api-key. The error body
  // quotes the key, which must come back scrubbed.
  struct Api {
    const char* api;
    const char* base_path;
    const char* header;
    std::string sent;  // the header's value
    FakeResponse failure;
  };
  const std::string quoted = std::string("Incorrect API key provided: ") + kCanaryKey + ".";
  const std::vector<Api> apis{
      {"openai-responses", "/v1", "authorization", std::string("Bearer ") + kCanaryKey,
       openai_http_error(401, quoted, "invalid_api_key")},
      {"azure-openai-responses", "/openai/v1", "api-key", kCanaryKey,
       openai_http_error(401, quoted, "invalid_api_key")},
      {"google-generative-ai", "/v1beta", "x-goog-api-key", kCanaryKey,
       gemini_http_error(400, "INVALID_ARGUMENT", quoted)},
  };
  for (const auto& api : apis) {
    CAPTURE(api.api);
    FakeLlmServer fake({api.failure});
    ProviderRunOptions o = gemini();
    o.api = api.api;
    o.base_path = api.base_path;
    o.args = {"--session-dir",   "@DIR@/sessions",    "--log-level", "trace",
              "--log-file",      "@DIR@/rebound.log", "-p",          "go",
              "--output-format", "stream-json"};
    ProviderRun run(fake, o);
    const auto events = run.events();
    const auto requests = fake.requests();
    REQUIRE(requests.size() == 1);  // the key did reach the server, in its header
    CHECK(requests[0].headers.at(api.header) == api.sent);
    const std::string error = last_assistant(events)["errorMessage"];
    CHECK(error.find("Incorrect API key provided: ***") != std::string::npos);

    std::string out;
    for (const auto& e : events)
      out += e.dump() + "\n";
    std::string sessions;
    const auto root = run.r.dir().path();
    for (const auto& f : std::filesystem::recursive_directory_iterator(root / "sessions"))
      if (f.is_regular_file()) sessions += read_file(f.path());
    CHECK(sessions.find("Incorrect API key provided") != std::string::npos);  // it was saved
    const std::string log = read_file(root / "rebound.log") + run.r.proc().stderr_text();
    CHECK(log.find("[debug]") != std::string::npos);  // the most verbose level was on
    // No 8-byte piece of the key's secret part anywhere.
    const std::string secret = std::string(kCanaryKey).substr(3);
    for (std::size_t at = 0; at + 8 <= secret.size(); ++at) {
      const std::string piece = secret.substr(at, 8);
      CAPTURE(piece);
      CHECK(out.find(piece) == std::string::npos);
      CHECK(log.find(piece) == std::string::npos);
      CHECK(sessions.find(piece) == std::string::npos);
    }
  }
}
