// OpenAI's Responses stream (providers.md section 2.2): typed `response.*` events mapped to the
// assistant message's block events, each block's end carrying its signature (section 2.3).
#include <algorithm>

#include "protocol/json_access.h"
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

constexpr std::size_t kMaxErrorText = 2000;

// The texts of an item's parts of the given types, joined by `separator`.
std::string part_texts(const Json& parts, std::initializer_list<std::string_view> types,
                       std::initializer_list<const char*> keys, const char* separator) {
  std::string out;
  if (!parts.is_array()) return out;
  bool first = true;
  for (const auto& p : parts) {
    const std::string type = get_string(p, "type");
    if (std::find(types.begin(), types.end(), type) == types.end()) continue;
    for (const char* key : keys) {
      if (!p.contains(key) || !p[key].is_string()) continue;
      if (!first) out += separator;
      out += p[key].get<std::string>();
      first = false;
      break;
    }
  }
  return out;
}

// section 2.4: a failed response in pi's words.
std::string failed_text(const Json& response) {
  const Json& error = get_value(response, "error");
  if (error.is_object()) {
    std::string code = get_string(error, "code");
    std::string message = get_string(error, "message");
    return (code.empty() ? "unknown" : code) + ": " + (message.empty() ? "no message" : message);
  }
  const std::string reason = get_string(get_object(response, "incomplete_details"), "reason");
  if (!reason.empty()) return "incomplete: " + reason;
  return "Unknown error (no error details in response)";
}

}  // namespace

void ResponsesStreamDecoder::streamed(const std::string& text, const Emit& emit) {
  if (text.empty()) return;
  streamed_ = true;
  delta(text, emit);
}

void ResponsesStreamDecoder::item_added(const Json& item, const Emit& emit) {
  const std::string type = get_string(item, "type");
  streamed_ = false;
  if (type == "reasoning") {
    summary_parts_ = 0;
    open(Block::thinking, emit);
  } else if (type == "message") {
    open(Block::text, emit);
  } else if (type == "function_call") {
    tool_call_ = true;
    open(Block::tool, emit, get_string(item, "call_id") + "|" + get_string(item, "id"),
         get_string(item, "name"));
  }
}

void ResponsesStreamDecoder::item_done(const Json& item, const Emit& emit) {
  const std::string type = get_string(item, "type");
  if (type == "reasoning" && block_ == Block::thinking) {
    // What was not streamed comes whole: the summaries, else the reasoning text.
    if (!streamed_) {
      std::string text = part_texts(get_value(item, "summary"), {"summary_text"}, {"text"}, "\n\n");
      if (text.empty())
        text = part_texts(get_value(item, "content"), {"reasoning_text"}, {"text"}, "\n\n");
      streamed(text, emit);
    }
    close(emit, item.dump());
  } else if (type == "message" && block_ == Block::text) {
    if (!streamed_)
      streamed(part_texts(get_value(item, "content"), {"output_text", "refusal"},
                          {"text", "refusal"}, ""),
               emit);
    Json signature{{"v", 1}, {"id", get_string(item, "id")}};
    if (item.contains("phase")) signature["phase"] = item["phase"];
    close(emit, signature.dump());
  } else if (type == "function_call" && block_ == Block::tool) {
    if (!streamed_) streamed(get_string(item, "arguments"), emit);
    close(emit);
  }
}

void ResponsesStreamDecoder::read_usage(const Json& response, const Emit& emit) {
  const Json& u = get_object(response, "usage");
  if (u.empty()) return;
  const std::int64_t cached = count(get_object(u, "input_tokens_details"), "cached_tokens");
  usage_.input = std::max<std::int64_t>(0, count(u, "input_tokens") - cached);
  usage_.cache_read = cached;
  usage_.cache_write = 0;
  usage_.output = count(u, "output_tokens");
  usage_changed(emit);
}

