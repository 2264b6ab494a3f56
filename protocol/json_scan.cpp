#include "protocol/json_scan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "protocol/json_line.h"

namespace rebound::protocol::json_scan {

namespace {

bool is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The grammar check: the end of the value at `p`, or nullptr.
}  // namespace

namespace {

// Keys are short: a byte loop beats a call to memcmp.
bool same(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

}  // namespace

// The grammar check: the end of the value at `p`, or nullptr; on the way, the spans of the
// values at the paths.
class Checker {
 public:
  Checker(const char* end, const Paths* paths, std::optional<std::string_view>* values)
      : end_(end), paths_(paths), values_(values) {
    if (paths_) masks_[0] = paths_->all_;
  }

  bool unsure() const { return unsure_; }
  const char* string_token(const char* p) const { return string(p); }

  // `length`: how many keys and indexes lead to this value. masks_[length] holds the paths
  // that matched all the way here.
  const char* value(const char* p, std::size_t length) {
    const char* end = parse(p, length);
    if (end && paths_ && length <= kMaxLength) {
      for (std::uint32_t m = masks_[length] & paths_->ends_at_[length]; m != 0; m &= m - 1)
        values_[__builtin_ctz(m)] = std::string_view(p, static_cast<std::size_t>(end - p));
    }
    return end;
  }

  // The paths of masks_[length] whose next segment is `segment`, into masks_[length + 1].
  void descend(std::size_t length, std::string_view segment) {
    if (length >= kMaxLength) return;
    std::uint32_t next = 0;
    for (std::size_t k = paths_->first_[length]; k < paths_->first_[length + 1]; ++k) {
      if (same(paths_->entries_[k].segment, segment)) {
        next = paths_->entries_[k].mask;
        break;
      }
    }
    masks_[length + 1] = masks_[length] & next;
  }

  const char* parse(const char* p, std::size_t length) {
    if (p >= end_) return nullptr;
    switch (*p) {
      case '{':
        return object(p, length);
      case '[':
        return array(p, length);
      case '"':
        return string(p);
      case 't':
        return literal(p, "true");
      case 'f':
        return literal(p, "false");
      case 'n':
        return literal(p, "null");
      default:
        return number(p);
    }
  }

  const char* ws(const char* p) const {
    while (p < end_ && is_ws(*p))
      ++p;
    return p;
  }

 private:
  const char* literal(const char* p, std::string_view word) const {
    if (static_cast<std::size_t>(end_ - p) < word.size()) return nullptr;
    return std::string_view(p, word.size()) == word ? p + word.size() : nullptr;
  }

  const char* number(const char* p) const {
    const char* begin = p;
    if (p < end_ && *p == '-') ++p;
    if (p >= end_) return nullptr;
    const char* digits = p;
    if (*p == '0') {
      ++p;
    } else if (is_digit(*p)) {
      while (p < end_ && is_digit(*p))
        ++p;
    } else {
      return nullptr;
    }
    const auto integer_digits = static_cast<std::size_t>(p - digits);
    if (p < end_ && *p == '.') {
      ++p;
      if (p >= end_ || !is_digit(*p)) return nullptr;
      while (p < end_ && is_digit(*p))
        ++p;
    }
    bool exponent = false;
    if (p < end_ && (*p == 'e' || *p == 'E')) {
      exponent = true;
      ++p;
      if (p < end_ && (*p == '+' || *p == '-')) ++p;
      if (p >= end_ || !is_digit(*p)) return nullptr;
      while (p < end_ && is_digit(*p))
        ++p;
    }
    // The general parser refuses a number too large for a double ("number overflow"); only an
    // exponent or more than 308 integer digits can make one.
    if ((exponent || integer_digits > 308) && overflows(begin, p)) return nullptr;
    return p;
  }

  static bool overflows(const char* begin, const char* end) {
    const std::string text(begin, end);  // strtod needs the terminating NUL
    return std::isinf(std::strtod(text.c_str(), nullptr));
  }

