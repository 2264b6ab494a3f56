#pragma once
// Starting one occurrence's hooks (extensions.md sections 3.3, 3.4): the common stdin prefix,
// then the event's own fields, the handlers' verdicts in configuration order, and what every
// caller logs of them. The observers (nothing waits for them) are started here whole.
// Event loop only.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "extensions/hook_config.h"
#include "extensions/hook_decisions.h"
#include "extensions/hook_runner.h"
#include "protocol/json.h"

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

/// Starts `handlers` for `event` with the prefix, then the members of `fields` in their order,
/// on stdin; `done` gets their verdicts in the handlers' order. Returns the run's id for
/// HookRunner::cancel. The handlers outlive the run (they are the configuration's).
std::uint64_t start_hooks(HookRunner& runner, HookEvent event,
                          std::vector<const HookHandler*> handlers, const HookSessionInfo& info,
                          const protocol::Json& fields,
                          std::function<void(std::vector<HookResult>)> done);

/// Logs failed hooks at `warn` (section 3.10's texts; `extension_error` events are not written
/// yet).
void log_hook_failures(HookEvent event,
                       const std::vector<std::pair<std::string, std::string>>& failures);

/// Starts the matching observer hooks of `event` (never waited for, failures logged).
void run_observer_hooks(HookRunner& runner, const HookConfig& config, HookEvent event,
                        const HookSessionInfo& info, const protocol::Json& fields);

}  // namespace rebound::extensions
