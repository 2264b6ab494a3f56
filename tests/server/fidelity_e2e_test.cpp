// Every request is one the real API accepts (providers.md section 7): the real binary against
// the strict fake of tests/support/strict_llm.h, which refuses what Anthropic, OpenAI (Chat
// Completions and Responses) and Google refuse and answers with their real error bodies. Each
// test fails on the first refused request, whatever the session did with the refusal.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/support/rebound_process.h"
#include "tests/support/strict_llm.h"

using namespace rebound;
using namespace rebound::testing;
using namespace std::chrono_literals;
using protocol::Json;

namespace {

// A 1x1 PNG, and the same bytes in base64.
const unsigned char kPngBytes[] = {137, 80, 78,  71,  13,  10,  26, 10, 0,  0,  0,   13,  73,  72,
                                   68,  82, 0,   0,   0,   1,   0,  0,  0,  1,  8,   6,   0,   0,
                                   0,   31, 21,  196, 137, 0,   0,  0,  13, 73, 68,  65,  84,  120,
                                   156, 99, 248, 207, 192, 240, 31, 0,  5,  0,  1,   255, 137, 153,
                                   61,  29, 0,   0,   0,   0,   73, 69, 78, 68, 174, 66,  96,  130};
const std::string kPng(reinterpret_cast<const char*>(kPngBytes), sizeof kPngBytes);
const std::string kPngBase64 =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/"
    "iZk9HQAAAABJRU5ErkJggg==";

Json model(const std::string& id, bool reasoning, std::int64_t context = 200000) {
  return Json{{"id", id},
              {"name", id},
              {"reasoning", reasoning},
              {"input", {"text", "image"}},
              {"contextWindow", context},
              {"maxTokens", 32000},
              {"cost", {{"input", 3}, {"output", 15}, {"cacheRead", 0.3}, {"cacheWrite", 3.75}}}};
}

struct Options {
  std::string provider = "claude";
  std::string model = "claude-sonnet-4-5";
  std::string thinking = "off";
  Json settings = Json::object();  // merged over the defaults
  Json claude_extra = Json::object();
  Json chat_extra = Json::object();
  std::map<std::string, std::string> env;
  bool sessions = false;
  std::int64_t claude_context = 200000;
};

/// One rpc server whose models.json names four providers, one per wire API, all served by the
/// same strict fake.
struct Fidelity {
  explicit Fidelity(const Options& o)
      : r(o.sessions ? std::vector<std::string>{"--session-dir", "@DIR@/sessions"}
                     : std::vector<std::string>{"--no-session"},
          process_options(o), files(llm, o)) {}

  static SubprocessOptions process_options(const Options& o) {
    SubprocessOptions s;
    s.cwd = "@DIR@/work";
    for (const auto& [k, v] : o.env)
      s.env[k] = v;
    return s;
  }
  static ReboundProcess::Files files(const StrictLlm& llm, const Options& o) {
    const std::string base = llm.base_url();
    Json claude{{"api", "anthropic-messages"},
                {"baseUrl", base},
                {"apiKey", "sk-ant-test"},
                {"models", {model("claude-sonnet-4-5", true, o.claude_context)}}};
    claude.update(o.claude_extra);
    Json chat{{"api", "openai-completions"},
              {"baseUrl", base + "/v1"},
              {"apiKey", "sk-chat-test"},
              {"models", {model("gpt-4o", false)}}};
    chat.update(o.chat_extra);
    const Json resp{
        {"api", "openai-responses"},
        {"baseUrl", base + "/v1"},
        {"apiKey", "sk-resp-test"},
        {"models",
         {model("gpt-5", true), model("gpt-5-mini", true), model("gpt-5.1-codex", true)}}};
    const Json gem{
        {"api", "google-generative-ai"},
        {"baseUrl", base + "/v1beta"},
        {"apiKey", "gem-test"},
        {"models", {model("gemini-2.5-flash", true), model("gemini-3-pro-preview", true)}}};
    Json settings{{"defaultProvider", o.provider},
                  {"defaultModel", o.model},
                  {"defaultThinkingLevel", o.thinking},
                  {"retry", {{"baseDelayMs", 20}}},
                  {"compaction", {{"enabled", false}}}};
    settings.merge_patch(o.settings);
    return {{"work/notes.txt", "alpha\nbeta\n"},
            {"work/pic.png", kPng},
            {"agent/settings.json", settings.dump()},
            {"agent/models.json",
             Json{{"providers", {{"claude", claude}, {"chat", chat}, {"resp", resp}, {"gem", gem}}}}
                 .dump()}};
  }

