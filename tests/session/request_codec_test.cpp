#include "session/llm/request_codec.h"
#include "session/llm/wire_api.h"

#include <doctest/doctest.h>

using namespace rebound::session::llm;
using namespace rebound::protocol;

namespace {

AgentMessage user(const std::string& text, bool image = false) {
  AgentMessage m;
  m.role = Role::user;
  m.content.push_back(ContentBlock::make_text(text));
  if (image) m.content.push_back(ContentBlock::make_image("QUJD", "image/png"));
  return m;
}

AgentMessage assistant_with_call() {
  AgentMessage m;
  m.role = Role::assistant;
  m.content.push_back(ContentBlock::make_thinking("secret"));
  m.content.push_back(ContentBlock::make_text("looking"));
  m.content.push_back(ContentBlock::make_tool_call("call_1", "bash", Json{{"command", "ls"}}));
  m.stop_reason = StopReason::tool_use;
  return m;
}

AgentMessage tool_result() {
  AgentMessage m;
  m.role = Role::tool_result;
  m.tool_call_id = "call_1";
  m.tool_name = "bash";
  m.content.push_back(ContentBlock::make_text("Tool bash not found"));
  m.is_error = true;
  return m;
}

LlmRequest request(bool reasoning, ThinkingLevel level) {
  LlmRequest r;
  r.model.id = "m1";
  r.model.max_tokens = 16384;
  r.model.reasoning = reasoning;
  r.thinking_level = level;
  r.system_prompt = "be brief";
  r.messages = {user("hi", true), assistant_with_call(), tool_result(), user("and?")};
  return r;
}

}  // namespace

TEST_CASE("OpenAI request: roles, images as data URLs, tool calls, stream with usage") {
  const Json b = openai_request_body(request(false, ThinkingLevel::off));
  CHECK(b["model"] == "m1");
  CHECK(b["stream"] == true);
  CHECK(b["stream_options"]["include_usage"] == true);
  CHECK(b["max_tokens"] == 16384);
  CHECK_FALSE(b.contains("reasoning_effort"));
  const Json& m = b["messages"];
  REQUIRE(m.size() == 5);
  CHECK(m[0] == Json::parse(R"({"role":"system","content":"be brief"})"));
  CHECK(m[1]["content"][1]["image_url"]["url"] == "data:image/png;base64,QUJD");
  CHECK(m[2]["content"] == "looking");  // the thinking block is not sent back
  CHECK(m[2]["tool_calls"][0]["function"]["arguments"] == R"({"command":"ls"})");
  CHECK(m[3] ==
        Json::parse(R"({"role":"tool","content":"Tool bash not found","tool_call_id":"call_1"})"));
  CHECK(m[4] == Json::parse(R"({"role":"user","content":"and?"})"));
}

TEST_CASE("OpenAI request: reasoning effort for reasoning models") {
  const Json b = openai_request_body(request(true, ThinkingLevel::xhigh));
  CHECK(b["reasoning_effort"] == "high");
  CHECK(b["max_completion_tokens"] == 16384);
  CHECK(openai_request_body(request(true, ThinkingLevel::minimal))["reasoning_effort"] ==
        "minimal");
}

TEST_CASE("Anthropic request: system, alternating roles, tool_use and tool_result blocks") {
  const Json b = anthropic_request_body(request(false, ThinkingLevel::high), CacheRetention::none);
  CHECK(b["system"] == "be brief");
  CHECK(b.dump().find("cache_control") == std::string::npos);
  CHECK(b["max_tokens"] == 16384);
  CHECK_FALSE(b.contains("thinking"));  // the model has no reasoning flag
  const Json& m = b["messages"];
  REQUIRE(m.size() == 3);
  CHECK(m[0]["role"] == "user");
  CHECK(m[0]["content"][1]["source"] ==
        Json::parse(R"({"type":"base64","media_type":"image/png","data":"QUJD"})"));
  CHECK(m[1]["role"] == "assistant");
  REQUIRE(m[1]["content"].size() == 2);
  CHECK(m[1]["content"][1] ==
        Json::parse(R"({"type":"tool_use","id":"call_1","name":"bash","input":{"command":"ls"}})"));
  CHECK(m[2]["role"] == "user");  // the tool result and the next user text share one turn
  CHECK(m[2]["content"][0]["type"] == "tool_result");
  CHECK(m[2]["content"][0]["is_error"] == true);
  CHECK(m[2]["content"][1]["text"] == "and?");
}

