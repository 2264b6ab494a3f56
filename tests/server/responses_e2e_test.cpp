// OpenAI's Responses API end to end (providers.md section 2): one-shot runs against a fake
// server on 127.0.0.1 speaking the typed `response.*` events: the request's shape, text and
// reasoning with their signatures, a tool call round trip with the reasoning item sent back,
// usage, the terminal events, the in-stream errors and a stream cut off before its end.

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

const std::vector<ProviderScenario> kScenarios = responses_scenarios();

FakeResponse scenario(const std::string& name) {
  return provider_scenario(kScenarios, name).response;
}

FakeResponse text_answer(const std::string& a, const std::string& b) {
  return responses_text(a, b);
}

ProviderRunOptions responses(bool reasoning, const std::string& thinking = "off") {
  ProviderRunOptions o;
  o.api = "openai-responses";
  o.reasoning = reasoning;
  o.thinking = thinking;
  return o;
}

}  // namespace

TEST_CASE("responses: the request's shape, a text answer with its signature, usage") {
  FakeLlmServer fake({text_answer("Hel", "lo")});
  ProviderRun run(fake, responses(false));
  const auto events = run.events();
  const Json result = events.back();
  CHECK(result["subtype"] == "success");
  CHECK(result["result"] == "Hello");
  const Json message = last_assistant(events);
  CHECK(message["api"] == "openai-responses");
  CHECK(message["stopReason"] == "stop");
  CHECK(message["content"] ==
        Json::parse(
            R"([{"type":"text","text":"Hello","textSignature":"{\"v\":1,\"id\":\"msg_abc\"}"}])"));
  CHECK(message["usage"]["input"] == 6);
  CHECK(message["usage"]["cacheRead"] == 4);
  CHECK(message["usage"]["output"] == 3);
  // The text_end update holds the signature too.
  bool signed_end = false;
  for (const auto& u : of_type(events, "message_update"))
    if (u["assistantMessageEvent"]["type"] == "text_end")
      signed_end = u["message"]["content"][0].contains("textSignature");
  CHECK(signed_end);
  const auto requests = fake.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].target == "/v1/responses");
  CHECK(requests[0].headers.at("authorization") == "Bearer sk-test-canary-123");
  CHECK(requests[0].headers.at("accept") == "text/event-stream");
  const Json body = Json::parse(requests[0].body);
  CHECK(keys_of(body) == std::vector<std::string>{"model", "input", "stream", "prompt_cache_key",
                                                  "store", "max_output_tokens", "tools"});
  CHECK(body["store"] == false);
  CHECK(body["max_output_tokens"] == 4096);
  CHECK(body["input"][0]["role"] == "system");
  CHECK(body["input"].back() ==
        Json::parse(R"({"role":"user","content":[{"type":"input_text","text":"go"}]})"));
  CHECK(body["tools"][0]["strict"] == false);
  CHECK(body["tools"][0]["type"] == "function");
  CHECK_FALSE(body.contains("reasoning"));
  // The key only in its header: nowhere in the output or the log, not even in part.
  run.check_no_key(events);
}