  /// A prompt and every line until its run is over: the agent_end no retry follows.
  std::vector<Json> prompt(const std::string& text, Json images = Json()) {
    Json c{{"id", "p" + std::to_string(++n)}, {"type", "prompt"}, {"message", text}};
    if (!images.is_null()) c["images"] = std::move(images);
    r.send(c);
    return settled();
  }
  std::vector<Json> settled() {
    return r.read_until(
        [](const Json& j) {
          return j["type"] == "agent_end" && j.value("willRetry", false) == false;
        },
        20000ms);
  }
  Json command(Json c) {
    c["id"] = "c" + std::to_string(++n);
    return r.command(c);
  }
  void set_model(const std::string& provider, const std::string& id) {
    const Json answer =
        command(Json{{"type", "set_model"}, {"provider", provider}, {"modelId", id}});
    REQUIRE_MESSAGE(answer["success"] == true, answer.dump());
  }

  StrictLlm llm;
  ReboundProcess r;
  int n = 0;
};

/// A prompt whose answer runs a long bash command, aborted while it runs.
void abort_during_tool_call(Fidelity& f) {
  StrictTurn slow;
  slow.text = "";
  slow.calls = {{"bash", Json{{"command", "sleep 10"}}}};
  f.llm.push(slow);
  f.r.send(Json{{"id", "p0"}, {"type", "prompt"}, {"message", "run it"}});
  f.r.read_until([](const Json& j) { return j["type"] == "tool_execution_start"; }, 20000ms);
  f.r.send(Json{{"id", "a0"}, {"type", "abort"}});
  f.r.read_until([](const Json& j) { return j["type"] == "agent_end"; }, 20000ms);
}

StrictTurn read_call(const std::string& path = "notes.txt") {
  StrictTurn t;
  t.text = "";
  t.calls = {{"read", Json{{"path", path}}}};
  return t;
}

StrictTurn answer(const std::string& text = "done") {
  StrictTurn t;
  t.text = text;
  return t;
}

/// The text of the run's last assistant message, or its error.
std::string outcome(const std::vector<Json>& events) {
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    if ((*it)["type"] != "message_end" || (*it)["message"]["role"] != "assistant") continue;
    const Json& m = (*it)["message"];
    if (m.contains("errorMessage")) return "error: " + m["errorMessage"].get<std::string>();
    std::string text;
    for (const auto& b : m["content"])
      if (b["type"] == "text") text += b["text"].get<std::string>();
    return text;
  }
  return "(no assistant message)";
}

std::size_t count_type(const std::vector<Json>& events, const std::string& type) {
  std::size_t n = 0;
  for (const auto& e : events)
    n += e["type"] == type;
  return n;
}

void expect_accepted(const Fidelity& f) {
  const std::string refused = f.llm.refusals();
  CHECK_MESSAGE(refused.empty(), "refused by the strict fake:\n" << refused);
}

}  // namespace

