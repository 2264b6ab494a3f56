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

RetryDecision AgentSession::retry_decision(const AgentMessage& last) {
  planned_.reset();
  const EffectivePolicy policy = effective_policy(settings_.retry, retry_values_);
  RetrySettings limits = settings_.retry;
  limits.max_retries = policy.max_retries;
  const RetryDecision decision = retry_.decide(is_retryable(last, model_.context_window), limits);
  if (decision != RetryDecision::retry) return decision;
  // Section 14, with one `now` and at most one jitter draw, before agent_end is written.
  const std::string error = last.error_message.value_or("");
  const std::int64_t now = deps_.scheduler.now_epoch_ms();
  const std::optional<std::int64_t> hint = parse_retry_hint_ms(error, now);
  bool credential_switch = false;
  if (is_usage_limit(error)) {
    credential_switch =
        deps_.credentials.mark_usage_limit_reached(model_.provider, session_id_, hint);
  }
  const std::int64_t chain_started_at = retry_.active() ? chain_.started_at : now;
  SplitMix64& rng = deps_.jitter ? *deps_.jitter : own_jitter_;
  planned_ = decide_delay(policy, retry_.attempt() + 1, now, chain_started_at, credential_switch,
                          hint, rng);
  chain_.max_attempts = policy.max_retries;
  // The run's deadline looks ahead like the policy's (the earlier one decides; at equal times
  // the run's).
  if (run_deadline_at_ && planned_->end != DelayDecision::End::server_delay_too_long &&
      planned_->next_attempt_at > *run_deadline_at_) {
    const bool policy_first = planned_->end == DelayDecision::End::deadline && policy.deadline_ms &&
                              chain_started_at + *policy.deadline_ms < *run_deadline_at_;
    planned_->end = DelayDecision::End::deadline;
    run_deadline_hit_ = !policy_first;
  }
  switch (planned_->end) {
    case DelayDecision::End::deadline:
      return RetryDecision::deadline;
    case DelayDecision::End::server_delay_too_long:
      return RetryDecision::server_delay_too_long;
    case DelayDecision::End::none:
      break;
  }
  return RetryDecision::retry;
}

std::optional<std::string_view> AgentSession::end_reason(std::string_view reason) const {
  if (!retry_control_) return std::nullopt;
  return reason;
}

void AgentSession::after_run(const AgentMessage& last, RetryDecision decision) {
  const std::uint64_t reported = give_ups_;
  decide_after_run(last, decision);
  // A run that ended in error and that nothing retries or compacts: the session gave up on it
  // (extensions.md section 5.3; an overflow whose recovery failed was reported as such).
  if (last.stop_reason == protocol::StopReason::error && give_ups_ == reported &&
      !retry_.in_backoff() && !compaction_) {
    give_up(stop_failure_class(last, model_.context_window), last.error_message.value_or(""));
  }
}

void AgentSession::give_up(std::string_view error, const std::string& message) {
  ++give_ups_;
  if (run_hooks_) run_hooks_->run_failed(error, message);
}

void AgentSession::decide_after_run(const AgentMessage& last, RetryDecision decision) {
  const std::string error = last.error_message.value_or("");
  switch (decision) {
    case RetryDecision::retry:
      schedule_retry(last);
      return;
    case RetryDecision::disabled:
      // Step 2: disabled; a chain that was active ends now (Differs: it never hangs).
      if (retry_.active()) end_chain(false, error, "disabled");
      return;
    case RetryDecision::exhausted:
      // Step 4: attempts exhausted (with maxRetries 0: attempt 0 and no start event).
      emit(ev::AutoRetryEnd{false, retry_.attempt(), error, end_reason("exhausted")});
      retry_.reset();
      return;
    case RetryDecision::deadline:
    case RetryDecision::server_delay_too_long:
      // Section 14 steps 5 and 6: written like the exhausted row (attempt 0 without a chain),
      // then, unlike that row, the compaction check.
      emit(ev::AutoRetryEnd{
          false, retry_.attempt(), error,
          end_reason(decision == RetryDecision::deadline ? "deadline" : "server_delay_too_long")});
      retry_.reset();
      compact_after_run(last);
      return;
    case RetryDecision::cancelled:
    case RetryDecision::not_retryable:
      break;
  }
  if (retry_.active()) {
    if (!last.failed()) {
      end_chain(true, {}, "success");
    } else if (retry_.cancelled() || last.stop_reason == protocol::StopReason::aborted) {
      end_chain(false, kRetryCancelled, "cancelled");
    } else {
      end_chain(false, error, "non_retryable");
    }
  }
  compact_after_run(last);
}

