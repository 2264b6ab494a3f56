// The strict fake's rules (tests/support/strict_llm.h): for every rule, a request shaped as the
// provider's documentation shows passes, and one that breaks the rule is refused with the
// provider's status and error body. A fake that accepted the broken one would let a broken
// request of Rebound's pass the end-to-end tests.

#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "tests/support/fake_llm_server.h"
#include "tests/support/strict_rules.h"

using namespace rebound::testing;
using rebound::protocol::Json;

namespace {

ReceivedRequest anthropic_request() {
  ReceivedRequest r;
  r.method = "POST";
  r.target = "/v1/messages";
  r.headers = {{"anthropic-version", "2023-06-01"}, {"x-api-key", "k"}};
  return r;
}

// Docs-shaped requests, each the base its violations start from.
Json anthropic_ok(const std::string& signature) {
  return Json::parse(R"({
    "model":"claude-sonnet-4-5","max_tokens":16000,"stream":true,
    "thinking":{"type":"enabled","budget_tokens":10000},
    "system":[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}],
    "tools":[{"name":"get_weather","description":"d","input_schema":{"type":"object"},
              "cache_control":{"type":"ephemeral"}}],
    "messages":[
      {"role":"user","content":"Weather in Paris?"},
      {"role":"assistant","content":[
        {"type":"thinking","thinking":"Use the tool.","signature":")" +
                     signature + R"("},
        {"type":"tool_use","id":"toolu_01A","name":"get_weather","input":{"city":"Paris"}}]},
      {"role":"user","content":[
        {"type":"tool_result","tool_use_id":"toolu_01A","content":"15 C",
         "cache_control":{"type":"ephemeral"}}]}]})");
}

struct Violation {
  const char* rule;
  std::function<void(Json&)> apply;
  int status;
  const char* says;
};

}  // namespace

TEST_CASE("strict fake: Anthropic Messages: each rule refuses what the API refuses") {
  Issued issued;
  const std::string sig = issued.make("claude-sonnet-4-5");
  const ReceivedRequest request = anthropic_request();
  REQUIRE_FALSE(check_anthropic(request.headers, anthropic_ok(sig), issued));
  const std::vector<Violation> violations{
      {"max_tokens required", [](Json& b) { b.erase("max_tokens"); }, 400, "max_tokens"},
      {"tool name pattern", [](Json& b) { b["tools"][0]["name"] = "get weather"; }, 400,
       "String should match pattern"},
      {"budget below 1024", [](Json& b) { b["thinking"]["budget_tokens"] = 512; }, 400,
       "greater than or equal to 1024"},
      {"budget not below max_tokens", [](Json& b) { b["max_tokens"] = 10000; }, 400,
       "`max_tokens` must be greater than `thinking.budget_tokens`"},
      {"tool_use id pattern",
       [](Json& b) {
         b["messages"][1]["content"][1]["id"] = "call_1|fc_1";
         b["messages"][2]["content"][0]["tool_use_id"] = "call_1|fc_1";
       },
       400, "tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'"},
      {"tool_use without its result",
       [](Json& b) { b["messages"][2]["content"][0]["tool_use_id"] = "toolu_other"; }, 400,
       "unexpected `tool_use_id`"},
      {"a result missing",
       [](Json& b) {
         b["messages"][2]["content"] = Json::array({Json{{"type", "text"}, {"text", "hm"}}});
       },
       400, "`tool_use` ids were found without `tool_result` blocks immediately after"},
      {"final assistant message without its thinking",
       [](Json& b) { b["messages"][1]["content"].erase(0); }, 400,
       "Expected `thinking` or `redacted_thinking`, but found `tool_use`"},
      {"a signature this model did not make",
       [](Json& b) { b["messages"][1]["content"][0]["signature"] = "Zm9yZ2Vk"; }, 400,
       "Invalid `signature` in `thinking` block"},
      {"empty text block",
       [](Json& b) {
         b["messages"][0]["content"] = Json::array({Json{{"type", "text"}, {"text", ""}}});
       },
       400, "text content blocks must be non-empty"},
      {"five cache breakpoints",
       [](Json& b) {
         b["messages"][0]["content"] = Json::array(
             {Json{{"type", "text"}, {"text", "a"}, {"cache_control", {{"type", "ephemeral"}}}},
              Json{{"type", "text"}, {"text", "b"}, {"cache_control", {{"type", "ephemeral"}}}}});
       },
       400, "A maximum of 4 blocks with cache_control may be provided. Found 5."},
      {"cache_control on a thinking block",
       [](Json& b) {
         b["messages"][1]["content"][0]["cache_control"] = Json{{"type", "ephemeral"}};
       },
       400, "thinking.cache_control"},
      {"1h after 5m",
       [](Json& b) {
         b["messages"][2]["content"][0]["cache_control"] =
             Json{{"type", "ephemeral"}, {"ttl", "1h"}};
       },
       400, "ttl='1h' must not come after"},
      {"image media type",
       [](Json& b) {
         b["messages"][0]["content"] = Json::array({Json{
             {"type", "image"},
             {"source", {{"type", "base64"}, {"media_type", "image/bmp"}, {"data", "AA=="}}}}});
       },
       400, "media_type"},
      {"unknown role", [](Json& b) { b["messages"][0]["role"] = "system"; }, 400,
       "Input should be 'user' or 'assistant'"},
      {"two tools of one name", [](Json& b) { b["tools"].push_back(b["tools"][0]); }, 400,
       "Tool names must be unique."},
      {"tool_use in a user message",
       [](Json& b) {
         b["messages"][0]["content"] = Json::array(
             {Json{{"type", "tool_use"}, {"id", "toolu_9"}, {"name", "f"}, {"input", {}}}});
       },
       400, "tool_use blocks are only allowed in assistant messages"},
      {"an unknown block type",
       [](Json& b) {
         b["messages"][0]["content"] = Json::array({Json{{"type", "document_x"}}});
       },
       400, "does not match any of the expected tags"},
  };
  for (const auto& v : violations) {
    CAPTURE(v.rule);
    Json body = anthropic_ok(sig);
    v.apply(body);
    const auto refusal = check_anthropic(request.headers, body, issued);
    REQUIRE(refusal);
    CHECK(refusal->status == v.status);
    const Json error = Json::parse(refusal->body);
    CHECK(error["type"] == "error");
    CHECK(error["error"]["type"] == "invalid_request_error");
    CHECK(error["error"]["message"].get<std::string>().find(v.says) != std::string::npos);
  }
  // Thinking off: a final assistant message without thinking is fine; a redacted block passes
  // with data the model made.
  Json off = anthropic_ok(sig);
  off.erase("thinking");
  off["messages"][1]["content"].erase(0);
  CHECK_FALSE(check_anthropic(request.headers, off, issued));
  Json redacted = anthropic_ok(sig);
  redacted["messages"][1]["content"][0] = Json{{"type", "redacted_thinking"}, {"data", sig}};
  CHECK_FALSE(check_anthropic(request.headers, redacted, issued));
  // The signature is bound to the model that made it.
  Json other = anthropic_ok(sig);
  other["model"] = "claude-haiku-4-5";
  CHECK(check_anthropic(request.headers, other, issued));
  ReceivedRequest no_version = request;
  no_version.headers.erase("anthropic-version");
  CHECK(check_anthropic(no_version.headers, anthropic_ok(sig), issued));
}

