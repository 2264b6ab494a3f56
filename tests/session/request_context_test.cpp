// What every wire API's request is built from (session/llm/request_context.h): the sendable
// context (runtime.md section 2), the tool-call id mapping of amendments A20, and the models.json
// header values of providers.md section 7.4 (amendments A30).

#include "session/llm/request_context.h"

#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>

#include "config/models_file.h"
#include "session/llm/wire_api.h"
#include "session/settings.h"
#include "tests/support/temp_dir.h"

using namespace rebound;
using namespace rebound::session::llm;
using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::Json;
using protocol::Role;

namespace {

AgentMessage user(const std::string& text) {
  AgentMessage m;
  m.role = Role::user;
  m.content.push_back(ContentBlock::make_text(text));
  return m;
}

AgentMessage calls(std::vector<std::string> ids,
                   protocol::StopReason stop = protocol::StopReason::tool_use) {
  AgentMessage m;
  m.role = Role::assistant;
  for (const auto& id : ids)
    m.content.push_back(ContentBlock::make_tool_call(id, "read", Json::object()));
  m.stop_reason = stop;
  return m;
}

AgentMessage result(const std::string& id) {
  AgentMessage m;
  m.role = Role::tool_result;
  m.tool_call_id = id;
  m.tool_name = "read";
  m.content.push_back(ContentBlock::make_text("r"));
  return m;
}

std::vector<std::string> shape(const std::vector<AgentMessage>& messages) {
  std::vector<std::string> out;
  for (const auto& m : messages) {
    if (m.role == Role::user) out.push_back("user");
    if (m.role == Role::assistant) out.push_back("assistant");
    if (m.role == Role::tool_result)
      out.push_back("result:" + m.tool_call_id + (m.is_error ? ":" + m.text() : ""));
  }
  return out;
}

}  // namespace

TEST_CASE("sendable context: unanswered calls get No result provided, orphan results go") {
  using V = std::vector<std::string>;
  // A file cut off mid-batch: the second call has no result; the next user message follows.
  CHECK(shape(sendable_context({user("a"), calls({"c1", "c2"}), result("c1"), user("b")})) ==
        V{"user", "assistant", "result:c1", "result:c2:No result provided", "user"});
  // At the end of the context too.
  CHECK(shape(sendable_context({user("a"), calls({"c1"})})) ==
        V{"user", "assistant", "result:c1:No result provided"});
  // A result whose call compaction cut away, and one answering a failed (left out) turn.
  CHECK(shape(sendable_context({result("gone"), user("a"),
                                calls({"c9"}, protocol::StopReason::aborted), result("c9"),
                                user("b")})) == V{"user", "user"});
  // Results in another order than the calls are kept in theirs; a second result for one call
  // is left out.
  CHECK(shape(sendable_context(
            {user("a"), calls({"c1", "c2"}), result("c2"), result("c1"), result("c1")})) ==
        V{"user", "assistant", "result:c2", "result:c1"});
}

TEST_CASE("sendable context: a call id repeated in one turn is sent apart, answered in order") {
  // A provider that repeats an id: the second call and the second result with it go as `c1#2`
  // (found by fuzz_request: the APIs refuse two calls with one id).
  const auto sent =
      sendable_context({user("a"), calls({"c1", "c1", "c2"}), result("c1"), result("c1")});
  CHECK(shape(sent) == std::vector<std::string>{"user", "assistant", "result:c1", "result:c1#2",
                                                "result:c2:No result provided"});
  CHECK(sent[1].content[0].id == "c1");
  CHECK(sent[1].content[1].id == "c1#2");
  CHECK(sent[1].content[2].id == "c2");
}

TEST_CASE("tool-call ids: kept when the API takes them, else a prefix and FNV-1a hash (A20)") {
  CHECK(mapped_tool_id("toolu_01A-b", kAnthropicIds) == "toolu_01A-b");
  CHECK(mapped_tool_id("call_abc", kChatCompletionsIds) == "call_abc");
  // FNV-1a-32 of "call_1|fc_1" is 0x8e4d1b2d... computed here for the test's own check.
  auto fnv = [](const std::string& s) {
    std::uint32_t h = 2166136261u;
    for (unsigned char c : s) {
      h ^= c;
      h *= 16777619u;
    }
    char buf[9];
    std::snprintf(buf, sizeof buf, "%08x", h);
    return std::string(buf);
  };
  CHECK(mapped_tool_id("call_1|fc_1", kAnthropicIds) == "call_1_fc_1_" + fnv("call_1|fc_1"));
  // Chat Completions takes any character but only 40 of them.
  const std::string long_id = "call_" + std::string(40, 'x') + "|fc_" + std::string(36, 'y');
  const std::string chat = mapped_tool_id(long_id, kChatCompletionsIds);
  CHECK(chat.size() == 40);
  CHECK(chat == long_id.substr(0, 31) + "_" + fnv(long_id));
  CHECK(mapped_tool_id(long_id, kAnthropicIds).size() == 64);
  CHECK(mapped_tool_id("", kAnthropicIds) == "_" + fnv(""));
  // Depends on the id alone: the same id maps the same way every time.
  CHECK(mapped_tool_id(long_id, kChatCompletionsIds) == chat);
}

