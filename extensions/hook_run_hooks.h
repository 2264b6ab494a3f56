#pragma once
// The session-wide hooks as the session's run hooks (extensions.md sections 3.4, 3.7, 3.9,
// 3.10, 5.1, 5.3): SessionStart's texts go into the system prompt, SessionEnd and StopFailure
// are observers, a submitted message is refused or taken with the UserPromptSubmit hooks'
// texts after it; at a run's normal end the Stop hooks may continue it with their feedback as
// context, at most `stopHookBlockLimit` times in a row, past which the run ends and one
// extension_error names the first hook that blocked. Event loop only.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "extensions/hook_calls.h"
#include "extensions/hook_config.h"
#include "extensions/hook_runner.h"
#include "session/run_hooks.h"
#include "session/scheduler.h"

namespace rebound::extensions {

class HookRunHooks : public session::RunHooks {
 public:
  /// `runner` outlives this and every wait it started.
  HookRunHooks(const HookConfig& config, HookRunner& runner, session::Scheduler& scheduler,
               std::function<HookSessionInfo()> info, HookReport report,
               const RunnerSettings& settings)
      : config_(config),
        runner_(runner),
        idle_timer_(scheduler.make_timer()),
        info_(std::move(info)),
        report_(std::move(report)),
        block_limit_(settings.stop_hook_block_limit),
        session_end_timeout_ms_(settings.session_end_timeout_ms),
        idle_notification_ms_(settings.idle_notification_ms) {}

  std::unique_ptr<session::Waiting> prompt_submitted(
      const std::string& text, const std::string& prompt_id,
      std::function<void(session::PromptVerdict)> done) override;
  std::unique_ptr<session::Waiting> session_start(
      std::string_view source, const std::string& model_id,
      std::function<void(std::vector<std::string>)> done) override;
  void session_end(std::string_view reason) override;
  /// Once no hook of the runner is left (session_end() at shutdown killed the others).
  void when_ended(std::function<void()> ended) override { runner_.when_idle(std::move(ended)); }
  void cut_ended() override { runner_.cancel_all(); }
  void idle_began() override;
  void idle_ended() override { idle_timer_->cancel(); }
  std::unique_ptr<session::Waiting> pre_compact(
      std::string_view trigger, const std::optional<std::string>& custom,
      std::function<void(session::PreCompactVerdict)> done) override;
  void run_failed(std::string_view error, const std::string& last_message) override;
  std::unique_ptr<session::Waiting> stop(const session::StopCall& call,
                                         std::function<void(session::StopVerdict)> done) override;

 private:
  const HookConfig& config_;
  HookRunner& runner_;
  std::unique_ptr<session::Timer> idle_timer_;
  std::function<HookSessionInfo()> info_;
  HookReport report_;
  std::int64_t block_limit_;
  std::int64_t session_end_timeout_ms_;
  std::int64_t idle_notification_ms_;
  std::vector<HookHandler> shutdown_handlers_;  // SessionEnd's at shutdown, with capped timeouts
};

}  // namespace rebound::extensions
