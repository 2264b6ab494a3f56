#include "session/llm/request_context.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

namespace rebound::session::llm {

using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::Role;

namespace {

bool word_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool accepted(std::string_view id, IdRule rule) {
  if (id.empty() || id.size() > rule.max_length) return false;
  if (!rule.word_characters_only) return true;
  for (const char c : id)
    if (!word_character(c)) return false;
  return true;
}

std::uint32_t fnv1a32(std::string_view text) {
  std::uint32_t hash = 2166136261u;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  return hash;
}

// `base` with `suffix` after it, `base` cut so the whole is at most `max` characters.
std::string fitted(std::string base, const std::string& suffix, std::size_t max) {
  const std::size_t room = max > suffix.size() ? max - suffix.size() : 0;
  if (base.size() > room) base.resize(room);
  return base + suffix;
}

AgentMessage no_result(const ContentBlock& call, std::int64_t timestamp) {
  AgentMessage m;
  m.role = Role::tool_result;
  m.tool_call_id = call.id;
  m.tool_name = call.name;
  m.content.push_back(ContentBlock::make_text(kNoResultProvided));
  m.is_error = true;
  m.timestamp = timestamp;
  return m;
}

}  // namespace

bool made_by(const AgentMessage& message, const protocol::Model& model) {
  return message.provider == model.provider && message.api == model.api &&
         message.model == model.id;
}

bool has_images(const AgentMessage& message) {
  for (const ContentBlock& b : message.content)
    if (b.kind == ContentBlock::Kind::image) return true;
  return false;
}

std::vector<AgentMessage> sendable_context(const std::vector<AgentMessage>& context) {
  std::vector<AgentMessage> out;
  out.reserve(context.size());
  // The calls of the last assistant message that no result has answered yet, in call order,
  // as sent: a call whose id an earlier call of the same message has is sent as `<id>#<n>`, and
  // the nth result with that id answers it (a provider may repeat an id; every API refuses that).
  struct Open {
    std::string original, sent, name;
  };
  std::vector<Open> open;
  std::int64_t last_time = 0;
  auto close_open = [&] {
    for (const Open& call : open) {
      ContentBlock b = ContentBlock::make_tool_call(call.sent, call.name, protocol::Json::object());
      out.push_back(no_result(b, last_time));
    }
    open.clear();
  };
  for (const AgentMessage& m : context) {
    if (m.failed()) continue;
    if (m.role == Role::tool_result) {
      const auto it = std::find_if(open.begin(), open.end(),
                                   [&](const Open& c) { return c.original == m.tool_call_id; });
      if (it == open.end()) continue;  // answers no open call: left out
      out.push_back(m);
      out.back().tool_call_id = it->sent;
      open.erase(it);
      continue;
    }
    close_open();
    out.push_back(m);
    last_time = m.timestamp;
    if (!m.is_assistant()) continue;
    std::map<std::string, int> seen;
    for (ContentBlock& b : out.back().content) {
      if (b.kind != ContentBlock::Kind::tool_call) continue;
      const int n = ++seen[b.id];
      Open call{b.id, n == 1 ? b.id : b.id + "#" + std::to_string(n), b.name};
      b.id = call.sent;
      open.push_back(std::move(call));
    }
  }
  close_open();
  return out;
}

std::string mapped_tool_id(std::string_view id, IdRule rule) {
  if (accepted(id, rule)) return std::string(id);
  std::string prefix(id);
  if (rule.word_characters_only) {
    for (char& c : prefix)
      if (!word_character(c)) c = '_';
  }
  static const char kHex[] = "0123456789abcdef";
  const std::uint32_t hash = fnv1a32(id);
  std::string suffix = "_";
  for (int shift = 28; shift >= 0; shift -= 4)
    suffix += kHex[(hash >> shift) & 15];
  return fitted(std::move(prefix), suffix, rule.max_length);
}

ToolIdMap::ToolIdMap(const std::vector<AgentMessage>& messages, IdRule rule,
                     std::string (*key)(const std::string& id))
    : rule_(rule), key_(key) {
  std::set<std::string> used;
  for (const AgentMessage& m : messages) {
    if (!m.is_assistant()) continue;
    for (const ContentBlock& b : m.content) {
      if (b.kind != ContentBlock::Kind::tool_call || mapped_.count(b.id)) continue;
      const std::string base = mapped_tool_id(key_ ? key_(b.id) : b.id, rule_);
      std::string id = base;
      for (int n = 2; used.count(id); ++n)
        id = fitted(base, "_" + std::to_string(n), rule_.max_length);
      used.insert(id);
      mapped_[b.id] = id;
    }
  }
}

std::string ToolIdMap::operator()(const std::string& id) const {
  const auto it = mapped_.find(id);
  if (it != mapped_.end()) return it->second;
  return mapped_tool_id(key_ ? key_(id) : id, rule_);
}

}  // namespace rebound::session::llm
