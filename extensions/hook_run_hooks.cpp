#include "extensions/hook_run_hooks.h"

#include <algorithm>

#include "extensions/hook_decisions.h"

namespace rebound::extensions {

using protocol::Json;

std::unique_ptr<session::Waiting> HookRunHooks::prompt_submitted(
    const std::string& text, const std::string& prompt_id,
    std::function<void(session::PromptVerdict)> done) {
  Json fields = Json::object();
  fields["prompt"] = text;
  HookSessionInfo info = info_();
  info.prompt_id = prompt_id;  // the message submitted, not yet the session's
  const auto id = start_awaited_hooks(
      runner_, config_, HookEvent::user_prompt_submit, {}, info, fields, report_,
      [report = report_, done = std::move(done)](std::vector<HookResult> results) {
        PromptOutcome o = decide_user_prompt_submit(results);
        apply_hook_effects(report, HookEvent::user_prompt_submit, o.effects);
        session::PromptVerdict verdict;
        verdict.refused = std::move(o.refused);
        verdict.context = context_notes(HookEvent::user_prompt_submit, std::move(o.context));
        done(std::move(verdict));
      });
  if (!id) return nullptr;
  return hook_wait(runner_, *id);
}

std::unique_ptr<session::Waiting> HookRunHooks::session_start(
    std::string_view source, const std::string& model_id,
    std::function<void(std::vector<std::string>)> done) {
  Json fields = Json::object();
  fields["source"] = source;
  if (!model_id.empty()) fields["model"] = model_id;
  const auto id = start_awaited_hooks(
      runner_, config_, HookEvent::session_start, source, info_(), fields, report_,
      [report = report_, source = std::string(source),
       done = std::move(done)](std::vector<HookResult> results) {
        SessionStartOutcome o = decide_session_start(source, results);
        apply_hook_effects(report, HookEvent::session_start, o.effects);
        done(std::move(o.texts));
      });
  if (!id) return nullptr;
  return hook_wait(runner_, *id);
}

std::unique_ptr<session::Waiting> HookRunHooks::pre_compact(
    std::string_view trigger, const std::optional<std::string>& custom,
    std::function<void(session::PreCompactVerdict)> done) {
  Json fields = Json::object();
  fields["trigger"] = trigger;
  fields["custom_instructions"] = custom ? Json(*custom) : Json(nullptr);
  const auto id = start_awaited_hooks(
      runner_, config_, HookEvent::pre_compact, trigger, info_(), fields, report_,
      [report = report_, done = std::move(done)](std::vector<HookResult> results) {
        PreCompactOutcome o = decide_pre_compact(results);
        apply_hook_effects(report, HookEvent::pre_compact, o.effects);
        session::PreCompactVerdict verdict;
        verdict.refused = std::move(o.refused);
        verdict.instructions = std::move(o.instructions);
        done(std::move(verdict));
      });
  if (!id) return nullptr;
  return hook_wait(runner_, *id);
}

void HookRunHooks::idle_began() {
  if (!has_hooks(config_, HookEvent::notification)) return;
  // Once per idle period that lasts idleNotificationMs (section 3.4).
  idle_timer_->start(std::chrono::milliseconds(idle_notification_ms_), [this] {
    Json fields = Json::object();
    fields["message"] = "Rebound is waiting for your input";
    fields["notification_type"] = "idle_prompt";
    run_observer_hooks(runner_, config_, HookEvent::notification, "idle_prompt", info_(), fields,
                       report_);
  });
}

void HookRunHooks::session_end(std::string_view reason) {
  Json fields = Json::object();
  fields["reason"] = reason;
  if (reason != "other" && reason != "close") {
    run_observer_hooks(runner_, config_, HookEvent::session_end, reason, info_(), fields, report_);
    return;
  }
  // Shutdown, or an acp session's close (extensions.md sections 8, 9): running hooks are killed,
  // then SessionEnd's run, each bounded by sessionEndTimeoutMs or its own shorter timeout; the
  // loop ends (the closed session's hooks go) when they have. No idle_prompt comes any more.
  idle_timer_->cancel();
  runner_.cancel_all();
  shutdown_handlers_.clear();
  for (const HookHandler* h : handlers_for(config_, HookEvent::session_end, reason)) {
    shutdown_handlers_.push_back(*h);
    shutdown_handlers_.back().timeout_ms = std::min(h->timeout_ms, session_end_timeout_ms_);
  }
  if (shutdown_handlers_.empty()) return;
  std::vector<const HookHandler*> handlers;
  for (const auto& h : shutdown_handlers_)
    handlers.push_back(&h);
  start_hooks(runner_, HookEvent::session_end, std::move(handlers), info_(), fields,
              [report = report_](std::vector<HookResult> results) {
                HookEffects effects = hook_effects(HookEvent::session_end, {}, results);
                apply_hook_effects(report, HookEvent::session_end, effects);
              });
}

void HookRunHooks::run_failed(std::string_view error, const std::string& last_message) {
  Json fields = Json::object();
  fields["error"] = error;
  fields["last_assistant_message"] = last_message;
  run_observer_hooks(runner_, config_, HookEvent::stop_failure, error, info_(), fields, report_);
}

std::unique_ptr<session::Waiting> HookRunHooks::stop(
    const session::StopCall& call, std::function<void(session::StopVerdict)> done) {
  Json fields = Json::object();
  fields["stop_hook_active"] = call.continuations > 0;
  fields["last_assistant_message"] = call.last_assistant_message;
  const bool at_limit = call.continuations >= block_limit_;
  const auto id = start_awaited_hooks(
      runner_, config_, HookEvent::stop, {}, info_(), fields, report_,
      [report = report_, at_limit, limit = block_limit_,
       done = std::move(done)](std::vector<HookResult> results) {
        StopOutcome o = decide_stop(results);
        apply_hook_effects(report, HookEvent::stop, o.effects);
        session::StopVerdict verdict;
        if (o.continue_run && at_limit) {
          // The loop guard (section 3.10): the block is not honoured, the run ends.
          const std::string error = "Stop hooks blocked the run from ending " +
                                    std::to_string(limit + 1) + " times in a row; the run ends";
          report_hook_failures(report, HookEvent::stop, {{o.first_blocking, error}});
        } else if (o.continue_run) {
          verdict.continue_run = true;
          verdict.context = context_notes(HookEvent::stop, std::move(o.context));
        }
        done(std::move(verdict));
      });
  if (!id) return nullptr;
  return hook_wait(runner_, *id);
}

}  // namespace rebound::extensions
