#pragma once
// JSONL text (session files, script logs) as parsed lines, for assertions. Tests only.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/json.h"

namespace rebound::testing {

/// One JSON value per line; a last line without LF counts too. Throws on a line that is not JSON.
inline std::vector<protocol::Json> parse_jsonl(const std::string& text) {
  std::vector<protocol::Json> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto lf = text.find('\n', start);
    out.push_back(protocol::Json::parse(text.substr(start, lf - start)));
    if (lf == std::string::npos) break;
    start = lf + 1;
  }
  return out;
}

}  // namespace rebound::testing