TEST_CASE("fidelity: thinking on with two tool rounds on each API that has it") {
  struct Case {
    std::string provider, model;
  };
  for (const Case& c : {Case{"claude", "claude-sonnet-4-5"}, Case{"resp", "gpt-5"},
                        Case{"gem", "gemini-2.5-flash"}, Case{"gem", "gemini-3-pro-preview"}}) {
    CAPTURE(c.model);
    Options o;
    o.provider = c.provider;
    o.model = c.model;
    o.thinking = "high";
    Fidelity f(o);
    f.llm.push(read_call());
    f.llm.push(read_call());
    f.llm.push(answer("two rounds"));
    const auto events = f.prompt("read it twice");
    CHECK(outcome(events) == "two rounds");
    expect_accepted(f);
    const auto x = f.llm.exchanges();
    REQUIRE(x.size() == 3);
    if (c.provider == "claude") {
      // Thinking stays on, and each turn's signed thinking block goes back first.
      for (std::size_t i = 1; i < 3; ++i) {
        CHECK(x[i].body["thinking"]["type"] == "enabled");
        const Json& assistant = x[i].body["messages"][2 * i - 1];
        CHECK(assistant["content"][0]["type"] == "thinking");
        CHECK(!assistant["content"][0]["signature"].get<std::string>().empty());
      }
    } else if (c.provider == "resp") {
      std::size_t reasoning = 0;
      for (const auto& item : x[2].body["input"])
        if (item.value("type", "") == "reasoning") {
          ++reasoning;
          CHECK(!item["encrypted_content"].get<std::string>().empty());
        }
      CHECK(reasoning == 2);
    } else {
      std::size_t signed_calls = 0;
      for (const auto& content : x[2].body["contents"])
        for (const auto& part : content["parts"])
          signed_calls += part.contains("functionCall") && part.contains("thoughtSignature");
      CHECK(signed_calls == 2);
    }
  }
}

TEST_CASE("fidelity: the gpt-5 family at every thinking level with a tool round each") {
  // Amendments A19: the effort each model takes, `include` on every request.
  const std::map<std::string, std::vector<std::string>> expected{
      {"gpt-5", {"", "minimal", "low", "medium", "high", "high"}},
      {"gpt-5-mini", {"", "minimal", "low", "medium", "high", "high"}},
      {"gpt-5.1-codex", {"none", "low", "low", "medium", "high", "high"}}};
  const std::vector<std::string> levels{"off", "minimal", "low", "medium", "high", "xhigh"};
  for (const auto& [id, efforts] : expected) {
    CAPTURE(id);
    Options o;
    o.provider = "resp";
    o.model = id;
    Fidelity f(o);
    for (std::size_t i = 0; i < levels.size(); ++i) {
      CAPTURE(levels[i]);
      f.command(Json{{"type", "set_thinking_level"}, {"level", levels[i]}});
      f.llm.push(read_call());
      f.llm.push(answer());
      CHECK(outcome(f.prompt("go")) == "done");
      const auto x = f.llm.exchanges();
      REQUIRE(x.size() == 2 * (i + 1));
      for (std::size_t k = x.size() - 2; k < x.size(); ++k) {
        const Json& body = x[k].body;
        CHECK(body["include"] == Json::array({"reasoning.encrypted_content"}));
        if (efforts[i].empty()) {
          CHECK_FALSE(body.contains("reasoning"));
        } else {
          CHECK(body["reasoning"]["effort"] == efforts[i]);
        }
      }
    }
    expect_accepted(f);
  }
}