TEST_CASE("Anthropic thinking budgets by level") {
  CHECK(anthropic_thinking_budget(ThinkingLevel::minimal) == 1024);
  CHECK(anthropic_thinking_budget(ThinkingLevel::low) == 2048);
  CHECK(anthropic_thinking_budget(ThinkingLevel::medium) == 8192);
  CHECK(anthropic_thinking_budget(ThinkingLevel::high) == 16384);
  CHECK(anthropic_thinking_budget(ThinkingLevel::xhigh) == 32768);
  LlmRequest prompt = request(true, ThinkingLevel::medium);
  prompt.messages = {user("hi")};
  CHECK(anthropic_request_body(prompt)["thinking"] ==
        Json::parse(R"({"type":"enabled","budget_tokens":8192})"));
  // Kept below max_tokens.
  prompt.thinking_level = ThinkingLevel::xhigh;
  CHECK(anthropic_request_body(prompt)["thinking"]["budget_tokens"] == 16384 - 1024);
  // A max_tokens with no room for the API's minimum budget: no thinking.
  prompt.model.max_tokens = 1024;
  CHECK_FALSE(anthropic_request_body(prompt).contains("thinking"));
}

TEST_CASE("Anthropic thinking: signed blocks back in place, off for a loop without them") {
  // The model's own turn: its thinking (signed) and a redacted block go back first, in order.
  LlmRequest r = request(true, ThinkingLevel::high);
  r.model.provider = "anthropic";
  r.model.api = "anthropic-messages";
  AgentMessage own = assistant_with_call();
  own.provider = "anthropic";
  own.api = "anthropic-messages";
  own.model = "m1";
  own.content[0].signature = "SIG";
  ContentBlock redacted = ContentBlock::make_thinking("[Reasoning redacted]");
  redacted.signature = "DATA";
  redacted.redacted = true;
  own.content.insert(own.content.begin() + 1, redacted);
  r.messages = {user("hi"), own, tool_result()};
  Json b = anthropic_request_body(r);
  CHECK(b["thinking"]["type"] == "enabled");
  const Json& content = b["messages"][1]["content"];
  CHECK(content[0] == Json::parse(R"({"type":"thinking","thinking":"secret","signature":"SIG"})"));
  CHECK(content[1] == Json::parse(R"({"type":"redacted_thinking","data":"DATA"})"));
  CHECK(content[2]["type"] == "text");
  // The same turn made by another model: its thinking is dropped and the loop goes without
  // thinking (the API would refuse it otherwise).
  own.model = "other";
  r.messages = {user("hi"), own, tool_result()};
  b = anthropic_request_body(r);
  CHECK_FALSE(b.contains("thinking"));
  CHECK(b["messages"][1]["content"][0]["type"] == "text");
  // A prompt after a plain answer thinks again.
  AgentMessage answer;
  answer.role = Role::assistant;
  answer.content.push_back(ContentBlock::make_text("ok"));
  r.messages = {user("hi"), own, tool_result(), answer, user("next")};
  CHECK(anthropic_request_body(r)["thinking"]["type"] == "enabled");
  // An unsigned thinking block is never sent.
  own.model = "m1";
  own.content[0].signature.clear();
  r.messages = {user("hi"), own, tool_result()};
  b = anthropic_request_body(r);
  CHECK(b["messages"][1]["content"][0]["type"] == "redacted_thinking");
}