TEST_CASE("strict fake: Anthropic prompt caching: reads at breakpoints within 20 blocks") {
  AnthropicCache cache;
  Json body = Json::parse(R"({"model":"m","max_tokens":100,"system":[{"type":"text","text":"S",
    "cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[
    {"type":"text","text":"Q","cache_control":{"type":"ephemeral"}}]}]})");
  body["system"][0]["text"] = std::string(8000, 's');  // 2,000 tokens: above the minimum
  const auto first = cache.account(body);
  CHECK(first.cache_read == 0);
  CHECK(first.cache_write > 2000);
  CHECK(first.input == 0);
  // The next turn: the old breakpoint's prefix is read, the new blocks written.
  body["messages"][0]["content"][0].erase("cache_control");
  body["messages"].push_back(
      Json::parse(R"({"role":"assistant","content":[{"type":"text","text":"A"}]})"));
  body["messages"].push_back(Json::parse(
      R"({"role":"user","content":[{"type":"text","text":"Q2","cache_control":{"type":"ephemeral"}}]})"));
  const auto second = cache.account(body);
  CHECK(second.cache_read == first.cache_write);
  CHECK(second.cache_write > 0);
  CHECK(second.input == 0);
  // Without breakpoints nothing is read or written.
  Json plain = body;
  plain["system"][0].erase("cache_control");
  plain["messages"][2]["content"][0].erase("cache_control");
  const auto none = cache.account(plain);
  CHECK(none.cache_read == 0);
  CHECK(none.cache_write == 0);
  // A prompt below the minimum is not cached.
  AnthropicCache small;
  Json tiny = Json::parse(R"({"model":"m","max_tokens":100,"messages":[{"role":"user","content":[
    {"type":"text","text":"Q","cache_control":{"type":"ephemeral"}}]}]})");
  CHECK(small.account(tiny).cache_write == 0);
}

