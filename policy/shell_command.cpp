// A recursive-descent reading of bash's grammar, as far as policy.md section 2.4 needs it: each
// simple command becomes a part with its words as written and as bash would read them; compound
// commands, substitutions, here-documents and `sh -c`/`eval` strings are looked into; anything
// else stops the analysis as not understood.
#include "policy/shell_command.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <optional>

namespace rebound::policy {

namespace {

struct NotUnderstood {
  std::string why;
};

constexpr int kMaxDepth = 64;

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

bool is_meta(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
         c == '>' || c == '(' || c == ')';
}

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

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
struct Shared {
  const std::string& home;
  std::vector<ShellPart>& parts;
  std::vector<std::string> cd_path;
  bool cwd_known = true;
  int depth = 0;
};

constexpr std::size_t kMaxBraceWords = 256;

enum class BraceResult { none, expanded, too_many };

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

// A wrapper's options read from its word `at` (policy.md 2.4 form c, 2.4.1).
struct WrapperScan {
  std::size_t next = 0;  // the wrapped command's word; 0: no wrapper, or nothing wrapped here
  bool unknown_option = false;
  std::optional<std::string> split_string;  // `env -S STRING`, `--split-string[=]STRING`
};
WrapperScan scan_wrapper(const ShellPart& part, std::size_t at);

class Parser {
 public:
  Parser(std::string_view source, std::size_t base, Shared& shared)
      : s_(source), base_(base), sh_(shared) {}

  void parse_all() {
    parse_list({});
    skip_linebreaks();
    if (!at_end()) fail("unexpected '" + std::string(1, s_[i_]) + "'");
    if (!heredocs_.empty()) fail("unterminated here-document");
  }

 private:
  struct Heredoc {
    std::string delimiter;
    bool quoted = false;
    bool strip_tabs = false;
  };

  [[noreturn]] static void fail(std::string why) { throw NotUnderstood{std::move(why)}; }

  struct Deeper {
    explicit Deeper(Shared& s) : sh(s) {
      if (++sh.depth > kMaxDepth) {
        --sh.depth;
        fail("nested too deeply");
      }
    }
    ~Deeper() { --sh.depth; }
    Shared& sh;
  };

