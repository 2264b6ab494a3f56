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
  /// The offsets in `raw` of its unquoted `{`, `,` and `}` (where a brace expansion may be).
  std::vector<std::size_t> braces;
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
  /// Some word cannot be read for certain (policy.md 2.4.1): a brace expansion of more than
  /// 256 words or one around an opaque word, a wrapper option the analysis does not know.
  bool uncertain = false;
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

/// The part's words from token `from` on after quote removal, backslash removal and `$'…'`
/// decoding, joined by single spaces (policy.md 2.4.1 form d); an opaque word stays as written.
std::string decoded_text(const ShellPart& part, std::size_t from = 0);

/// For a wrapper (`env`, `timeout`, `nice`, …, section 2.4 form c, 2.4.1) at token `at`: the
/// index of the wrapped command's word, or 0 when `at` is no wrapper or nothing is wrapped in
/// this part (`env -S STRING` wraps the commands of its string, parts of their own).
/// `unknown_option` becomes true when the wrapper has an option the analysis does not know.
std::size_t wrapped_command(const ShellPart& part, std::size_t at, bool* unknown_option = nullptr);

}  // namespace rebound::policy
