// RetryState::decide: the decision of retry.md section 4 as a value, row by row (not retryable,
// abort_retry during the retried request, disabled, attempts exhausted, retry), with manual time.

#include <doctest/doctest.h>

#include "session/retry_state.h"
#include "session/settings.h"
#include "tests/support/manual_scheduler.h"

using namespace rebound::session;

TEST_CASE("the retry state decides, its decisions follow the chain") {
  rebound::testing::ManualScheduler scheduler;
  RetryState state(scheduler.make_timer());
  RetrySettings policy;  // enabled, 3 retries
  CHECK(state.decide(false, policy) == RetryDecision::not_retryable);
  CHECK(state.decide(true, policy) == RetryDecision::retry);
  RetrySettings off = policy;
  off.enabled = false;
  CHECK(state.decide(true, off) == RetryDecision::disabled);
  RetrySettings none = policy;
  none.max_retries = 0;
  CHECK(state.decide(true, none) == RetryDecision::exhausted);

  // Three attempts, then exhausted.
  for (int attempt = 1; attempt <= 3; ++attempt) {
    CHECK(state.decide(true, policy) == RetryDecision::retry);
    CHECK(state.advance() == attempt);
  }
  CHECK(state.decide(true, policy) == RetryDecision::exhausted);
  CHECK(state.decide(false, policy) == RetryDecision::not_retryable);  // a success ends it

  // abort_retry during the retried request: no further retry, whatever the policy says.
  state.reset();
  state.advance();
  state.mark_cancelled();
  CHECK(state.decide(true, policy) == RetryDecision::cancelled);
  CHECK(state.decide(false, policy) == RetryDecision::not_retryable);
  state.reset();
  CHECK(state.decide(true, policy) == RetryDecision::retry);
}