void AgentSession::schedule_retry(const AgentMessage& failed) {
  const std::int64_t attempt = retry_.advance();
  const DelayDecision plan = *planned_;  // retry_decision() took it before agent_end
  const std::int64_t delay = plan.delay_ms;
  const std::string error = failed.error_message.value_or("");
  if (attempt == 1) chain_.started_at = plan.chain_started_at;
  chain_.delay_ms = delay;
  chain_.next_attempt_at = plan.next_attempt_at;
  chain_.last_error = error;
  chain_.error = classify_retryable_error(error);
  std::optional<ev::RetryStartDetails> details;
  if (retry_control_) {
    details = ev::RetryStartDetails{to_string(chain_.error.error_class), chain_.error.http_status,
                                    to_string(plan.source), plan.next_attempt_at};
  }
  emit(ev::AutoRetryStart{attempt, chain_.max_attempts, delay, error, details});
  // Step 8: the model does not see the failed attempt again (the history keeps it).
  if (!context_.empty() && context_.back().failed()) context_.pop_back();
  std::weak_ptr<bool> alive = alive_;
  retry_.start_backoff(std::chrono::milliseconds(delay), [this, alive] {
    if (!alive.expired()) continue_run();
  });
}

void AgentSession::end_chain(bool success, const std::string& final_error,
                             std::string_view reason) {
  if (!retry_.active()) return;
  emit(ev::AutoRetryEnd{success, retry_.attempt(),
                        success ? std::nullopt : std::optional<std::string_view>(final_error),
                        end_reason(reason)});
  retry_.reset();
}

protocol::Json AgentSession::retry_state_json() {
  retry_control_ = true;
  const EffectivePolicy policy = effective_policy(settings_.retry, retry_values_);
  protocol::Json j{{"enabled", settings_.retry.enabled}};
  const bool active = retry_.active();
  j["phase"] = !active ? "idle" : retry_.in_backoff() ? "backoff" : "request";
  j["attempt"] = retry_.attempt();
  if (active) {
    j["maxAttempts"] = chain_.max_attempts;
    if (retry_.in_backoff()) j["delayMs"] = chain_.delay_ms;
    j["chainStartedAt"] = chain_.started_at;
    if (retry_.in_backoff()) j["nextAttemptAt"] = chain_.next_attempt_at;
    j["lastError"] = chain_.error.to_json(chain_.last_error);
  }
  j["policy"] = policy.to_json();
  return j;
}

Result<protocol::Json> AgentSession::set_retry_policy(const protocol::Json& command) {
  if (auto error = apply_retry_policy_command(command, retry_values_)) {
    return std::move(*error);
  }
  retry_control_ = true;
  return effective_policy(settings_.retry, retry_values_).to_json();
}

void AgentSession::retry_now(const std::function<void(const protocol::Json&)>& answer) {
  retry_control_ = true;
  if (!retry_.in_backoff()) {
    answer(protocol::Json{{"skipped", false}, {"phase", retry_.active() ? "request" : "idle"}});
    return;
  }
  // The backoff ends exactly once: the timer is disarmed here, on the loop, before anything
  // else can run; then the answer, then the continued run (its agent_start after the answer).
  retry_.cancel_backoff();
  answer(protocol::Json{{"skipped", true}, {"attempt", retry_.attempt()}});
  continue_run();
}

void AgentSession::abort_retry() {
  if (retry_.in_backoff()) {
    end_chain(false, kRetryCancelled, "cancelled");
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
  if (queued_count() > 0) {
    schedule_drain();
  } else if (run_hooks_ && submissions_.empty() && !run_ && !retry_.active() && !compaction_) {
    run_hooks_->idle_began();  // an idle period begins (extensions.md section 3.4)
  }
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
  queue_taken_ = queue_taken_ || !queue.empty();
  while (!queue.empty()) {
    out.push_back(std::move(queue.front()));
    queue.pop_front();
    if (mode == protocol::QueueMode::one_at_a_time) break;
  }
  return out;
}

bool AgentSession::drop_queues() {
  const bool dropped = queued_count() > 0;
  std::vector<Completion> done;
  for (auto* q : {&steering_, &follow_up_}) {
    for (auto& item : *q) {
      if (item.done) done.push_back(std::move(item.done));
    }
    q->clear();
  }
  for (auto& f : done)
    f();
  return dropped;
}

}  // namespace rebound::session
