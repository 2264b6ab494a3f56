#include "session/retry_state.h"

namespace rebound::session {

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
