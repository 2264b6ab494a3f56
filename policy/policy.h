#pragma once
// The permission policy of policy.md sections 2 to 5: rules from every source, the mode, the
// working directories and the session's grants, and the judgement of one tool call (deny > ask
// > allow, then the mode) with the text the model gets. Pure apart from reading the file system
// for real paths and a bash command's globs. Event loop only.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/rule.h"
#include "protocol/json.h"

namespace rebound::policy {

class DirIndex;
class DirListing;

enum class Mode { default_mode, accept_edits, plan, dont_ask, bypass };
std::string_view mode_name(Mode m);
std::optional<Mode> parse_mode(std::string_view s);
/// `Invalid permission mode '<value>' (<where>): expected one of …` (section 1.4).
std::string invalid_mode_text(std::string_view value, std::string_view where);

/// A tool call as the policy sees it (after interceptors and PreToolUse hooks).
struct Call {
  Call(std::string_view tool_, const protocol::Json& input_, std::string_view mcp_server_ = {})
      : tool(tool_), input(input_), mcp_server(mcp_server_) {}
  std::string_view tool;         // the offered name
  const protocol::Json& input;   // what it would run with
  std::string_view mcp_server;   // the MCP server as configured, or empty
  bool read_only_hint = false;   // an MCP tool's annotations.readOnlyHint
  bool extension = false;        // an extension's tool
  std::optional<Behavior> hook;  // a PreToolUse hook's allow or ask
  std::string hook_reason;       // its permissionDecisionReason
  /// It repeats a call whose outcome is unknown (runtime.md section 8, amendments A8): judged
  /// `ask` as an ask rule is, in every mode but bypassPermissions.
  bool repeats_unknown = false;
};

struct Verdict {
  enum class Kind { allow, deny, ask };
  Kind kind = Kind::allow;
  /// deny: the call's result text; ask: the text when nobody answers (section 5).
  std::string text;
  /// ask: `mode <mode>`, `rule <rule> (<source>)`, `uncertain`, `hook` (section 6.1) or
  /// `repeat` (a call repeating one whose outcome is unknown).
  std::string reason;
  bool offer_always = false;  // the mode asked: "Always allow" is offered
};

struct PolicySettings {
  std::vector<Rule> rules;  // in source order (global, project, cli)
  Mode mode = Mode::bypass;
  std::string mode_source = "default";
  std::string workspace;                            // the session cwd (absolute)
  std::vector<std::string> additional_directories;  // absolute
  std::string home;
  /// Settings `shellCommandPrefix`: judged with every bash command (policy.md 2.4.1).
  std::string shell_command_prefix;
};

class Policy {
 public:
  explicit Policy(PolicySettings settings);

  Verdict judge(const Call& call) const;

  /// Whether a whole-tool deny rule takes the tool out of the offered set (section 2.2).
  bool removes(std::string_view tool, std::string_view mcp_server) const;

  Mode mode() const { return settings_.mode; }
  const std::string& mode_source() const { return settings_.mode_source; }
  void set_mode(Mode m, std::string source);
  /// "Always allow": an allow rule for the whole tool, source `session` (section 6).
  void grant(std::string_view tool);
  const std::vector<Rule>& rules() const { return settings_.rules; }
  const std::string& workspace() const { return settings_.workspace; }
  std::vector<std::string> working_directories() const;
  /// What a walk (grep, find, ls) leaves out: entries a read deny or ask rule matches (section
  /// 2.5), judged on a copy of those rules, so it may run on any thread. Empty when none.
  std::function<bool(std::string_view abs, bool is_dir)> walk_filter() const;
  /// Whether a bash call needs the command analysed (section 2.4's first paragraph).
  bool analyses_bash() const { return analyse_bash_; }

 private:
  Verdict judge_bash(const Call& call) const;
  Verdict judge_path_tool(const Call& call) const;
  Verdict judge_named_tool(const Call& call) const;
  Verdict finish(Verdict v, std::string_view tool) const;
  bool inside_working_directories(const std::string& real) const;
  bool rule_names_call(const Rule& r, const Call& call) const;

  PolicySettings settings_;
  std::vector<std::string> working_real_;  // the working directories' real paths
  std::string real_workspace_;
  bool analyse_bash_ = false;
  bool read_paths_ = false;                    // a read path rule in deny or ask
  bool edit_paths_ = false;                    // an edit path rule in deny or ask
  bool bash_patterns_ = false;                 // a deny or ask rule with a bash specifier
  std::shared_ptr<const DirIndex> dir_index_;  // listings for the bash path words
};

/// The real path of an absolute path: the existing part with symlinks resolved, then the rest.
std::string real_path(const std::string& lexical);
/// The same for a path below `base`, whose real path `real_base` is known: one lstat per
/// component below `base` instead of realpath's readlink of every component from `/`; none for
/// the first when `base`'s listing is given.
std::string real_path_below(const std::string& lexical, const std::string& base,
                            const std::string& real_base, const DirListing* listing = nullptr);
/// `path` resolved against `base` lexically (`.` and `..` folded), `~` expanded.
std::string join_path(const std::string& base, std::string_view path, const std::string& home);

}  // namespace rebound::policy