TEST_CASE("Anthropic prompt caching: three breakpoints, 1-hour with long, none with none") {
  LlmRequest r = request(false, ThinkingLevel::off);
  for (const char* name : {"a", "b"}) {
    rebound::session::ToolDefinition t;
    t.name = name;
    t.description = "a tool";
    t.parameters = Json::object();
    r.tools.push_back(t);
  }
  const Json b = anthropic_request_body(r, CacheRetention::short_term);
  const Json marker{{"type", "ephemeral"}};
  CHECK(b["system"] ==
        Json::array({Json{{"type", "text"}, {"text", "be brief"}, {"cache_control", marker}}}));
  CHECK_FALSE(b["tools"][0].contains("cache_control"));
  CHECK(b["tools"][1]["cache_control"] == marker);
  const Json& last = b["messages"].back()["content"].back();
  CHECK(last["text"] == "and?");
  CHECK(last["cache_control"] == marker);
  std::size_t marks = 0;
  const std::string text = b.dump();
  for (std::size_t at = text.find("cache_control"); at != std::string::npos;
       at = text.find("cache_control", at + 1))
    ++marks;
  CHECK(marks == 3);
  const Json long_body = anthropic_request_body(r, CacheRetention::long_term);
  CHECK(long_body["tools"][1]["cache_control"] == Json{{"type", "ephemeral"}, {"ttl", "1h"}});
  CHECK(anthropic_request_body(r, CacheRetention::none).dump().find("cache_control") ==
        std::string::npos);
}

TEST_CASE("HTTP errors keep the provider's message and the largest retry hint") {
  const std::int64_t now = 1445412480000;
  CHECK(http_error_message(429, R"({"error":{"message":"Rate limit reached for requests"}})", {},
                           now) == "429 Rate limit reached for requests");
  CHECK(http_error_message(
            529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})",
            {}, now) == "529 Overloaded");
  CHECK(http_error_message(502, "<html>bad gateway</html>", {}, now) ==
        "502 <html>bad gateway</html>");
  CHECK(http_error_message(400, "", {}, now) == "400 status code (no body)");
  CHECK(http_error_message(500, std::string(5000, 'x'), {}, now).size() == 4 + 2000);
  CHECK(http_error_message(429, "{}", {{"retry-after", "7"}, {"x-ratelimit-reset-ms", "2500"}},
                           now) == "429 {} retry-after-ms=7000");
  CHECK(http_error_message(429, "", {{"retry-after-ms", "1500"}}, now) ==
        "429 status code (no body) retry-after-ms=1500");
  CHECK(http_error_message(503, "", {{"retry-after", "Wed, 21 Oct 2015 07:28:09 GMT"}}, now) ==
        "503 status code (no body) retry-after-ms=9000");
  // retry.md section 8: never a hint on another status (its digits would match the pattern).
  CHECK(http_error_message(400, "", {{"retry-after", "5"}}, now) == "400 status code (no body)");
  CHECK(http_error_message(403, "", {{"retry-after-ms", "500"}}, now) ==
        "403 status code (no body)");
}

TEST_CASE("HTTP errors: Gemini's RetryInfo counts as a retry-after of that many seconds") {
  auto body = [](const std::string& delay) {
    return R"({"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED",
      "details":[{"@type":"type.googleapis.com/google.rpc.Help","links":[]},
                 {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":")" +
           delay + R"("}]}})";
  };
  CHECK(http_error_message(429, body("22s"), {}, 0) ==
        "429 You exceeded your current quota. retry-after-ms=22000");
  CHECK(http_error_message(429, body("1.5s"), {}, 0) ==
        "429 You exceeded your current quota. retry-after-ms=1500");
  CHECK(http_error_message(503, body("0.25s"), {}, 0).ends_with(" retry-after-ms=250"));
  // The largest of it and the headers' hints.
  CHECK(http_error_message(429, body("2s"), {{"retry-after", "7"}}, 0).ends_with("=7000"));
  CHECK(http_error_message(429, body("9s"), {{"retry-after", "7"}}, 0).ends_with("=9000"));
  // Not a decimal number of seconds: no hint.
  for (const char* bad : {"22", "s", "-1s", "1e3s", "1.2.3s", "abcs", ""})
    CHECK(http_error_message(429, body(bad), {}, 0) == "429 You exceeded your current quota.");
  // Not on a 4xx other than 429.
  CHECK(http_error_message(400, body("22s"), {}, 0) == "400 You exceeded your current quota.");
}

