#include "tests/support/strict_llm.h"

#include <algorithm>

#include "tests/support/provider_streams.h"

namespace rebound::testing {

using protocol::Json;

namespace {

std::string str(const Json& j, const char* key) {
  return json_string(j, key);
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

// --- the server ------------------------------------------------------------------------------

namespace {

std::vector<std::string> split_text(const std::string& text) {
  if (text.size() < 2) return {text};
  const std::size_t half = text.size() / 2;
  return {text.substr(0, half), text.substr(half)};
}

FakeResponse stream_of(std::vector<std::string> chunks) {
  FakeResponse r;
  r.chunks = std::move(chunks);
  return r;
}

FakeResponse refusal_response(const Refusal& refusal) {
  FakeResponse r;
  r.status = refusal.status;
  r.chunks = {refusal.body};
  return r;
}

}  // namespace

StrictLlm::StrictLlm()
    : server_([this](const ReceivedRequest& request, std::size_t) { return answer(request); }) {}

void StrictLlm::push(StrictTurn turn) {
  std::lock_guard<std::mutex> lock(mutex_);
  turns_.push_back(std::move(turn));
}

std::vector<StrictExchange> StrictLlm::exchanges() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return exchanges_;
}

std::string StrictLlm::refusals() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  for (const auto& x : exchanges_)
    if (x.refusal)
      out += x.api + " " + x.model + ": " + std::to_string(x.refusal->status) + " " +
             x.refusal->message + "\n";
  return out;
}

FakeResponse StrictLlm::answer(const ReceivedRequest& request) {
  std::lock_guard<std::mutex> lock(mutex_);
  StrictExchange x;
  x.target = request.target;
  x.headers = request.headers;
  x.body = Json::parse(request.body, nullptr, false);
  const std::string& t = request.target;
  if (t.ends_with("/v1/messages")) {
    x.api = "anthropic";
  } else if (t.ends_with("/chat/completions")) {
    x.api = "chat";
  } else if (t.ends_with("/responses")) {
    x.api = "responses";
  } else if (t.find(":streamGenerateContent") != std::string::npos) {
    x.api = "gemini";
  } else {
    x.api = "unknown";
  }
  x.model = str(x.body, "model");
  if (x.api == "gemini") {
    const std::size_t at = t.find("/models/");
    x.model = at == std::string::npos ? "" : t.substr(at + 8, t.find(':', at) - at - 8);
  }
  if (x.body.is_discarded()) {
    x.refusal = Refusal{400, R"({"error":{"message":"invalid JSON"}})", "invalid JSON"};
  } else if (x.api == "anthropic") {
    x.refusal = check_anthropic(request.headers, x.body, issued_);
  } else if (x.api == "chat") {
    x.refusal = check_chat(x.body);
  } else if (x.api == "responses") {
    x.refusal = check_responses(x.body, issued_);
  } else if (x.api == "gemini") {
    x.refusal = check_gemini(x.model, x.body, issued_);
  } else {
    x.refusal = Refusal{404, R"({"error":{"message":"Not found"}})", "unknown path " + t};
  }
  if (x.refusal) {
    exchanges_.push_back(x);
    return refusal_response(*x.refusal);
  }
  StrictTurn turn;
  if (!turns_.empty()) {
    turn = std::move(turns_.front());
    turns_.pop_front();
  }
  FakeResponse r;
  const int n = ++ids_;
  const std::string sn = std::to_string(n);
  if (turn.fault == StrictTurn::Fault::overloaded) {
    // The services' overload answers: Anthropic 529 overloaded_error, OpenAI and Google 503.
    if (x.api == "anthropic") {
      r = refusal_response(anthropic_error(529, "overloaded_error", "Overloaded"));
    } else if (x.api == "gemini") {
      r = refusal_response(
          gemini_error(503, "The model is overloaded. Please try again later.", "UNAVAILABLE"));
    } else {
      r = refusal_response(
          openai_error(503, "The server is overloaded or not ready yet.", "", "", "server_error"));
    }
    exchanges_.push_back(x);
    r.delay_before_headers_ms = turn.delay_before_ms;
    return r;
  }
  if (turn.fault == StrictTurn::Fault::overflow) {
    // The services' context-length refusals (retry.md's overflow patterns match each).
    if (x.api == "anthropic") {
      r = refusal_response(anthropic_error(400, "invalid_request_error",
                                           "prompt is too long: 250000 tokens > 200000 maximum"));
    } else if (x.api == "gemini") {
      r = refusal_response(gemini_error(
          400,
          "The input token count (1200000) exceeds the maximum number of tokens allowed "
          "(1048576)."));
    } else {
      r = refusal_response(openai_error(
          400,
          "This model's maximum context length is 128000 tokens. However, your messages "
          "resulted in 250000 tokens. Please reduce the length of the messages.",
          "messages", "context_length_exceeded"));
    }
    exchanges_.push_back(x);
    return r;
  }
  const bool tools = !turn.calls.empty();
  if (x.api == "anthropic") {
    x.cache = cache_.account(x.body);
    const bool thinking =
        x.body.contains("thinking") && str(x.body["thinking"], "type") == "enabled";
    auto event = [](const std::string& type, Json data) {
      data["type"] = type;
      return FakeLlmServer::sse(type, data.dump());
    };
    std::vector<std::string> c;
    c.push_back(
        event("message_start", Json{{"message",
                                     {{"id", "msg_" + sn},
                                      {"type", "message"},
                                      {"role", "assistant"},
                                      {"model", x.model},
                                      {"content", Json::array()},
                                      {"stop_reason", nullptr},
                                      {"usage",
                                       {{"input_tokens", x.cache.input},
                                        {"cache_creation_input_tokens", x.cache.cache_write},
                                        {"cache_read_input_tokens", x.cache.cache_read},
                                        {"output_tokens", 1}}}}}}));
    int index = 0;
    if (thinking) {
      const std::string token = issued_.make(x.model);
      if (turn.redacted) {
        c.push_back(
            event("content_block_start",
                  Json{{"index", index},
                       {"content_block", {{"type", "redacted_thinking"}, {"data", token}}}}));
      } else {
        c.push_back(event(
            "content_block_start",
            Json{{"index", index}, {"content_block", {{"type", "thinking"}, {"thinking", ""}}}}));
        c.push_back(
            event("content_block_delta",
                  Json{{"index", index},
                       {"delta", {{"type", "thinking_delta"}, {"thinking", turn.thinking}}}}));
        // The signature comes in two deltas: the decoder must append them.
        const std::size_t half = token.size() / 2;
        for (const auto& part : {token.substr(0, half), token.substr(half)})
          c.push_back(event("content_block_delta",
                            Json{{"index", index},
                                 {"delta", {{"type", "signature_delta"}, {"signature", part}}}}));
      }
      c.push_back(event("content_block_stop", Json{{"index", index++}}));
    }
    if (!turn.text.empty()) {
      c.push_back(
          event("content_block_start",
                Json{{"index", index}, {"content_block", {{"type", "text"}, {"text", ""}}}}));
      for (const auto& part : split_text(turn.text))
        c.push_back(
            event("content_block_delta",
                  Json{{"index", index}, {"delta", {{"type", "text_delta"}, {"text", part}}}}));
      c.push_back(event("content_block_stop", Json{{"index", index++}}));
    }
    for (std::size_t k = 0; k < turn.calls.size(); ++k) {
      c.push_back(
          event("content_block_start", Json{{"index", index},
                                            {"content_block",
                                             {{"type", "tool_use"},
                                              {"id", "toolu_" + sn + "_" + std::to_string(k)},
                                              {"name", turn.calls[k].name},
                                              {"input", Json::object()}}}}));
      c.push_back(
          event("content_block_delta", Json{{"index", index},
                                            {"delta",
                                             {{"type", "input_json_delta"},
                                              {"partial_json", turn.calls[k].arguments.dump()}}}}));
      c.push_back(event("content_block_stop", Json{{"index", index++}}));
    }
    c.push_back(
        event("message_delta", Json{{"delta", {{"stop_reason", tools ? "tool_use" : "end_turn"}}},
                                    {"usage", {{"output_tokens", 12}}}}));
    c.push_back(event("message_stop", Json::object()));
    r = stream_of(std::move(c));
  } else if (x.api == "chat") {
    std::vector<std::string> c;
    for (const auto& part : split_text(turn.text))
      if (!part.empty()) c.push_back(FakeLlmServer::openai_chunk(Json{{"content", part}}.dump()));
    for (std::size_t k = 0; k < turn.calls.size(); ++k) {
      const Json call{
          {"index", k},
          {"id", "call_" + sn + "_" + std::to_string(k)},
          {"type", "function"},
          {"function",
           {{"name", turn.calls[k].name}, {"arguments", turn.calls[k].arguments.dump()}}}};
      c.push_back(FakeLlmServer::openai_chunk(Json{{"tool_calls", Json::array({call})}}.dump()));
    }
    c.push_back(FakeLlmServer::openai_chunk("{}", tools ? "\"tool_calls\"" : "\"stop\""));
    c.push_back(FakeLlmServer::sse(Json{{"choices", Json::array()},
                                        {"usage",
                                         {{"prompt_tokens", 100},
                                          {"completion_tokens", 10},
                                          {"prompt_tokens_details", {{"cached_tokens", 0}}}}}}
                                       .dump()));
    c.push_back(FakeLlmServer::sse("[DONE]"));
    r = stream_of(std::move(c));
  } else if (x.api == "responses") {
    // A reasoning model reasons unless its effort is none; the gpt-5 family reasons with no
    // `reasoning` object at all (its default effort).
    const bool effort_given = x.body.contains("reasoning");
    const bool reasons = effort_given
                             ? str(x.body["reasoning"], "effort") != "none"
                             : (x.model == "gpt-5" || x.model.starts_with("gpt-5-") ||
                                (x.model.size() > 1 && x.model[0] == 'o' && is_digit(x.model[1])));
    bool include = false;
    if (x.body.contains("include"))
      for (const auto& i : x.body["include"])
        include = include || i == "reasoning.encrypted_content";
    ResponsesStream s("resp_" + sn);
    if (reasons)
      s.reasoning("rs_" + sn, {turn.thinking}, include ? issued_.make(x.model) : std::string());
    if (!turn.text.empty()) s.message("msg_" + sn, split_text(turn.text));
    for (std::size_t k = 0; k < turn.calls.size(); ++k) {
      const std::string args = turn.calls[k].arguments.dump();
      s.function_call("fc_" + sn + "_" + std::to_string(k), "call_" + sn + "_" + std::to_string(k),
                      turn.calls[k].name, {args}, args);
    }
    r = s.completed(100, 0, 10);
  } else {
    bool thoughts = false;
    if (x.body.contains("generationConfig") &&
        x.body["generationConfig"].contains("thinkingConfig"))
      thoughts = x.body["generationConfig"]["thinkingConfig"].value("includeThoughts", false);
    std::vector<Json> parts;  // one event each; the last one ends the answer
    if (thoughts) parts.push_back(Json::array({Json{{"text", turn.thinking}, {"thought", true}}}));
    if (!turn.text.empty())
      for (const auto& part : split_text(turn.text))
        parts.push_back(Json::array({Json{{"text", part}}}));
    Json calls = Json::array();
    for (std::size_t k = 0; k < turn.calls.size(); ++k) {
      Json part{
          {"functionCall", {{"name", turn.calls[k].name}, {"args", turn.calls[k].arguments}}}};
      if (k == 0) part["thoughtSignature"] = issued_.make(x.model);  // the step's first call
      calls.push_back(std::move(part));
    }
    if (!calls.empty()) parts.push_back(calls);
    if (parts.empty()) parts.push_back(Json::array({Json{{"text", ""}}}));
    std::vector<std::string> events;
    for (std::size_t k = 0; k + 1 < parts.size(); ++k)
      events.push_back(gemini_event(parts[k]));
    events.push_back(gemini_event(parts.back(), "STOP", gemini_usage(100, 0, 10)));
    r = gemini_stream(std::move(events));
  }
  if (turn.fault == StrictTurn::Fault::cut) {
    // The connection drops halfway through the stream.
    r.chunks.resize(std::max<std::size_t>(1, r.chunks.size() / 2));
    r.drop_after_chunks = true;
  }
  r.delay_before_headers_ms = turn.delay_before_ms;
  exchanges_.push_back(std::move(x));
  return r;
}

}  // namespace rebound::testing
