#pragma once
// The fake LLM's streams for the OpenAI Responses and Gemini APIs (providers.md sections 2, 3),
// shaped as the services send them, and the named scenarios built from them. The e2e tests run
// Rebound against these streams; tests/node/provider_sdk.test.mjs runs the official SDKs
// (npm `openai`, `@google/genai`) against the same scenarios through fake_llm_scenarios, so a
// stream the SDKs would not parse fails there instead of passing here unnoticed.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "protocol/json.h"
#include "tests/support/fake_llm_server.h"

namespace rebound::testing {

/// A Responses stream as the service sends it: `response.created`, then each output item with
/// its own output_index (added, parts, deltas, done), then one terminal event whose response
/// holds the items; every event with its sequence_number.
class ResponsesStream {
 public:
  using Json = protocol::Json;

  explicit ResponsesStream(std::string response_id = "resp_1") : id_(std::move(response_id)) {
    add(Json{{"type", "response.created"}, {"response", response("in_progress")}});
    add(Json{{"type", "response.in_progress"}, {"response", response("in_progress")}});
  }

  /// A reasoning item whose summary parts are streamed one delta each.
  ResponsesStream& reasoning(const std::string& item_id, const std::vector<std::string>& summaries,
                             const std::string& encrypted = "ENC") {
    const int index = next_index();
    add(item_event("response.output_item.added", index,
                   Json{{"id", item_id}, {"type", "reasoning"}, {"summary", Json::array()}}));
    Json summary = Json::array();
    for (std::size_t i = 0; i < summaries.size(); ++i) {
      const Json empty{{"type", "summary_text"}, {"text", ""}};
      const Json full{{"type", "summary_text"}, {"text", summaries[i]}};
      add(Json{{"type", "response.reasoning_summary_part.added"},
               {"item_id", item_id},
               {"output_index", index},
               {"summary_index", i},
               {"part", empty}});
      add(Json{{"type", "response.reasoning_summary_text.delta"},
               {"item_id", item_id},
               {"output_index", index},
               {"summary_index", i},
               {"delta", summaries[i]}});
      add(Json{{"type", "response.reasoning_summary_text.done"},
               {"item_id", item_id},
               {"output_index", index},
               {"summary_index", i},
               {"text", summaries[i]}});
      add(Json{{"type", "response.reasoning_summary_part.done"},
               {"item_id", item_id},
               {"output_index", index},
               {"summary_index", i},
               {"part", full}});
      summary.push_back(full);
    }
    Json item{{"id", item_id}, {"type", "reasoning"}, {"summary", std::move(summary)}};
    // Without `include:["reasoning.encrypted_content"]` the service sends none (empty here).
    if (!encrypted.empty()) item["encrypted_content"] = encrypted;
    done_item(index, item);
    return *this;
  }

  /// An assistant message whose one output_text part is streamed as `deltas`.
  ResponsesStream& message(const std::string& item_id, const std::vector<std::string>& deltas) {
    const int index = next_index();
    add(item_event("response.output_item.added", index,
                   Json{{"id", item_id},
                        {"type", "message"},
                        {"status", "in_progress"},
                        {"role", "assistant"},
                        {"content", Json::array()}}));
    const Json empty{{"type", "output_text"}, {"annotations", Json::array()}, {"text", ""}};
    add(part_event("response.content_part.added", item_id, index, empty));
    std::string text;
    for (const auto& d : deltas) {
      add(Json{{"type", "response.output_text.delta"},
               {"item_id", item_id},
               {"output_index", index},
               {"content_index", 0},
               {"delta", d}});
      text += d;
    }
    if (cut_inside_) return *this;
    add(Json{{"type", "response.output_text.done"},
             {"item_id", item_id},
             {"output_index", index},
             {"content_index", 0},
             {"text", text}});
    Json full = empty;
    full["text"] = text;
    add(part_event("response.content_part.done", item_id, index, full));
    done_item(index, Json{{"id", item_id},
                          {"type", "message"},
                          {"status", "completed"},
                          {"role", "assistant"},
                          {"content", Json::array({full})}});
    return *this;
  }

