#pragma once
// Starting one occurrence's hooks (extensions.md sections 3.3, 3.4): the common stdin prefix,
// then the event's own fields, the handlers' verdicts in configuration order, and what every
// caller logs of them. The observers (nothing waits for them) are started here whole.
// Event loop only.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "extensions/hook_config.h"
#include "extensions/hook_decisions.h"
#include "extensions/hook_runner.h"
#include "protocol/json.h"
#include "session/tool.h"

namespace rebound::extensions {

/// What the prefix of a hook's stdin says about the session.
struct HookSessionInfo {
  std::string session_id;
  std::optional<std::string> transcript_path;  // none with --no-session
  std::string cwd;
  std::optional<std::string> prompt_id;  // the user message the session works on, if any
  std::string permission_mode = "bypassPermissions";  // the session's (policy.md section 3)
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

/// Where the hooks' failures and notices go (sections 3.7, 3.10): `failure` gets
/// `hook:<command>`, the event's name and the failure text (the front end's `extension_error`);
/// `notice` a notify type (`info`, `warning`) and its text (the client's `notify` dialog line).
/// Either may be empty (logged only).
struct HookReport {
  std::function<void(const std::string& extension_path, std::string_view event,
                     const std::string& error)>
      failure;
  std::function<void(std::string_view notify_type, const std::string& message)> notice;
};

/// Logs each failed hook at `warn` and reports it when `report` is set.
void report_hook_failures(const HookReport& report, HookEvent event,
                          const std::vector<std::pair<std::string, std::string>>& failures);

/// Starts the handlers of an awaited event that match `subject`: the `async` ones as observers,
/// the others awaited (`done` gets their verdicts). nullopt, and `done` is never called, when
/// none is awaited.
std::optional<std::uint64_t> start_awaited_hooks(HookRunner& runner, const HookConfig& config,
                                                 HookEvent event, std::string_view subject,
                                                 const HookSessionInfo& info,
                                                 const protocol::Json& fields,
                                                 const HookReport& report,
                                                 std::function<void(std::vector<HookResult>)> done);

/// A wait for run `id` of `runner` that kills its hooks when the session drops it (an abort).
std::unique_ptr<session::Waiting> hook_wait(HookRunner& runner, std::uint64_t id);

/// What every event's hooks may do besides their decision: failures and notices reported
/// (`systemMessage`, and for a tool event's continue:false the warning `Operation stopped by
/// hook[: <stopReason>]`), warnings logged; returns that warning when a tool event stops the run.
std::optional<std::string> apply_hook_effects(const HookReport& report, HookEvent event,
                                              const HookEffects& effects);

/// The custom messages of `notes` (section 3.9): details `hookEvent`, `command`, and
/// `toolCallId` when `call_id` is not empty.
std::vector<session::ContextNote> context_notes(HookEvent event, std::vector<HookNote> notes,
                                                const std::string& call_id = {});

/// Starts the matching observer hooks of `event` (never waited for, failures reported).
void run_observer_hooks(HookRunner& runner, const HookConfig& config, HookEvent event,
                        std::string_view subject, const HookSessionInfo& info,
                        const protocol::Json& fields, const HookReport& report);

}  // namespace rebound::extensions
