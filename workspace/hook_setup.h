#pragma once
// Command hooks as the application wires them (extensions.md sections 1.1, 1.4, 3.4): the
// configuration read from the global and the project settings under the trust rule, and the
// observer that runs the `AutoRetryStart`/`AutoRetryEnd` hooks right after their events (the
// other events' hooks are the session's tool preflight and run hooks), and the whole wiring of
// one session's hooks (rpc: the process's; acp: one ACP session's).

#include <boost/asio/any_io_executor.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "extensions/hook_calls.h"
#include "extensions/hook_config.h"
#include "extensions/hook_preflight.h"
#include "extensions/hook_run_hooks.h"
#include "extensions/hook_runner.h"
#include "session/agent_session.h"
#include "session/event_sink.h"
#include "workspace/service_flags.h"

#include "config/settings_pair.h"

namespace rebound::server {

struct HookSetup {
  extensions::HookConfig config;
  extensions::RunnerSettings runner;
};

/// The `hooks` of `<agent_dir>/settings.json` and of `<cwd>/.rebound/settings.json` (run only
/// when the global file says `"trustProjectSettings": true`; --no-extensions disables both),
/// each problem logged once.
HookSetup read_hook_setup(const workspace::ServiceFlags& options,
                          const config::SettingsPair& files);

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

/// The command hooks of one session working in `cwd`: the runner (its processes killed when this
/// goes), the observer in front of the session's events, its tool preflight and run hooks. Built
/// before the session (the observer is its event sink), attached once it exists. Event loop only.
class SessionHooks {
 public:
  SessionHooks(boost::asio::any_io_executor executor, session::Scheduler& scheduler,
               std::shared_ptr<const HookSetup> setup, std::string cwd,
               std::vector<std::string> env, session::EventSink& next,
               extensions::HookReport report);
  SessionHooks(const SessionHooks&) = delete;
  SessionHooks& operator=(const SessionHooks&) = delete;

  const HookSetup& setup() const { return *setup_; }
  /// Where the session's events go: the observer, then `next`.
  session::EventSink& events() { return observer_; }
  /// Gives `session` its hooks (none configured for an event: nothing in its way) and runs its
  /// SessionStart hooks with `source` (startup, resume); the first LLM request waits for them.
  void attach(session::AgentSession& session, std::string_view source);
  /// Where the hooks' `permission_mode` comes from (before attach; none: bypassPermissions).
  void set_permission_mode(std::function<std::string()> mode) {
    permission_mode_ = std::move(mode);
  }
  /// Where the runs of awaited hooks are marked (one-shot's heartbeat).
  void set_wait_board(std::shared_ptr<session::WaitBoard> board) {
    runner_.set_wait_board(std::move(board));
  }
  session::ToolPreflight* preflight() const { return preflight_.get(); }
  session::PermissionHooks* permission_hooks() const { return preflight_.get(); }
  session::RunHooks* run_hooks() const { return run_hooks_.get(); }
  /// Hook processes still running.
  std::size_t running() const { return runner_.running(); }
  /// Runs `idle` once none is (at once, posted, when none is).
  void when_idle(std::function<void()> idle) { runner_.when_idle(std::move(idle)); }

 private:
  std::shared_ptr<const HookSetup> setup_;
  std::string cwd_;
  extensions::HookReport report_;
  extensions::HookRunner runner_;
  HookObserver observer_;
  session::Scheduler& scheduler_;
  std::unique_ptr<extensions::HookPreflight> preflight_;
  std::unique_ptr<extensions::HookRunHooks> run_hooks_;
  std::function<std::string()> permission_mode_;
};

}  // namespace rebound::server
