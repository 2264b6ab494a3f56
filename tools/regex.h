#pragma once
// The regular-expression engine of grep and of glob matching: PCRE2 with its JIT, JavaScript
// escapes (\u, \x), and match, depth and heap limits so that a pattern which backtracks
// catastrophically fails fast instead of hanging (tools.md section 4.5). Compiled patterns are
// immutable and may be shared; each matching thread uses its own Matcher.

#include <memory>
#include <string>
#include <string_view>

#include "session/error.h"

namespace rebound::tools {

class Regex {
 public:
  struct Options {
    bool ignore_case = false;
    bool literal = false;
    bool multiline = true;  // ^ and $ at line ends (grep searches whole buffers)
  };
  /// The compiled pattern, or the failed error with PCRE2's reason and its offset.
  static session::Result<std::shared_ptr<const Regex>> compile(std::string_view pattern,
                                                               Options options);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  explicit Regex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Matches with one compiled pattern (owns the match data and JIT stack: one per thread).
class Matcher {
 public:
  explicit Matcher(std::shared_ptr<const Regex> regex);
  ~Matcher();
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  enum class Result { match, no_match, too_complex };
  /// Searches `subject` from `start`; on a match `match_start` is its first byte.
  Result search(std::string_view subject, std::size_t start, std::size_t& match_start);
  /// Whether `subject` matches anywhere (glob patterns carry their own \\A…\\z anchors).
  bool matches(std::string_view subject);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace rebound::tools