TEST_CASE("tool definitions go to both APIs in their own form, none, no key") {
  LlmRequest r;
  r.model.id = "m";
  CHECK_FALSE(openai_request_body(r).contains("tools"));
  CHECK_FALSE(anthropic_request_body(r).contains("tools"));
  r.tools.push_back({"read", "Read a file",
                     Json::parse(R"({"type":"object","properties":{"path":{"type":"string"}},
                                     "required":["path"],"additionalProperties":false})")});
  r.tools.push_back({"ls", "List", Json::parse(R"({"type":"object","properties":{}})")});
  const Json o = openai_request_body(r)["tools"];
  REQUIRE(o.size() == 2);
  CHECK(o[0] ==
        Json::parse(R"({"type":"function","function":{"name":"read","description":"Read a file",
      "parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],
      "additionalProperties":false}}})"));
  const Json a = anthropic_request_body(r)["tools"];
  REQUIRE(a.size() == 2);
  CHECK(a[0] == Json::parse(R"({"name":"read","description":"Read a file","input_schema":
      {"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}})"));
  CHECK(a[1]["input_schema"]["required"] == Json::array());
}

TEST_CASE("an MCP tool's schema goes whole to both APIs, $defs and anyOf included") {
  LlmRequest r;
  r.model.id = "m";
  const Json schema = Json::parse(
      R"({"$defs":{"p":{"type":"string"}},"anyOf":[{"required":["a"]},{"required":["b"]}],"properties":{"a":{"$ref":"#/$defs/p"}},"additionalProperties":false,"type":"object"})");
  rebound::session::ToolDefinition mcp{"mcp__s__t", "From a server", schema};
  mcp.external = true;
  r.tools.push_back(mcp);
  CHECK(openai_request_body(r)["tools"][0]["function"]["parameters"] == schema);
  CHECK(anthropic_request_body(r, CacheRetention::none)["tools"][0] ==
        Json{{"name", "mcp__s__t"}, {"description", "From a server"}, {"input_schema", schema}});
}

TEST_CASE("tool history without active tools, and images of tool results for both APIs") {
  LlmRequest r;
  r.model.id = "m";
  r.model.input = {"text", "image"};
  r.messages = {user("look"), assistant_with_call()};
  AgentMessage image_only;
  image_only.role = Role::tool_result;
  image_only.tool_call_id = "call_1";
  image_only.tool_name = "read";
  image_only.content.push_back(ContentBlock::make_image("QUJD", "image/png"));
  r.messages.push_back(image_only);
  r.messages.push_back(user("next"));
  const Json o = openai_request_body(r);
  // Tool calls in the context and no active tools: an empty "tools" key (tools.md section 8).
  CHECK(o["tools"] == Json::array());
  const Json& m = o["messages"];
  REQUIRE(m.size() == 5);
  CHECK(m[2].dump() ==
        R"j({"role":"tool","content":"(see attached image)","tool_call_id":"call_1"})j");
  CHECK(
      m[3].dump() ==
      R"({"role":"user","content":[{"type":"text","text":"Attached image(s) from tool result:"},{"type":"image_url","image_url":{"url":"data:image/png;base64,QUJD"}}]})");
  CHECK(m[4]["content"] == "next");
  const Json a = anthropic_request_body(r);
  CHECK_FALSE(a.contains("tools"));
  CHECK(
      a["messages"][2]["content"][0].dump() ==
      R"({"type":"tool_result","tool_use_id":"call_1","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QUJD"}}],"is_error":false})");
  // A text-only model gets no image.
  r.model.input = {"text"};
  CHECK(openai_request_body(r)["messages"].size() == 4);
  CHECK(anthropic_request_body(r)["messages"][2]["content"][0]["content"] == "");
}

TEST_CASE("wire APIs: chosen by name once, each with its path, headers and codec") {
  using rebound::session::llm::default_wire_api;
  using rebound::session::llm::endpoint;
  using rebound::session::llm::find_wire_api;
  using rebound::session::llm::WireOptions;
  Model model;
  model.id = "gemini-2.5-flash";
  const auto* anthropic = find_wire_api("anthropic-messages");
  REQUIRE(anthropic);
  CHECK(endpoint(*anthropic, "https://api.anthropic.com//", model) ==
        "https://api.anthropic.com/v1/messages");
  const auto headers = anthropic->headers(std::string("k"));
  REQUIRE(headers.size() == 2);
  CHECK(headers[0].first == "anthropic-version");
  CHECK(headers[1] == std::pair<std::string, std::string>{"x-api-key", "k"});
  const auto& openai = default_wire_api();
  CHECK(openai.name == "openai-completions");
  CHECK(endpoint(openai, "http://127.0.0.1:9/v1", model) ==
        "http://127.0.0.1:9/v1/chat/completions");
  CHECK(openai.headers(std::nullopt).empty());
  CHECK(openai.headers(std::string("k"))[0].second == "Bearer k");
  const auto* responses = find_wire_api("openai-responses");
  REQUIRE(responses);
  CHECK(endpoint(*responses, "http://127.0.0.1:9/v1/", model) == "http://127.0.0.1:9/v1/responses");
  CHECK(responses->headers(std::string("k"))[0].second == "Bearer k");

  // providers.md section 3.1: the model id in the path, the key in x-goog-api-key.
  const auto* gemini = find_wire_api("google-generative-ai");
  REQUIRE(gemini);
  CHECK(endpoint(*gemini, "https://generativelanguage.googleapis.com/v1beta", model) ==
        "https://generativelanguage.googleapis.com/v1beta/models/"
        "gemini-2.5-flash:streamGenerateContent?alt=sse");
  model.id = "odd id/?";
  CHECK(endpoint(*gemini, "http://h/v1beta", model) ==
        "http://h/v1beta/models/odd%20id%2F%3F:streamGenerateContent?alt=sse");
  CHECK(gemini->headers(std::string("k")) ==
        rebound::session::llm::Headers{{"x-goog-api-key", "k"}});
  CHECK(gemini->headers(std::nullopt).empty());

  // section 2.5: api-version in the query, the key in api-key, the deployment as the model.
  const auto* azure = find_wire_api("azure-openai-responses");
  REQUIRE(azure);
  WireOptions options;
  CHECK(endpoint(*azure, "https://r.openai.azure.com/openai/v1/", model, options) ==
        "https://r.openai.azure.com/openai/v1/responses?api-version=v1");
  options.azure_api_version = "2025-04-01-preview";
  options.azure_deployments =
      rebound::session::llm::parse_deployment_map("gpt-5=prod-gpt5, m2 = dep2,broken,=x,y=");
  CHECK(options.azure_deployments ==
        std::map<std::string, std::string>{{"gpt-5", "prod-gpt5"}, {"m2", "dep2"}});
  CHECK(endpoint(*azure, "https://r/openai/v1", model, options) ==
        "https://r/openai/v1/responses?api-version=2025-04-01-preview");
  CHECK(azure->headers(std::string("k")) == rebound::session::llm::Headers{{"api-key", "k"}});
  LlmRequest r = request(true, ThinkingLevel::low);
  r.model.id = "gpt-5";
  CHECK(azure->request_body(r, options)["model"] == "prod-gpt5");
  r.model.id = "other";
  CHECK(azure->request_body(r, options)["model"] == "other");
  CHECK(azure->request_body(r, options)["store"] == false);
}

TEST_CASE("Responses request: another model's messages lose their reasoning and item ids") {
  LlmRequest r = request(true, ThinkingLevel::high);
  r.model.provider = "codex";
  r.model.api = "openai-responses";
  // The assistant message came from another model: its thinking (even signed) is dropped, its
  // text gets msg_<index>, its call id (the part before `|`, which fits the API's 64
  // characters) goes with no item id.
  r.messages[1].provider = "anthropic";
  r.messages[1].api = "anthropic-messages";
  r.messages[1].model = "claude";
  r.messages[1].content[0].signature =
      R"({"type":"reasoning","id":"rs_x","encrypted_content":"E"})";
  r.messages[1].content[1].signature = R"({"v":1,"id":"msg_kept"})";
  r.messages[1].content[2].id = "toolu_01:weird.id|fc_9";
  r.messages[2].tool_call_id = "toolu_01:weird.id|fc_9";
  Json b = openai_responses_request_body(r);
  const Json& in = b["input"];
  REQUIRE(in.size() == 6);  // developer, user, text, call, output, user
  CHECK(in[0] == Json::parse(R"({"role":"developer","content":"be brief"})"));
  CHECK(in[1]["content"][1] == Json::parse(R"({"type":"input_image","detail":"auto",)"
                                           R"("image_url":"data:image/png;base64,QUJD"})"));
  CHECK(in[2]["id"] == "msg_1");
  CHECK(in[2]["content"][0] ==
        Json::parse(R"({"type":"output_text","text":"looking","annotations":[]})"));
  CHECK(in[3] ==
        Json::parse(R"({"type":"function_call","call_id":"toolu_01:weird.id","name":"bash",)"
                    R"("arguments":"{\"command\":\"ls\"}"})"));
  CHECK(in[4] == Json::parse(R"({"type":"function_call_output","call_id":"toolu_01:weird.id",)"
                             R"("output":"Tool bash not found"})"));
  CHECK(b["reasoning"] == Json::parse(R"({"effort":"high","summary":"auto"})"));
  // The same model: the reasoning item verbatim, the message's own id, the call's item id.
  r.messages[1].provider = "codex";
  r.messages[1].api = "openai-responses";
  r.messages[1].model = "m1";
  b = openai_responses_request_body(r);
  REQUIRE(b["input"].size() == 7);
  CHECK(b["input"][2] ==
        Json::parse(R"({"type":"reasoning","id":"rs_x","encrypted_content":"E"})"));
  CHECK(b["input"][3]["id"] == "msg_kept");
  CHECK(b["input"][4]["id"] == "fc_9");
  // An id longer than 64 characters, or not the API's own, is not sent back.
  r.messages[1].content[1].signature = R"({"v":1,"id":")" + std::string(65, 'a') + R"("})";
  CHECK(openai_responses_request_body(r)["input"][3]["id"] == "msg_1");
  r.messages[1].content[1].signature = R"({"v":1,"id":"item_7"})";
  CHECK(openai_responses_request_body(r)["input"][3]["id"] == "msg_1");
  // A reasoning item without its encrypted_content is never sent (store:false: the API would
  // answer 404), and neither is one with nothing after it.
  r.messages[1].content[0].signature = R"({"type":"reasoning","id":"rs_x"})";
  CHECK(openai_responses_request_body(r)["input"][2]["type"] == "message");
  r.messages[1].content[0].signature =
      R"({"type":"reasoning","id":"rs_x","encrypted_content":"E"})";
  r.messages[1].content.resize(1);
  r.messages.erase(r.messages.begin() + 2);  // the call's result went with the call
  b = openai_responses_request_body(r);
  for (const auto& item : b["input"])
    CHECK(item.value("type", "") != "reasoning");
}

TEST_CASE("Responses request: thinking level off by model id, xhigh as high, no reasoning flag") {
  // Amendments A19: one table by id; `include` on every request to a reasoning model.
  const Json include = Json::array({"reasoning.encrypted_content"});
  LlmRequest r = request(true, ThinkingLevel::off);
  r.model.id = "gpt-5-codex";
  Json b = openai_responses_request_body(r);
  CHECK_FALSE(b.contains("reasoning"));
  CHECK(b["include"] == include);
  r.model.id = "o4-mini";
  b = openai_responses_request_body(r);
  CHECK_FALSE(b.contains("reasoning"));
  CHECK(b["include"] == include);
  r.model.id = "gpt-5.1-codex";
  CHECK(openai_responses_request_body(r)["reasoning"] == Json::parse(R"({"effort":"none"})"));
  r.model.id = "my-reasoner";  // off the table: section 5.1's `none`
  CHECK(openai_responses_request_body(r)["reasoning"] == Json::parse(R"({"effort":"none"})"));
  r.model.id = "o4-mini";
  r.thinking_level = ThinkingLevel::xhigh;
  CHECK(openai_responses_request_body(r)["reasoning"]["effort"] == "high");
  r.thinking_level = ThinkingLevel::minimal;  // the next higher effort it takes
  CHECK(openai_responses_request_body(r)["reasoning"]["effort"] == "low");
  r.model.id = "gpt-5.1-codex";
  CHECK(openai_responses_request_body(r)["reasoning"]["effort"] == "low");
  r.model.id = "gpt-5-mini";
  CHECK(openai_responses_request_body(r)["reasoning"]["effort"] == "minimal");
  r = request(false, ThinkingLevel::high);
  b = openai_responses_request_body(r);
  CHECK_FALSE(b.contains("reasoning"));
  CHECK_FALSE(b.contains("include"));
  CHECK(b["input"][0]["role"] == "system");
  CHECK_FALSE(b.contains("prompt_cache_key"));  // no session id
  r.session_id = "sid-1";
  CHECK(openai_responses_request_body(r)["prompt_cache_key"] == "sid-1");
}

TEST_CASE("Gemini request: contents in Gemini's roles, key order, tools, signatures") {
  LlmRequest r = request(true, ThinkingLevel::low);
  r.model.id = "gemini-2.5-flash";
  r.model.provider = "google";
  r.model.max_tokens = 65536;
  AgentMessage& a = r.messages[1];  // thinking, text, a bash call
  a.provider = "google";
  a.model = "gemini-2.5-flash";
  a.content[0].signature = "c2lnMQ==";
  a.content[2].signature = "not base64!";
  a.content.push_back(ContentBlock::make_tool_call("call_2", "read", Json::object()));
  AgentMessage second = tool_result();
  second.tool_call_id = "call_2";
  second.tool_name = "read";
  second.is_error = false;
  r.messages.insert(r.messages.begin() + 3, second);  // two results in a row
  rebound::session::ToolDefinition tool;
  tool.name = "read";
  tool.description = "Read a file";
  tool.parameters = Json::parse(R"({"type":"object","properties":{"path":{"type":"string"}}})");
  r.tools = {tool, tool};
  const Json b = gemini_request_body(r);
  std::vector<std::string> keys;
  for (const auto& [k, v] : b.items())
    keys.push_back(k);
  CHECK(keys ==
        std::vector<std::string>{"contents", "systemInstruction", "tools", "generationConfig"});
  CHECK(b["systemInstruction"] == Json::parse(R"({"parts":[{"text":"be brief"}]})"));
  REQUIRE(b["tools"].size() == 1);  // one entry holding every tool
  REQUIRE(b["tools"][0]["functionDeclarations"].size() == 2);
  CHECK(b["tools"][0]["functionDeclarations"][0] ==
        Json{{"name", "read"},
             {"description", "Read a file"},
             {"parametersJsonSchema", tool.parameters}});
  CHECK(
      b["generationConfig"] ==
      Json::parse(
          R"({"maxOutputTokens":65536,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":2048}})"));
  const Json& c = b["contents"];
  REQUIRE(c.size() == 4);
  CHECK(
      c[0] ==
      Json::parse(
          R"({"role":"user","parts":[{"text":"hi"},{"inlineData":{"mimeType":"image/png","data":"QUJD"}}]})"));
  // Same model: the thought goes back with its signature; an invalid signature is left out.
  CHECK(
      c[1] ==
      Json::parse(
          R"({"role":"model","parts":[{"text":"secret","thought":true,"thoughtSignature":"c2lnMQ=="},
          {"text":"looking"},{"functionCall":{"name":"bash","args":{"command":"ls"}}},
          {"functionCall":{"name":"read","args":{}}}]})"));
  CHECK(c[2] == Json::parse(R"({"role":"user","parts":[
          {"functionResponse":{"name":"bash","response":{"error":"Tool bash not found"}}},
          {"functionResponse":{"name":"read","response":{"output":"Tool bash not found"}}}]})"));
  CHECK(c[3] == Json::parse(R"({"role":"user","parts":[{"text":"and?"}]})"));

  // From another model: no thought, no signatures; an assistant left with no part is left out.
  AgentMessage& b1 = r.messages[1];  // `a` went with the insert's reallocation
  b1.model = "gemini-2.5-pro";
  b1.content[1].signature = "c2lnMg==";
  const Json foreign = gemini_request_body(r)["contents"][1];
  CHECK(foreign == Json::parse(R"({"role":"model","parts":[{"text":"looking"},
          {"functionCall":{"name":"bash","args":{"command":"ls"}}},
          {"functionCall":{"name":"read","args":{}}}]})"));
  // Left with no part, it is left out, and so are the results of its calls (no call is left
  // for them to answer).
  b1.content = {ContentBlock::make_thinking("only thought")};
  CHECK(gemini_request_body(r)["contents"].size() == 2);
}