TEST_CASE(
    "fidelity: Claude to Chat Completions to Responses to Gemini to Claude with tool calls kept") {
  Options o;
  o.thinking = "high";
  Fidelity f(o);
  const std::vector<std::pair<std::string, std::string>> path{{"claude", "claude-sonnet-4-5"},
                                                              {"chat", "gpt-4o"},
                                                              {"resp", "gpt-5"},
                                                              {"gem", "gemini-3-pro-preview"},
                                                              {"claude", "claude-sonnet-4-5"}};
  for (std::size_t i = 0; i < path.size(); ++i) {
    CAPTURE(path[i].second);
    if (i > 0) f.set_model(path[i].first, path[i].second);
    f.llm.push(read_call());
    f.llm.push(answer("answer " + std::to_string(i)));
    CHECK(outcome(f.prompt("step " + std::to_string(i))) == "answer " + std::to_string(i));
    // The level chosen survives gpt-4o, which cannot reason (amendments A23).
    const Json state = f.command(Json{{"type", "get_state"}})["data"];
    CHECK(state["thinkingLevel"] == (path[i].first == "chat" ? "off" : "high"));
  }
  expect_accepted(f);
  const auto x = f.llm.exchanges();
  REQUIRE(x.size() == 10);
  // Chat Completions got every id within 40 characters, Claude every id in its pattern.
  for (const auto& m : x[3].body["messages"])
    if (m.contains("tool_calls"))
      for (const auto& call : m["tool_calls"])
        CHECK(call["id"].get<std::string>().size() <= 40);
  std::size_t foreign_thinking = 0;
  for (const auto& m : x[9].body["messages"])
    for (const auto& b : m["content"]) {
      if (b.value("type", "") == "tool_use") {
        const std::string id = b["id"];
        CHECK(id.find('|') == std::string::npos);
        CHECK(id.size() <= 64);
      }
      foreign_thinking += b.value("type", "") == "thinking";
    }
  // Claude gets back its own two thinking blocks, none of the others' reasoning.
  CHECK(foreign_thinking == 2 + 1);  // the two earlier Claude turns' and this loop's first
}

TEST_CASE(
    "fidelity: abort during a tool call then a new prompt and a retry after a 529 and after a "
    "cut") {
  Options o;
  o.thinking = "high";
  Fidelity f(o);
  abort_during_tool_call(f);
  f.llm.push(read_call());
  StrictTurn overloaded;
  overloaded.fault = StrictTurn::Fault::overloaded;
  f.llm.push(overloaded);
  StrictTurn cut = answer("cut short and never finished");
  cut.fault = StrictTurn::Fault::cut;
  f.llm.push(cut);
  f.llm.push(answer("recovered"));
  const auto events = f.prompt("again");
  CHECK(outcome(events) == "recovered");
  CHECK(count_type(events, "auto_retry_start") == 2);
  expect_accepted(f);
  CHECK(f.llm.exchanges().size() == 5);
}

TEST_CASE(
    "fidelity: a tool loop with no signed thinking goes without thinking and then it returns") {
  // Thinking off while the model calls a tool and the call is aborted: the history holds a
  // Claude tool call with no thinking block, answered. With thinking on, the next prompt's
  // request would be refused (the final assistant message must open with thinking) on every
  // prompt after it; it goes without thinking instead, and the prompt after that thinks again.
  Options o;
  Fidelity f(o);
  abort_during_tool_call(f);
  f.command(Json{{"type", "set_thinking_level"}, {"level", "high"}});
  f.llm.push(answer("first"));
  CHECK(outcome(f.prompt("go on")) == "first");
  f.llm.push(answer("second"));
  CHECK(outcome(f.prompt("and now")) == "second");
  expect_accepted(f);
  const auto x = f.llm.exchanges();
  REQUIRE(x.size() == 3);
  CHECK_FALSE(x[1].body.contains("thinking"));
  CHECK(x[2].body["thinking"]["type"] == "enabled");
}

