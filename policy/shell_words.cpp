// Parser's words (policy/shell_parser.h): quoting, `$'…'`, parameter and command
// substitutions, backquotes, tildes; and bash's brace expansion of a word.
#include <cctype>
#include <cstdint>

#include "policy/shell_parser.h"

namespace rebound::policy::shell_parse {

void add_literal(ShellWord& w, char c) {
  w.value += c;
  if (c == '*' || c == '?' || c == '[' || c == '\\') w.pattern += '\\';
  w.pattern += c;
}

void add_utf8(ShellWord& w, std::uint32_t cp) {
  if (cp > 0x10FFFF) cp = 0xFFFD;
  if (cp < 0x80) {
    add_literal(w, static_cast<char>(cp));
  } else if (cp < 0x800) {
    add_literal(w, static_cast<char>(0xC0 | (cp >> 6)));
    add_literal(w, static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    add_literal(w, static_cast<char>(0xE0 | (cp >> 12)));
    add_literal(w, static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    add_literal(w, static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    add_literal(w, static_cast<char>(0xF0 | (cp >> 18)));
    add_literal(w, static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    add_literal(w, static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    add_literal(w, static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// What the parse of one source shares with the parses of the strings inside it (`sh -c`, `eval`,
// backquotes): the parts found, the directory changes, the depth.
namespace {

// A word's characters with its unquoted braces and commas marked (as negative codes).
using BraceText = std::vector<int>;
constexpr int kOpen = -1, kComma = -2, kClose = -3;

bool is_sequence_end(const std::string& t, bool& letter, long long& number) {
  if (t.size() == 1 && std::isalpha(static_cast<unsigned char>(t[0]))) {
    letter = true;
    number = t[0];
    return true;
  }
  std::size_t j = t[0] == '-' || t[0] == '+' ? 1 : 0;
  if (j >= t.size() || t.size() > 18 || t.find_first_not_of("0123456789", j) != std::string::npos)
    return false;
  letter = false;
  number = std::stoll(t);
  return true;
}

// `{x..y}` or `{x..y..step}`, with integers or single letters: the words, or nullopt.
std::optional<std::vector<std::string>> brace_sequence(const BraceText& body, std::size_t limit) {
  std::string text;
  for (int c : body) {
    if (c < 0) return std::nullopt;
    text += static_cast<char>(c);
  }
  std::vector<std::string> fields;
  std::size_t from = 0;
  for (;;) {
    const std::size_t dots = text.find("..", from);
    fields.push_back(
        text.substr(from, dots == std::string::npos ? std::string::npos : dots - from));
    if (dots == std::string::npos) break;
    from = dots + 2;
  }
  if (fields.size() < 2 || fields.size() > 3) return std::nullopt;
  bool la = false, lb = false, ls = false;
  long long a = 0, b = 0, step = 1;
  if (fields[0].empty() || fields[1].empty() || !is_sequence_end(fields[0], la, a) ||
      !is_sequence_end(fields[1], lb, b) || la != lb)
    return std::nullopt;
  if (fields.size() == 3 && (fields[2].empty() || !is_sequence_end(fields[2], ls, step) || ls))
    return std::nullopt;
  step = step < 0 ? -step : step;
  if (step == 0) step = 1;
  const long long span = a < b ? b - a : a - b;
  std::vector<std::string> out;
  if (span / step + 1 > static_cast<long long>(limit)) {
    out.resize(limit + 1);  // too many: the caller only counts
    return out;
  }
  for (long long v = a;; v += a < b ? step : -step) {
    if ((a < b && v > b) || (a > b && v < b)) break;
    out.push_back(la ? std::string(1, static_cast<char>(v)) : std::to_string(v));
    if (a == b) break;
  }
  return out;
}

// Bash's brace expansion of one marked word into `out`; false when more than `limit` words.
bool expand_marked(const BraceText& w, std::vector<BraceText>& out, std::size_t limit, int depth) {
  if (depth > 32) return false;
  for (std::size_t open = 0; open < w.size(); ++open) {
    if (w[open] != kOpen) continue;
    // Its matching close, and the commas at its own level.
    int level = 0;
    std::vector<std::size_t> commas;
    std::size_t close = 0;
    for (std::size_t j = open + 1; j < w.size(); ++j) {
      if (w[j] == kOpen) ++level;
      if (w[j] == kClose) {
        if (level == 0) {
          close = j;
          break;
        }
        --level;
      }
      if (w[j] == kComma && level == 0) commas.push_back(j);
    }
    if (close == 0) continue;
    const BraceText pre(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(open));
    const BraceText post(w.begin() + static_cast<std::ptrdiff_t>(close) + 1, w.end());
    std::vector<BraceText> alternatives;
    if (commas.empty()) {
      const BraceText body(w.begin() + static_cast<std::ptrdiff_t>(open) + 1,
                           w.begin() + static_cast<std::ptrdiff_t>(close));
      auto seq = brace_sequence(body, limit);
      if (!seq) continue;  // `{x}`, `{}`: literal; look for a later brace
      if (seq->size() > limit) return false;
      for (const auto& s : *seq)
        alternatives.emplace_back(s.begin(), s.end());
    } else {
      std::size_t from = open + 1;
      commas.push_back(close);
      for (std::size_t c : commas) {
        alternatives.emplace_back(w.begin() + static_cast<std::ptrdiff_t>(from),
                                  w.begin() + static_cast<std::ptrdiff_t>(c));
        from = c + 1;
      }
    }
    for (const auto& alt : alternatives) {
      BraceText next = pre;
      next.insert(next.end(), alt.begin(), alt.end());
      next.insert(next.end(), post.begin(), post.end());
      if (!expand_marked(next, out, limit, depth + 1)) return false;
      if (out.size() > limit) return false;
    }
    return true;
  }
  out.push_back(w);
  return out.size() <= limit;
}

}  // namespace

BraceResult brace_expand(const std::string& raw, const std::vector<std::size_t>& marks,
                         std::vector<std::string>& words) {
  BraceText text(raw.begin(), raw.end());
  for (int& c : text)
    c = static_cast<unsigned char>(c);
  for (std::size_t m : marks)
    text[m] = raw[m] == '{' ? kOpen : raw[m] == ',' ? kComma : kClose;
  std::vector<BraceText> out;
  if (!expand_marked(text, out, kMaxBraceWords, 0)) return BraceResult::too_many;
  if (out.size() == 1 && out.front() == text) return BraceResult::none;
  for (const auto& w : out) {
    std::string s;
    for (int c : w)
      s += c == kOpen ? '{' : c == kComma ? ',' : c == kClose ? '}' : static_cast<char>(c);
    words.push_back(std::move(s));
  }
  return BraceResult::expanded;
}

// --- words -------------------------------------------------------------------------------
ShellWord Parser::read_word() {
  Deeper deeper(sh_);
  ShellWord w;
  const std::size_t from = i_;
  if ((at() == '<' || at() == '>') && at(1) == '(') {
    i_ += 2;
    command_substitution_body();
    w.raw = std::string(s_.substr(from, i_ - from));
    w.value = w.raw;
    w.opaque = true;
    return w;
  }
  if (at() == '~') tilde(w);
  while (!at_end() && !is_meta(at())) {
    const char c = at();
    if (c == '\\') {
      if (at(1) == '\n') {
        i_ += 2;
      } else if (i_ + 1 < s_.size()) {
        add_literal(w, at(1));
        i_ += 2;
      } else {
        add_literal(w, '\\');
        ++i_;
      }
    } else if (c == '\'') {
      const std::size_t close = s_.find('\'', i_ + 1);
      if (close == std::string_view::npos) fail("unterminated quote");
      for (std::size_t k = i_ + 1; k < close; ++k)
        add_literal(w, s_[k]);
      i_ = close + 1;
    } else if (c == '"') {
      ++i_;
      double_quoted(w);
    } else if (c == '$') {
      dollar(w);
    } else if (c == '`') {
      backquote();
      w.opaque = true;
    } else {
      if (c == '{' || c == ',' || c == '}') w.braces.push_back(i_ - from);
      if (c == '*' || c == '?' || c == '[') {
        w.glob = true;
        w.value += c;
        w.pattern += c;
      } else {
        add_literal(w, c);
      }
      ++i_;
    }
  }
  w.raw = std::string(s_.substr(from, i_ - from));
  if (w.opaque) w.value = w.raw;
  return w;
}

void Parser::tilde(ShellWord& w) {
  std::size_t j = i_ + 1;
  while (j < s_.size() && !is_meta(s_[j]) && s_[j] != '/')
    ++j;
  if (j == i_ + 1) {
    for (char c : sh_.home)
      add_literal(w, c);
    ++i_;
  } else {
    w.opaque = true;  // ~user, ~+, ~-
  }
}

void Parser::double_quoted(ShellWord& w) {
  for (;;) {
    if (at_end()) fail("unterminated quote");
    const char c = at();
    if (c == '"') {
      ++i_;
      return;
    }
    if (c == '\\') {
      const char n = at(1);
      if (n == '$' || n == '`' || n == '"' || n == '\\') {
        add_literal(w, n);
        i_ += 2;
      } else if (n == '\n') {
        i_ += 2;
      } else {
        add_literal(w, '\\');
        ++i_;
      }
    } else if (c == '$') {
      dollar(w, true);
    } else if (c == '`') {
      backquote();
      w.opaque = true;
    } else {
      add_literal(w, c);
      ++i_;
    }
  }
}

void Parser::dollar(ShellWord& w, bool in_double) {
  const char n = at(1);
  if (!in_double && n == '\'') {
    i_ += 2;
    ansi_c(w);
    return;
  }
  if (!in_double && n == '"') {
    i_ += 2;
    double_quoted(w);
    return;
  }
  if (n == '(' && at(2) == '(') {
    i_ += 1;
    skip_arithmetic();
    w.opaque = true;
    return;
  }
  if (n == '(') {
    i_ += 2;
    command_substitution_body();
    w.opaque = true;
    return;
  }
  if (n == '{') {
    i_ += 2;
    int depth = 1;
    while (depth > 0) {
      if (at_end()) fail("unterminated ${");
      const char c = at();
      if (c == '\\') {
        i_ += 2;
        continue;
      }
      if (c == '`' || (c == '$' && at(1) == '(')) fail("a substitution inside ${…}");
      if (c == '\'' && !in_double) {
        const std::size_t close = s_.find('\'', i_ + 1);
        if (close == std::string_view::npos) fail("unterminated quote");
        i_ = close + 1;
        continue;
      }
      if (c == '{') ++depth;
      if (c == '}') --depth;
      ++i_;
    }
    w.opaque = true;
    return;
  }
  if (is_name_start(n)) {
    i_ += 2;
    while (is_name_char(at()))
      ++i_;
    w.opaque = true;
    return;
  }
  if (is_digit(n) || n == '?' || n == '$' || n == '#' || n == '@' || n == '*' || n == '!' ||
      n == '-') {
    i_ += 2;
    w.opaque = true;
    return;
  }
  add_literal(w, '$');
  ++i_;
}

void Parser::ansi_c(ShellWord& w) {
  for (;;) {
    if (at_end()) fail("unterminated quote");
    const char c = at();
    if (c == '\'') {
      ++i_;
      return;
    }
    if (c != '\\') {
      add_literal(w, c);
      ++i_;
      continue;
    }
    const char e = at(1);
    i_ += 2;
    switch (e) {
      case 'n':
        add_literal(w, '\n');
        break;
      case 't':
        add_literal(w, '\t');
        break;
      case 'r':
        add_literal(w, '\r');
        break;
      case 'a':
        add_literal(w, '\a');
        break;
      case 'b':
        add_literal(w, '\b');
        break;
      case 'e':
      case 'E':
        add_literal(w, '\x1b');
        break;
      case 'f':
        add_literal(w, '\f');
        break;
      case 'v':
        add_literal(w, '\v');
        break;
      case 'x': {
        int v = 0, k = 0;
        while (k < 2 && std::isxdigit(static_cast<unsigned char>(at()))) {
          const char h = at();
          v = v * 16 + (is_digit(h) ? h - '0' : (std::tolower(h) - 'a' + 10));
          ++i_;
          ++k;
        }
        add_literal(w, static_cast<char>(v));
        break;
      }
      case 'u':
      case 'U': {  // up to 4 or 8 hex digits, the code point in UTF-8
        std::uint32_t v = 0;
        int k = 0;
        const int most = e == 'u' ? 4 : 8;
        while (k < most && std::isxdigit(static_cast<unsigned char>(at()))) {
          const char h = at();
          v = v * 16 +
              static_cast<std::uint32_t>(is_digit(h) ? h - '0' : (std::tolower(h) - 'a' + 10));
          ++i_;
          ++k;
        }
        if (k == 0) {
          add_literal(w, '\\');
          add_literal(w, e);
        } else {
          add_utf8(w, v);
        }
        break;
      }
      case 'c':  // \cX: the control character of X
        if (at_end()) {
          add_literal(w, '\\');
          add_literal(w, 'c');
        } else {
          add_literal(w, static_cast<char>(at() & 0x1f));
          ++i_;
        }
        break;
      default:
        if (e >= '0' && e <= '7') {
          int v = e - '0', k = 1;
          while (k < 3 && at() >= '0' && at() <= '7') {
            v = v * 8 + (at() - '0');
            ++i_;
            ++k;
          }
          add_literal(w, static_cast<char>(v));
        } else {
          // \\, \', \", \? and anything else: the character itself.
          if (e != '\\' && e != '\'' && e != '"' && e != '?') add_literal(w, '\\');
          add_literal(w, e);
        }
    }
  }
}

// After `$(` (or `<(`, `>(`): the list inside, through its `)`.
void Parser::command_substitution_body() {
  parse_list({});
  skip_linebreaks();
  if (at() != ')') fail("unterminated command substitution");
  ++i_;
}

// `…` : the text between the backquotes, unescaped as bash does, parsed on its own.
void Parser::backquote() {
  const std::size_t open = i_;
  ++i_;
  std::string inner;
  for (;;) {
    if (at_end()) fail("unterminated backquote");
    const char c = at();
    if (c == '`') {
      ++i_;
      break;
    }
    if (c == '\\' && (at(1) == '`' || at(1) == '\\' || at(1) == '$')) {
      inner += at(1);
      i_ += 2;
      continue;
    }
    inner += c;
    ++i_;
  }
  run_string(inner, base_ + open + 1);
}

}  // namespace rebound::policy::shell_parse
