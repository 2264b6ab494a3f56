#pragma once
// Command hooks as the application wires them (extensions.md sections 1.1, 1.4, 3.4): the
// configuration read from the global and the project settings under the trust rule, and the
// observer that runs the `AutoRetryStart`/`AutoRetryEnd` hooks right after their events (the
// other events' hooks are the session's tool preflight and run hooks, wired in modes.cpp; rpc
// mode only so far).

#include <filesystem>
#include <string>

#include "extensions/hook_calls.h"
#include "extensions/hook_config.h"
#include "extensions/hook_runner.h"
#include "server/app/cli_options.h"
#include "session/agent_session.h"
#include "session/event_sink.h"

namespace rebound::server {

struct HookSetup {
  extensions::HookConfig config;
  extensions::RunnerSettings runner;
};

/// The `hooks` of `<agent_dir>/settings.json` and of `<cwd>/.rebound/settings.json` (run only
/// when the global file says `"trustProjectSettings": true`; --no-extensions disables both),
/// each problem logged once.
HookSetup read_hook_setup(const CliOptions& options, const std::filesystem::path& agent_dir,
                          const std::filesystem::path& cwd);

/// Passes every event on, then starts the observer hooks that follow it (never waited for; a
/// failed one is reported).
class HookObserver : public session::EventSink {
 public:
  HookObserver(session::EventSink& next, const extensions::HookConfig& config,
               extensions::HookRunner& runner, std::string cwd, extensions::HookReport report)
      : next_(next),
        config_(config),
        runner_(runner),
        cwd_(std::move(cwd)),
        report_(std::move(report)) {}
  /// The session whose events these are (its id and file go into every hook's input).
  void set_session(const session::AgentSession* session) { session_ = session; }
  void on_event(const session::Event& event) override;

 private:
  void run_hooks(extensions::HookEvent event, const session::Event& cause);

  session::EventSink& next_;
  const extensions::HookConfig& config_;
  extensions::HookRunner& runner_;
  std::string cwd_;
  extensions::HookReport report_;
  const session::AgentSession* session_ = nullptr;
};

}  // namespace rebound::server
