#pragma once
// The Stop hooks as the session's run hooks (extensions.md sections 3.4, 3.7, 3.10, 5.3): at a
// run's normal end they may continue it with their feedback as context, at most
// `stopHookBlockLimit` times in a row; past that the run ends and one extension_error names the
// first hook that blocked. Event loop only.

#include <cstdint>
#include <functional>
#include <memory>

#include "extensions/hook_calls.h"
#include "extensions/hook_config.h"
#include "extensions/hook_runner.h"
#include "session/run_hooks.h"

namespace rebound::extensions {

class HookStop : public session::RunHooks {
 public:
  /// `runner` outlives this and every wait it started.
  HookStop(const HookConfig& config, HookRunner& runner, std::function<HookSessionInfo()> info,
           HookFailureReport report, std::int64_t block_limit)
      : config_(config),
        runner_(runner),
        info_(std::move(info)),
        report_(std::move(report)),
        block_limit_(block_limit) {}

  std::unique_ptr<session::Waiting> stop(const session::StopCall& call,
                                         std::function<void(session::StopVerdict)> done) override;

 private:
  const HookConfig& config_;
  HookRunner& runner_;
  std::function<HookSessionInfo()> info_;
  HookFailureReport report_;
  std::int64_t block_limit_;
};

}  // namespace rebound::extensions
