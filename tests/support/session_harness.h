#pragma once
// An AgentSession wired to test doubles: manual time, captured events, in-memory settings, the
// real scripted provider with a given script, and a credential store that says what the test
// wants. Members are declared so that the session goes first on destruction.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "session/agent_session.h"
#include "session/llm/script.h"
#include "session/llm/scripted_provider.h"
#include "tests/support/capturing_sink.h"
#include "tests/support/fake_shell.h"
#include "tests/support/manual_scheduler.h"
#include "tests/support/memory_session_storage.h"
#include "tests/support/memory_settings_store.h"

namespace rebound::testing {

class FakeCredentials : public session::CredentialStore {
 public:
  bool mark_usage_limit_reached(const std::string& provider, const std::string& session_id,
                                std::optional<std::int64_t> retry_after_ms) override {
    calls.push_back({provider, session_id, retry_after_ms});
    return another_available;
  }
  struct Call {
    std::string provider, session_id;
    std::optional<std::int64_t> retry_after_ms;
  };
  std::vector<Call> calls;
  bool another_available = false;
};

/// The error text of a session result, or "" when it succeeded.
template <typename T>
std::string error_of(const session::Result<T>& result) {
  return result ? std::string() : result.error().message;
}

/// Parses a script given as JSON text; fails the test when it is unusable.
inline std::vector<session::llm::ScriptStep> script_of(const std::string& json) {
  auto parsed = session::llm::parse_script(protocol::Json::parse(json));
  if (!parsed.error.empty()) throw std::runtime_error(parsed.error);
  return parsed.steps;
}

struct SessionHarness {
  explicit SessionHarness(std::optional<std::string> script_json = std::nullopt,
                          protocol::Json settings = protocol::Json::object(),
                          protocol::Model model = session::scripted_model("script"))
      : store(std::move(settings)),
        provider(scheduler, script_json ? std::optional(script_of(*script_json)) : std::nullopt,
                 [this](const protocol::Json& line) { requests.push_back(line); }),
        session({std::move(model), "sid-test",
                 [this](const std::string& p) { return unavailable.count(p) == 0; }},
                session::ModelRegistry::with_builtins(), deps(sink)) {}

  /// The harness's doubles as a session's dependencies, with `events` as its sink (for a
  /// second session beside the harness's own).
  session::SessionDeps deps(session::EventSink& events) {
    return {scheduler, events, provider, credentials, store, files, shell, tools};
  }

  /// Sends a prompt; returns the rejection text, or "" when accepted.
  std::string prompt(const std::string& text,
                     std::optional<protocol::StreamingBehavior> behavior = std::nullopt,
                     session::Completion done = {}) {
    auto status = session.prompt(
        {text, {}}, behavior, [] {}, std::move(done));
    return status ? std::string() : status.error().message;
  }

  std::set<std::string> unavailable{"openai", "anthropic", "google"};  // providers without a key
  ManualScheduler scheduler;
  CapturingSink sink;
  MemorySettingsStore store;
  FakeCredentials credentials;
  MemorySessionStorage files;
  FakeShell shell;
  session::ToolRegistry tools;
  std::vector<protocol::Json> requests;  // what the provider was sent (script-log lines)
  session::llm::ScriptedProvider provider;
  session::AgentSession session;
};

}  // namespace rebound::testing