  const char* string(const char* p) const {
    ++p;  // the opening quote
    while (p < end_) {
      const auto c = static_cast<unsigned char>(*p);
      if (c == '"') return p + 1;
      if (c < 0x20) return nullptr;
      if (c >= 0x80) {
        const std::size_t n = utf8_length(p);
        if (n == 0) return nullptr;
        p += n;
        continue;
      }
      if (c != '\\') {
        ++p;
        continue;
      }
      if (++p >= end_) return nullptr;
      switch (*p) {
        case '"':
        case '\\':
        case '/':
        case 'b':
        case 'f':
        case 'n':
        case 'r':
        case 't':
          ++p;
          break;
        case 'u':
          if (end_ - p < 5) return nullptr;
          for (int i = 1; i <= 4; ++i)
            if (hex_value(p[i]) < 0) return nullptr;
          p += 5;
          break;
        default:
          return nullptr;
      }
    }
    return nullptr;
  }

  // The length of the valid UTF-8 sequence at `p` (its lead byte is 0x80 or more), else 0:
  // overlong forms, surrogates and code points past U+10FFFF are invalid.
  std::size_t utf8_length(const char* p) const {
    const auto b = [&](std::size_t i) { return static_cast<unsigned char>(p[i]); };
    const auto left = static_cast<std::size_t>(end_ - p);
    const auto cont = [&](std::size_t i) { return i < left && (b(i) & 0xC0) == 0x80; };
    const unsigned char lead = b(0);
    if (lead >= 0xC2 && lead <= 0xDF) return cont(1) ? 2 : 0;
    if (lead >= 0xE0 && lead <= 0xEF) {
      if (!cont(1) || !cont(2)) return 0;
      if (lead == 0xE0 && b(1) < 0xA0) return 0;  // overlong
      if (lead == 0xED && b(1) > 0x9F) return 0;  // a surrogate
      return 3;
    }
    if (lead >= 0xF0 && lead <= 0xF4) {
      if (!cont(1) || !cont(2) || !cont(3)) return 0;
      if (lead == 0xF0 && b(1) < 0x90) return 0;  // overlong
      if (lead == 0xF4 && b(1) > 0x8F) return 0;  // past U+10FFFF
      return 4;
    }
    return 0;
  }

  // A container at path length `length` nests `length + 1` deep.
  const char* object(const char* p, std::size_t length) {
    if (length + 1 > kMaxJsonDepth) return nullptr;
    p = ws(p + 1);
    if (p < end_ && *p == '}') return p + 1;
    while (true) {
      if (p >= end_ || *p != '"') return nullptr;
      const char* key = p;
      p = string(p);
      if (!p) return nullptr;
      if (length < kMaxLength) {
        if (masks_[length] != 0) {
          const std::string_view name(key + 1, static_cast<std::size_t>(p - key - 2));
          // An escaped key could spell a path's segment: the caller cannot rely on the scan.
          if (name.find('\\') != std::string_view::npos) unsure_ = true;
          descend(length, name);
        } else {
          masks_[length + 1] = 0;
        }
      }
      p = ws(p);
      if (p >= end_ || *p != ':') return nullptr;
      p = value(ws(p + 1), length + 1);
      if (!p) return nullptr;
      p = ws(p);
      if (p >= end_) return nullptr;
      if (*p == '}') return p + 1;
      if (*p != ',') return nullptr;
      p = ws(p + 1);
    }
  }

  const char* array(const char* p, std::size_t length) {
    if (length + 1 > kMaxJsonDepth) return nullptr;
    p = ws(p + 1);
    if (p < end_ && *p == ']') return p + 1;
    bool first = true;
    while (true) {
      if (length < kMaxLength) {
        if (first && masks_[length] != 0) {
          descend(length, kFirst);
        } else {
          masks_[length + 1] = 0;
        }
      }
      first = false;
      p = value(p, length + 1);
      if (!p) return nullptr;
      p = ws(p);
      if (p >= end_) return nullptr;
      if (*p == ']') return p + 1;
      if (*p != ',') return nullptr;
      p = ws(p + 1);
    }
  }

  static constexpr std::size_t kMaxLength = Paths::kMaxLength;

