#pragma once
// The extension processes of one runner (extensions.md section 4), in extension order: started
// together, the events each subscribed to (4.3), the chain of `tool_call` interceptors in front
// of the hooks (sections 2 and 5.2, as a ToolPreflight wrapping the hooks' one), get_extensions
// and restart_extension (7.1), their slash commands (4.6, 7.5), and the stop of all at shutdown
// (4.9). Event loop only.

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "extensions/extension_connection.h"
#include "extensions/hook_config.h"
#include "session/extension_host.h"
#include "session/run_hooks.h"
#include "session/slash_commands.h"
#include "session/tool.h"

namespace rebound::extensions {

class ExtensionSet : public session::ExtensionControl, public session::SlashCommands {
 public:
  /// `host` outlives the set; `hooks` (listed by get_extensions) too, when given.
  ExtensionSet(session::Scheduler& scheduler, peer::Spawner spawner,
               std::vector<ExtensionConfig> configs, ExtensionConnection::Options options,
               ExtensionHost& host, const HookConfig* hooks);
  ~ExtensionSet() override;

  void start_all() override;
  /// Every extension stopped (section 4.9, `session_shutdown` with `reason`); `gone` once none
  /// of their processes is left.
  void stop_all(const std::string& reason, std::function<void()> gone) override;
  bool any_running() const override;
  bool any_starting() const { return unsettled(); }
  bool empty() const { return connections_.empty(); }
  const std::vector<std::unique_ptr<ExtensionConnection>>& connections() const {
    return connections_;
  }

  /// Which forms of an event of `type` some ready extension wants.
  struct Wanted {
    bool full = false;
    bool delta = false;
  };
  Wanted wanted(std::string_view type) const;
  /// The event's pi lines (without LF; `delta` empty unless wanted) to every subscriber.
  void forward(std::string_view type, std::string_view full, std::string_view delta);
  /// A notification of section 4.8 to every ready extension.
  void notify_all(const std::string& method, const protocol::Json& params);
  /// A hook's failure, for get_extensions' `lastError`.
  void hook_failed(const std::string& command, const std::string& error);

  /// The session's preflight: the interceptors, then `inner` (the hooks; may be null).
  std::unique_ptr<session::ToolPreflight> preflight(session::ToolPreflight* inner);
  /// The tools a session offers: `inner`'s (the MCP servers'; may be null), then the ready
  /// extensions' (section 4.5), names in `builtin_names` or `inner`'s taken.
  std::unique_ptr<session::DynamicTools> tools(session::DynamicTools* inner,
                                               std::vector<std::string> builtin_names);
  /// The session's run hooks: `inner`'s (may be null), and session changes told to the
  /// extensions (`session` gives the session's `{"sessionId","sessionFile"?}` now).
  std::unique_ptr<session::RunHooks> run_hooks(session::RunHooks* inner,
                                               std::function<protocol::Json()> session);

  void list(bool wait, std::function<void(protocol::Json)> done) override;
  void restart(const std::string& name,
               std::function<void(session::Result<protocol::Json>)> done) override;

  /// Runs `settled` once no extension is starting (at once when none is); bounded by their
  /// start-up timeouts.
  void when_settled(std::function<void()> settled);
  /// Status changes reach here (the host's `changed` should call it).
  void on_changed();

  // The ready extensions' slash commands, in extension order; a name an earlier one took is
  // skipped (section 4.6).
  bool known() const override { return !unsettled(); }
  void when_known(std::function<void()> known) override { when_settled(std::move(known)); }
  bool has(std::string_view name) const override { return owner(name) != nullptr; }
  void run(const std::string& name, const std::string& args,
           std::function<void(session::Status)> done) override;
  std::vector<protocol::Json> list() const override;

 private:
  class Preflight;
  protocol::Json list_json() const;
  bool unsettled() const;
  /// The ready extension whose command `name` runs.
  ExtensionConnection* owner(std::string_view name) const;
  /// Warns once of each command a later extension could not take.
  void warn_collisions();

  session::Scheduler& scheduler_;
  std::vector<std::unique_ptr<ExtensionConnection>> connections_;
  const HookConfig* hooks_;
  std::vector<std::pair<std::string, std::string>> hook_errors_;  // command, last error
  std::string cwd_;
  std::set<std::string> collisions_warned_;  // "<extension>/<command>"
  std::vector<std::function<void()>> settle_waiters_;
  std::vector<std::pair<std::string, std::function<void(session::Result<protocol::Json>)>>>
      restarts_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace rebound::extensions