  bool at_end() const { return i_ >= s_.size(); }
  char at(std::size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
  bool starts(std::string_view t) const { return s_.substr(i_, t.size()) == t; }

  // Blanks, backslash-newlines and a comment; true when something was skipped.
  bool skip_blanks() {
    const std::size_t from = i_;
    for (;;) {
      if (is_blank(at())) {
        ++i_;
      } else if (at() == '\\' && at(1) == '\n') {
        i_ += 2;
      } else if (at() == '#' && (i_ == 0 || is_meta(s_[i_ - 1]))) {
        while (!at_end() && at() != '\n')
          ++i_;
      } else {
        break;
      }
    }
    return i_ != from;
  }

  void consume_newline() {
    ++i_;  // the '\n'
    auto pending = std::move(heredocs_);
    heredocs_.clear();
    for (const auto& h : pending)
      read_heredoc_body(h);
  }

  void skip_linebreaks() {
    for (;;) {
      skip_blanks();
      if (at() == '\n') {
        consume_newline();
      } else {
        return;
      }
    }
  }

  // The unquoted word at the cursor when it has no quotes or expansions (a reserved word can
  // only be such), else empty.
  std::string_view plain_word() const {
    std::size_t j = i_;
    while (j < s_.size() && !is_meta(s_[j])) {
      const char c = s_[j];
      if (c == '\'' || c == '"' || c == '\\' || c == '$' || c == '`') return {};
      ++j;
    }
    return s_.substr(i_, j - i_);
  }

  bool at_keyword(std::string_view k) const { return plain_word() == k; }

  void expect_keyword(std::string_view k) {
    skip_linebreaks();
    if (!at_keyword(k)) fail("expected '" + std::string(k) + "'");
    i_ += k.size();
  }

  bool at_case_end() const { return starts(";;") || starts(";&"); }

  void parse_list(std::initializer_list<std::string_view> stops) {
    for (;;) {
      skip_linebreaks();
      if (at_end() || at() == ')' || at_case_end()) return;
      const std::string_view w = plain_word();
      for (auto stop : stops)
        if (w == stop) return;
      parse_and_or();
      skip_blanks();
      if (at() == ';' && !at_case_end()) {
        ++i_;
      } else if (at() == '&' && at(1) != '&' && at(1) != '>') {
        ++i_;
      } else if (at() == '\n') {
        consume_newline();
      } else {
        return;
      }
    }
  }

  void parse_and_or() {
    parse_pipeline();
    for (;;) {
      skip_blanks();
      if (starts("&&") || starts("||")) {
        i_ += 2;
        skip_linebreaks();
        parse_pipeline();
      } else {
        return;
      }
    }
  }

  void parse_pipeline() {
    skip_blanks();
    if (at_keyword("!")) {
      ++i_;
      skip_blanks();
    }
    parse_command();
    for (;;) {
      skip_blanks();
      if (starts("||")) return;
      if (starts("|&")) {
        i_ += 2;
      } else if (at() == '|') {
        ++i_;
      } else {
        return;
      }
      skip_linebreaks();
      parse_command();
    }
  }

  void parse_command() {
    Deeper deeper(sh_);
    skip_blanks();
    if (at_end()) fail("a command was expected");
    if (starts("((")) {
      arithmetic_part();
      return trailing_redirections();
    }
    if (at() == '(') {
      ++i_;
      parse_list({});
      skip_linebreaks();
      if (at() != ')') fail("unterminated subshell");
      ++i_;
      return trailing_redirections();
    }
    if (is_meta(at()) && !at_redirection() && !((at() == '<' || at() == '>') && at(1) == '('))
      fail("unexpected '" + std::string(1, at()) + "'");
    const std::string_view w = plain_word();
    if (w == "{") {
      ++i_;
      parse_list({"}"});
      expect_keyword("}");
      return trailing_redirections();
    }
    if (w == "if") return parse_if();
    if (w == "while" || w == "until") {
      i_ += w.size();
      parse_list({"do"});
      expect_keyword("do");
      parse_list({"done"});
      expect_keyword("done");
      return trailing_redirections();
    }
    if (w == "for") return parse_for();
    if (w == "case") return parse_case();
    if (w == "[[") {
      test_part();
      return trailing_redirections();
    }
    if (w == "function") {
      i_ += w.size();
      skip_blanks();
      if (plain_word().empty()) fail("a function name was expected");
      i_ += plain_word().size();
      skip_blanks();
      if (starts("()")) i_ += 2;
      return function_body();
    }
    if (w == "select" || w == "coproc") fail("'" + std::string(w) + "' is not analysed");
    static constexpr std::array<std::string_view, 9> kMisplaced = {
        "then", "elif", "else", "fi", "do", "done", "esac", "}", "in"};
    for (auto k : kMisplaced)
      if (w == k) fail("unexpected '" + std::string(w) + "'");
    if (!w.empty() && is_function_definition(w)) {
      i_ += w.size();
      skip_blanks();
      i_ += 2;  // "()"
      return function_body();
    }
    simple_command();
  }

  bool is_function_definition(std::string_view w) const {
    std::size_t j = i_ + w.size();
    while (j < s_.size() && is_blank(s_[j]))
      ++j;
    return s_.substr(j, 2) == "()";
  }

  void function_body() {
    skip_linebreaks();
    parse_command();
  }

  void parse_if() {
    i_ += 2;
    parse_list({"then"});
    expect_keyword("then");
    parse_list({"elif", "else", "fi"});
    for (;;) {
      skip_linebreaks();
      if (at_keyword("elif")) {
        i_ += 4;
        parse_list({"then"});
        expect_keyword("then");
        parse_list({"elif", "else", "fi"});
      } else if (at_keyword("else")) {
        i_ += 4;
        parse_list({"fi"});
      } else {
        break;
      }
    }
    expect_keyword("fi");
    trailing_redirections();
  }

  void parse_for() {
    i_ += 3;
    skip_blanks();
    if (starts("((")) {
      skip_arithmetic();
    } else {
      const std::string_view name = plain_word();
      if (name.empty()) fail("a loop variable was expected");
      i_ += name.size();
      skip_blanks();
      if (at() == '\n') skip_linebreaks();
      if (at_keyword("in")) {
        i_ += 2;
        for (;;) {
          skip_blanks();
          if (at_end() || at() == ';' || at() == '\n') break;
          if (is_meta(at())) fail("unexpected '" + std::string(1, at()) + "'");
          read_word();
        }
      }
    }
    skip_blanks();
    if (at() == ';') ++i_;
    expect_keyword("do");
    parse_list({"done"});
    expect_keyword("done");
    trailing_redirections();
  }

  void parse_case() {
    i_ += 4;
    skip_blanks();
    if (at_end() || is_meta(at())) fail("a word was expected after 'case'");
    read_word();
    expect_keyword("in");
    for (;;) {
      skip_linebreaks();
      if (at_keyword("esac")) {
        i_ += 4;
        break;
      }
      if (at() == '(') ++i_;
      for (;;) {
        skip_blanks();
        if (at_end() || is_meta(at())) fail("a case pattern was expected");
        read_word();
        skip_blanks();
        if (at() == '|') {
          ++i_;
          continue;
        }
        if (at() != ')') fail("')' was expected after a case pattern");
        ++i_;
        break;
      }
      parse_list({"esac"});
      skip_linebreaks();
      if (starts(";;&")) {
        i_ += 3;
      } else if (starts(";;") || starts(";&")) {
        i_ += 2;
      } else if (!at_keyword("esac")) {
        fail("unterminated case");
      }
    }
    trailing_redirections();
  }

  // `[[ … ]]` is one part, as written; its words are read for substitutions.
  void test_part() {
    const std::size_t from = i_;
    i_ += 2;
    for (;;) {
      skip_blanks();
      if (at() == '\n') {
        consume_newline();
        continue;
      }
      if (at_end()) fail("unterminated [[");
      if (at_keyword("]]")) {
        i_ += 2;
        break;
      }
      if (starts("&&") || starts("||")) {
        i_ += 2;
      } else if (is_meta(at())) {
        ++i_;
      } else {
        read_word();
      }
    }
    add_test_part(from);
  }

  void skip_arithmetic() {
    i_ += 2;
    int depth = 0;
    for (;;) {
      if (at_end()) fail("unterminated arithmetic");
      if (at() == '(') {
        ++depth;
      } else if (at() == ')') {
        if (depth == 0 && at(1) == ')') {
          i_ += 2;
          return;
        }
        if (depth == 0) fail("unbalanced parentheses in arithmetic");
        --depth;
      } else if (at() == '$' && at(1) == '(' && at(2) != '(') {
        i_ += 2;
        command_substitution_body();
        continue;
      } else if (at() == '`') {
        backquote();
        continue;
      }
      ++i_;
    }
  }

  void arithmetic_part() {
    const std::size_t from = i_;
    skip_arithmetic();
    add_test_part(from);
  }

  void add_test_part(std::size_t from) {
    ShellPart part;
    part.start = base_ + from;
    part.test_form = true;
    ShellToken t;
    t.word.raw = std::string(s_.substr(from, i_ - from));
    t.word.value = t.word.raw;
    t.word.opaque = true;
    part.tokens.push_back(std::move(t));
    push_part(std::move(part));
  }

  void push_part(ShellPart part) {
    part.cd_path = sh_.cd_path;
    part.cwd_known = sh_.cwd_known;
    sh_.parts.push_back(std::move(part));
  }

  // Redirections after a compound command belong to no part: a part of their own (no command).
  void trailing_redirections() {
    ShellPart part;
    part.start = base_ + i_;
    for (;;) {
      const bool blank = skip_blanks();
      if (!at_redirection()) break;
      read_redirection(part, blank);
    }
    if (!part.tokens.empty()) push_part(std::move(part));
  }

  bool at_redirection() const {
    std::size_t j = i_;
    while (j < s_.size() && is_digit(s_[j]))
      ++j;
    if (j < s_.size() && (s_[j] == '<' || s_[j] == '>')) {
      // `<(` and `>(` are process substitutions, words.
      return !(j == i_ && j + 1 < s_.size() && s_[j + 1] == '(');
    }
    return j == i_ && (starts("&>"));
  }

  void read_redirection(ShellPart& part, bool blank) {
    const std::size_t from = i_;
    while (is_digit(at()))
      ++i_;
    std::string op;
    static constexpr std::array<std::string_view, 12> kOps = {"&>>", "<<<", "<<-", "&>", ">>", ">|",
                                                              "<>",  "<&",  ">&",  "<<", "<",  ">"};
    for (auto o : kOps) {
      if (starts(o)) {
        op = o;
        break;
      }
    }
    i_ += op.size();
    ShellToken t;
    t.kind = ShellToken::Kind::redirect_op;
    t.space_before = blank;
    t.word.raw = std::string(s_.substr(from, i_ - from));
    t.word.value = op;
    part.tokens.push_back(std::move(t));
    const bool target_blank = skip_blanks();
    if (at_end() || is_meta(at())) fail("a redirection target was expected");
    ShellToken target;
    target.kind = ShellToken::Kind::redirect_target;
    target.space_before = target_blank;
    if (op == "<<" || op == "<<-") {
      target.word = read_word();
      Heredoc h;
      h.strip_tabs = op == "<<-";
      h.quoted = target.word.raw.find_first_of("'\"\\") != std::string::npos;
      // The delimiter is the word after quote removal, whatever it holds.
      h.delimiter = target.word.opaque ? target.word.raw : target.word.value;
      heredocs_.push_back(std::move(h));
    } else {
      target.word = read_word();
    }
    part.tokens.push_back(std::move(target));
  }

  void read_heredoc_body(const Heredoc& h) {
    for (;;) {
      if (at_end()) fail("unterminated here-document");
      std::size_t end = s_.find('\n', i_);
      const bool last = end == std::string_view::npos;
      if (last) end = s_.size();
      std::string_view line = s_.substr(i_, end - i_);
      std::size_t body_from = i_;
      if (h.strip_tabs) {
        while (!line.empty() && line.front() == '\t') {
          line.remove_prefix(1);
          ++body_from;
        }
      }
      if (line == h.delimiter) {
        i_ = last ? end : end + 1;
        return;
      }
      if (!h.quoted) heredoc_substitutions(body_from, end);
      i_ = last ? end : end + 1;
    }
  }

  // The command substitutions of an unquoted here-document's line are parts.
  void heredoc_substitutions(std::size_t from, std::size_t to) {
    const std::size_t saved = i_;
    i_ = from;
    while (i_ < to) {
      if (at() == '\\') {
        i_ += 2;
      } else if (at() == '$' && at(1) == '(' && at(2) != '(') {
        i_ += 2;
        command_substitution_body();
        if (i_ > to) fail("a substitution spans here-document lines");
      } else if (at() == '`') {
        backquote();
        if (i_ > to) fail("a substitution spans here-document lines");
      } else {
        ++i_;
      }
    }
    i_ = saved;
  }

  void simple_command() {
    ShellPart part;
    part.start = base_ + i_;
    bool command_seen = false;
    bool first = true;
    for (;;) {
      const bool blank = skip_blanks() && !first;
      first = false;
      if (at_end()) break;
      if (at_redirection()) {
        read_redirection(part, blank);
        continue;
      }
      const char c = at();
      if (c == '\n' || c == ';' || c == '&' || c == '|' || c == ')') break;
      if (c == '(') fail("unexpected '('");
      ShellToken t;
      t.space_before = blank;
      t.word = read_word();
      if (!command_seen && is_assignment(t.word.raw)) {
        t.kind = ShellToken::Kind::assignment;
      } else {
        command_seen = true;
        if (!t.word.braces.empty()) {
          expand_braces(std::move(t), part);
          continue;
        }
      }
      part.tokens.push_back(std::move(t));
    }
    if (part.tokens.empty()) fail("a command was expected");
    part.tokens.front().space_before = false;
    push_part(part);
    after_command(part);
  }

  // A word with a brace expansion becomes the words bash makes of it (policy.md 2.4.1), each
  // read again as a word; more than kMaxBraceWords of them, or one around an opaque word, make
  // the part uncertain and leave the word as written.
  void expand_braces(ShellToken t, ShellPart& part) {
    std::vector<std::string> words;
    const BraceResult r = brace_expand(t.word.raw, t.word.braces, words);
    if (r == BraceResult::none) {
      part.tokens.push_back(std::move(t));
      return;
    }
    if (r == BraceResult::too_many || t.word.opaque) {
      part.uncertain = true;
      part.tokens.push_back(std::move(t));
      return;
    }
    bool first = true;
    for (const std::string& raw : words) {
      if (raw.empty()) continue;  // an empty unquoted word is removed
      Parser reader(raw, base_ + i_, sh_);
      ShellToken e;
      e.space_before = first ? t.space_before : true;
      e.word = reader.read_word();
      e.word.braces.clear();
      if (!reader.at_end()) {
        part.uncertain = true;
        continue;
      }
      first = false;
      part.tokens.push_back(std::move(e));
    }
  }

  static bool is_assignment(const std::string& raw) {
    if (raw.empty() || !is_name_start(raw[0])) return false;
    std::size_t j = 1;
    while (j < raw.size() && is_name_char(raw[j]))
      ++j;
    if (j < raw.size() && raw[j] == '+') ++j;
    return j < raw.size() && raw[j] == '=';
  }

  // The strings a part runs as commands (`sh -c`, `eval`, `env -S`), and its directory changes.
  void after_command(const ShellPart& part) {
    const std::size_t self = sh_.parts.size() - 1;  // `part` as pushed
    const auto mark_uncertain = [this, self] { sh_.parts[self].uncertain = true; };
    std::size_t c = command_word(part);
    while (c < part.tokens.size()) {
      WrapperScan scan = scan_wrapper(part, c);
      if (scan.unknown_option) mark_uncertain();
      if (scan.split_string) {
        // `env -S STRING ARGS…` runs STRING's words followed by ARGS (policy.md 2.4.1).
        std::string text = *scan.split_string;
        for (std::size_t k = scan.next; k < part.tokens.size(); ++k)
          text += ' ' + part.tokens[k].word.raw;
        run_string(text, part.start);
        return;
      }
      if (scan.next == 0 || scan.next >= part.tokens.size()) break;
      c = scan.next;
    }
    if (c >= part.tokens.size()) return;
    const ShellWord& cmd = part.tokens[c].word;
    if (cmd.opaque) return;
    std::string name = cmd.value;
    const std::size_t slash = name.rfind('/');
    if (slash != std::string::npos) name = name.substr(slash + 1);
    std::vector<const ShellWord*> args;
    for (std::size_t k = c + 1; k < part.tokens.size(); ++k)
      if (part.tokens[k].kind == ShellToken::Kind::word) args.push_back(&part.tokens[k].word);
    if (name == "sh" || name == "bash" || name == "dash" || name == "zsh" || name == "ksh") {
      // Options in any order before the first operand (`-e`, `-o NAME`, `+O NAME`, `-lc`, `--`,
      // `--norc`); with `-c` among them the operand is the command string (policy.md 2.4.1).
      bool dash_c = false;
      for (std::size_t k = 0; k < args.size(); ++k) {
        const ShellWord* a = args[k];
        if (a->opaque) {
          if (dash_c) fail("a non-literal " + name + " -c string");
          mark_uncertain();  // `bash $OPTS -c …`: what runs is not known
          return;
        }
        const std::string& v = a->value;
        if (v.size() > 1 && (v[0] == '-' || v[0] == '+')) {
          if (v[0] == '-' && v[1] == '-') {
            if (v == "--rcfile" || v == "--init-file") ++k;
            continue;
          }
          bool takes = false;
          for (std::size_t j = 1; j < v.size(); ++j) {
            if (v[j] == 'c' && v[0] == '-') dash_c = true;
            if (v[j] == 'o' || v[j] == 'O') takes = true;
          }
          if (takes) ++k;  // the option's name
          continue;
        }
        if (!dash_c) return;  // a script file
        run_string(v, part.start);
        return;
      }
      if (dash_c) fail(name + " -c without a string");
      return;
    }
    if (name == "eval") {
      if (!args.empty() && !args.front()->opaque && args.front()->value == "--")
        args.erase(args.begin());
      std::string text;
      for (const ShellWord* a : args) {
        if (a->opaque) fail("a non-literal eval string");
        if (!text.empty()) text += ' ';
        text += a->value;
      }
      run_string(text, part.start);
      return;
    }
    if (name == "cd" || name == "pushd") {
      std::vector<const ShellWord*> operands;
      for (const ShellWord* a : args) {
        if (!a->opaque && a->value.size() > 1 && a->value[0] == '-') continue;  // -P, -L
        operands.push_back(a);
      }
      if (operands.empty()) {
        if (name == "cd") sh_.cd_path.push_back(sh_.home);
        return;
      }
      if (operands[0]->opaque || operands[0]->value == "-" || operands[0]->glob) {
        sh_.cwd_known = false;
      } else {
        sh_.cd_path.push_back(operands[0]->value);
      }
      return;
    }
    if (name == "popd") sh_.cwd_known = false;
  }

  void run_string(const std::string& text, std::size_t at) {
    Parser inner(text, at, sh_);
    inner.parse_all();
  }

  // --- words -------------------------------------------------------------------------------

  ShellWord read_word() {
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

  void tilde(ShellWord& w) {
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

  void double_quoted(ShellWord& w) {
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

  void dollar(ShellWord& w, bool in_double = false) {
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

  void ansi_c(ShellWord& w) {
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
  void command_substitution_body() {
    parse_list({});
    skip_linebreaks();
    if (at() != ')') fail("unterminated command substitution");
    ++i_;
  }

  // `…` : the text between the backquotes, unescaped as bash does, parsed on its own.
  void backquote() {
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

  std::string_view s_;
  std::size_t i_ = 0;
  std::size_t base_;
  Shared& sh_;
  std::vector<Heredoc> heredocs_;
};

bool word_at(const ShellPart& part, std::size_t k) {
  return k < part.tokens.size() && part.tokens[k].kind == ShellToken::Kind::word;
}

// The next word token after `k`, or tokens.size().
std::size_t next_word(const ShellPart& part, std::size_t k) {
  for (++k; k < part.tokens.size(); ++k)
    if (part.tokens[k].kind == ShellToken::Kind::word) return k;
  return part.tokens.size();
}

// What each wrapper accepts (policy.md 2.4 form c and 2.4.1): short options that take a value
// (joined or the next word), short flags, long options that take a value (`--x V`, `--x=V`),
// long flags; `any_dash`: every word starting with `-` is an option.
struct WrapperOptions {
  std::string_view name;
  std::string_view short_value;
  std::string_view short_flags;
  std::initializer_list<std::string_view> long_value;
  std::initializer_list<std::string_view> long_flags;
  bool any_dash = false;
};

const WrapperOptions* wrapper_options(std::string_view name) {
  static const std::array<WrapperOptions, 10> kWrappers = {{
      {"env", "uCS", "i0v", {"--unset", "--chdir", "--split-string"}, {}, true},
      {"command", "", "pvV", {}, {}, false},
      {"builtin", "", "", {}, {}, false},
      {"nohup", "", "", {}, {}, false},
      {"exec", "a", "cl", {}, {}, false},
      {"nice", "n", "", {"--adjustment"}, {}, false},
      {"time", "", "p", {}, {}, false},
      {"timeout", "sk", "v", {"--signal", "--kill-after"}, {}, true},
      {"stdbuf", "ioe", "", {"--input", "--output", "--error"}, {}, false},
      {"setsid", "", "cfw", {}, {"--ctty", "--fork", "--wait"}, false},
  }};
  for (const auto& w : kWrappers)
    if (w.name == name) return &w;
  return nullptr;
}

bool is_in(std::string_view v, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), v) != list.end();
}

WrapperScan scan_wrapper(const ShellPart& part, std::size_t at) {
  WrapperScan out;
  if (!word_at(part, at) || part.tokens[at].word.opaque) return out;
  const WrapperOptions* spec = wrapper_options(part.tokens[at].word.value);
  if (!spec) return out;
  const std::size_t n = part.tokens.size();
  auto value = [&](std::size_t k) -> const std::string& { return part.tokens[k].word.value; };
  std::size_t k = next_word(part, at);
  const bool env = spec->name == "env";
  const auto is_assignment_word = [&](std::size_t k) {
    // NAME=value, the value possibly opaque (`PATH="$PATH"`)
    const std::string& raw = part.tokens[k].word.raw;
    std::size_t j = 0;
    while (j < raw.size() && (j == 0 ? is_name_start(raw[j]) : is_name_char(raw[j])))
      ++j;
    return j > 0 && j < raw.size() && raw[j] == '=';
  };
  while (k < n) {
    if (env && is_assignment_word(k)) {
      k = next_word(part, k);
      continue;
    }
    if (part.tokens[k].word.opaque) break;
    const std::string& v = value(k);
    if (v == "--") {
      k = next_word(part, k);
      break;
    }
    if (env && v == "-") {  // the same as -i
      k = next_word(part, k);
      continue;
    }
    if (v.size() > 2 && v[0] == '-' && v[1] == '-') {
      const std::size_t eq = v.find('=');
      const std::string_view option = std::string_view(v).substr(0, eq);
      if (is_in(option, spec->long_value)) {
        std::optional<std::string> argument;
        if (eq != std::string::npos) {
          argument = v.substr(eq + 1);
          k = next_word(part, k);
        } else {
          k = next_word(part, k);
          if (k < n) {
            argument = part.tokens[k].word.opaque ? part.tokens[k].word.raw : value(k);
            k = next_word(part, k);
          }
        }
        if (option == "--split-string" && argument) {
          out.split_string = argument;
          out.next = k;
          return out;
        }
        continue;
      }
      if (!is_in(option, spec->long_flags) && !spec->any_dash) out.unknown_option = true;
      k = next_word(part, k);
      continue;
    }
    if (v.size() > 1 && v[0] == '-') {
      const bool numeric =
          spec->name == "nice" && v.find_first_not_of("0123456789", 1) == std::string::npos;
      std::size_t skip = 1;  // words this option takes
      for (std::size_t j = 1; j < v.size() && !numeric; ++j) {
        if (spec->short_value.find(v[j]) != std::string_view::npos) {
          std::optional<std::string> argument;
          if (j + 1 < v.size()) {
            argument = v.substr(j + 1);
          } else {
            const std::size_t arg = next_word(part, k);
            if (arg < n) argument = value(arg);
            skip = 2;
          }
          if (env && v[j] == 'S' && argument) {
            out.split_string = argument;
            k = next_word(part, k);
            if (skip == 2 && k < n) k = next_word(part, k);
            out.next = k;
            return out;
          }
          break;
        }
        if (spec->short_flags.find(v[j]) == std::string_view::npos && !spec->any_dash)
          out.unknown_option = true;
        if (spec->name == "command" && (v[j] == 'v' || v[j] == 'V'))
          return out;  // `command -v NAME` describes NAME, runs nothing
      }
      k = next_word(part, k);
      if (skip == 2 && k < n) k = next_word(part, k);
      continue;
    }
    break;
  }
  if (spec->name == "timeout" && k < n) k = next_word(part, k);  // the duration
  out.next = k < n ? k : 0;
  return out;
}

}  // namespace

ShellAnalysis analyse_shell(std::string_view command, const std::string& home) {
  ShellAnalysis out;
  Shared shared{home, out.parts, {}, true, 0};
  try {
    Parser parser(command, 0, shared);
    parser.parse_all();
  } catch (const NotUnderstood& e) {
    out.understood = false;
    out.problem = e.why;
  }
  std::stable_sort(out.parts.begin(), out.parts.end(),
                   [](const ShellPart& a, const ShellPart& b) { return a.start < b.start; });
  return out;
}

std::string part_text(const ShellPart& part, std::size_t from) {
  std::string out;
  for (std::size_t k = from; k < part.tokens.size(); ++k) {
    const ShellToken& t = part.tokens[k];
    if (k > from && t.space_before) out += ' ';
    out += t.word.raw;
  }
  return out;
}

std::size_t command_word(const ShellPart& part, std::size_t from) {
  for (std::size_t k = from; k < part.tokens.size(); ++k)
    if (part.tokens[k].kind == ShellToken::Kind::word) return k;
  return part.tokens.size();
}

std::size_t wrapped_command(const ShellPart& part, std::size_t at, bool* unknown_option) {
  const WrapperScan scan = scan_wrapper(part, at);
  if (unknown_option && scan.unknown_option) *unknown_option = true;
  return scan.split_string ? 0 : scan.next;
}

std::string decoded_text(const ShellPart& part, std::size_t from) {
  std::string out;
  for (std::size_t k = from; k < part.tokens.size(); ++k) {
    if (k > from) out += ' ';
    const ShellWord& w = part.tokens[k].word;
    out += w.opaque || part.test_form ? w.raw : w.value;
  }
  return out;
}

}  // namespace rebound::policy
