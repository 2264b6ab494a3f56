// Google's Gemini stream (providers.md section 3.2): each `data:` event a whole
// GenerateContentResponse, whose first candidate's parts continue or open the message's blocks;
// a finish reason completes the response, and the errors of section 3.3 end it.
#include <algorithm>

#include "protocol/json_access.h"
#include "protocol/json_line.h"
#include "protocol/json_scan.h"
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

void GeminiStreamDecoder::text_part(Block kind, const std::string& text, std::string signature,
                                    const Emit& emit) {
  if (block_ != kind) {
    end_block(emit);
    if (finished_) return;
    open(kind, emit);
  }
  delta(text, emit);
  if (!signature.empty()) signature_ = std::move(signature);
}

void GeminiStreamDecoder::part(const Json& p, const Emit& emit) {
  if (!p.is_object()) return;
  if (p.contains("text") && p["text"].is_string()) {
    const Json& thought = get_value(p, "thought");
    text_part(thought.is_boolean() && thought.get<bool>() ? Block::thinking : Block::text,
              p["text"].get<std::string>(), get_string(p, "thoughtSignature"), emit);
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

namespace {

// A plain non-negative JSON integer that fits (what get_int reads the same); nullopt otherwise.
std::optional<std::int64_t> small_count(std::string_view value) {
  if (value.empty() || value.size() > 18) return std::nullopt;
  std::int64_t n = 0;
  for (const char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace

void GeminiStreamDecoder::fast_apply(Block kind, const std::string& text,
                                     const std::int64_t* counts, const Emit& emit) {
  text_part(kind, text, {}, emit);
  if (finished_ || !counts) return;
  usage_.input = std::max<std::int64_t>(0, counts[0] - counts[1]);
  usage_.cache_read = counts[1];
  usage_.output = counts[2] + counts[3];
  usage_.cache_write = 0;
  usage_.total_tokens = counts[4];
  usage_changed(emit);
}

bool GeminiStreamDecoder::fast_event(const std::string& data, const Emit& emit) {
  namespace scan = protocol::json_scan;
  using Kind = scan::Template::Kind;
  std::int64_t counts[5] = {};
  // The template of the previous common event: the same bytes around another text and counts.
  std::string_view holes[6];
  if (template_.match(data, holes)) {
    auto decoded = scan::decode_string(holes[0]);
    bool counted = true;
    for (std::size_t i = 0; i < 5 && counted; ++i) {
      if (holes[1 + i].empty()) continue;
      const auto n = small_count(holes[1 + i]);
      counted = n.has_value();
      if (n) counts[i] = *n;
    }
    if (decoded && counted) {
      fast_apply(template_thought_ ? Block::thinking : Block::text, *decoded,
                 template_usage_ ? counts : nullptr, emit);
      return true;
    }
  }
  template_.clear();
  const auto F = scan::kFirst;
  static const scan::Paths paths{{},
                                 {"error"},
                                 {"responseId"},
                                 {"candidates"},
                                 {"candidates", F},
                                 {"candidates", F, "content"},
                                 {"candidates", F, "content", "parts"},
                                 {"candidates", F, "content", "parts", F},
                                 {"candidates", F, "content", "parts", F, "text"},
                                 {"candidates", F, "content", "parts", F, "thought"},
                                 {"candidates", F, "content", "parts", F, "thoughtSignature"},
                                 {"candidates", F, "finishReason"},
                                 {"usageMetadata"},
                                 {"usageMetadata", "promptTokenCount"},
                                 {"usageMetadata", "cachedContentTokenCount"},
                                 {"usageMetadata", "candidatesTokenCount"},
                                 {"usageMetadata", "thoughtsTokenCount"},
                                 {"usageMetadata", "totalTokenCount"}};
  std::optional<std::string_view> v[18];
  if (!scan::scan(data, paths, v)) return false;  // invalid: the general path reports it
  const auto &root = v[0], &error = v[1], &id = v[2], &candidates = v[3], &candidate = v[4],
             &content = v[5], &parts = v[6], &part = v[7], &text = v[8], &thought = v[9],
             &signature = v[10], &finish = v[11], &usage = v[12];
  const auto inside = [](const std::optional<std::string_view>& inner,
                         const std::optional<std::string_view>& outer) {
    return inner && outer && scan::within(*inner, *outer);
  };
  // Only the common event: one text part of the first candidate, no error, no finish reason and
  // no signature (each once a stream, for the general path), usage counts as plain integers.
  if (!root || !scan::is_object(*root) || error) return false;
  if (!candidates || !scan::is_array(*candidates) || !inside(candidate, candidates) ||
      !scan::is_object(*candidate) || inside(finish, candidate))
    return false;
  if (!inside(content, candidate) || !scan::is_object(*content) || !inside(parts, content) ||
      !scan::is_array(*parts) || !inside(part, parts) || !scan::is_object(*part))
    return false;
  // The part is the array's only element.
  const char* after =
      scan::detail::skip_ws(part->data() + part->size(), parts->data() + parts->size());
  if (*after != ']') return false;
  if (!inside(text, part) || !scan::is_string(*text) || inside(signature, part)) return false;
  std::optional<std::string> response_id;
  if (id && scan::is_string(*id)) {
    response_id = scan::decode_string(*id);
    if (!response_id) return false;
  }
  const auto decoded = scan::decode_string(*text);
  if (!decoded) return false;
  // A usage object with any member counts (the general path reads a non-empty one); an escaped
  // key in it already made the scan unsure.
  const bool usage_given =
      usage && scan::is_object(*usage) &&
      *scan::detail::skip_ws(usage->data() + 1, usage->data() + usage->size()) != '}';
  std::string_view count_values[5];  // the counts given, each a hole of the template
  if (usage_given) {
    for (std::size_t i = 0; i < 5; ++i) {
      if (!inside(v[13 + i], usage)) continue;
      const auto n = small_count(*v[13 + i]);
      if (!n) return false;
      counts[i] = *n;
      count_values[i] = *v[13 + i];
    }
  }
  // Decided. The next common event is likely these bytes around another text and counts.
  template_thought_ = inside(thought, part) && *thought == "true";
  template_usage_ = usage_given;
  template_.build(data, {{*text, Kind::string},
                         {count_values[0], Kind::integer},
                         {count_values[1], Kind::integer},
                         {count_values[2], Kind::integer},
                         {count_values[3], Kind::integer},
                         {count_values[4], Kind::integer}});
  if (response_id && !response_id->empty()) response_id_ = std::move(*response_id);
  fast_apply(template_thought_ ? Block::thinking : Block::text, *decoded,
             usage_given ? counts : nullptr, emit);
  return true;
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
  if (fast_path_ && fast_event(sse.data, emit)) return;
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