  /// A function call whose arguments are streamed as `deltas`; the done event carries
  /// `arguments` whole (which may extend what was streamed).
  ResponsesStream& function_call(const std::string& item_id, const std::string& call_id,
                                 const std::string& name, const std::vector<std::string>& deltas,
                                 const std::string& arguments) {
    const int index = next_index();
    Json item{{"id", item_id},   {"type", "function_call"}, {"status", "in_progress"},
              {"arguments", ""}, {"call_id", call_id},      {"name", name}};
    add(item_event("response.output_item.added", index, item));
    for (const auto& d : deltas)
      add(Json{{"type", "response.function_call_arguments.delta"},
               {"item_id", item_id},
               {"output_index", index},
               {"delta", d}});
    add(Json{{"type", "response.function_call_arguments.done"},
             {"item_id", item_id},
             {"output_index", index},
             {"arguments", arguments}});
    item["status"] = "completed";
    item["arguments"] = arguments;
    done_item(index, item);
    return *this;
  }

  /// Stops the next message() after its deltas (no done events), for a cut stream.
  ResponsesStream& cut_inside_next_message() {
    cut_inside_ = true;
    return *this;
  }

  FakeResponse completed(std::int64_t input, std::int64_t cached, std::int64_t output) {
    return terminal("response.completed", "completed", input, cached, output);
  }
  FakeResponse incomplete(std::int64_t input, std::int64_t cached, std::int64_t output) {
    return terminal("response.incomplete", "incomplete", input, cached, output);
  }
  FakeResponse failed(const std::string& code, const std::string& message) {
    Json r = response("failed");
    r["error"] = Json{{"code", code}, {"message", message}};
    add(Json{{"type", "response.failed"}, {"response", r}});
    return take();
  }
  FakeResponse error_event(const std::string& code, const std::string& message) {
    add(Json{{"type", "error"}, {"code", code}, {"message", message}, {"param", nullptr}});
    return take();
  }
  /// The body ends cleanly with no terminal event.
  FakeResponse cut() { return take(); }
  /// The connection is dropped after the events so far.
  FakeResponse dropped() {
    FakeResponse r = take();
    r.drop_after_chunks = true;
    return r;
  }

 private:
  Json response(const std::string& status) const {
    return Json{{"id", id_},
                {"object", "response"},
                {"created_at", 1765000000},
                {"status", status},
                {"model", "m1"},
                {"output", output_},
                {"error", nullptr},
                {"incomplete_details", nullptr}};
  }
  int next_index() const { return static_cast<int>(output_.size()); }
  Json item_event(const char* type, int index, const Json& item) const {
    return Json{{"type", type}, {"output_index", index}, {"item", item}};
  }
  Json part_event(const char* type, const std::string& item_id, int index, const Json& part) const {
    return Json{{"type", type},
                {"item_id", item_id},
                {"output_index", index},
                {"content_index", 0},
                {"part", part}};
  }
  void done_item(int index, const Json& item) {
    add(item_event("response.output_item.done", index, item));
    output_.push_back(item);
  }
  void add(Json event) {
    event["sequence_number"] = sequence_++;
    chunks_.push_back(FakeLlmServer::sse(event["type"].get<std::string>(), event.dump()));
  }
  FakeResponse terminal(const char* type, const char* status, std::int64_t input,
                        std::int64_t cached, std::int64_t output) {
    Json r = response(status);
    r["usage"] = Json{{"input_tokens", input},
                      {"input_tokens_details", {{"cached_tokens", cached}}},
                      {"output_tokens", output},
                      {"output_tokens_details", {{"reasoning_tokens", 0}}},
                      {"total_tokens", input + output}};
    if (std::string(status) == "incomplete")
      r["incomplete_details"] = Json{{"reason", "max_output_tokens"}};
    add(Json{{"type", type}, {"response", r}});
    return take();
  }
  FakeResponse take() {
    FakeResponse r;
    r.chunks = std::move(chunks_);
    return r;
  }

