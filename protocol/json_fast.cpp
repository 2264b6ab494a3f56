#include "protocol/json_fast.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <system_error>

#include "protocol/utf8.h"

namespace rebound::protocol {

namespace {

// The bytes a run of string text stops at: the closing quote, an escape, a control character
// (never allowed raw) and the first byte of a multi-byte UTF-8 sequence (checked one by one).
constexpr std::array<bool, 256> kStringStop = [] {
  std::array<bool, 256> stop{};
  for (std::size_t c = 0; c < stop.size(); ++c)
    stop[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
  return stop;
}();

// Recursive descent over the text; every function returns false to decline. Recursion is
// bounded by max_depth (one frame pair a level; the server's limit is 512).
class FastParser {
 public:
  FastParser(std::string_view text, std::size_t max_depth)
      : s_(reinterpret_cast<const unsigned char*>(text.data())),
        n_(text.size()),
        max_depth_(max_depth) {}

  bool document(Json& out) {
    skip_space();
    if (!value(out, 0)) return false;
    skip_space();
    return i_ == n_;
  }

 private:
  bool at(unsigned char c) const { return i_ < n_ && s_[i_] == c; }
  bool digit() const { return i_ < n_ && s_[i_] >= '0' && s_[i_] <= '9'; }

  void skip_space() {
    while (i_ < n_ && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }

  bool value(Json& out, std::size_t depth) {
    if (i_ >= n_) return false;
    switch (s_[i_]) {
      case '{':
        return object(out, depth + 1);
      case '[':
        return array(out, depth + 1);
      case '"': {
        std::string text;
        if (!string(text)) return false;
        out = std::move(text);
        return true;
      }
      case 't':
        return word("true", out, Json(true));
      case 'f':
        return word("false", out, Json(false));
      case 'n':
        return word("null", out, Json(nullptr));
      default:
        return number(out);
    }
  }

  bool word(std::string_view w, Json& out, Json v) {
    if (n_ - i_ < w.size() || std::memcmp(s_ + i_, w.data(), w.size()) != 0) return false;
    i_ += w.size();
    out = std::move(v);
    return true;
  }

  // The members of an object or the items of an array (`item` reads one), separated by
  // commas and ended by `close`; i_ is just past the opening bracket.
  template <typename Item>
  bool sequence(unsigned char close, Item item) {
    skip_space();
    if (at(close)) {
      ++i_;
      return true;
    }
    for (;;) {
      if (!item()) return false;
      skip_space();
      if (at(',')) {
        ++i_;
        skip_space();
        continue;
      }
      if (!at(close)) return false;
      ++i_;
      return true;
    }
  }

  bool object(Json& out, std::size_t depth) {
    if (depth > max_depth_) return false;
    ++i_;
    out = Json::object();
    auto& members = *out.get_ptr<Json::object_t*>();
    return sequence('}', [&] {
      if (!at('"')) return false;
      std::string key;
      if (!string(key)) return false;
      skip_space();
      if (!at(':')) return false;
      ++i_;
      skip_space();
      // As nlohmann_json's ordered_json: a repeated key keeps its first place and its last value.
      Json& slot = members.emplace(std::move(key), Json()).first->second;
      return value(slot, depth);
    });
  }

  bool array(Json& out, std::size_t depth) {
    if (depth > max_depth_) return false;
    ++i_;
    out = Json::array();
    auto& items = *out.get_ptr<Json::array_t*>();
    return sequence(']', [&] {
      items.emplace_back();
      return value(items.back(), depth);
    });
  }

  bool string(std::string& out) {
    ++i_;  // the opening quote
    for (;;) {
      const std::size_t run = i_;
      while (i_ < n_ && !kStringStop[s_[i_]])
        ++i_;
      out.append(reinterpret_cast<const char*>(s_ + run), i_ - run);
      if (i_ >= n_) return false;
      const unsigned char c = s_[i_];
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c == '\\') {
        if (!escape(out)) return false;
        continue;
      }
      if (c < 0x80) return false;  // a raw control character
      std::size_t prefix = 0;
      const std::size_t len = utf8_sequence(s_, n_, i_, prefix);
      if (len == 0) return false;
      out.append(reinterpret_cast<const char*>(s_ + i_), len);
      i_ += len;
    }
  }

  bool hex4(std::uint32_t& unit) {
    if (n_ - i_ < 4) return false;
    unit = 0;
    for (int k = 0; k < 4; ++k) {
      const unsigned char c = s_[i_++];
      unit <<= 4;
      if (c >= '0' && c <= '9') {
        unit |= c - '0';
      } else if (c >= 'a' && c <= 'f') {
        unit |= c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        unit |= c - 'A' + 10;
      } else {
        return false;
      }
    }
    return true;
  }

  bool escape(std::string& out) {
    ++i_;  // the backslash
    if (i_ >= n_) return false;
    const unsigned char c = s_[i_++];
    switch (c) {
      case '"':
      case '\\':
      case '/':
        out.push_back(static_cast<char>(c));
        return true;
      case 'b':
        out.push_back('\b');
        return true;
      case 'f':
        out.push_back('\f');
        return true;
      case 'n':
        out.push_back('\n');
        return true;
      case 'r':
        out.push_back('\r');
        return true;
      case 't':
        out.push_back('\t');
        return true;
      case 'u':
        break;
      default:
        return false;
    }
    std::uint32_t cp = 0;
    if (!hex4(cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a lone low surrogate: the careful path
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      std::uint32_t low = 0;
      if (n_ - i_ < 2 || s_[i_] != '\\' || s_[i_ + 1] != 'u') return false;
      i_ += 2;
      if (!hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    return true;
  }

  // RFC 8259's grammar. As nlohmann_json: an integer is unsigned when not negative, signed
  // when negative; a fraction or exponent makes a double. An integer past 64 bits (nlohmann
  // makes it a double) and a double out of range are declined.
  bool number(Json& out) {
    const std::size_t start = i_;
    const bool negative = at('-');
    if (negative) ++i_;
    if (at('0')) {
      ++i_;
    } else if (digit()) {
      while (digit())
        ++i_;
    } else {
      return false;
    }
    bool integer = true;
    if (at('.')) {
      integer = false;
      ++i_;
      if (!digit()) return false;
      while (digit())
        ++i_;
    }
    if (at('e') || at('E')) {
      integer = false;
      ++i_;
      if (at('+') || at('-')) ++i_;
      if (!digit()) return false;
      while (digit())
        ++i_;
    }
    const char* first = reinterpret_cast<const char*>(s_ + start);
    const char* last = reinterpret_cast<const char*>(s_ + i_);
    if (integer && negative) {
      std::int64_t v = 0;
      const auto r = std::from_chars(first, last, v);
      if (r.ec != std::errc() || r.ptr != last) return false;
      out = v;
      return true;
    }
    if (integer) {
      std::uint64_t v = 0;
      const auto r = std::from_chars(first, last, v);
      if (r.ec != std::errc() || r.ptr != last) return false;
      out = v;
      return true;
    }
    double v = 0;
    const auto r = std::from_chars(first, last, v);
    if (r.ec != std::errc() || r.ptr != last || !std::isfinite(v)) return false;
    out = v;
    return true;
  }

  const unsigned char* s_;
  std::size_t n_;
  std::size_t max_depth_;
  std::size_t i_ = 0;
};

}  // namespace

std::optional<Json> parse_json_fast(std::string_view text, std::size_t max_depth) {
  Json out;
  if (!FastParser(text, max_depth).document(out)) return std::nullopt;
  return out;
}

}  // namespace rebound::protocol
