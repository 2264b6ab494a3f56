// AgentSession: the auto-retry policy of retry.md (sections 4 to 6) and the idle-time queue.

#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>

#include "session/agent_run.h"
#include "session/retry_policy.h"

namespace rebound::session {

using protocol::AgentMessage;

namespace {
constexpr const char* kRetryCancelled = "Retry cancelled";
}

RetryDecision AgentSession::retry_decision(const AgentMessage& last) const {
  return retry_.decide(is_retryable(last, model_.context_window), settings_.retry);
}

void AgentSession::after_run(const AgentMessage& last, RetryDecision decision) {
  const std::string error = last.error_message.value_or("");
  switch (decision) {
    case RetryDecision::retry:
      schedule_retry(last);
      return;
    case RetryDecision::disabled:
      // Step 2: disabled; a chain that was active ends now (Differs: it never hangs).
      if (retry_.active()) end_chain(false, error);
      return;
    case RetryDecision::exhausted:
      // Step 4: attempts exhausted (with maxRetries 0: attempt 0 and no start event).
      emit(ev::AutoRetryEnd{false, retry_.attempt(), error});
      retry_.reset();
      return;
    case RetryDecision::cancelled:
    case RetryDecision::not_retryable:
      break;
  }
  if (retry_.active()) {
    if (!last.failed()) {
      end_chain(true, {});
    } else if (retry_.cancelled() || last.stop_reason == protocol::StopReason::aborted) {
      end_chain(false, kRetryCancelled);
    } else {
      end_chain(false, error);
    }
  }
  compact_after_run(last);
}

void AgentSession::schedule_retry(const AgentMessage& failed) {
  const std::int64_t attempt = retry_.advance();
  std::int64_t delay = backoff_delay_ms(settings_.retry.base_delay_ms, attempt);
  const std::string error = failed.error_message.value_or("");
  if (is_usage_limit(error)) {
    const auto hint = parse_retry_hint_ms(error, deps_.scheduler.now_epoch_ms());
    if (deps_.credentials.mark_usage_limit_reached(model_.provider, session_id_, hint)) delay = 0;
  }
  emit(ev::AutoRetryStart{attempt, settings_.retry.max_retries, delay, error});
  // Step 8: the model does not see the failed attempt again (the history keeps it).
  if (!context_.empty() && context_.back().failed()) context_.pop_back();
  std::weak_ptr<bool> alive = alive_;
  retry_.start_backoff(std::chrono::milliseconds(delay), [this, alive] {
    if (!alive.expired()) continue_run();
  });
}

void AgentSession::end_chain(bool success, const std::string& final_error) {
  if (!retry_.active()) return;
  emit(ev::AutoRetryEnd{success, retry_.attempt(),
                        success ? std::nullopt : std::optional<std::string_view>(final_error)});
  retry_.reset();
}

void AgentSession::abort_retry() {
  if (retry_.in_backoff()) {
    end_chain(false, kRetryCancelled);
    settle();
  } else if (retry_.active()) {
    // The retried request goes on; its end closes the chain, and no new retry starts.
    retry_.mark_cancelled();
  }
}

void AgentSession::settle() {
  if (run_ || retry_.active() || compaction_) return;
  // bash results that finished during the run join the context now that it is idle.
  for (auto& m : std::exchange(pending_bash_, {}))
    record(m);
  auto done = std::move(completions_);
  completions_.clear();
  for (auto& f : done)
    f();
  if (queued_count() > 0) schedule_drain();
}

void AgentSession::schedule_drain() {
  if (drain_posted_) return;
  drain_posted_ = true;
  std::weak_ptr<bool> alive = alive_;
  deps_.scheduler.post([this, alive] {
    if (alive.expired()) return;
    drain_posted_ = false;
    if (run_ || retry_.active() || compaction_ || queued_count() == 0) return;
    // Steering left over from a run that ended without a boundary goes first.
    auto inputs =
        steering_.empty() ? take(follow_up_, follow_up_mode_) : take(steering_, steering_mode_);
    start_run(std::move(inputs));
  });
}

std::vector<AgentSession::Queued> AgentSession::take(std::deque<Queued>& queue,
                                                     protocol::QueueMode mode) {
  std::vector<Queued> out;
  while (!queue.empty()) {
    out.push_back(std::move(queue.front()));
    queue.pop_front();
    if (mode == protocol::QueueMode::one_at_a_time) break;
  }
  return out;
}

void AgentSession::drop_queues() {
  std::vector<Completion> done;
  for (auto* q : {&steering_, &follow_up_}) {
    for (auto& item : *q) {
      if (item.done) done.push_back(std::move(item.done));
    }
    q->clear();
  }
  for (auto& f : done)
    f();
}

}  // namespace rebound::session