TEST_CASE("tool-call ids of one request: calls and results agree, two ids never meet") {
  // Two ids that map to the same prefix and hash cannot be built by hand; two that differ only
  // in a character the pattern replaces map apart by their hashes, and a later id equal to an
  // earlier mapped one gets _2.
  const std::string a = "x|1", b = "x_1";
  const std::string mapped_a = mapped_tool_id(a, kAnthropicIds);
  const ToolIdMap ids({user("q"), calls({a, b, mapped_a})}, kAnthropicIds);
  CHECK(ids(a) == mapped_a);
  CHECK(ids(b) == "x_1");
  CHECK(ids(mapped_a) == mapped_a + "_2");
  // The Responses API's key: the part before `|`.
  const ToolIdMap responses({calls({"call_9|fc_9"})}, kResponsesCallIds,
                            [](const std::string& id) { return id.substr(0, id.find('|')); });
  CHECK(responses("call_9|fc_9") == "call_9");
}

TEST_CASE("models.json header values: variables, ${VAR}, commands refused, never the key header") {
  const std::map<std::string, std::string> env{{"TOKEN", "t0k"}, {"TEAM", "blue"}};
  const Getenv getenv = [&](const std::string& name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  CHECK(header_value("TOKEN", getenv).value() == "t0k");
  CHECK(header_value("UNSET_NAME", getenv).value() == "UNSET_NAME");
  CHECK(header_value("Bearer ${TOKEN}", getenv).value() == "Bearer t0k");
  CHECK(header_value("${TEAM}-${UNSET}-x", getenv).value() == "blue--x");
  CHECK(header_value("${not a var}", getenv).value() == "${not a var}");
  const auto command = header_value("!cat ~/.key", getenv);
  CHECK_FALSE(command);
  CHECK(command.error().message.find("not run") != std::string::npos);
  const Getenv crlf = [](const std::string&) -> std::optional<std::string> {
    return std::string("a\r\nx-injected: 1");
  };
  const auto injected = header_value("${X}", crlf);
  CHECK_FALSE(injected);
  CHECK(injected.error().message.find("control character") != std::string::npos);
  CHECK(auth_header("Authorization"));
  CHECK(auth_header("X-API-KEY"));
  CHECK(auth_header("api-key"));
  CHECK(auth_header("x-goog-api-key"));
  CHECK_FALSE(auth_header("x-gateway"));
}

TEST_CASE("models.json headers: a provider's under a model's, bad entries warned about") {
  testing::TempDir dir;
  const auto path = dir.write("models.json", R"({"providers":{"gw":{"baseUrl":"http://h",
    "headers":{"X-Team":"a","x-env":"E","bad":5},
    "models":[{"id":"m1","headers":{"x-team":"b"},"compat":{"promptCacheKey":true}},
              {"id":"m2"}]},
    "anthropic":{"headers":{"x-gateway":"${GW}"}}}})");
  const config::ModelsFile file = config::read_models_file(path);
  REQUIRE(file.models.size() == 2);
  using H = std::vector<std::pair<std::string, std::string>>;
  CHECK(file.models[0].headers == H{{"x-env", "E"}, {"x-team", "b"}});
  CHECK(file.models[0].prompt_cache_key);
  CHECK(file.models[1].headers == H{{"X-Team", "a"}, {"x-env", "E"}});
  CHECK_FALSE(file.models[1].prompt_cache_key);
  REQUIRE(file.warnings.size() == 1);
  CHECK(file.warnings[0].find("'bad' is not a string") != std::string::npos);
}

TEST_CASE("settings: cacheRetention") {
  std::vector<std::string> warnings;
  CHECK(session::settings_from_json(Json::object(), warnings).cache_retention ==
        protocol::CacheRetention::short_term);
  CHECK(session::settings_from_json(Json{{"cacheRetention", "long"}}, warnings).cache_retention ==
        protocol::CacheRetention::long_term);
  CHECK(session::settings_from_json(Json{{"cacheRetention", "none"}}, warnings).cache_retention ==
        protocol::CacheRetention::none);
  CHECK(warnings.empty());
  CHECK(
      session::settings_from_json(Json{{"cacheRetention", "forever"}}, warnings).cache_retention ==
      protocol::CacheRetention::short_term);
  REQUIRE(warnings.size() == 1);
  CHECK(warnings[0].find("cacheRetention") != std::string::npos);
}
