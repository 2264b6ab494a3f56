// OpenAI's Responses API end to end (providers.md section 2): one-shot runs against a fake
// server on 127.0.0.1 speaking the typed `response.*` events: the request's shape, text and
// reasoning with their signatures, a tool call round trip with the reasoning item sent back,
// usage, the terminal events, the in-stream errors and a stream cut off before its end.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/support/fake_llm_server.h"
#include "tests/support/rebound_process.h"

using namespace rebound;
using namespace rebound::testing;
using namespace std::chrono_literals;
using protocol::Json;

namespace {

std::string ev(const Json& data) {
  return FakeLlmServer::sse(data["type"].get<std::string>(), data.dump());
}

Json item_added(const Json& item) {
  return Json{{"type", "response.output_item.added"}, {"output_index", 0}, {"item", item}};
}
Json item_done(const Json& item) {
  return Json{{"type", "response.output_item.done"}, {"output_index", 0}, {"item", item}};
}
Json completed(std::int64_t input, std::int64_t cached, std::int64_t output) {
  return Json{{"type", "response.completed"},
              {"response",
               {{"id", "resp_1"},
                {"status", "completed"},
                {"usage",
                 {{"input_tokens", input},
                  {"input_tokens_details", {{"cached_tokens", cached}}},
                  {"output_tokens", output},
                  {"total_tokens", input + output}}}}}};
}

// A text answer: a message item streamed in two deltas.
FakeResponse text_answer(const std::string& a, const std::string& b) {
  const Json message{{"type", "message"},
                     {"id", "msg_abc"},
                     {"role", "assistant"},
                     {"status", "completed"},
                     {"content", Json::array({Json{{"type", "output_text"}, {"text", a + b}}})}};
  FakeResponse r;
  r.chunks = {
      ev(Json{{"type", "response.created"}, {"response", {{"id", "resp_1"}}}}),
      ev(item_added(Json{{"type", "message"}, {"id", "msg_abc"}, {"content", Json::array()}})),
      ev(Json{{"type", "response.output_text.delta"}, {"delta", a}}),
      ev(Json{{"type", "response.output_text.delta"}, {"delta", b}}),
      ev(item_done(message)),
      ev(completed(10, 4, 3))};
  return r;
}

struct Run {
  Run(FakeLlmServer& fake, bool reasoning, const std::string& thinking = "off")
      : r(args(), options(),
          {{"work/.keep", ""},
           {"agent/settings.json",
            R"({"defaultProvider":"codex","defaultModel":"m1","defaultThinkingLevel":")" +
                thinking + R"("})"},
           {"agent/models.json",
            R"({"providers":{"codex":{"baseUrl":")" + fake.base_url() +
                R"(/v1","api":"openai-responses","apiKey":"sk-test-canary-123",)"
                R"("models":[{"id":"m1","name":"M1","reasoning":)" +
                (reasoning ? "true" : "false") +
                R"(,"input":["text"],"contextWindow":128000,"maxTokens":4096,)"
                R"("cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0}}]}}})"}}) {
    r.expect_any_exit();
  }
  static std::vector<std::string> args() {
    return {"--no-session", "-p", "go", "--output-format", "stream-json"};
  }
  static SubprocessOptions options() {
    SubprocessOptions o;
    o.cwd = "@DIR@/work";
    o.stdin_file = "/dev/null";
    return o;
  }
  std::vector<Json> events() {
    std::vector<Json> out;
    for (const auto& l : r.proc().read_all_lines(20000ms))
      out.push_back(Json::parse(l));
    INFO("stderr: " << r.proc().stderr_text());
    REQUIRE(!out.empty());
    return out;
  }
  ReboundProcess r;
};

Json last_assistant(const std::vector<Json>& events) {
  Json last;
  for (const auto& e : of_type(events, "message_end"))
    if (e["message"]["role"] == "assistant") last = e["message"];
  return last;
}

}  // namespace

