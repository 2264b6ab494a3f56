#pragma once
// A bash command as policy.md section 2.4 judges it: the simple commands (*parts*) it may run,
// found by parsing it as `bash -c` would, without running or expanding anything but `~`. Pure.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rebound::policy {

/// One word of a part (or a redirection's target), as written and as bash would read it.
struct ShellWord {
  std::string raw;    // the source text
  std::string value;  // after quote removal and tilde expansion (meaningful unless opaque)
  /// With a parameter expansion, a command, arithmetic or process substitution or `~user`:
  /// its value is known only at run time.
  bool opaque = false;
  /// An unquoted `*`, `?` or `[`: bash expands it against the file system.
  bool glob = false;
  /// `value` with every quoted `*`, `?`, `[`, `\` escaped by `\` (a glob(3) pattern).
  std::string pattern;
};

struct ShellToken {
  enum class Kind { assignment, word, redirect_op, redirect_target };
  Kind kind = Kind::word;
  bool space_before = false;  // unquoted blanks separated it from the token before
  ShellWord word;             // for redirect_op: raw is the operator as written
};

/// One simple command (or a `[[ … ]]` / `(( … ))` as written).
struct ShellPart {
  std::size_t start = 0;  // its offset in the command (parts are in command order)
  std::vector<ShellToken> tokens;
  bool test_form = false;  // `[[ … ]]` or `(( … ))`: tokens hold one word, the text as written
  /// The literal `cd`/`pushd` targets of earlier parts, in order; `cwd_known` false after
  /// `cd -`, `popd`, or a `cd` with an opaque word.
  std::vector<std::string> cd_path;
  bool cwd_known = true;
};

struct ShellAnalysis {
  bool understood = true;
  std::string problem;  // why not, for the log
  std::vector<ShellPart> parts;
};

/// Parses `command`; `home` expands `~`.
ShellAnalysis analyse_shell(std::string_view command, const std::string& home);

/// A part's text from its tokens `from` on: each token as written, one space where blanks were.
std::string part_text(const ShellPart& part, std::size_t from = 0);

/// The index of the first token of `part` from `from` on that is neither an assignment nor a
/// redirection (the command word), or tokens.size().
std::size_t command_word(const ShellPart& part, std::size_t from = 0);

/// For a wrapper (`env`, `timeout`, `nice`, …, section 2.4 form c) at token `at`: the index of
/// the wrapped command's word, or 0 when `at` is no wrapper or nothing is wrapped.
std::size_t wrapped_command(const ShellPart& part, std::size_t at);

}  // namespace rebound::policy