  const char* end_;
  const Paths* paths_;
  std::optional<std::string_view>* values_;
  std::uint32_t masks_[kMaxLength + 1] = {};
  bool unsure_ = false;
};

namespace {

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::uint32_t hex4(const char* p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v = v * 16 + static_cast<std::uint32_t>(hex_value(p[i]));
  return v;
}

}  // namespace

Paths::Paths(std::initializer_list<std::initializer_list<std::string_view>> paths) {
  paths_.reserve(paths.size());
  std::size_t longest = 0;
  for (const auto& path : paths) {
    paths_.emplace_back(path.begin(), path.end());
    const std::size_t i = paths_.size() - 1;
    if (path.size() <= kMaxLength && i < kMaxPaths) {
      all_ |= 1u << i;
      ends_at_[path.size()] |= 1u << i;
      longest = std::max(longest, path.size());
    }
  }
  // The distinct segments of each level, with the paths that have them there.
  for (std::size_t level = 0; level < longest; ++level) {
    first_[level] = entries_.size();
    for (std::size_t i = 0; i < paths_.size() && i < kMaxPaths; ++i) {
      if (!(all_ >> i & 1u) || paths_[i].size() <= level) continue;
      const std::string_view segment = paths_[i][level];
      std::size_t k = first_[level];
      while (k < entries_.size() && entries_[k].segment != segment)
        ++k;
      if (k == entries_.size()) entries_.push_back(Entry{segment, 0});
      entries_[k].mask |= 1u << i;
    }
  }
  for (std::size_t level = longest; level <= kMaxLength; ++level)
    first_[level] = entries_.size();
}

std::optional<std::size_t> string_token_length(std::string_view text) {
  if (text.empty() || text.front() != '"') return std::nullopt;
  const Checker check(text.data() + text.size(), nullptr, nullptr);
  const char* end = check.string_token(text.data());
  if (!end) return std::nullopt;
  return static_cast<std::size_t>(end - text.data());
}

bool is_valid(std::string_view text) {
  const char* end = text.data() + text.size();
  Checker check(end, nullptr, nullptr);
  const char* p = check.value(check.ws(text.data()), 0);
  return p && check.ws(p) == end;
}

bool scan(std::string_view text, const Paths& paths, std::optional<std::string_view>* values) {
  const char* end = text.data() + text.size();
  Checker check(end, &paths, values);
  const char* p = check.value(check.ws(text.data()), 0);
  return p && check.ws(p) == end && !check.unsure();
}

namespace detail {

const char* skip_ws(const char* p, const char* end) {
  while (p < end && is_ws(*p))
    ++p;
  return p;
}

const char* value_end(const char* p, const char* end) {
  // Only called on a text is_valid() accepted: a string ends at its first unescaped quote, a
  // container where its brackets balance (brackets inside strings skipped), anything else at
  // the next delimiter.
  if (*p == '"') {
    ++p;
    while (*p != '"')
      p += *p == '\\' ? 2 : 1;
    return p + 1;
  }
  if (*p == '{' || *p == '[') {
    std::size_t depth = 0;
    while (p < end) {
      const char c = *p;
      if (c == '"') {
        p = value_end(p, end);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return p + 1;
      }
      ++p;
    }
    return end;
  }
  while (p < end && *p != ',' && *p != '}' && *p != ']' && !is_ws(*p))
    ++p;
  return p;
}

}  // namespace detail

std::optional<std::string_view> first_element(std::string_view array) {
  const char* end = array.data() + array.size();
  const char* p = detail::skip_ws(array.data() + 1, end);
  if (p >= end || *p == ']') return std::nullopt;
  return std::string_view(p, static_cast<std::size_t>(detail::value_end(p, end) - p));
}

std::optional<std::string> decode_string(std::string_view value) {
  const std::string_view body = value.substr(1, value.size() - 2);
  if (body.find('\\') == std::string_view::npos) return std::string(body);
  std::string out;
  out.reserve(body.size());
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c != '\\') {
      out += c;
      continue;
    }
    const char e = body[++i];
    switch (e) {
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        std::uint32_t cp = hex4(body.data() + i + 1);
        i += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return std::nullopt;  // a lone low surrogate
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          // A pair needs `\uDC00`..`\uDFFF` right after.
          if (i + 6 >= body.size() || body[i + 1] != '\\' || body[i + 2] != 'u')
            return std::nullopt;
          const std::uint32_t low = hex4(body.data() + i + 3);
          if (low < 0xDC00 || low > 0xDFFF) return std::nullopt;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          i += 6;
        }
        append_utf8(out, cp);
        break;
      }
      default:  // '"', '\\', '/'
        out += e;
        break;
    }
  }
  return out;
}

}  // namespace rebound::protocol::json_scan