TEST_CASE("responses: reasoning and a tool call, sent back whole in the next request") {
  // The item as the scenario's output_item.done carries it, key for key.
  const Json reasoning_item{
      {"id", "rs_1"},
      {"type", "reasoning"},
      {"summary", Json::array({Json{{"type", "summary_text"}, {"text", "Plan A"}},
                               Json{{"type", "summary_text"}, {"text", "Plan B"}}})},
      {"encrypted_content", "ENC"}};
  // Its arguments streamed in part; the done event's arguments extend them, the tail streamed too.
  const FakeResponse first = scenario("reasoning_tool_call");
  FakeLlmServer fake({first, text_answer("do", "ne")});
  ProviderRun run(fake, responses(true, "low"));
  const auto events = run.events();
  CHECK(events.back()["subtype"] == "success");
  CHECK(events.back()["result"] == "done");
  const auto ends = of_type(events, "message_end");
  Json first_answer;
  for (const auto& e : ends)
    if (e["message"]["role"] == "assistant") {
      first_answer = e["message"];
      break;
    }
  CHECK(first_answer["stopReason"] == "toolUse");
  CHECK(first_answer["content"][0]["thinking"] == "Plan A\n\nPlan B");
  CHECK(Json::parse(first_answer["content"][0]["thinkingSignature"].get<std::string>()) ==
        reasoning_item);
  CHECK(first_answer["content"][1]["id"] == "call_1|fc_1");
  CHECK(first_answer["content"][1]["arguments"] == Json{{"command", "echo hi"}});
  const auto tool_end = of_type(events, "tool_execution_end");
  REQUIRE(tool_end.size() == 1);
  CHECK(tool_end[0]["toolCallId"] == "call_1|fc_1");
  const auto requests = fake.requests();
  REQUIRE(requests.size() == 2);
  const Json body1 = Json::parse(requests[0].body);
  CHECK(body1["reasoning"] == Json::parse(R"({"effort":"low","summary":"auto"})"));
  CHECK(body1["include"] == Json::parse(R"(["reasoning.encrypted_content"])"));
  CHECK(body1["input"][0]["role"] == "developer");
  const Json input = Json::parse(requests[1].body)["input"];
  // system, user, the reasoning item verbatim, the call, its output.
  REQUIRE(input.size() == 5);
  CHECK(input[2] == reasoning_item);
  CHECK(input[3] == Json::parse(R"({"type":"function_call","id":"fc_1","call_id":"call_1",)"
                                R"("name":"bash","arguments":"{\"command\":\"echo hi\"}"})"));
  CHECK(input[4]["type"] == "function_call_output");
  CHECK(input[4]["call_id"] == "call_1");
  CHECK(input[4]["output"] == "hi\n");
}

TEST_CASE("responses: in-stream errors, an incomplete response, a cut stream") {
  SUBCASE("response.failed with context_length_exceeded goes to compaction") {
    const FakeResponse failed = scenario("failed_overflow");
    FakeLlmServer fake({failed});
    ProviderRun run(fake, responses(false));
    const auto events = run.events();
    const Json message = last_assistant(events);
    CHECK(message["errorMessage"] ==
          "context_length_exceeded: Your input exceeds the context window of this model. Please "
          "adjust your input and try again.");
    const auto starts = of_type(events, "auto_compaction_start");
    REQUIRE(starts.size() == 1);
    CHECK(starts[0]["reason"] == "overflow");
    CHECK(of_type(events, "auto_retry_start").empty());
  }
  SUBCASE("an error event is pi's words and retried when its code says so") {
    const FakeResponse limited = scenario("error_event");
    FakeLlmServer fake({limited, text_answer("o", "k")});
    ProviderRun run(fake, responses(false));
    const auto events = run.events();
    const auto retries = of_type(events, "auto_retry_start");
    REQUIRE(retries.size() == 1);
    CHECK(retries[0]["errorMessage"] == "Error Code rate_limit_exceeded: Rate limit reached");
    CHECK(events.back()["result"] == "ok");
  }
  SUBCASE("response.incomplete is a length stop with its usage") {
    const FakeResponse cut = scenario("incomplete");
    FakeLlmServer fake({cut});
    ProviderRun run(fake, responses(false));
    const Json message = last_assistant(run.events());
    CHECK(message["stopReason"] == "length");
    CHECK(message["usage"]["input"] == 7);
  }
  SUBCASE("a body that ends before a terminal event is a connection error, retried") {
    const FakeResponse cut = scenario("cut");  // no response.completed
    FakeLlmServer fake({cut, text_answer("who", "le")});
    ProviderRun run(fake, responses(false));
    const auto events = run.events();
    const auto retries = of_type(events, "auto_retry_start");
    REQUIRE(retries.size() == 1);
    CHECK(retries[0]["errorMessage"] ==
          "connection error: stream ended before the response was complete");
    CHECK(events.back()["result"] == "whole");
  }
}

TEST_CASE("responses: the built-in openai provider speaks Responses to gpt-5-codex") {
  FakeLlmServer fake({text_answer("co", "dex")});
  SubprocessOptions o;
  o.cwd = "@DIR@/work";
  o.stdin_file = "/dev/null";
  o.env["OPENAI_API_KEY"] = "sk-test-canary-456";
  ReboundProcess r({"--no-session", "-p", "go", "--output-format", "json", "--provider", "openai",
                    "--base-url", fake.base_url() + "/v1", "--model", "gpt-5-codex"},
                   o, {{"work/.keep", ""}});
  r.expect_any_exit();
  const auto lines = r.proc().read_all_lines(20000ms);
  REQUIRE(!lines.empty());
  const Json result = Json::parse(lines.back());
  CHECK(result["result"] == "codex");
  CHECK(result["model"] == "openai/gpt-5-codex");
  // $1.25 per million input tokens (6 uncached), $0.125 cached (4), $10 output (3).
  CHECK(result["total_cost_usd"].get<double>() ==
        doctest::Approx((6 * 1.25 + 4 * 0.125 + 3 * 10) / 1e6));
  const auto requests = fake.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].target == "/v1/responses");
  const Json body = Json::parse(requests[0].body);
  CHECK(body["model"] == "gpt-5-codex");
  CHECK(body["max_output_tokens"] == 128000);
  CHECK_FALSE(body.contains("reasoning"));  // level off: gpt-5-codex reasons at its default
  CHECK(body["input"][0]["role"] == "developer");
}

