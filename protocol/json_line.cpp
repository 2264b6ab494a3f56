#include "protocol/json_line.h"

#include <nlohmann/json.hpp>

namespace rebound::protocol {

std::optional<std::size_t> find_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len;
    unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlongs
      if (c == 0xED) hi = 0x9F;  // no UTF-16 surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // no overlongs
      if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
      return i;
    }
    if (i + len > n) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
    }
    i += len;
  }
  return std::nullopt;
}

namespace {

// nlohmann's messages start with "[json.exception.parse_error.101] "; the rest is useful.
std::string clean_reason(const std::string& what) {
  const auto close = what.find("] ");
  if (what.rfind("[json.exception", 0) == 0 && close != std::string::npos) {
    return what.substr(close + 2);
  }
  return what;
}

}  // namespace

JsonLine parse_json_line(std::string_view line) {
  if (const auto bad = find_invalid_utf8(line)) {
    return {std::nullopt, "invalid UTF-8 at byte " + std::to_string(*bad)};
  }
  try {
    return {Json::parse(line.begin(), line.end()), {}};
  } catch (const nlohmann::json::exception& e) {
    return {std::nullopt, clean_reason(e.what())};
  }
}

std::string to_line(const Json& value) {
  std::string out = value.dump(-1, ' ', false, nlohmann::detail::error_handler_t::replace);
  out.push_back('\n');
  return out;
}

}  // namespace rebound::protocol
