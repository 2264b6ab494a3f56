#pragma once
// What the hooks of one occurrence decide together (extensions.md sections 3.7, 3.8), with the
// exact texts the model and the user see. Pure: the runner hands in each handler's verdict in
// configuration order.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extensions/hook_config.h"
#include "extensions/hook_output.h"
#include "protocol/json.h"

namespace rebound::extensions {

/// One handler's verdict.
struct HookResult {
  HookResult(const HookHandler& handler_, HookVerdict verdict_)
      : handler(&handler_), verdict(std::move(verdict_)) {}
  const HookHandler* handler;
  HookVerdict verdict;
};

/// What every event's hooks may say besides their decision.
struct HookEffects {
  std::vector<std::string> notices;        // systemMessage: "<event>[:<tool>] says: <text>" (info)
  bool stop = false;                       // continue:false from an awaited event's hook
  std::optional<std::string> stop_reason;  // the first non-empty stopReason
  /// Failed hooks (section 3.10): the command and the extension_error text.
  std::vector<std::pair<std::string, std::string>> failures;
  std::vector<std::string> warnings;  // for the log
};

/// A text for the model (section 3.9) and the handler it came from.
struct HookNote {
  HookNote(std::string command_, std::string text_)
      : command(std::move(command_)), text(std::move(text_)) {}
  std::string command;
  std::string text;
};

struct PreToolUseOutcome {
  enum class Permission { none, allow, ask, deny };
  Permission permission = Permission::none;
  std::string result;  // with deny: the call's result text (several joined with \n)
  std::string reason;  // with ask: the first asking hook's permissionDecisionReason
  std::optional<protocol::Json> updated_input;  // the first in configuration order
  std::vector<HookNote> context;                // "PreToolUse:<tool> hook additional context: …"
  HookEffects effects;
};

/// PermissionRequest: a refusal wins over an allow; the first allow's updatedInput.
struct PermissionRequestOutcome {
  enum class Behavior { none, allow, deny };
  Behavior behavior = Behavior::none;
  std::string text;  // with deny: the call's result text
  std::optional<protocol::Json> updated_input;
  bool interrupt = false;
  HookEffects effects;
};
PermissionRequestOutcome decide_permission_request(std::string_view tool,
                                                   const std::vector<HookResult>& results);

/// PostToolUse and PostToolUseFailure: context texts only (section 3.7), one hook's blocking
/// text before its additionalContext.
struct PostToolUseOutcome {
  std::vector<HookNote> context;
  HookEffects effects;
};

PreToolUseOutcome decide_pre_tool_use(std::string_view tool,
                                      const std::vector<HookResult>& results);

PostToolUseOutcome decide_post_tool_use(HookEvent event, std::string_view tool,
                                        const std::vector<HookResult>& results);

/// Stop: whether the run goes on, with which texts (section 3.7; any block or additionalContext
/// continues it), and the first hook that asked for it.
struct StopOutcome {
  bool continue_run = false;
  std::string first_blocking;  // its command
  std::vector<HookNote> context;
  HookEffects effects;
};

StopOutcome decide_stop(const std::vector<HookResult>& results);

/// UserPromptSubmit: refused (any refusal refuses; texts joined with \n in configuration
/// order) or the texts that follow the user message.
struct PromptOutcome {
  std::optional<std::string> refused;
  std::vector<HookNote> context;
  HookEffects effects;
};

PromptOutcome decide_user_prompt_submit(const std::vector<HookResult>& results);

/// SessionStart: texts for the system prompt, in configuration order (plain stdout as
/// `SessionStart:<source> hook success: …`, additionalContext); exit 2 is only logged.
struct SessionStartOutcome {
  std::vector<std::string> texts;
  HookEffects effects;
};

SessionStartOutcome decide_session_start(std::string_view source,
                                         const std::vector<HookResult>& results);

/// PreCompact: refused (exit 2, decision:"block"; texts joined with \n) or the plain stdouts to
/// append to the instructions, in configuration order.
struct PreCompactOutcome {
  std::optional<std::string> refused;
  std::vector<std::string> instructions;
  HookEffects effects;
};

PreCompactOutcome decide_pre_compact(const std::vector<HookResult>& results);

/// The notices, stop and failures of any event's hooks (`tool` for tool events, else "").
HookEffects hook_effects(HookEvent event, std::string_view tool,
                         const std::vector<HookResult>& results);

}  // namespace rebound::extensions
