#pragma once
// A fake LLM service that refuses what the real ones refuse (providers.md section 7.5). One
// server on 127.0.0.1 speaks the four wire APIs by path: Anthropic Messages (/v1/messages),
// OpenAI Chat Completions (/chat/completions), OpenAI Responses (/responses) and Google Gemini
// (/models/<id>:streamGenerateContent). Each request is first held to the documented rules of
// its API (the check_* functions, each rule with the documentation it comes from); a request
// that breaks one is answered with that API's real status and error body and recorded, so a
// test that sent it fails. An accepted request is answered with the next queued StrictTurn,
// rendered as that API streams it, with signatures, encrypted reasoning and call ids the fake
// issues per model and later checks. Anthropic's prompt caching is accounted as documented.

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "protocol/json.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/strict_rules.h"

namespace rebound::testing {

struct StrictCall {
  std::string name;
  protocol::Json arguments;
};

/// One answer, rendered in the API of the request that gets it.
struct StrictTurn {
  std::string text = "ok";
  std::vector<StrictCall> calls;
  /// Streamed first, when the request lets the model think (Anthropic: thinking enabled;
  /// Responses: a reasoning model not at effort none; Gemini: includeThoughts).
  std::string thinking = "Thinking it over.";
  bool redacted = false;  // Anthropic: a redacted_thinking block instead
  /// overloaded: the API's overload status; cut: the connection drops halfway; overflow: the
  /// API's context-length refusal (which sends the session to compaction).
  enum class Fault { none, overloaded, cut, overflow } fault = Fault::none;
  std::int64_t delay_before_ms = 0;  // before the response's headers
};

struct StrictExchange {
  std::string api;  // "anthropic", "chat", "responses", "gemini", or "unknown"
  std::string model;
  std::string target;
  std::map<std::string, std::string> headers;
  protocol::Json body;
  std::optional<Refusal> refusal;
  AnthropicCache::Usage cache;  // Anthropic: how its input was billed
};

class StrictLlm {
 public:
  StrictLlm();
  StrictLlm(const StrictLlm&) = delete;
  StrictLlm& operator=(const StrictLlm&) = delete;

  /// http://127.0.0.1:<port>; the API is chosen by the path the client appends.
  std::string base_url() const { return server_.base_url(); }
  /// Queues answers; with none queued, a request gets a plain StrictTurn.
  void push(StrictTurn turn);
  std::vector<StrictExchange> exchanges() const;
  /// Every refusal so far, one line each ("" when every request was accepted).
  std::string refusals() const;

 private:
  FakeResponse answer(const ReceivedRequest& request);

  mutable std::mutex mutex_;
  std::deque<StrictTurn> turns_;
  Issued issued_;
  AnthropicCache cache_;
  std::vector<StrictExchange> exchanges_;
  int ids_ = 0;
  FakeLlmServer server_;  // last: it answers through the members above
};

}  // namespace rebound::testing