TEST_CASE("responses: the request's shape, a text answer with its signature, usage") {
  FakeLlmServer fake({text_answer("Hel", "lo")});
  Run run(fake, false);
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
  std::vector<std::string> keys;
  for (const auto& [k, v] : body.items())
    keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"model", "input", "stream", "prompt_cache_key", "store",
                                         "max_output_tokens", "tools"});
  CHECK(body["store"] == false);
  CHECK(body["max_output_tokens"] == 4096);
  CHECK(body["input"][0]["role"] == "system");
  CHECK(body["input"].back() ==
        Json::parse(R"({"role":"user","content":[{"type":"input_text","text":"go"}]})"));
  CHECK(body["tools"][0]["strict"] == false);
  CHECK(body["tools"][0]["type"] == "function");
  CHECK_FALSE(body.contains("reasoning"));
  // The key only in its header: nowhere in the output or the log, not even in part.
  for (const auto& e : events)
    CHECK(e.dump().find("canary") == std::string::npos);
  CHECK(run.r.proc().stderr_text().find("canary") == std::string::npos);
}

TEST_CASE("responses: reasoning and a tool call, sent back whole in the next request") {
  const Json reasoning_item{
      {"type", "reasoning"},
      {"id", "rs_1"},
      {"summary", Json::array({Json{{"type", "summary_text"}, {"text", "Plan A"}},
                               Json{{"type", "summary_text"}, {"text", "Plan B"}}})},
      {"encrypted_content", "ENC"}};
  const Json call_item{{"type", "function_call"},
                       {"id", "fc_1"},
                       {"call_id", "call_1"},
                       {"name", "bash"},
                       {"arguments", R"({"command":"echo hi"})"}};
  FakeResponse first;
  first.chunks = {
      ev(item_added(Json{{"type", "reasoning"}, {"id", "rs_1"}, {"summary", Json::array()}})),
      ev(Json{{"type", "response.reasoning_summary_part.added"}}),
      ev(Json{{"type", "response.reasoning_summary_text.delta"}, {"delta", "Plan A"}}),
      ev(Json{{"type", "response.reasoning_summary_part.added"}}),
      ev(Json{{"type", "response.reasoning_summary_text.delta"}, {"delta", "Plan B"}}),
      ev(item_done(reasoning_item)),
      ev(item_added(Json{{"type", "function_call"},
                         {"id", "fc_1"},
                         {"call_id", "call_1"},
                         {"name", "bash"},
                         {"arguments", ""}})),
      ev(Json{{"type", "response.function_call_arguments.delta"}, {"delta", R"({"command":)"}}),
      // The done event's arguments extend the deltas: the tail is streamed too.
      ev(Json{{"type", "response.function_call_arguments.done"},
              {"arguments", R"({"command":"echo hi"})"}}),
      ev(item_done(call_item)), ev(completed(20, 0, 5))};
  FakeLlmServer fake({first, text_answer("do", "ne")});
  Run run(fake, true, "low");
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
    FakeResponse failed;
    failed.chunks = {ev(Json{{"type", "response.failed"},
                             {"response",
                              {{"status", "failed"},
                               {"error",
                                {{"code", "context_length_exceeded"},
                                 {"message",
                                  "Your input exceeds the context window of this "
                                  "model. Please adjust your input and try again."}}}}}})};
    FakeLlmServer fake({failed});
    Run run(fake, false);
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
    FakeResponse limited;
    limited.chunks = {ev(Json{
        {"type", "error"}, {"code", "rate_limit_exceeded"}, {"message", "Rate limit reached"}})};
    FakeLlmServer fake({limited, text_answer("o", "k")});
    Run run(fake, false);
    const auto events = run.events();
    const auto retries = of_type(events, "auto_retry_start");
    REQUIRE(retries.size() == 1);
    CHECK(retries[0]["errorMessage"] == "Error Code rate_limit_exceeded: Rate limit reached");
    CHECK(events.back()["result"] == "ok");
  }
  SUBCASE("response.incomplete is a length stop with its usage") {
    FakeResponse cut = text_answer("par", "tial");
    Json incomplete = completed(7, 0, 2);
    incomplete["type"] = "response.incomplete";
    cut.chunks.back() = ev(incomplete);
    FakeLlmServer fake({cut});
    Run run(fake, false);
    const Json message = last_assistant(run.events());
    CHECK(message["stopReason"] == "length");
    CHECK(message["usage"]["input"] == 7);
  }
  SUBCASE("a body that ends before a terminal event is a connection error, retried") {
    FakeResponse cut = text_answer("half", "way");
    cut.chunks.pop_back();  // no response.completed
    FakeLlmServer fake({cut, text_answer("who", "le")});
    Run run(fake, false);
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
