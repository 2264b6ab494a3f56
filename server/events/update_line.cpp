#include "server/events/update_line.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "protocol/json_line.h"

namespace rebound::server {

using protocol::ContentBlock;
using protocol::Json;
using protocol::to_json;
using protocol::to_line;

namespace {

// to_line() without its LF.
std::string compact(const Json& value) {
  std::string s = to_line(value);
  s.pop_back();
  return s;
}

}  // namespace

std::string escaped_json_string(std::string_view text) {
  std::string s = compact(Json(std::string(text)));
  return s.substr(1, s.size() - 2);
}

void append_escaped_json_string(std::string& out, std::string_view text) {
  // Printable ASCII other than the quote and the backslash is written as it is; anything else
  // (controls, multi-byte UTF-8, the private surrogate markers) takes the general path.
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b >= 0x7f || c == '"' || c == '\\') {
      out += escaped_json_string(text);
      return;
    }
  }
  out += text;
}

void UpdateLineBuilder::append_head(std::string_view bytes) {
  // A full buffer is left as it is (lines may point into it) and a new one continues the head.
  if (head_.empty() || head_.back()->room() < bytes.size()) {
    // Small at first (a reset per block), doubling up to kBufferBytes as the answer grows.
    const std::size_t before = head_.empty() ? 0 : head_.back()->size();
    const std::size_t capacity = std::min(kBufferBytes, std::max<std::size_t>(4096, 2 * before));
    head_.push_back(std::make_shared<SharedBytes>(std::max(capacity, 2 * bytes.size())));
  }
  head_.back()->append(bytes);
}

void UpdateLineBuilder::reset(const AgentMessage& partial) {
  head_.clear();  // lines still being written keep their buffers
  const bool text_last =
      !partial.content.empty() && (partial.content.back().kind == ContentBlock::Kind::text ||
                                   partial.content.back().kind == ContentBlock::Kind::thinking);
  if (!text_last) {
    append_head(compact(to_json(partial)));
    tail_.clear();
    split_ = false;
    return;
  }
  // The same message with an empty last text: its serialization has `""` exactly where the
  // text goes, right before the block's closing brace (text is the block's last key).
  AgentMessage hollow = partial;
  hollow.content.back().text.clear();
  const std::string whole = compact(to_json(hollow));
  // Find the empty string of the last block: the last `""}]` before the message's other keys.
  const std::size_t at = whole.rfind("\"\"}],\"");
  if (at == std::string::npos) {  // cannot happen for to_json's layout; stay correct anyway
    append_head(compact(to_json(partial)));
    tail_.clear();
    split_ = false;
    return;
  }
  append_head(std::string_view(whole).substr(0, at + 1));
  append_head(escaped_json_string(partial.content.back().text));
  tail_ = whole.substr(at + 1);
  split_ = true;
  // Where the usage object is in the tail, for replace_usage(). No string value before it can
  // hold `"usage":{` (its quotes are escaped there), so the first match is the key.
  scratch_ = ",\"usage\":";
  protocol::append_usage_json(scratch_, partial.usage);
  const std::size_t key = tail_.find(scratch_);
  usage_at_ = key == std::string::npos ? std::string::npos : key + 9;
  usage_size_ = scratch_.size() - 9;
}

void UpdateLineBuilder::replace_usage(const AgentMessage& partial) {
  if (usage_at_ == std::string::npos) {  // cannot happen for to_json's layout
    reset(partial);
    return;
  }
  scratch_.clear();
  protocol::append_usage_json(scratch_, partial.usage);
  tail_.replace(usage_at_, usage_size_, scratch_);
  usage_size_ = scratch_.size();
}

void UpdateLineBuilder::append_to_last_block(std::string_view delta) {
  scratch_.clear();
  append_escaped_json_string(scratch_, delta);
  append_head(scratch_);
}

OutLine UpdateLineBuilder::out_line(const pi::AssistantUpdate& u) const {
  std::string out;
  out.reserve(160 + (u.delta ? u.delta->size() : 0));
  out += R"({"type":"message_update","assistantMessageEvent":{"type":")";
  out += u.type;
  out += R"(","contentIndex":)";
  out += std::to_string(u.content_index);
  if (u.delta) {
    out += R"(,"delta":")";
    append_escaped_json_string(out, *u.delta);
    out += '"';
  }
  if (u.content) {
    out += R"(,"content":")";
    out += escaped_json_string(*u.content);
    out += '"';
  }
  if (u.tool_call) {
    out += R"(,"toolCall":)";
    out += compact(to_json(*u.tool_call));
  }
  out += R"(,"partial":)";
  OutLine line(std::move(out));
  const auto partial = [&] {
    for (const auto& bytes : head_)
      line.append_shared(bytes, 0, bytes->size());
    line.append(tail_);
  };
  partial();
  line.append(R"(},"message":)");
  partial();
  line.append("}\n");
  return line;
}

}  // namespace rebound::server
