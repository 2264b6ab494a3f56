#include "session/retry_state.h"

#include "session/settings.h"

namespace rebound::session {

RetryDecision RetryState::decide(bool retryable, const RetrySettings& policy) const {
  if (!retryable) return RetryDecision::not_retryable;
  if (active() && cancelled_) return RetryDecision::cancelled;
  if (!policy.enabled) return RetryDecision::disabled;
  if (attempt_ + 1 > policy.max_retries) return RetryDecision::exhausted;
  return RetryDecision::retry;
}

void RetryState::start_backoff(std::chrono::milliseconds delay, std::function<void()> on_expiry) {
  in_backoff_ = true;
  timer_->start(delay, [this, cb = std::move(on_expiry)] {
    in_backoff_ = false;
    cb();
  });
}

bool RetryState::cancel_backoff() {
  if (!in_backoff_) return false;
  in_backoff_ = false;
  timer_->cancel();
  return true;
}

void RetryState::reset() {
  cancel_backoff();
  attempt_ = 0;
  cancelled_ = false;
}

}  // namespace rebound::session
