#pragma once
// What one hook run says (extensions.md sections 3.5, 3.6, 3.10): its exit status, its stdout
// as plain text or as Claude Code's JSON output, checked key by key, and the failure text of a
// hook that failed. Pure; the fuzz target feeds it arbitrary output.

#include <cstdint>
#include <optional>
#include <string>

#include "extensions/hook_config.h"
#include "protocol/json.h"

namespace rebound::extensions {

/// How a hook's process ended, and what it wrote (each stream at most 1 MiB, as UTF-8).
struct HookRun {
  enum class End { exited, signalled, timed_out, not_started };
  End end = End::exited;
  int code = 0;                 // the exit status, or the signal
  std::int64_t timeout_ms = 0;  // with timed_out
  std::string start_error;      // with not_started: strerror's text
  std::string out, err;
};

/// The JSON output's keys (section 3.6), those present.
struct HookJson {
  std::optional<bool> continue_run;
  std::optional<std::string> stop_reason;
  std::optional<std::string> system_message;
  std::optional<std::string> decision;  // "approve" or "block"
  std::optional<std::string> reason;
  // hookSpecificOutput
  std::optional<std::string> permission_decision;  // allow, deny, ask
  std::optional<std::string> permission_decision_reason;
  std::optional<protocol::Json> updated_input;  // an object
  std::optional<std::string> additional_context;
  // hookSpecificOutput.decision (PermissionRequest)
  std::optional<std::string> behavior;  // allow, deny
  std::optional<protocol::Json> permission_updated_input;
  std::optional<std::string> message;
  std::optional<bool> interrupt;
};

struct HookVerdict {
  enum class Kind {
    success,   // exit 0: `json` or `plain`
    blocking,  // exit 2: the event's blocking effect, `reason` = stderr
    failed,    // no verdict: `failure` is the extension_error text
  };
  Kind kind = Kind::success;
  std::string plain;        // exit 0, stdout not JSON: trimmed
  std::string stderr_text;  // trimmed (the reason of exit 2)
  std::optional<HookJson> json;
  std::string failure;
};

/// The verdict of `run` for `event`. Keys the event does not use are not checked.
HookVerdict read_hook_run(HookEvent event, const HookRun& run);

/// `text` without leading and trailing whitespace.
std::string trimmed(const std::string& text);

}  // namespace rebound::extensions
