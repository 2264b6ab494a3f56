#pragma once
// The parser behind analyse_shell (policy/shell_command.h), shared by its files: the parse
// state one source shares with the strings inside it, the word helpers, brace expansion, the
// wrappers' option table, and the recursive-descent Parser (its statements in
// shell_parser.cpp, its words in shell_words.cpp). Internal to the policy room.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/shell_command.h"

namespace rebound::policy::shell_parse {

struct NotUnderstood {
  std::string why;
};

inline constexpr int kMaxDepth = 64;

inline bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

inline bool is_meta(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '<' ||
         c == '>' || c == '(' || c == ')';
}

inline bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9');
}
inline bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/// Appends a literal character (escaped in the pattern form where it is a glob character).
void add_literal(ShellWord& w, char c);
/// Appends a code point as UTF-8 literals.
void add_utf8(ShellWord& w, std::uint32_t cp);

struct Shared {
  const std::string& home;
  std::vector<ShellPart>& parts;
  std::vector<std::string> cd_path;
  bool cwd_known = true;
  int depth = 0;
};

inline constexpr std::size_t kMaxBraceWords = 256;

enum class BraceResult { none, expanded, too_many };
/// Bash's brace expansion of word `raw` whose unquoted braces and commas are at `marks`: the
/// words in `words`, or none (no expansion), or too many (more than kMaxBraceWords).
BraceResult brace_expand(const std::string& raw, const std::vector<std::size_t>& marks,
                         std::vector<std::string>& words);

// A wrapper's options read from its word `at` (policy.md 2.4 form c, 2.4.1).
struct WrapperScan {
  std::size_t next = 0;  // the wrapped command's word; 0: no wrapper, or nothing wrapped here
  bool unknown_option = false;
  std::optional<std::string> split_string;  // `env -S STRING`, `--split-string[=]STRING`
};
WrapperScan scan_wrapper(const ShellPart& part, std::size_t at);

/// Whether token `k` of `part` is a word; the next word token after `k` (or tokens.size()).
bool word_at(const ShellPart& part, std::size_t k);
std::size_t next_word(const ShellPart& part, std::size_t k);

class Parser {
 public:
  Parser(std::string_view source, std::size_t base, Shared& shared)
      : s_(source), base_(base), sh_(shared) {}

  void parse_all();

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
  bool skip_blanks();
  void consume_newline();
  void skip_linebreaks();

  // The unquoted word at the cursor when it has no quotes or expansions (a reserved word can
  // only be such), else empty.
  std::string_view plain_word() const;

  bool at_keyword(std::string_view k) const { return plain_word() == k; }

  void expect_keyword(std::string_view k);

  bool at_case_end() const { return starts(";;") || starts(";&"); }

  void parse_list(std::initializer_list<std::string_view> stops);
  void parse_and_or();
  void parse_pipeline();
  void parse_command();
  bool is_function_definition(std::string_view w) const;

  void function_body() {
    skip_linebreaks();
    parse_command();
  }

  void parse_if();
  void parse_for();
  void parse_case();

  // `[[ … ]]` is one part, as written; its words are read for substitutions.
  void test_part();
  void skip_arithmetic();
  void arithmetic_part();
  void add_test_part(std::size_t from);
  void push_part(ShellPart part);

  // Redirections after a compound command belong to no part: a part of their own (no command).
  void trailing_redirections();
  bool at_redirection() const;
  void read_redirection(ShellPart& part, bool blank);
  void read_heredoc_body(const Heredoc& h);

  // The command substitutions of an unquoted here-document's line are parts.
  void heredoc_substitutions(std::size_t from, std::size_t to);
  void simple_command();

  // A word with a brace expansion becomes the words bash makes of it (policy.md 2.4.1), each
  // read again as a word; more than kMaxBraceWords of them, or one around an opaque word, make
  // the part uncertain and leave the word as written.
  void expand_braces(ShellToken t, ShellPart& part);
  static bool is_assignment(const std::string& raw);

  // The strings a part runs as commands (`sh -c`, `eval`, `env -S`), and its directory changes.
  void after_command(const ShellPart& part);

  void run_string(const std::string& text, std::size_t at) {
    Parser inner(text, at, sh_);
    inner.parse_all();
  }

  // --- words -------------------------------------------------------------------------------

  ShellWord read_word();
  void tilde(ShellWord& w);
  void double_quoted(ShellWord& w);
  void dollar(ShellWord& w, bool in_double = false);
  void ansi_c(ShellWord& w);

  // After `$(` (or `<(`, `>(`): the list inside, through its `)`.
  void command_substitution_body();

  // `…` : the text between the backquotes, unescaped as bash does, parsed on its own.
  void backquote();
  std::string_view s_;
  std::size_t i_ = 0;
  std::size_t base_;
  Shared& sh_;
  std::vector<Heredoc> heredocs_;
};

}  // namespace rebound::policy::shell_parse