bool ResponsesStreamDecoder::fast_event(const std::string& data, const Emit& emit) {
  namespace scan = protocol::json_scan;
  using Kind = scan::Template::Kind;
  // The template of the previous delta event: the same bytes around another delta, sequence
  // number and obfuscation.
  std::string_view holes[3];
  if (template_.match(data, holes)) {
    if (const auto delta = scan::decode_string(holes[0])) {
      if (block_ == template_block_) streamed(*delta, emit);
      return true;
    }
  }
  template_.clear();
  static const scan::Paths paths{
      {}, {"type"}, {"delta"}, {"response"}, {"sequence_number"}, {"obfuscation"}};
  std::optional<std::string_view> v[6];
  if (!scan::scan(data, paths, v)) return false;  // invalid: the general path reports it
  const auto &root = v[0], &type_value = v[1], &delta_value = v[2], &response = v[3],
             &sequence = v[4], &obfuscation = v[5];
  // Only a delta event: an object with a string type and delta and no response (whose id the
  // general path would keep).
  if (!root || !scan::is_object(*root) || response || !type_value || !delta_value ||
      !scan::is_string(*type_value) || !scan::is_string(*delta_value))
    return false;
  const auto type = scan::decode_string(*type_value);
  if (!type) return false;
  Block kind;
  if (*type == "response.output_text.delta" || *type == "response.refusal.delta") {
    kind = Block::text;
  } else if (*type == "response.reasoning_summary_text.delta" ||
             *type == "response.reasoning_text.delta") {
    kind = Block::thinking;
  } else if (*type == "response.function_call_arguments.delta") {
    kind = Block::tool;
  } else {
    return false;
  }
  const auto delta = scan::decode_string(*delta_value);
  if (!delta) return false;
  // Decided. The holes that vary event to event, where given: a counter and a padding string
  // (an empty span is no hole).
  const bool counted = sequence && sequence->front() >= '0' && sequence->front() <= '9';
  const bool padded = obfuscation && scan::is_string(*obfuscation);
  const std::string_view none;
  template_.build(data, {{*delta_value, Kind::string},
                         {counted ? *sequence : none, Kind::integer},
                         {padded ? *obfuscation : none, Kind::string}});
  template_block_ = kind;
  if (block_ == kind) streamed(*delta, emit);
  return true;
}

void ResponsesStreamDecoder::on_event(const SseEvent& sse, const Emit& emit) {
  if (finished_) return;
  if (fast_path_ && fast_event(sse.data, emit)) return;
  const auto j = parse_data(sse.data, emit);
  if (!j) return;
  // The data's own type is authoritative; the event line only framed it.
  const std::string type = get_string(*j, "type", sse.event);
  if (const std::string id = get_string(get_object(*j, "response"), "id"); !id.empty())
    response_id_ = id;  // response.created first, then each terminal event
  if (type == "response.output_item.added") {
    item_added(get_object(*j, "item"), emit);
  } else if (type == "response.output_item.done") {
    item_done(get_object(*j, "item"), emit);
  } else if (type == "response.reasoning_summary_part.added") {
    if (block_ == Block::thinking && summary_parts_++ > 0) streamed("\n\n", emit);
  } else if (type == "response.reasoning_summary_text.delta" ||
             type == "response.reasoning_text.delta") {
    if (block_ == Block::thinking) streamed(get_string(*j, "delta"), emit);
  } else if (type == "response.output_text.delta" || type == "response.refusal.delta") {
    if (block_ == Block::text) streamed(get_string(*j, "delta"), emit);
  } else if (type == "response.function_call_arguments.delta") {
    if (block_ == Block::tool) streamed(get_string(*j, "delta"), emit);
  } else if (type == "response.function_call_arguments.done") {
    // Only what the deltas did not already give.
    const std::string all = get_string(*j, "arguments");
    if (block_ == Block::tool && all.size() > tool_arguments_.size() &&
        all.compare(0, tool_arguments_.size(), tool_arguments_) == 0)
      streamed(all.substr(tool_arguments_.size()), emit);
  } else if (type == "response.completed") {
    read_usage(get_object(*j, "response"), emit);
    complete(tool_call_ ? StopReason::tool_use : StopReason::stop, emit);
  } else if (type == "response.incomplete") {
    read_usage(get_object(*j, "response"), emit);
    complete(StopReason::length, emit);
  } else if (type == "response.failed") {
    fail(cut_without_secret(failed_text(get_object(*j, "response")), kMaxErrorText, secret_), emit);
  } else if (type == "error") {
    const std::string code = get_string(*j, "code");
    fail(cut_without_secret("Error Code " + (code.empty() ? std::string("unknown") : code) + ": " +
                                get_string(*j, "message"),
                            kMaxErrorText, secret_),
         emit);
  }
  // response.created, response.in_progress and unknown events are ignored.
}

}  // namespace rebound::session::llm
