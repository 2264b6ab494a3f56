// Parser's statements (policy/shell_parser.h): lists, pipelines, compound commands,
// redirections and here-documents, simple commands with their brace expansion, and the strings
// a part runs (`sh -c`, `eval`, `env -S`).
#include <algorithm>
#include <array>
#include <cctype>

#include "policy/shell_parser.h"

namespace rebound::policy::shell_parse {

void Parser::parse_all() {
  parse_list({});
  skip_linebreaks();
  if (!at_end()) fail("unexpected '" + std::string(1, s_[i_]) + "'");
  if (!heredocs_.empty()) fail("unterminated here-document");
}

// Blanks, backslash-newlines and a comment; true when something was skipped.
bool Parser::skip_blanks() {
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

void Parser::consume_newline() {
  ++i_;  // the '\n'
  auto pending = std::move(heredocs_);
  heredocs_.clear();
  for (const auto& h : pending)
    read_heredoc_body(h);
}

void Parser::skip_linebreaks() {
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
std::string_view Parser::plain_word() const {
  std::size_t j = i_;
  while (j < s_.size() && !is_meta(s_[j])) {
    const char c = s_[j];
    if (c == '\'' || c == '"' || c == '\\' || c == '$' || c == '`') return {};
    ++j;
  }
  return s_.substr(i_, j - i_);
}

void Parser::expect_keyword(std::string_view k) {
  skip_linebreaks();
  if (!at_keyword(k)) fail("expected '" + std::string(k) + "'");
  i_ += k.size();
}

void Parser::parse_list(std::initializer_list<std::string_view> stops) {
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

void Parser::parse_and_or() {
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

void Parser::parse_pipeline() {
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

void Parser::parse_command() {
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
  static constexpr std::array<std::string_view, 9> kMisplaced = {"then", "elif", "else", "fi", "do",
                                                                 "done", "esac", "}",    "in"};
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

bool Parser::is_function_definition(std::string_view w) const {
  std::size_t j = i_ + w.size();
  while (j < s_.size() && is_blank(s_[j]))
    ++j;
  return s_.substr(j, 2) == "()";
}

void Parser::parse_if() {
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

void Parser::parse_for() {
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

void Parser::parse_case() {
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
void Parser::test_part() {
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

void Parser::skip_arithmetic() {
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

void Parser::arithmetic_part() {
  const std::size_t from = i_;
  skip_arithmetic();
  add_test_part(from);
}

void Parser::add_test_part(std::size_t from) {
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

void Parser::push_part(ShellPart part) {
  part.cd_path = sh_.cd_path;
  part.cwd_known = sh_.cwd_known;
  sh_.parts.push_back(std::move(part));
}

// Redirections after a compound command belong to no part: a part of their own (no command).
void Parser::trailing_redirections() {
  ShellPart part;
  part.start = base_ + i_;
  for (;;) {
    const bool blank = skip_blanks();
    if (!at_redirection()) break;
    read_redirection(part, blank);
  }
  if (!part.tokens.empty()) push_part(std::move(part));
}

bool Parser::at_redirection() const {
  std::size_t j = i_;
  while (j < s_.size() && is_digit(s_[j]))
    ++j;
  if (j < s_.size() && (s_[j] == '<' || s_[j] == '>')) {
    // `<(` and `>(` are process substitutions, words.
    return !(j == i_ && j + 1 < s_.size() && s_[j + 1] == '(');
  }
  return j == i_ && (starts("&>"));
}

void Parser::read_redirection(ShellPart& part, bool blank) {
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

void Parser::read_heredoc_body(const Heredoc& h) {
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
void Parser::heredoc_substitutions(std::size_t from, std::size_t to) {
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

void Parser::simple_command() {
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
void Parser::expand_braces(ShellToken t, ShellPart& part) {
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

bool Parser::is_assignment(const std::string& raw) {
  if (raw.empty() || !is_name_start(raw[0])) return false;
  std::size_t j = 1;
  while (j < raw.size() && is_name_char(raw[j]))
    ++j;
  if (j < raw.size() && raw[j] == '+') ++j;
  return j < raw.size() && raw[j] == '=';
}

// The strings a part runs as commands (`sh -c`, `eval`, `env -S`), and its directory changes.
void Parser::after_command(const ShellPart& part) {
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

}  // namespace rebound::policy::shell_parse
