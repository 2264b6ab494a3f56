#pragma once
// The per-session retry chain of retry.md section 3: the attempt counter (0 = idle), the
// backoff timer and the flag that abort_retry arrived while the retried request ran. It owns
// its timer: cancelling or destroying it disarms the backoff. Event loop only.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "session/scheduler.h"

namespace rebound::session {

struct RetrySettings;

/// What to do after a run whose last assistant message failed or succeeded (retry.md section 4),
/// decided by the retry state from the classification and the policy.
enum class RetryDecision {
  retry,          // schedule the next attempt
  not_retryable,  // not a retryable failure (or a success): end an active chain accordingly
  cancelled,      // abort_retry arrived during the retried request: the chain ends, no retry
  disabled,       // retryable, but auto-retry is off: an active chain ends with the error
  exhausted,      // retryable, but no attempt is left: auto_retry_end with the error
  deadline,       // retry.md section 14 step 6: the next attempt would end after the deadline
  server_delay_too_long,  // section 14 step 5: an honoured hint above maxServerDelayMs
};

class RetryState {
 public:
  explicit RetryState(std::unique_ptr<Timer> timer) : timer_(std::move(timer)) {}

  /// The current attempt; 0 when no chain is active.
  std::int64_t attempt() const { return attempt_; }
  /// A chain is active: during the backoff and during the retried request.
  bool active() const { return attempt_ > 0; }
  /// Waiting out a backoff.
  bool in_backoff() const { return in_backoff_; }
  /// abort_retry arrived while the retried request ran: no further retry in this chain.
  bool cancelled() const { return cancelled_; }

  /// The decision for a finished run; `retryable` is retry.md's classification of its last
  /// assistant message.
  RetryDecision decide(bool retryable, const RetrySettings& policy) const;

  /// Steps to the next attempt and returns it.
  std::int64_t advance() { return ++attempt_; }
  void mark_cancelled() { cancelled_ = true; }

  /// Starts the backoff; `on_expiry` runs once unless the backoff is cancelled first.
  void start_backoff(std::chrono::milliseconds delay, std::function<void()> on_expiry);
  /// Stops a running backoff; true when one was running.
  bool cancel_backoff();
  /// Ends the chain: attempt 0, no backoff, not cancelled.
  void reset();

 private:
  std::unique_ptr<Timer> timer_;
  std::int64_t attempt_ = 0;
  bool in_backoff_ = false;
  bool cancelled_ = false;
};

}  // namespace rebound::session