TEST_CASE("Gemini request: the thinking config by model id and level (providers.md 3.1, 5.1)") {
  auto config = [](const std::string& id, ThinkingLevel level, bool reasoning = true) {
    LlmRequest r = request(reasoning, level);
    r.model.id = id;
    const Json b = gemini_request_body(r);
    return b["generationConfig"].value("thinkingConfig", Json());
  };
  using L = ThinkingLevel;
  CHECK(config("gemini-2.5-pro", L::minimal)["thinkingBudget"] == 128);
  CHECK(config("gemini-2.5-pro", L::xhigh)["thinkingBudget"] == 32768);
  CHECK(config("gemini-2.5-flash", L::high)["thinkingBudget"] == 24576);
  CHECK(config("gemini-2.5-flash-lite", L::minimal)["thinkingBudget"] == 512);
  CHECK(config("gemini-2.5-flash-lite", L::medium)["thinkingBudget"] == 8192);
  CHECK(config("some-gemini", L::low) ==
        Json::parse(R"({"includeThoughts":true,"thinkingBudget":-1})"));
  CHECK(config("gemini-3-pro-preview", L::low)["thinkingLevel"] == "LOW");
  CHECK(config("gemini-3.1-pro", L::medium)["thinkingLevel"] == "HIGH");
  CHECK(config("gemini-3-flash", L::minimal)["thinkingLevel"] == "MINIMAL");
  CHECK(config("gemini-3.5-flash", L::medium)["thinkingLevel"] == "MEDIUM");
  // off: 2.5 Pro cannot switch thinking off, Gemini 3 neither; the others take a budget of 0.
  CHECK(config("gemini-2.5-pro", L::off).is_null());
  CHECK(config("gemini-3-pro", L::off) == Json::parse(R"({"thinkingLevel":"LOW"})"));
  CHECK(config("gemini-3-flash", L::off) == Json::parse(R"({"thinkingLevel":"MINIMAL"})"));
  CHECK(config("gemini-2.5-flash", L::off) == Json::parse(R"({"thinkingBudget":0})"));
  // Without the reasoning flag: none at any level.
  CHECK(config("gemini-2.5-flash", L::high, false).is_null());
}
