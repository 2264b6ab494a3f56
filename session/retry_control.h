#pragma once
// Retry control (retry.md sections 12 to 15) as pure parts: the error class and HTTP status of
// a retryable error, the session policy and its all-or-nothing update, the effective policy,
// the deterministic jitter generator and the delay decision with a policy. No state beyond the
// generator, no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/json.h"
#include "protocol/messages.h"
#include "session/error.h"

namespace rebound::session {

struct RetrySettings;

enum class ErrorClass {
  usage_limit,
  rate_limit,
  overloaded,
  timeout,
  network,
  server_error,
  unknown
};
std::string_view to_string(ErrorClass c);

/// Section 12: N when the text begins with three digits N (100..599) followed by a space or
/// its end.
std::optional<int> leading_http_status(std::string_view text);

struct ErrorInfo {
  ErrorClass error_class = ErrorClass::unknown;
  std::optional<int> http_status;
  protocol::Json to_json(std::string_view message) const;  // lastError of get_retry_state
};
/// Section 12's table, first rule that holds; only for messages section 2 found retryable.
ErrorInfo classify_retryable_error(std::string_view text);

/// StopFailure's `error` for a run the session gave up on (extensions.md section 3.4): the
/// error class of a retryable message, `authentication_failed` for a leading 401 or 403,
/// `invalid_request` for another leading 4xx, else `unknown` (the overflow whose recovery
/// failed is the caller's `context_overflow`).
std::string stop_failure_class(const protocol::AgentMessage& failed, std::int64_t context_window);

/// The session values of set_retry_policy (section 13); unset means settings or default.
struct RetryPolicyValues {
  std::optional<std::int64_t> max_retries, base_delay_ms, max_delay_ms;
  std::optional<double> jitter;
  std::optional<bool> honor_retry_after;
  std::optional<std::int64_t> max_server_delay_ms, deadline_ms;
  bool any() const;
};

/// The policy each decision reads.
struct EffectivePolicy {
  std::int64_t max_retries = 3;
  std::int64_t base_delay_ms = 2000;
  std::optional<std::int64_t> max_delay_ms;
  double jitter = 0;
  bool honor_retry_after = false;
  std::optional<std::int64_t> max_server_delay_ms, deadline_ms;
  bool from_session = false;
  /// RetryPolicy of protocol.md section 10, unset fields omitted.
  protocol::Json to_json() const;
};
EffectivePolicy effective_policy(const RetrySettings& settings, const RetryPolicyValues& values);

/// set_retry_policy's fields applied to `values`, all or nothing: the field error of the first
/// bad field (and `values` unchanged), or nullopt.
std::optional<Error> apply_retry_policy_command(const protocol::Json& command,
                                                RetryPolicyValues& values);

/// Section 15: SplitMix64; unit() is a double in [0, 1).
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t state_;
};

enum class DelaySource { backoff, retry_after, credential_switch };
std::string_view to_string(DelaySource s);

/// The outcome of section 14 steps 2 to 6 for a retry that steps 1 to 4 of section 4 allowed.
struct DelayDecision {
  enum class End { none, deadline, server_delay_too_long } end = End::none;
  std::int64_t delay_ms = 0;
  DelaySource source = DelaySource::backoff;
  std::int64_t next_attempt_at = 0;
  std::int64_t chain_started_at = 0;  // as given: the chain's start this decision counted from
};

/// `hint` is section 8's hint in the text, if any; `credential_switch` whether step 4 applies
/// (a usage limit with another credential available). Draws one jitter value when it reaches
/// step 3 with jitter > 0.
DelayDecision decide_delay(const EffectivePolicy& policy, std::int64_t attempt, std::int64_t now,
                           std::int64_t chain_started_at, bool credential_switch,
                           std::optional<std::int64_t> hint, SplitMix64& rng);

}  // namespace rebound::session
