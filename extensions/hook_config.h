#pragma once
// Command hooks in Claude Code's `hooks` settings shape (extensions.md sections 1.1, 1.2, 1.4,
// 3.2): the events Rebound knows, the handlers of every source in configuration order with
// their status (a project's run only when the user trusts it), matchers, the handlers one
// occurrence runs (matching, identical commands once), and the runner's settings. Pure.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"
#include "session/error.h"

namespace rebound::tools {
class Regex;
}

namespace rebound::extensions {

enum class HookEvent {
  session_start,
  user_prompt_submit,
  pre_tool_use,
  permission_request,
  post_tool_use,
  post_tool_use_failure,
  stop,
  stop_failure,
  pre_compact,
  session_end,
  notification,
  auto_retry_start,
  auto_retry_end,
};

/// Claude Code's event name (`PreToolUse`, …, and Rebound's `AutoRetryStart`, `AutoRetryEnd`).
std::string_view event_name(HookEvent event);
std::optional<HookEvent> event_named(std::string_view name);
/// Whether the session waits for the event's hooks and reads their decisions (section 3.4).
bool is_awaited(HookEvent event);
/// PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure: their subject is a tool
/// name, and their continue:false stops the run (section 3.7).
bool is_tool_event(HookEvent event);
/// Whether the event has a subject its groups' matchers are tried against.
bool has_subject(HookEvent event);
/// Whether its hooks' `decision`/`reason` and `hookSpecificOutput` are read (section 3.6).
bool reads_decision(HookEvent event);
bool reads_specific_output(HookEvent event);
/// Whether its stdin carries `permission_mode` (section 3.3).
bool carries_permission_mode(HookEvent event);
/// Claude Code's name of a built-in tool (`bash` → `Bash`, `find` → `Glob`), or "".
std::string_view claude_tool_alias(std::string_view tool);

/// A group's matcher (section 3.2): everything, a list of names, or an ECMAScript regular
/// expression matched against the whole subject (PCRE2 in its JavaScript mode with the tools'
/// match limits: a hostile expression fails or stops, it never overflows anything).
class HookMatcher {
 public:
  /// The matcher of `text`, or the failed error "Invalid matcher: <reason>" when its regular
  /// expression does not compile.
  static session::Result<std::shared_ptr<const HookMatcher>> compile(const std::string& text);
  bool matches(std::string_view subject) const;

 private:
  bool all_ = false;
  std::vector<std::string> names_;
  std::shared_ptr<const tools::Regex> regex_;  // anchored at both ends
};

enum class HookSource { user, project };
enum class HookStatus { active, invalid, untrusted, disabled };
std::string_view source_name(HookSource source);
std::string_view status_name(HookStatus status);

/// One handler of one group, as configured.
struct HookHandler {
  std::string event;                   // as written (an unknown one never fires)
  std::optional<HookEvent> known;      // the event, when Rebound knows it
  std::optional<std::string> matcher;  // as written; none when absent
  std::shared_ptr<const HookMatcher> match;
  std::string command;
  std::int64_t timeout_ms = 0;  // effective
  bool async = false;
  HookSource source = HookSource::user;
  HookStatus status = HookStatus::active;
  std::string error;  // with `invalid`
};

/// One settings file's `hooks` value.
struct HookSettings {
  HookSettings(protocol::Json hooks_, HookSource source_, std::string path_, bool trusted_,
               bool disabled_)
      : hooks(std::move(hooks_)),
        source(source_),
        path(std::move(path_)),
        trusted(trusted_),
        disabled(disabled_) {}
  protocol::Json hooks;  // the value of the file's `hooks` key (null when absent)
  HookSource source;
  std::string path;
  bool trusted;   // a project file the user trusts (a user file always is)
  bool disabled;  // --no-extensions
};

struct HookConfig {
  std::vector<HookHandler> handlers;  // configuration order: the user's, then the project's
  std::vector<std::string> warnings;  // for stderr: unknown events, a `hooks` not an object
};

/// The handlers of `sources` (in order), each with its status; `default_timeout_ms` for a
/// handler without `timeout` (hookTimeoutMs).
HookConfig read_hooks(const std::vector<HookSettings>& sources, std::int64_t default_timeout_ms);

/// The handlers one occurrence of `event` runs: active, of the event, their group's matcher
/// matching `subject` (a tool's name is also tried as its Claude Code alias), an identical
/// command only once, at its first position.
std::vector<const HookHandler*> handlers_for(const HookConfig& config, HookEvent event,
                                             std::string_view subject = {});

/// Whether any active handler is configured for `event` (matching aside).
bool has_hooks(const HookConfig& config, HookEvent event);

/// extensions.md section 1.4.
struct RunnerSettings {
  std::int64_t hook_timeout_ms = 60000;
  std::int64_t interceptor_timeout_ms = 10000;
  std::int64_t tool_timeout_ms = 600000;
  std::int64_t dialog_timeout_ms = 60000;
  std::int64_t stop_hook_block_limit = 8;
  std::int64_t session_end_timeout_ms = 1500;
  std::int64_t idle_notification_ms = 60000;
};

/// The global file's `extensionRunner` with a trusted project's deep-merged over it (`project`
/// null when there is none or it is not trusted). A wrong type or a value out of range keeps the
/// default and adds a warning.
RunnerSettings read_runner_settings(const protocol::Json& global, const protocol::Json& project,
                                    std::vector<std::string>& warnings);

}  // namespace rebound::extensions
