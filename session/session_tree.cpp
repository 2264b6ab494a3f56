#include "session/session_tree.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "protocol/json_access.h"
#include "protocol/json_line.h"

namespace rebound::session {

using protocol::Json;

std::vector<std::size_t> chain_to(const std::vector<Json>& entries, std::size_t leaf) {
  std::vector<std::size_t> path;
  if (leaf >= entries.size()) return path;
  std::unordered_map<std::string_view, std::size_t> by_id;
  by_id.reserve(entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (const Json& id = protocol::get_value(entries[i], "id"); id.is_string())
      by_id.emplace(id.get_ref<const std::string&>(), i);
  }
  std::vector<bool> seen(entries.size(), false);
  for (std::size_t i = leaf; !seen[i];) {
    seen[i] = true;
    path.push_back(i);
    const Json& parent = protocol::get_value(entries[i], "parentId");
    if (!parent.is_string()) break;
    const auto it = by_id.find(parent.get_ref<const std::string&>());
    if (it == by_id.end()) break;
    i = it->second;
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::vector<std::size_t> active_path(const std::vector<Json>& entries) {
  if (entries.empty()) return {};
  return chain_to(entries, entries.size() - 1);
}

std::optional<std::string> path_session_name(const std::vector<Json>& entries,
                                             const std::vector<std::size_t>& path) {
  std::optional<std::string> name;
  for (std::size_t i : path) {
    if (protocol::get_string(entries[i], "type") != "session_info") continue;
    std::string n = protocol::get_string(entries[i], "name");
    name = n.empty() ? std::nullopt : std::optional<std::string>(std::move(n));
  }
  return name;
}

Json session_info_entry(const std::string& name) {
  Json j = Json::object();
  j["type"] = "session_info";
  j["name"] = name;
  return j;
}

bool is_message_entry(const Json& entry) {
  return protocol::get_string(entry, "type") == "message";
}

std::optional<std::string> user_entry_text(const Json& entry) {
  if (!is_message_entry(entry)) return std::nullopt;
  const Json& message = protocol::get_value(entry, "message");
  if (protocol::get_string(message, "role") != "user") return std::nullopt;
  const Json& content = protocol::get_value(message, "content");
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array()) {
    for (const Json& block : content) {
      if (protocol::get_string(block, "type") == "text")
        text += protocol::get_string(block, "text");
    }
  }
  return text;
}

std::optional<std::size_t> find_entry(const std::vector<Json>& entries, std::string_view id) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Json& e = protocol::get_value(entries[i], "id");
    if (e.is_string() && e.get_ref<const std::string&>() == id) return i;
  }
  return std::nullopt;
}

namespace {

bool is_white_space(std::uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

// The code point that starts at `text[at]` and its length in bytes (1 for a byte that does not
// start a well-formed sequence, which is never white space).
std::pair<std::uint32_t, std::size_t> decode_at(std::string_view text, std::size_t at) {
  const auto b = static_cast<unsigned char>(text[at]);
  std::size_t len = b < 0x80           ? 1
                    : (b >> 5) == 0x6  ? 2
                    : (b >> 4) == 0xE  ? 3
                    : (b >> 3) == 0x1E ? 4
                                       : 0;
  if (len == 0 || at + len > text.size()) return {0xFFFD, 1};
  std::uint32_t c = len == 1 ? b : b & (0x7F >> len);
  for (std::size_t i = 1; i < len; ++i) {
    const auto n = static_cast<unsigned char>(text[at + i]);
    if ((n & 0xC0) != 0x80) return {0xFFFD, 1};
    c = (c << 6) | (n & 0x3F);
  }
  return {c, len};
}

}  // namespace

std::string trim_unicode_space(std::string_view text) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    const auto [c, len] = decode_at(text, begin);
    if (!is_white_space(c)) break;
    begin += len;
  }
  // The end: the last code point that is not white space, found by walking forward.
  std::size_t end = begin;
  for (std::size_t at = begin; at < text.size();) {
    const auto [c, len] = decode_at(text, at);
    at += len;
    if (!is_white_space(c)) end = at;
  }
  return std::string(text.substr(begin, end - begin));
}

std::optional<std::size_t> EntryTree::find(std::string_view id) const {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].id == id) return i;
  }
  return std::nullopt;
}

std::vector<std::size_t> EntryTree::chain_to(std::size_t leaf) const {
  std::vector<std::size_t> path;
  if (leaf >= nodes.size()) return path;
  std::vector<bool> seen(nodes.size(), false);
  for (std::optional<std::size_t> i = leaf; i && !seen[*i]; i = nodes[*i].parent) {
    seen[*i] = true;
    path.push_back(*i);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

std::vector<std::size_t> EntryTree::active_path() const {
  if (nodes.empty()) return {};
  return chain_to(nodes.size() - 1);
}

Json EntryTree::entry(std::size_t i) const {
  const Node& n = nodes[i];
  if (n.json) return *n.json;
  auto parsed = protocol::parse_json_line(n.line);
  return parsed.value ? std::move(*parsed.value) : Json();
}

std::string_view EntryTree::line_of(std::size_t i, std::string& held) const {
  const Node& n = nodes[i];
  if (n.json) {
    held = protocol::to_line(*n.json);
    return held;
  }
  return {n.line.data(), n.line.size() + 1};  // the file's lines were checked to end in LF
}

void EntryTree::link_from(std::size_t first,
                          const std::vector<std::optional<std::string_view>>& parent_ids) {
  if (parent_ids.empty()) return;
  std::unordered_map<std::string_view, std::size_t> by_id;
  by_id.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i)
    by_id.emplace(nodes[i].id, i);
  for (std::size_t k = 0; k < parent_ids.size() && first + k < nodes.size(); ++k) {
    if (!parent_ids[k]) continue;
    if (const auto it = by_id.find(*parent_ids[k]); it != by_id.end())
      nodes[first + k].parent = it->second;
  }
}

}  // namespace rebound::session
