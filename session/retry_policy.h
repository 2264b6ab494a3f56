#pragma once
// The decisions of retry.md as pure functions: which failures are retryable (section 2), which
// are context overflows (section 7), the backoff delay (section 4 step 5) and the server hints
// in an error text (section 8). No state, no I/O; thread-safe.

#include <cstdint>
#include <optional>
#include <string_view>

#include "protocol/messages.h"

namespace rebound::session {

/// Section 7: an error message that says the context window overflowed (and is not a rate
/// limit), or a successful answer whose input tokens exceed the model's context window.
bool is_context_overflow(const protocol::AgentMessage& message, std::int64_t context_window);

/// Section 2: stopReason error, a non-empty errorMessage, not an overflow, and the pattern.
bool is_retryable(const protocol::AgentMessage& message, std::int64_t context_window);

/// Section 4 step 6: the text names a usage limit.
bool is_usage_limit(std::string_view error_message);

/// Section 4 step 5: base * 2^(attempt-1), saturated at 2^53 - 1. `attempt` starts at 1.
std::int64_t backoff_delay_ms(std::int64_t base_delay_ms, std::int64_t attempt);

inline constexpr std::int64_t kMaxSafeInteger = (std::int64_t{1} << 53) - 1;

/// Section 8: the delay hint in milliseconds (first rule that matches), relative to
/// `now_epoch_ms`; a hint in the past counts as 0; nullopt when the text has none.
std::optional<std::int64_t> parse_retry_hint_ms(std::string_view text, std::int64_t now_epoch_ms);

}  // namespace rebound::session
