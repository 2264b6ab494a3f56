#pragma once
// The texts rebound-chat shows (retry.md section 9; hooks' texts, notices and errors of
// extensions.md), as pure functions so they are tested without a terminal.

#include <cstdint>
#include <string>

namespace rebound::chat {

inline constexpr const char* kWorking = "Working… (esc to interrupt)";
inline constexpr const char* kCompacting = "Compacting the context… (esc to interrupt)";

/// Whole seconds for a delay: round(ms / 1000), never negative.
inline std::int64_t rounded_seconds(std::int64_t ms) {
  return ms <= 0 ? 0 : (ms + 500) / 1000;
}

/// `Retrying (<attempt>/<maxAttempts>) in <round(remaining/1000)>s… (esc to cancel)`; with a
/// server that has `retry_now` (retry.md section 17) the hint also names ctrl-r.
inline std::string retry_status(std::int64_t attempt, std::int64_t max_attempts,
                                std::int64_t remaining_ms, bool can_retry_now = false) {
  return "Retrying (" + std::to_string(attempt) + "/" + std::to_string(max_attempts) + ") in " +
         std::to_string(rounded_seconds(remaining_ms)) + "s… (esc to cancel" +
         (can_retry_now ? ", ctrl-r to retry now)" : ")");
}

/// `Retry failed after <attempt> attempts: <finalError>` exactly (retry.md section 9), then the
/// error class of the last retried failure when the server reports it: `… <finalError>
/// (overloaded)`.
inline std::string retry_failed(std::int64_t attempt, const std::string& final_error,
                                const std::string& error_class = {}) {
  return "Retry failed after " + std::to_string(attempt) + " attempts: " + final_error +
         (error_class.empty() ? "" : " (" + error_class + ")");
}

/// A hook's text for the model (a custom message, extensions.md section 3.9): `[hook] <text>`.
inline std::string hook_context(const std::string& text) {
  return "[hook] " + text;
}

/// A notice (`notify`, section 6.1): `[<notifyType>] <message>`, `info` when none is given.
inline std::string notice(const std::string& notify_type, const std::string& message) {
  return "[" + (notify_type.empty() ? std::string("info") : notify_type) + "] " + message;
}

/// An extension_error (section 7.3): `[extension error] <extensionPath> (<event>): <error>`.
inline std::string extension_error(const std::string& path, const std::string& event,
                                   const std::string& error) {
  return "[extension error] " + path + " (" + event + "): " + error;
}

}  // namespace rebound::chat