TEST_CASE("strict fake: OpenAI Chat Completions: each rule refuses what the API refuses") {
  const Json ok = Json::parse(R"({"model":"gpt-4o","stream":true,"messages":[
    {"role":"system","content":"terse"},
    {"role":"user","content":[{"type":"text","text":"hi"},
      {"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]},
    {"role":"assistant","content":null,"tool_calls":[{"id":"call_abc","type":"function",
      "function":{"name":"get_weather","arguments":"{}"}}]},
    {"role":"tool","tool_call_id":"call_abc","content":"15 C"}],
    "tools":[{"type":"function","function":{"name":"get_weather","parameters":{}}}],
    "prompt_cache_key":"s1"})");
  REQUIRE_FALSE(check_chat(ok));
  const std::vector<Violation> violations{
      {"id over 40",
       [](Json& b) {
         const std::string id(81, 'c');
         b["messages"][2]["tool_calls"][0]["id"] = id;
         b["messages"][3]["tool_call_id"] = id;
       },
       400, "Expected a string with maximum length 40, but got a string with length 81"},
      {"call not answered", [](Json& b) { b["messages"].erase(3); }, 400,
       "did not have response messages: call_abc"},
      {"result of no call", [](Json& b) { b["messages"][3]["tool_call_id"] = "call_x"; }, 400,
       "must be a response to a preceeding message with 'tool_calls'"},
      {"image in a tool message",
       [](Json& b) {
         b["messages"][3]["content"] = Json::array(
             {Json{{"type", "image_url"}, {"image_url", {{"url", "data:image/png;base64,AA=="}}}}});
       },
       400, "Image URLs are only allowed for messages with role 'user'"},
      {"tool name pattern", [](Json& b) { b["tools"][0]["function"]["name"] = "get.weather"; }, 400,
       "does not match pattern"},
      {"max_tokens to a reasoning model",
       [](Json& b) {
         b["model"] = "o3-mini";
         b["max_tokens"] = 100;
       },
       400, "Use 'max_completion_tokens' instead"},
      {"an effort the model does not take",
       [](Json& b) {
         b["model"] = "o3-mini";
         b["reasoning_effort"] = "minimal";
       },
       400, "does not support 'minimal'"},
      {"unknown role", [](Json& b) { b["messages"][1]["role"] = "model"; }, 400,
       "Invalid value: 'model'"},
      {"prompt_cache_key not a string", [](Json& b) { b["prompt_cache_key"] = 5; }, 400,
       "Invalid type for 'prompt_cache_key'"},
  };
  for (const auto& v : violations) {
    CAPTURE(v.rule);
    Json body = ok;
    v.apply(body);
    const auto refusal = check_chat(body);
    REQUIRE(refusal);
    CHECK(refusal->status == v.status);
    const Json error = Json::parse(refusal->body)["error"];
    CHECK(error["message"].get<std::string>().find(v.says) != std::string::npos);
    CHECK(error.contains("type"));
    CHECK(error.contains("param"));
  }
}

TEST_CASE("strict fake: OpenAI Responses: each rule refuses what the API refuses") {
  Issued issued;
  const std::string enc = issued.make("gpt-5");
  const Json ok = Json::parse(R"({"model":"gpt-5","stream":true,"store":false,
    "include":["reasoning.encrypted_content"],"reasoning":{"effort":"minimal"},"input":[
    {"role":"developer","content":"terse"},
    {"role":"user","content":[{"type":"input_text","text":"hi"}]},
    {"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":")" +
                              enc + R"("},
    {"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{}"},
    {"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"r"},
      {"type":"input_image","detail":"auto","image_url":"data:image/png;base64,AA=="}]},
    {"type":"message","role":"assistant","id":"msg_1","status":"completed",
     "content":[{"type":"output_text","text":"done","annotations":[]}]}]})");
  REQUIRE_FALSE(check_responses(ok, issued));
  const std::vector<Violation> violations{
      {"reasoning item without encrypted_content under store:false",
       [](Json& b) { b["input"][2].erase("encrypted_content"); }, 404,
       "Item with id 'rs_1' not found"},
      {"encrypted content another model made", [](Json& b) { b["model"] = "gpt-5-mini"; }, 400,
       "could not be verified"},
      {"reasoning item with nothing after it",
       [](Json& b) {
         b["input"].erase(5);
         b["input"].erase(4);
         b["input"].erase(3);
       },
       400, "without its required following item"},
      {"call_id over 64",
       [](Json& b) {
         b["input"][3]["call_id"] = std::string(70, 'c');
         b["input"][4]["call_id"] = std::string(70, 'c');
       },
       400, "maximum length 64"},
      {"function call item id not the API's", [](Json& b) { b["input"][3]["id"] = "call_1"; }, 400,
       "Expected an ID that begins with 'fc'"},
      {"message item id not the API's", [](Json& b) { b["input"][5]["id"] = "m_1"; }, 400,
       "Expected an ID that begins with 'msg'"},
      {"output of no call", [](Json& b) { b["input"][4]["call_id"] = "call_9"; }, 400,
       "No tool call found for function call output with call_id call_9"},
      {"call without output", [](Json& b) { b["input"].erase(4); }, 400,
       "No tool output found for function call call_1"},
      {"an effort gpt-5.1 does not take",
       [](Json& b) {
         b["model"] = "gpt-5.1-codex";
         b["input"].erase(2);
       },
       400, "Unsupported value: 'minimal' is not supported with the 'gpt-5.1-codex' model"},
  };
  for (const auto& v : violations) {
    CAPTURE(v.rule);
    Json body = ok;
    v.apply(body);
    const auto refusal = check_responses(body, issued);
    REQUIRE(refusal);
    CHECK(refusal->status == v.status);
    CHECK(Json::parse(refusal->body)["error"]["message"].get<std::string>().find(v.says) !=
          std::string::npos);
  }
}

