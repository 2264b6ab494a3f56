#include "session/tool_spool.h"

#include <cstdio>

namespace rebound::session {

std::string spool_dir_of(const std::string& session_path) {
  std::string base = session_path;
  constexpr std::string_view kExtension = ".jsonl";
  if (base.size() >= kExtension.size() &&
      base.compare(base.size() - kExtension.size(), kExtension.size(), kExtension) == 0)
    base.resize(base.size() - kExtension.size());
  return base + ".d";
}

std::string spool_file_name(std::string_view id) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string name;
  for (const char c : id) {
    const auto b = static_cast<unsigned char>(c);
    const bool plain = (b >= 'A' && b <= 'Z') || (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9') ||
                       b == '_' || b == '.' || b == '-';
    if (plain) {
      name += c;
    } else {
      name += '%';
      name += kHex[b >> 4];
      name += kHex[b & 15];
    }
  }
  // `.` and `..` would name the folder itself or its parent.
  if (name == "." || name == "..") name = name == "." ? "%2E" : "%2E%2E";
  if (name.size() > 200) {
    std::uint32_t hash = 2166136261u;  // FNV-1a-32 of the whole id
    for (const char c : id) {
      hash ^= static_cast<unsigned char>(c);
      hash *= 16777619u;
    }
    char tail[10];
    std::snprintf(tail, sizeof tail, "-%08x", hash);
    name.resize(200);
    name += tail;
  }
  return name + ".out";
}

std::string spool_path(const std::string& spool_dir, std::string_view tool_call_id) {
  return spool_dir + "/" + spool_file_name(tool_call_id);
}

}  // namespace rebound::session
