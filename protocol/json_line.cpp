#include "protocol/json_line.h"

#include "protocol/json_fast.h"
#include "protocol/utf8.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <random>

namespace rebound::protocol {

std::optional<std::size_t> find_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  std::size_t prefix = 0;
  while (i < n) {
    if (s[i] < 0x80) {
      ++i;
      continue;
    }
    const std::size_t len = utf8_sequence(s, n, i, prefix);
    if (len == 0) return i;
    i += len;
  }
  return std::nullopt;
}

std::string replace_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::string out;
  out.reserve(n + 8);
  std::size_t i = 0, copied = 0, prefix = 0;
  while (i < n) {
    if (s[i] < 0x80) {
      ++i;
      continue;
    }
    const std::size_t len = utf8_sequence(s, n, i, prefix);
    if (len > 0) {
      i += len;
      continue;
    }
    out.append(text.substr(copied, i - copied));
    out += "\xEF\xBF\xBD";  // U+FFFD
    i += prefix;
    copied = i;
  }
  out.append(text.substr(copied));
  return out;
}

std::optional<std::size_t> find_excess_nesting(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::nullopt;  // each level takes a byte
  std::size_t depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    switch (text[i]) {
      case '"':
        // Skip the string: brackets inside it do not nest.
        for (i = text.find_first_of("\"\\", i + 1); i != std::string_view::npos && text[i] == '\\';
             i = text.find_first_of("\"\\", i + 2)) {
        }
        if (i == std::string_view::npos) return std::nullopt;
        break;
      case '[':
      case '{':
        if (++depth > limit) return i;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

std::string error_position(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1);
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

// Calls `replace(out, hex)` for every lone surrogate escape `\uXXXX` in the strings of the JSON
// text (hex: its four digits) and copies everything else.
template <typename Replace>
std::string rewrite_lone_surrogates(std::string_view text, Replace replace) {
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
        replace(out, text.substr(i + 2, 4));
        copied = i + 6;
      }
      i += 5;
    }
  }
  if (copied == 0) return std::string(text);
  out.append(text.substr(copied));
  return out;
}

// Depth check and parse of text known to be valid UTF-8.
JsonLine parse_checked(std::string_view text) {
  if (const auto deep = find_excess_nesting(text)) {
    const std::string what = "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return {std::nullopt, what + " at byte " + std::to_string(*deep), what, *deep};
  }
  // nlohmann's lexer takes a NUL byte for the end of input, so `{"type":"x"}\0junk` would
  // parse. A raw NUL is never valid JSON (not outside strings, not inside them either).
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    return {std::nullopt, "invalid JSON: a NUL byte at byte " + std::to_string(nul),
            std::string(kInvalidJson), nul};
  }
  try {
    return {Json::parse(text.begin(), text.end()), {}, {}, 0};
  } catch (const nlohmann::json::parse_error& e) {
    return {std::nullopt, clean_reason(e.what()), std::string(kInvalidJson),
            e.byte > 0 ? e.byte - 1 : 0};
  } catch (const nlohmann::json::exception& e) {
    return {std::nullopt, clean_reason(e.what()), std::string(kInvalidJson), 0};
  }
}

}  // namespace

std::string mark_lone_surrogates(std::string_view text) {
  return rewrite_lone_surrogates(text, [](std::string& out, std::string_view hex) {
    out += marker_prefix();
    out.append(hex);
  });
}

namespace {

// Each marker in `text` replaced: by its `\udxxx` escape (in serialized JSON) or by U+FFFD.
void replace_markers(std::string& text, bool escape) {
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
    if (escape) {
      out += "\\u";
      for (std::size_t i = 0; i < 4; ++i)
        out.push_back(static_cast<char>(std::tolower(text[at + prefix.size() + i])));
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
    }
    copied = at + prefix.size() + 4;
    at = text.find(prefix, copied);
  }
  out.append(text, copied, std::string::npos);
  text = std::move(out);
}

}  // namespace

void unmark_lone_surrogates(std::string& text) {
  replace_markers(text, true);
}

void replace_surrogate_markers(std::string& text) {
  if (text.find(kMarkerLead) != std::string::npos) replace_markers(text, false);
}

void replace_surrogate_markers(Json& value) {
  if (value.is_string()) {
    auto& s = value.get_ref<std::string&>();
    replace_surrogate_markers(s);
  } else if (value.is_array() || value.is_object()) {
    for (auto& v : value)
      replace_surrogate_markers(v);
  }
}

JsonLine parse_json_line(std::string_view line) {
  // Well-formed JSON without a lone surrogate escape: the fast parser's value is the one below.
  if (auto fast = parse_json_fast(line, kMaxJsonDepth)) return {std::move(*fast), {}, {}, 0};
  if (const auto bad = find_invalid_utf8(line)) {
    return {std::nullopt, "invalid UTF-8 at byte " + std::to_string(*bad), "invalid UTF-8", *bad};
  }
  if (line.find("\\u") != std::string_view::npos) return parse_checked(mark_lone_surrogates(line));
  return parse_checked(line);
}

JsonLine parse_provider_json(std::string_view text) {
  if (auto fast = parse_json_fast(text, kMaxJsonDepth)) return {std::move(*fast), {}, {}, 0};
  std::string fixed;
  if (find_invalid_utf8(text)) {
    fixed = replace_invalid_utf8(text);
    text = fixed;
  }
  if (text.find("\\u") == std::string_view::npos) return parse_checked(text);
  return parse_checked(
      rewrite_lone_surrogates(text, [](std::string& out, std::string_view) { out += "\\ufffd"; }));
}

std::string to_line(const Json& value) {
  std::string out = value.dump(-1, ' ', false, nlohmann::detail::error_handler_t::replace);
  if (out.find(kMarkerLead) != std::string::npos) unmark_lone_surrogates(out);
  out.push_back('\n');
  return out;
}

}  // namespace rebound::protocol
