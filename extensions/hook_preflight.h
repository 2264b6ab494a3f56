#pragma once
// The tool hooks as the session's tool preflight (extensions.md sections 3.4, 3.7, 5.2):
// PreToolUse before a call (its matching hooks run with the common prefix and the call on stdin,
// the session waits for them, and their combined decision refuses the call, its result the
// spec's text, or replaces its input), PostToolUse or PostToolUseFailure after a call that ran
// and before its end. Their texts for the model and `continue:false` go back to the session;
// failed hooks are reported. Event loop only.

#include <functional>
#include <memory>
#include <string>

#include "extensions/hook_calls.h"
#include "extensions/hook_config.h"
#include "extensions/hook_runner.h"
#include "protocol/json.h"
#include "session/tool.h"

namespace rebound::extensions {

class HookPreflight : public session::ToolPreflight, public session::PermissionHooks {
 public:
  /// `runner` outlives this and every check it started.
  HookPreflight(const HookConfig& config, HookRunner& runner, std::function<HookSessionInfo()> info,
                HookReport report)
      : config_(config), runner_(runner), info_(std::move(info)), report_(std::move(report)) {}

  std::unique_ptr<session::Waiting> check(
      const session::PreflightCall& call,
      std::function<void(session::PreflightVerdict)> done) override;

  std::unique_ptr<session::Waiting> after_call(
      const session::FinishedCall& call,
      std::function<void(session::AfterCallVerdict)> done) override;

  std::unique_ptr<session::Waiting> permission_request(
      const session::PreflightCall& call,
      std::function<void(session::PermissionHookVerdict)> done) override;
  void question_put(const std::string& tool_name) override;

 private:
  const HookConfig& config_;
  HookRunner& runner_;
  std::function<HookSessionInfo()> info_;
  HookReport report_;
};

}  // namespace rebound::extensions
