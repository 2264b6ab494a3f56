#pragma once
// Globs (find's pattern, grep's glob) and .gitignore lines (tools.md section 4.8), translated to
// anchored PCRE2 patterns. Pure.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/regex.h"

namespace rebound::tools {

/// The PCRE2 pattern for a glob matched against a whole `/`-separated path: `*` any run
/// without `/`, `**` any run (`**/` also none), `?` one character but `/`, `[…]`, `{a,b}`
/// (when `braces`), `\` escapes.
std::string glob_to_regex(std::string_view glob, bool braces);

/// A glob of find or grep: without `/` it matches the base name, with `/` the relative path
/// (`**/` put in front unless it starts with `**/` or `/`).
class PathGlob {
 public:
  /// The glob, or the failed error with the reason its pattern does not compile.
  static session::Result<PathGlob> compile(std::string_view glob);
  bool matches(std::string_view rel_path, Matcher& matcher) const;
  const std::shared_ptr<const Regex>& regex() const { return regex_; }

 private:
  std::shared_ptr<const Regex> regex_;
  bool base_name_ = false;
};

/// One line of an ignore file.
struct IgnoreRule {
  std::shared_ptr<const Regex> regex;  // matched against the path relative to the file's dir
  bool negate = false;
  bool dir_only = false;
};

/// The rules of one ignore file's text, in order; lines that cannot be used are skipped.
std::vector<IgnoreRule> parse_ignore_file(std::string_view text);

}  // namespace rebound::tools