  std::string id_;
  Json output_ = Json::array();
  std::vector<std::string> chunks_;
  std::int64_t sequence_ = 0;
  bool cut_inside_ = false;
};

/// A text answer streamed as two deltas, 10 input tokens (4 cached), 3 output.
inline FakeResponse responses_text(const std::string& a, const std::string& b) {
  return ResponsesStream().message("msg_abc", {a, b}).completed(10, 4, 3);
}

/// An HTTP error with OpenAI's body.
inline FakeResponse openai_http_error(
    int status, const std::string& message, const std::string& code,
    std::vector<std::pair<std::string, std::string>> headers = {}) {
  FakeResponse r;
  r.status = status;
  r.headers = std::move(headers);  // the fake adds Content-Type and Content-Length
  r.chunks = {protocol::Json{
      {"error", {{"message", message}, {"type", "error"}, {"param", nullptr}, {"code", code}}}}
                  .dump()};
  return r;
}

// --- Gemini ---------------------------------------------------------------------------------

/// One GenerateContentResponse event as the service frames it (CRLF CRLF).
inline std::string gemini_event(const protocol::Json& parts, const std::string& finish = "",
                                const protocol::Json& usage = protocol::Json()) {
  using protocol::Json;
  Json candidate{{"content", {{"parts", parts}, {"role", "model"}}}, {"index", 0}};
  if (!finish.empty()) candidate["finishReason"] = finish;
  Json r{{"candidates", Json::array({candidate})}};
  if (!usage.is_null()) r["usageMetadata"] = usage;
  r["modelVersion"] = "m1";
  r["responseId"] = "gem-resp-1";
  return "data: " + r.dump() + "\r\n\r\n";
}

inline protocol::Json gemini_usage(int prompt, int cached, int out, int thoughts = 0) {
  return protocol::Json{{"promptTokenCount", prompt},
                        {"cachedContentTokenCount", cached},
                        {"candidatesTokenCount", out},
                        {"thoughtsTokenCount", thoughts},
                        {"totalTokenCount", prompt + out + thoughts}};
}

inline FakeResponse gemini_stream(std::vector<std::string> events) {
  FakeResponse r;
  r.chunks = std::move(events);
  return r;
}

/// A text answer in two events, 10 prompt tokens (4 cached), 3 output.
inline FakeResponse gemini_text(const std::string& a, const std::string& b) {
  using protocol::Json;
  return gemini_stream(
      {gemini_event(Json::array({Json{{"text", a}}})),
       gemini_event(Json::array({Json{{"text", b}}}), "STOP", gemini_usage(10, 4, 3))});
}

/// An HTTP error with Google's body.
inline FakeResponse gemini_http_error(int status, const std::string& state,
                                      const std::string& message,
                                      const protocol::Json& details = protocol::Json()) {
  using protocol::Json;
  Json error{{"code", status}, {"message", message}, {"status", state}};
  if (!details.is_null()) error["details"] = details;
  FakeResponse r;
  r.status = status;
  r.chunks = {Json{{"error", error}}.dump(2)};
  return r;
}

/// The failure the service writes into a 200 stream: a bare JSON object, sent as its own
/// network read (the SDK looks for it in one read), after `before`.
inline FakeResponse gemini_in_stream_error(std::vector<std::string> before, int code,
                                           const std::string& state, const std::string& message) {
  FakeResponse r = gemini_stream(std::move(before));
  r.chunks.push_back(
      protocol::Json{{"error", {{"code", code}, {"message", message}, {"status", state}}}}.dump() +
      "\n");
  r.chunk_delay_ms = 40;
  return r;
}

// --- The scenarios both sides run ------------------------------------------------------------

/// A named stream and what a reader of it must accumulate. `expect` has `text` (the answer's
/// text), `thinking` (reasoning summaries or thoughts, joined by "\n\n"), `calls`
/// ([{name, arguments}]), `end` (the Responses status or the Gemini finish reason, "" for
/// none) and, where the stream fails, `error` (a text the failure's message holds) and
/// `status` (its HTTP or error code).
struct ProviderScenario {
  std::string name;
  FakeResponse response;
  protocol::Json expect;
};

inline protocol::Json scenario_expect(const std::string& text, const std::string& end,
                                      protocol::Json calls = protocol::Json::array(),
                                      const std::string& thinking = "") {
  return protocol::Json{
      {"text", text}, {"thinking", thinking}, {"calls", std::move(calls)}, {"end", end}};
}

inline protocol::Json scenario_failure(const std::string& error, int status,
                                       const std::string& text = "") {
  protocol::Json e = scenario_expect(text, "");
  e["error"] = error;
  e["status"] = status;
  return e;
}

inline const char* kOverflowText =
    "Your input exceeds the context window of this model. Please adjust your input and try "
    "again.";

inline std::vector<ProviderScenario> responses_scenarios() {
  using protocol::Json;
  const Json bash_call =
      Json::array({Json{{"name", "bash"}, {"arguments", {{"command", "echo hi"}}}}});
  return {
      {"text", responses_text("Hel", "lo"), scenario_expect("Hello", "completed")},
      {"reasoning_tool_call",
       ResponsesStream()
           .reasoning("rs_1", {"Plan A", "Plan B"})
           .function_call("fc_1", "call_1", "bash", {R"({"command":)"}, R"({"command":"echo hi"})")
           .completed(20, 0, 5),
       scenario_expect("", "completed", bash_call, "Plan A\n\nPlan B")},
      {"incomplete", ResponsesStream().message("msg_abc", {"par", "tial"}).incomplete(7, 0, 2),
       scenario_expect("partial", "incomplete")},
      {"failed_overflow", ResponsesStream().failed("context_length_exceeded", kOverflowText),
       scenario_expect("", "failed")},
      {"error_event", ResponsesStream().error_event("rate_limit_exceeded", "Rate limit reached"),
       scenario_failure("Rate limit reached", 0)},
      {"cut", ResponsesStream().message("msg_abc", {"half", "way"}).cut(),
       scenario_expect("halfway", "in_progress")},
      {"dropped",
       ResponsesStream().cut_inside_next_message().message("msg_abc", {"half"}).dropped(),
       scenario_failure("", 0, "half")},
      {"http_429",
       openai_http_error(429, "Rate limit reached for gpt-5. Please try again in 1s.",
                         "rate_limit_exceeded", {{"retry-after", "2"}}),
       scenario_failure("Rate limit reached for gpt-5", 429)},
  };
}

inline std::vector<ProviderScenario> gemini_scenarios() {
  using protocol::Json;
  FakeResponse dropped = gemini_stream({gemini_event(Json::array({Json{{"text", "half"}}}))});
  dropped.drop_after_chunks = true;
  return {
      {"text", gemini_text("Hel", "lo"), scenario_expect("Hello", "STOP")},
      {"thoughts_signed_call",
       gemini_stream(
           {gemini_event(Json::array({Json{{"text", "I will "}, {"thought", true}}})),
            gemini_event(Json::array({Json{{"text", "read it."}, {"thought", true}}})),
            gemini_event(Json::array({Json{{"text", "Let me read it."}}})),
            gemini_event(Json::array({Json{{"functionCall",
                                            {{"name", "bash"}, {"args", {{"command", "echo hi"}}}}},
                                           {"thoughtSignature", "ZmFrZS1zaWctMA=="}}}),
                         "STOP", gemini_usage(10, 0, 4, 2))}),
       scenario_expect(
           "Let me read it.", "STOP",
           Json::array({Json{{"name", "bash"}, {"arguments", {{"command", "echo hi"}}}}}),
           "I will read it.")},
      {"max_tokens",
       gemini_stream({gemini_event(Json::array({Json{{"text", "par"}}}), "MAX_TOKENS",
                                   gemini_usage(5, 0, 2))}),
       scenario_expect("par", "MAX_TOKENS")},
      {"safety", gemini_stream({gemini_event(Json::array({Json{{"text", "I cannot"}}}), "SAFETY")}),
       scenario_expect("I cannot", "SAFETY")},
      {"prompt_blocked",
       gemini_stream({"data: {\"promptFeedback\":{\"blockReason\":\"SAFETY\"},\"usageMetadata\":"
                      "{\"promptTokenCount\":5,\"totalTokenCount\":5}}\r\n\r\n"}),
       [] {
         protocol::Json e = scenario_expect("", "");
         e["blocked"] = "SAFETY";
         return e;
       }()},
      {"in_stream_error",
       gemini_in_stream_error({gemini_event(Json::array({Json{{"text", "partial"}}}))}, 503,
                              "UNAVAILABLE", "The model is overloaded. Please try again later."),
       scenario_failure("The model is overloaded", 503, "partial")},
      {"cut",
       gemini_stream({gemini_event(Json::array({Json{{"text", "half"}}})),
                      gemini_event(Json::array({Json{{"text", "way"}}}))}),
       scenario_expect("halfway", "")},
      {"dropped", dropped, scenario_failure("", 0, "half")},
      {"http_429",
       gemini_http_error(429, "RESOURCE_EXHAUSTED",
                         "Resource has been exhausted (e.g. check quota).",
                         Json::array({Json{{"@type", "type.googleapis.com/google.rpc.RetryInfo"},
                                           {"retryDelay", "1.5s"}}})),
       scenario_failure("Resource has been exhausted", 429)},
  };
}

/// The scenario of that name (the test fails on an unknown one).
inline ProviderScenario provider_scenario(const std::vector<ProviderScenario>& all,
                                          const std::string& name) {
  for (const auto& s : all)
    if (s.name == name) return s;
  return {name, FakeResponse{}, protocol::Json()};
}

}  // namespace rebound::testing
