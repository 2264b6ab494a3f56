#pragma once
// The PreToolUse hooks as the session's tool preflight (extensions.md sections 3.3, 3.4, 3.7,
// 5.2): each call's matching hooks run with the common prefix and the call on stdin, the
// session waits for them, and their combined decision refuses the call (its result the spec's
// text) or replaces its input. Also the common stdin prefix every hook event starts with.
// Event loop only.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "extensions/hook_config.h"
#include "extensions/hook_runner.h"
#include "protocol/json.h"
#include "session/tool.h"

namespace rebound::extensions {

/// What the prefix of a hook's stdin says about the session.
struct HookSessionInfo {
  std::string session_id;
  std::optional<std::string> transcript_path;  // none with --no-session
  std::string cwd;
};

/// `session_id`, `transcript_path`, `cwd`, `permission_mode` (for the events that carry it) and
/// `hook_event_name`, in that order (section 3.3).
protocol::Json hook_input_prefix(const HookSessionInfo& info, HookEvent event);

class HookPreflight : public session::ToolPreflight {
 public:
  /// `runner` outlives this and every check it started.
  HookPreflight(const HookConfig& config, HookRunner& runner, std::function<HookSessionInfo()> info)
      : config_(config), runner_(runner), info_(std::move(info)) {}

  std::unique_ptr<session::Waiting> check(
      const session::PreflightCall& call,
      std::function<void(session::PreflightVerdict)> done) override;

 private:
  const HookConfig& config_;
  HookRunner& runner_;
  std::function<HookSessionInfo()> info_;
};

}  // namespace rebound::extensions