TEST_CASE("responses: HTTP failures and transport drops, retried exactly when retry.md says") {
  struct Case {
    const char* name;
    FakeResponse failure;
    std::string message;
    bool retried;
  };
  const FakeResponse drop = scenario("dropped");
  const std::vector<Case> cases{
      {"429 with retry-after", scenario("http_429"),
       "429 Rate limit reached for gpt-5. Please try again in 1s. retry-after-ms=2000", true},
      {"500",
       openai_http_error(500,
                         "The server had an error while processing your request. Sorry about that!",
                         "server_error"),
       "500 The server had an error while processing your request. Sorry about that!", true},
      {"503 overloaded",
       openai_http_error(503, "The engine is currently overloaded, please try again later.",
                         "overloaded"),
       "503 The engine is currently overloaded, please try again later.", true},
      {"a drop mid-stream", drop, "connection error:", true},
      {"a bad key, with a retry-after that must not make it retryable",
       openai_http_error(401, "Incorrect API key provided: sk-test-***-123.", "invalid_api_key",
                         {{"retry-after", "5"}}),
       "401 Incorrect API key provided: sk-test-***-123.", false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    FakeLlmServer fake({c.failure, text_answer("o", "k")});
    ProviderRun run(fake, responses(false));
    const auto events = run.events();
    std::string first_error;
    for (const auto& e : of_type(events, "message_end"))
      if (e["message"]["role"] == "assistant" && first_error.empty())
        first_error = e["message"].value("errorMessage", "");
    CHECK(first_error.starts_with(c.message));
    if (!c.retried) CHECK(first_error == c.message);  // no hint appended
    CHECK(of_type(events, "auto_retry_start").size() == (c.retried ? 1u : 0u));
    if (c.retried) CHECK(events.back()["result"] == "ok");
    run.check_no_key(events);
  }
  SUBCASE("overflow as a 400 goes to compaction") {
    FakeLlmServer fake(
        {openai_http_error(400,
                           "Your input exceeds the context window of this model. Please "
                           "adjust your input and try again.",
                           "context_length_exceeded")});
    ProviderRun run(fake, responses(false));
    const auto events = run.events();
    REQUIRE(of_type(events, "auto_compaction_start").size() == 1);
    CHECK(of_type(events, "auto_retry_start").empty());
  }
}

TEST_CASE("responses: Azure OpenAI's variant (providers.md section 2.5)") {
  SUBCASE("api-key header, api-version, the deployment map, store:false") {
    FakeLlmServer fake({text_answer("az", "ure")});
    ProviderRunOptions o = responses(false);
    o.api = "azure-openai-responses";
    o.base_path = "/openai/v1";
    o.env["AZURE_OPENAI_API_VERSION"] = "2025-04-01-preview";
    o.env["AZURE_OPENAI_DEPLOYMENT_NAME_MAP"] = "m1=prod-deploy,other=x";
    ProviderRun run(fake, o);
    const auto events = run.events();
    CHECK(events.back()["result"] == "azure");
    const auto requests = fake.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].target == "/openai/v1/responses?api-version=2025-04-01-preview");
    CHECK(requests[0].headers.at("api-key") == kCanaryKey);
    CHECK_FALSE(requests[0].headers.count("authorization"));
    const Json body = Json::parse(requests[0].body);
    CHECK(body["model"] == "prod-deploy");
    CHECK(body["store"] == false);
    CHECK(last_assistant(events)["model"] == "m1");
    run.check_no_key(events);
  }
  SUBCASE("the base URL from AZURE_OPENAI_BASE_URL, api-version v1 by default") {
    FakeLlmServer fake({text_answer("env", "url")});
    ProviderRunOptions o = responses(false);
    o.api = "azure-openai-responses";
    o.base_url = false;
    o.env["AZURE_OPENAI_BASE_URL"] = fake.base_url() + "/openai/v1/";
    ProviderRun run(fake, o);
    CHECK(run.events().back()["result"] == "envurl");
    const auto requests = fake.requests();
    REQUIRE(requests.size() == 1);
    CHECK(requests[0].target == "/openai/v1/responses?api-version=v1");
    CHECK(Json::parse(requests[0].body)["model"] == "m1");
  }
  SUBCASE("no base URL anywhere: a configuration error, not retried") {
    FakeLlmServer fake(std::vector<FakeResponse>{});
    ProviderRunOptions o = responses(false);
    o.api = "azure-openai-responses";
    o.base_url = false;
    o.env["AZURE_OPENAI_BASE_URL"] = "";
    o.env["AZURE_OPENAI_RESOURCE_NAME"] = "";
    ProviderRun run(fake, o);
    const auto events = run.events();
    CHECK(last_assistant(events)["errorMessage"].get<std::string>().starts_with(
        "Azure OpenAI base URL is required"));
    CHECK(of_type(events, "auto_retry_start").empty());
    CHECK(fake.requests().empty());
  }
}
