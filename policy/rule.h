#pragma once
// One permission rule of policy.md section 2: `Tool` or `Tool(specifier)` in Claude Code's
// grammar with Rebound's tool names (Claude Code's as aliases), parsed once and matched many
// times. Pure apart from stat() for a directory-only path pattern.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session/error.h"

namespace rebound::policy {

enum class Behavior { allow, ask, deny };
std::string_view behavior_name(Behavior b);

/// What a rule names.
enum class RuleTool {
  bash,
  read,
  edit,
  write,
  grep,
  find,
  ls,
  mcp_tool,    // mcp__<server>__<tool>: one offered name
  mcp_server,  // mcp__<server>, mcp__<server>__*
  extension,   // an extension's tool (only while extensions are configured)
  foreign,     // a Claude Code tool Rebound lacks: matches nothing
};

/// A glob over text: `*` (kStar) any run of characters, anything else itself.
using TextGlob = std::vector<int>;
constexpr int kStar = -1;
bool glob_matches(const TextGlob& glob, std::string_view text);
/// Whether some string matches both globs.
bool globs_intersect(const TextGlob& a, const TextGlob& b);

/// A gitignore-style path pattern (section 2.5), anchored.
struct PathPattern {
  enum class Anchor { absolute, home, workspace, anywhere };
  Anchor anchor = Anchor::workspace;
  std::vector<std::string> segments;  // below the anchor; `**` any number of segments
  bool directory_only = false;        // written with a trailing `/`
  /// The anchor's own segments and `segments`, once anchor_pattern() ran (a policy does it for
  /// its rules: matching then splits nothing but the path).
  std::vector<std::string> anchored;
  bool is_anchored = false;
  bool globstar = false;  // some segment of `anchored` is `**`
};

/// Fills `pattern.anchored` for a workspace and a home.
void anchor_pattern(PathPattern& pattern, const std::string& home, const std::string& workspace);

struct Rule {
  Behavior behavior = Behavior::allow;
  std::string text;  // trimmed, as written
  RuleTool kind = RuleTool::foreign;
  std::string tool;  // canonical: bash, read, …, the MCP name as written, the extension's name
  std::optional<std::string> specifier;  // as written; none for a bare rule (and `Bash(*)`)
  std::string source;                    // global, project, cli, session
  std::vector<TextGlob> command;         // bash: the globs a part's text may match
  PathPattern path;                      // read, edit, write, grep, find, ls with a specifier
  /// A bare rule: the whole tool (a deny removes it, section 2.2).
  bool whole_tool() const { return !specifier; }
};

/// What parsing needs besides the text: whether unknown names are taken for extension tools.
struct RuleSyntax {
  bool extensions_configured = false;
};

/// The rule, or the reason it is invalid (section 2.1's words).
session::Result<Rule> parse_rule(std::string_view text, Behavior behavior,
                                 const RuleSyntax& syntax);

/// Whether `name` is one of Claude Code's tools Rebound lacks (section 2.2).
bool is_foreign_tool(std::string_view name);

/// Splits a `--allowed-tools` list: commas or blanks outside parentheses, empty items dropped.
std::vector<std::string> split_rule_list(std::string_view list);

/// `path` (absolute, normalised) against `pattern` with the anchors given: the pattern matches
/// the path or one of its ancestors.
bool path_matches(const PathPattern& pattern, std::string_view path, const std::string& home,
                  const std::string& workspace);

/// mcp.md section 4.1's replacement: every character outside [A-Za-z0-9_-] becomes `_`.
std::string mcp_name_part(std::string_view s);

/// ASCII lower case.
std::string lower(std::string_view s);

}  // namespace rebound::policy
