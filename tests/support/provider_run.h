#pragma once
// A one-shot run (`-p go --output-format stream-json`) against a fake LLM server through a
// models.json provider of a given wire API (providers.md): for the e2e tests of each API. The
// provider is "fake" with model "m1" and the key "sk-test-canary-123", which no output, log or
// session file may show.

#include <string>
#include <vector>

#include "protocol/json.h"
#include "tests/support/event_summary.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/rebound_process.h"

namespace rebound::testing {

struct ProviderRunOptions {
  std::string api;                // models.json's `api`
  std::string base_path = "/v1";  // appended to the fake's base URL
  bool reasoning = false;         // the model's flag
  std::string thinking = "off";   // defaultThinkingLevel
  std::string model_id = "m1";
  std::map<std::string, std::string> env;
  std::vector<std::string> args = {"--no-session", "-p", "go", "--output-format", "stream-json"};
  bool base_url = true;  // write baseUrl into models.json
};

inline constexpr const char* kCanaryKey = "sk-test-canary-123";

struct ProviderRun {
  ProviderRun(FakeLlmServer& fake, const ProviderRunOptions& o)
      : r(o.args, options(o), files(fake, o)) {
    r.expect_any_exit();
  }

  static SubprocessOptions options(const ProviderRunOptions& o) {
    SubprocessOptions s;
    s.cwd = "@DIR@/work";
    s.stdin_file = "/dev/null";
    for (const auto& [k, v] : o.env)
      s.env[k] = v;
    return s;
  }
  static ReboundProcess::Files files(FakeLlmServer& fake, const ProviderRunOptions& o) {
    const protocol::Json model{
        {"id", o.model_id},
        {"name", "M1"},
        {"reasoning", o.reasoning},
        {"input", {"text"}},
        {"contextWindow", 128000},
        {"maxTokens", 4096},
        {"cost", {{"input", 1}, {"output", 2}, {"cacheRead", 0.5}, {"cacheWrite", 0}}}};
    protocol::Json provider{{"api", o.api}, {"apiKey", kCanaryKey}, {"models", {model}}};
    if (o.base_url) provider["baseUrl"] = fake.base_url() + o.base_path;
    const protocol::Json settings{{"defaultProvider", "fake"},
                                  {"defaultModel", o.model_id},
                                  {"defaultThinkingLevel", o.thinking},
                                  {"retry", {{"baseDelayMs", 20}}}};
    return {{"work/.keep", ""},
            {"agent/settings.json", settings.dump()},
            {"agent/models.json", protocol::Json{{"providers", {{"fake", provider}}}}.dump()}};
  }

  /// Every stdout line, parsed; the run must have written at least one.
  std::vector<protocol::Json> events() {
    std::vector<protocol::Json> out;
    for (const auto& l : r.proc().read_all_lines(std::chrono::milliseconds(20000)))
      out.push_back(protocol::Json::parse(l));
    INFO("stderr: " << r.proc().stderr_text());
    REQUIRE(!out.empty());
    return out;
  }

  /// The key shows nowhere in `events` or the log, not even its distinctive part.
  void check_no_key(const std::vector<protocol::Json>& events) {
    for (const auto& e : events)
      CHECK(e.dump().find("canary") == std::string::npos);
    CHECK(r.proc().stderr_text().find("canary") == std::string::npos);
  }

  ReboundProcess r;
};

/// The last assistant message_end's message.
inline protocol::Json last_assistant(const std::vector<protocol::Json>& events) {
  protocol::Json last;
  for (const auto& e : events)
    if (e.value("type", "") == "message_end" && e["message"]["role"] == "assistant")
      last = e["message"];
  return last;
}

/// The top-level keys of a JSON object, in order.
inline std::vector<std::string> keys_of(const protocol::Json& object) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : object.items())
    keys.push_back(k);
  return keys;
}

}  // namespace rebound::testing
