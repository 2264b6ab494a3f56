#include "protocol/json_line.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <random>

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

// A lone surrogate cannot live in UTF-8, so it travels as U+E000 (a private-use character),
// a per-process random tag and its four hex digits. Input cannot forge the tag without knowing
// it, so only markers made here are turned back into escapes.
constexpr std::string_view kMarkerLead = "\xEE\x80\x80";  // U+E000 in UTF-8

const std::string& marker_prefix() {
  static const std::string prefix = [] {
    std::random_device rd;
    static constexpr char kHex[] = "0123456789abcdef";
    std::string p(kMarkerLead);
    for (int i = 0; i < 16; ++i)
      p.push_back(kHex[rd() & 0xF]);
    return p;
  }();
  return prefix;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The code unit of a `\uXXXX` escape starting at `at` (the backslash), or -1.
int escape_unit(std::string_view text, std::size_t at) {
  if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u') return -1;
  int v = 0;
  for (std::size_t i = at + 2; i < at + 6; ++i) {
    const int h = hex_value(text[i]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

bool is_high(int unit) {
  return unit >= 0xD800 && unit <= 0xDBFF;
}
bool is_low(int unit) {
  return unit >= 0xDC00 && unit <= 0xDFFF;
}

// nlohmann's messages start with "[json.exception.parse_error.101] "; the rest is useful.
std::string clean_reason(const std::string& what) {
  const auto close = what.find("] ");
  if (what.rfind("[json.exception", 0) == 0 && close != std::string::npos) {
    return what.substr(close + 2);
  }
  return what;
}

}  // namespace

std::string mark_lone_surrogates(std::string_view text) {
  std::string out;
  bool in_string = false;
  std::size_t copied = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!in_string) {
      in_string = c == '"';
      continue;
    }
    if (c == '"') {
      in_string = false;
    } else if (c == '\\') {
      const int unit = escape_unit(text, i);
      if (unit < 0) {
        ++i;  // a two-character escape (quote, backslash, n, t, ...)
        continue;
      }
      if (is_high(unit) && is_low(escape_unit(text, i + 6))) {
        i += 11;  // a proper pair
        continue;
      }
      if (is_high(unit) || is_low(unit)) {
        out.append(text.substr(copied, i - copied));
        out += marker_prefix();
        out.append(text.substr(i + 2, 4));
        copied = i + 6;
      }
      i += 5;
    }
  }
  if (copied == 0) return std::string(text);
  out.append(text.substr(copied));
  return out;
}

void unmark_lone_surrogates(std::string& text) {
  const std::string& prefix = marker_prefix();
  std::size_t at = text.find(prefix);
  if (at == std::string::npos) return;
  std::string out;
  std::size_t copied = 0;
  while (at != std::string::npos && at + prefix.size() + 4 <= text.size()) {
    // Only a tag followed by a surrogate's four hex digits is a marker: anything else (input
    // that happened to contain the tag) stays as it is, so the output is always valid JSON.
    int unit = 0;
    for (std::size_t i = 0; i < 4 && unit >= 0; ++i) {
      const int h = hex_value(text[at + prefix.size() + i]);
      unit = h < 0 ? -1 : unit * 16 + h;
    }
    if (!is_high(unit) && !is_low(unit)) {
      at = text.find(prefix, at + 1);
      continue;
    }
    out.append(text, copied, at - copied);
    out += "\\u";
    for (std::size_t i = 0; i < 4; ++i) {
      out.push_back(static_cast<char>(std::tolower(text[at + prefix.size() + i])));
    }
    copied = at + prefix.size() + 4;
    at = text.find(prefix, copied);
  }
  out.append(text, copied, std::string::npos);
  text = std::move(out);
}

JsonLine parse_json_line(std::string_view line) {
  if (const auto bad = find_invalid_utf8(line)) {
    return {std::nullopt, "invalid UTF-8 at byte " + std::to_string(*bad)};
  }
  try {
    if (line.find("\\u") != std::string_view::npos) {
      const std::string marked = mark_lone_surrogates(line);
      return {Json::parse(marked.begin(), marked.end()), {}};
    }
    return {Json::parse(line.begin(), line.end()), {}};
  } catch (const nlohmann::json::exception& e) {
    return {std::nullopt, clean_reason(e.what())};
  }
}

std::string to_line(const Json& value) {
  std::string out = value.dump(-1, ' ', false, nlohmann::detail::error_handler_t::replace);
  if (out.find(kMarkerLead) != std::string::npos) unmark_lone_surrogates(out);
  out.push_back('\n');
  return out;
}

}  // namespace rebound::protocol
