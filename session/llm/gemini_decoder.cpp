// Google's Gemini stream (providers.md section 3.2): each `data:` event a whole
// GenerateContentResponse, whose first candidate's parts continue or open the message's blocks;
// a finish reason completes the response, and the errors of section 3.3 end it.
#include "protocol/json_access.h"
#include "protocol/json_line.h"
#include "session/llm/secret_text.h"
#include "session/llm/stream_decoder.h"

namespace rebound::session::llm {

using protocol::get_object;
using protocol::get_string;
using protocol::get_value;
using protocol::Json;
using protocol::StopReason;

namespace {

constexpr std::size_t kMaxGeminiErrorText = 2000;

// section 3.3: "<error.code> <error.message>", as the HTTP form reads.
std::string gemini_error_text(const Json& error) {
  if (!error.is_object())
    return "unknown " + (error.is_string() ? error.get<std::string>() : error.dump());
  const Json& code = get_value(error, "code");
  std::string head;
  if (code.is_number_integer()) {
    head = std::to_string(code.get<std::int64_t>());
  } else if (code.is_string()) {
    head = code.get<std::string>();
  } else {
    head = get_string(error, "status", "unknown");
  }
  const std::string message = get_string(error, "message");
  return head + " " + (message.empty() ? std::string("no message") : message);
}

}  // namespace

void GeminiStreamDecoder::end_block(const Emit& emit) {
  close(emit, std::move(signature_));
  signature_.clear();
}

void GeminiStreamDecoder::text_part(Block kind, const Json& p, const Emit& emit) {
  if (block_ != kind) {
    end_block(emit);
    if (finished_) return;
    open(kind, emit);
  }
  delta(get_string(p, "text"), emit);
  std::string signature = get_string(p, "thoughtSignature");
  if (!signature.empty()) signature_ = std::move(signature);
}

void GeminiStreamDecoder::part(const Json& p, const Emit& emit) {
  if (!p.is_object()) return;
  if (p.contains("text") && p["text"].is_string()) {
    const Json& thought = get_value(p, "thought");
    text_part(thought.is_boolean() && thought.get<bool>() ? Block::thinking : Block::text, p, emit);
    return;
  }
  const Json& call = get_object(p, "functionCall");
  if (!p.contains("functionCall") || !call.is_object()) return;
  end_block(emit);
  if (finished_) return;
  const std::string name = get_string(call, "name");
  open(Block::tool, emit, name + "_" + std::to_string(++calls_), name);
  const Json& args = get_value(call, "args");
  delta(args.is_object() ? args.dump(-1, ' ', false, Json::error_handler_t::replace) : "{}", emit);
  close(emit, get_string(p, "thoughtSignature"));
  tool_call_ = true;
  if (stop_reason_ == StopReason::stop) stop_reason_ = StopReason::tool_use;
}

void GeminiStreamDecoder::finish(const std::string& reason, const Emit& emit) {
  end_block(emit);
  if (reason == "STOP") {
    stop_reason_ = tool_call_ ? StopReason::tool_use : StopReason::stop;
  } else if (reason == "MAX_TOKENS") {
    stop_reason_ = StopReason::length;
  } else {
    end_error_ = "finish reason " + reason;
  }
}

void GeminiStreamDecoder::read_usage(const Json& u, const Emit& emit) {
  const std::int64_t cached = count(u, "cachedContentTokenCount");
  usage_.input = std::max<std::int64_t>(0, count(u, "promptTokenCount") - cached);
  usage_.output = count(u, "candidatesTokenCount") + count(u, "thoughtsTokenCount");
  usage_.cache_read = cached;
  usage_.cache_write = 0;
  usage_.total_tokens = count(u, "totalTokenCount");
  usage_changed(emit);
}

void GeminiStreamDecoder::on_event(const SseEvent& sse, const Emit& emit) {
  if (finished_) return;
  if (sse.stray) {
    // A bare JSON object between events: how the service reports a failure mid-stream.
    const auto parsed = protocol::parse_provider_json(sse.data);
    if (parsed.value && parsed.value->is_object() && parsed.value->contains("error"))
      fail(cut_without_secret(gemini_error_text((*parsed.value)["error"]), kMaxGeminiErrorText,
                              secret_),
           emit);
    return;  // anything else there is no SSE and is ignored, as the standard says
  }
  if (sse.data.empty()) return;
  const auto j = parse_data(sse.data, emit);
  if (!j) return;
  if (const std::string id = get_string(*j, "responseId"); !id.empty()) response_id_ = id;
  if (j->contains("error")) {
    fail(cut_without_secret(gemini_error_text((*j)["error"]), kMaxGeminiErrorText, secret_), emit);
    return;
  }
  const Json& candidates = get_value(*j, "candidates");
  const bool none = !candidates.is_array() || candidates.empty();
  const std::string blocked = get_string(get_object(*j, "promptFeedback"), "blockReason");
  if (none && !blocked.empty()) {
    fail("prompt blocked: " + blocked, emit);
    return;
  }
  if (!none) {
    const Json& candidate = candidates[0];
    const Json& parts = get_value(get_object(candidate, "content"), "parts");
    if (parts.is_array()) {
      for (const auto& p : parts) {
        part(p, emit);
        if (finished_) return;
      }
    }
    const std::string reason = get_string(candidate, "finishReason");
    if (!reason.empty()) finish(reason, emit);
  }
  const Json& usage = get_object(*j, "usageMetadata");
  if (!usage.empty()) read_usage(usage, emit);
}

}  // namespace rebound::session::llm