TEST_CASE("fidelity: images in a prompt and in a tool result on each API") {
  struct Case {
    std::string provider, model;
  };
  for (const Case& c :
       {Case{"claude", "claude-sonnet-4-5"}, Case{"chat", "gpt-4o"}, Case{"resp", "gpt-5"},
        Case{"gem", "gemini-2.5-flash"}, Case{"gem", "gemini-3-pro-preview"}}) {
    CAPTURE(c.model);
    Options o;
    o.provider = c.provider;
    o.model = c.model;
    Fidelity f(o);
    f.llm.push(read_call("pic.png"));
    f.llm.push(answer("a pixel"));
    const auto events = f.prompt(
        "what is this",
        Json::array({Json{{"type", "image"}, {"data", kPngBase64}, {"mimeType", "image/png"}}}));
    CHECK(outcome(events) == "a pixel");
    expect_accepted(f);
    const auto x = f.llm.exchanges();
    REQUIRE(x.size() == 2);
    // The tool's image reached the model in the API's own form (providers.md 7.4, A31).
    const std::string body = x[1].body.dump();
    std::size_t images = 0;
    for (std::size_t at = body.find(kPngBase64.substr(0, 40)); at != std::string::npos;
         at = body.find(kPngBase64.substr(0, 40), at + 1))
      ++images;
    CHECK(images >= 2);  // the prompt's and the tool result's
    if (c.provider == "resp") {
      bool in_output = false;
      for (const auto& item : x[1].body["input"])
        if (item.value("type", "") == "function_call_output" && item["output"].is_array())
          in_output = item["output"].dump().find("input_image") != std::string::npos;
      CHECK(in_output);
    }
    if (c.model == "gemini-3-pro-preview") {
      bool in_response = false;
      for (const auto& content : x[1].body["contents"])
        for (const auto& part : content["parts"])
          if (part.contains("functionResponse"))
            in_response =
                part["functionResponse"].value("parts", Json()).dump().find("inlineData") !=
                std::string::npos;
      CHECK(in_response);
    } else if (c.provider == "gem") {
      CHECK(body.find("Images from the tool results:") != std::string::npos);
    }
  }
}

TEST_CASE("fidelity: models.json headers with ${VAR} and never over the key header") {
  Options o;
  o.provider = "chat";
  o.model = "gpt-4o";
  o.chat_extra = Json{{"headers",
                       {{"x-gateway-token", "${GW_TOKEN}-suffix"},
                        {"x-team", "TEAM_NAME"},
                        {"authorization", "Bearer stolen"},
                        {"x-run", "!cat /etc/passwd"}}}};
  o.env = {{"GW_TOKEN", "gw-secret-5521"}, {"TEAM_NAME", "blue"}};
  Fidelity f(o);
  f.llm.push(answer());
  CHECK(outcome(f.prompt("hi")) == "done");
  expect_accepted(f);
  const auto x = f.llm.exchanges();
  REQUIRE(x.size() == 1);
  CHECK(x[0].headers.at("x-gateway-token") == "gw-secret-5521-suffix");
  CHECK(x[0].headers.at("x-team") == "blue");
  CHECK(x[0].headers.at("authorization") == "Bearer sk-chat-test");
  CHECK_FALSE(x[0].headers.count("x-run"));
  // Chat Completions at a host that is not OpenAI's gets no prompt_cache_key (A30).
  CHECK_FALSE(x[0].body.contains("prompt_cache_key"));
  f.r.proc().close_stdin();
  f.r.proc().wait(5000ms);
  const std::string log = f.r.proc().stderr_text();
  CHECK(log.find("gw-secret-5521") == std::string::npos);
  CHECK(log.find("x-run") != std::string::npos);  // the refused header is named
}

TEST_CASE("fidelity: a 30-turn tool session on Claude reads at least 90% of its input from cache") {
  for (const std::string retention : {"short", "none"}) {
    CAPTURE(retention);
    Options o;
    o.thinking = "high";
    o.settings = Json{{"cacheRetention", retention}};
    Fidelity f(o);
    for (int i = 0; i < 30; ++i)
      f.llm.push(read_call());
    f.llm.push(answer("thirty"));
    const auto events = f.prompt("read it thirty times");
    CHECK(outcome(events) == "thirty");
    expect_accepted(f);
    const auto x = f.llm.exchanges();
    REQUIRE(x.size() == 31);
    std::int64_t read = 0, total = 0;
    for (const auto& e : x) {
      read += e.cache.cache_read;
      total += e.cache.input + e.cache.cache_read + e.cache.cache_write;
    }
    const double share = static_cast<double>(read) / static_cast<double>(total);
    MESSAGE(retention << ": " << read << " of " << total << " input tokens read from cache");
    if (retention == "short") {
      CHECK(share >= 0.90);
      // What the session reports is what the service billed.
      std::int64_t reported = 0;
      for (const auto& e : events)
        if (e["type"] == "message_end" && e["message"]["role"] == "assistant")
          reported += e["message"]["usage"]["cacheRead"].get<std::int64_t>();
      CHECK(reported == read);
    } else {
      CHECK(read == 0);
      CHECK(x[0].body.dump().find("cache_control") == std::string::npos);
    }
  }
}