TEST_CASE("strict fake: Gemini: each rule refuses what the API refuses") {
  Issued issued;
  const std::string sig = issued.make("gemini-3-pro-preview");
  const Json ok = Json::parse(R"({"contents":[
    {"role":"user","parts":[{"text":"weather?"}]},
    {"role":"model","parts":[{"functionCall":{"name":"f","args":{}},"thoughtSignature":")" +
                              sig + R"("},
                             {"functionCall":{"name":"g","args":{}}}]},
    {"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"1"},
      "parts":[{"inlineData":{"mimeType":"image/png","data":"AA=="}}]}},
      {"functionResponse":{"name":"g","response":{"output":"2"}}}]}],
    "generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"HIGH"}}})");
  const std::string model = "gemini-3-pro-preview";
  REQUIRE_FALSE(check_gemini(model, ok, issued));
  const std::vector<Violation> violations{
      {"Gemini 3 call without its signature",
       [](Json& b) { b["contents"][1]["parts"][0].erase("thoughtSignature"); }, 400,
       "Function call is missing a thought_signature"},
      {"a signature this model did not make",
       [](Json& b) { b["contents"][1]["parts"][0]["thoughtSignature"] = "Zm9yZ2Vk"; }, 400,
       "Corrupted thought signature."},
      {"responses fewer than calls", [](Json& b) { b["contents"][2]["parts"].erase(1); }, 400,
       "equal to the number of function call parts"},
      {"response with no call before", [](Json& b) { b["contents"].erase(1); }, 400,
       "function response turn comes immediately after a function call turn"},
      {"bad role", [](Json& b) { b["contents"][0]["role"] = "assistant"; }, 400,
       "Please use a valid role: user, model."},
      {"empty parts", [](Json& b) { b["contents"][0]["parts"] = Json::array(); }, 400,
       "must not be empty"},
      {"a function call in a user turn",
       [](Json& b) {
         b["contents"][0]["parts"] = Json::array({Json{{"functionCall", {{"name", "f"}}}}});
       },
       400, "function call turn comes immediately after a user turn"},
  };
  for (const auto& v : violations) {
    CAPTURE(v.rule);
    Json body = ok;
    v.apply(body);
    const auto refusal = check_gemini(model, body, issued);
    REQUIRE(refusal);
    CHECK(refusal->status == v.status);
    const Json error = Json::parse(refusal->body)["error"];
    CHECK(error["status"] == "INVALID_ARGUMENT");
    CHECK(error["message"].get<std::string>().find(v.says) != std::string::npos);
  }
  // The documented placeholder passes for a call the model did not sign.
  Json placeholder = ok;
  placeholder["contents"][1]["parts"][0]["thoughtSignature"] = "skip_thought_signature_validator";
  CHECK_FALSE(check_gemini(model, placeholder, issued));
  // Gemini 2.5: no thinkingLevel, no multimodal function responses, Pro cannot turn off.
  Json older = ok;
  older["contents"][2]["parts"][0]["functionResponse"].erase("parts");
  older["contents"][1]["parts"][0]["thoughtSignature"] = "skip_thought_signature_validator";
  older["generationConfig"]["thinkingConfig"] = Json{{"thinkingBudget", 0}};
  CHECK_FALSE(check_gemini("gemini-2.5-flash", older, issued));
  CHECK(check_gemini("gemini-2.5-pro", older, issued)->message.find("Budget 0 is invalid") !=
        std::string::npos);
  CHECK(check_gemini("gemini-2.5-flash", ok, issued));
}