TEST_CASE("fidelity: REBOUND_CACHE_RETENTION=long marks the 1-hour cache and prices its writes") {
  Options o;
  o.env = {{"REBOUND_CACHE_RETENTION", "long"}};
  Fidelity f(o);
  f.llm.push(read_call());
  f.llm.push(answer());
  const auto events = f.prompt("go");
  CHECK(outcome(events) == "done");
  expect_accepted(f);
  const auto x = f.llm.exchanges();
  REQUIRE(x.size() == 2);
  CHECK(x[1].body["system"][0]["cache_control"] == Json{{"type", "ephemeral"}, {"ttl", "1h"}});
  CHECK(x[1].body["tools"].back()["cache_control"]["ttl"] == "1h");
  // Amendments A30: a 1-hour cache write costs twice the input price.
  for (const auto& e : events)
    if (e["type"] == "message_end" && e["message"]["role"] == "assistant") {
      const Json& u = e["message"]["usage"];
      CHECK(u["cost"]["cacheWrite"].get<double>() ==
            doctest::Approx(u["cacheWrite"].get<double>() * 6 / 1e6));
    }
}

TEST_CASE("fidelity: fork and clone of a session with thinking and tool calls") {
  Options o;
  o.thinking = "high";
  o.sessions = true;
  Fidelity f(o);
  f.llm.push(read_call());
  f.llm.push(answer("one"));
  CHECK(outcome(f.prompt("first")) == "one");
  f.llm.push(read_call());
  f.llm.push(answer("two"));
  CHECK(outcome(f.prompt("second")) == "two");
  REQUIRE(f.command(Json{{"type", "clone"}})["success"] == true);
  f.llm.push(read_call());
  f.llm.push(answer("three"));
  CHECK(outcome(f.prompt("third")) == "three");
  const Json listed = f.command(Json{{"type", "get_fork_messages"}})["data"]["messages"];
  REQUIRE(listed.size() == 3);
  REQUIRE(f.command(Json{{"type", "fork"}, {"entryId", listed[1]["entryId"]}})["success"] == true);
  f.llm.push(read_call());
  f.llm.push(answer("four"));
  CHECK(outcome(f.prompt("second again")) == "four");
  expect_accepted(f);
  CHECK(f.llm.exchanges().size() == 8);
}

TEST_CASE("fidelity: compaction inside a tool loop and then the loop goes on") {
  Options o;
  o.thinking = "high";
  o.settings = Json{{"compaction", {{"enabled", true}, {"keepRecentTokens", 50}}}};
  Fidelity f(o);
  for (int i = 0; i < 3; ++i)
    f.llm.push(read_call());
  StrictTurn overflow;
  overflow.fault = StrictTurn::Fault::overflow;
  f.llm.push(overflow);
  f.llm.push(answer("## Goal\nsummary of the work"));  // the compaction's summary request
  f.llm.push(read_call());
  f.llm.push(answer("after compaction"));
  auto events = f.prompt("keep reading");
  // The overflow's run ends; compaction, then the continued run.
  for (const auto& e : f.r.read_until_type("auto_compaction_end", 20000ms))
    events.push_back(e);
  for (const auto& e : f.settled())
    events.push_back(e);
  CHECK(outcome(events) == "after compaction");
  CHECK(count_type(events, "auto_compaction_start") == 1);
  expect_accepted(f);
}
