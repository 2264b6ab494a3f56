#pragma once
// One extension process (extensions.md section 4): JSON-RPC 2.0 over its stdio with Rebound as
// the client; the handshake (4.2), the events it subscribed to in their pi bytes (4.3), the
// `tool_call` interceptor with its timeout and fail-closed rule (4.4), its requests (4.7: the UI
// dialogs through the DialogHost, the session's state, abort and messages through the owner),
// Rebound's notifications (4.8), failure and stop (4.9). The process is a peer::PeerChild; time
// from the session's Scheduler. Event loop only.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "extensions/extension_config.h"
#include "extensions/hook_config.h"
#include "peer/peer_child.h"
#include "protocol/json.h"
#include "protocol/jsonrpc_peer.h"
#include "session/agent_session.h"
#include "session/extension_host.h"
#include "session/scheduler.h"
#include "session/tool.h"
#include "session/wait_board.h"

namespace rebound::extensions {

enum class ExtensionStatus { starting, ready, failed, disabled, untrusted };
std::string_view status_name(ExtensionStatus status);

struct ExtensionTool {
  std::string name;
  std::string description;
  protocol::Json parameters;
};

struct ExtensionCommand {
  std::string name;
  std::string description;
};

/// What an interceptor made of a call (section 4.4).
struct Interception {
  enum class Kind { allow, block, modify, failed } kind = Kind::allow;
  std::string reason;    // block: the extension's reason (may be empty); failed: why
  protocol::Json input;  // modify
};

/// What a connection needs from the session side.
struct ExtensionHost {
  /// An extension_error event (section 7.3): the extension's name, the method, the error.
  std::function<void(const std::string& name, std::string_view method, const std::string& error)>
      error;
  /// Status, tools or commands changed (never inside a call into the connection).
  std::function<void()> changed;
  session::DialogHost* dialogs = nullptr;  // none: every dialog gets its default at once
  /// ui/notify: an `info`/`warning`/`error` notice.
  std::function<void(const std::string& message, const std::string& type)> notify;
  /// session/get_state: the RpcSessionState.
  std::function<protocol::Json()> state;
  /// session/abort: `done` after the aborted run's agent_end (at once when idle).
  std::function<void(std::function<void()> done)> abort;
  /// session/send_user_message: the message submitted as that kind (AgentSession::submit);
  /// `done` with its answer.
  std::function<void(session::UserInput input, session::SubmitKind kind,
                     std::function<void(session::Status)> done)>
      send_user_message;
  /// `{"sessionId","sessionFile"?}` of the session now.
  std::function<protocol::Json()> session;
};

class ExtensionConnection {
 public:
  struct Options {
    std::string session_cwd;
    peer::Getenv getenv;
    RunnerSettings settings;
    std::string version;  // clientInfo.version
    std::string mode = "rpc";
    std::string ui = "rpc";
    /// Where a pending `tool_call` is marked (one-shot's heartbeat); may be null.
    std::shared_ptr<session::WaitBoard> waits;
  };
  ExtensionConnection(session::Scheduler& scheduler, peer::Spawner spawner, ExtensionConfig config,
                      Options options, ExtensionHost& host);
  ~ExtensionConnection();
  ExtensionConnection(const ExtensionConnection&) = delete;
  ExtensionConnection& operator=(const ExtensionConnection&) = delete;

  /// Spawns and starts the handshake (or settles at once: disabled, untrusted, failed by its
  /// configuration).
  void start();
  /// The stop sequence (section 4.9): session_shutdown when ready, stdin closed, SIGTERM after
  /// 1000 ms, SIGKILL after another 1000 ms; `gone` once nothing of it is left. `restarting`: it
  /// counts as `starting` meanwhile (start() follows), so that calls wait for it (section 7.1).
  void stop(const std::string& reason, std::function<void()> gone, bool restarting = false);

  const ExtensionConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }
  ExtensionStatus status() const { return status_; }
  bool ready() const { return status_ == ExtensionStatus::ready; }
  bool starting() const { return status_ == ExtensionStatus::starting; }
  /// Some process of it is still there (also while it stops).
  bool running() const { return child_.running(); }
  /// Declared `tool_call` (once initialised; a failed one keeps what it declared).
  bool intercepts() const { return intercepts_; }
  const std::vector<ExtensionTool>& tools() const { return tools_; }
  const std::vector<ExtensionCommand>& commands() const { return commands_; }
  std::int64_t timeout_ms() const;
  /// get_extensions' ExtensionInfo (section 7.1).
  protocol::Json info() const;

  /// Whether a ready extension subscribed to events of `type`, and in which form.
  bool wants(std::string_view type) const;
  bool delta_updates() const { return delta_; }
  /// Writes one event notification around `line` (the pi line without its LF).
  void forward(std::string_view line);
  /// Rebound's notifications of section 4.8 (session_start, session_shutdown).
  void notify(const std::string& method, const protocol::Json& params);

  /// Asks the interceptor about a call (section 4.4). `done` runs once, later, unless the handle
  /// is destroyed first (an abort: `cancelled` is sent).
  std::unique_ptr<session::Waiting> intercept(const std::string& call_id, const std::string& tool,
                                              const protocol::Json& input,
                                              std::function<void(Interception)> done);

  /// Calls its tool `tool` (section 4.5): `tools/call`, bounded by toolTimeoutMs, partial results
  /// from `tools/update`. As session::Tool::start: `done` once, never inside this call, unless
  /// the handle is destroyed first.
  std::unique_ptr<session::ToolCall> call_tool(const std::string& tool, const std::string& call_id,
                                               const protocol::Json& args,
                                               session::Tool::Progress progress,
                                               session::Tool::Done done);

  /// Runs its slash command `command` (section 4.6): `commands/run` with `args`, bounded by
  /// toolTimeoutMs. `done` once, never inside this call, with ok when it answered, else
  /// `Extension command /<command> failed: <reason>`.
  void run_command(const std::string& command, const std::string& args,
                   std::function<void(session::Status)> done);

 private:
  struct PendingIntercept {
    std::string call_id;
    std::function<void(Interception)> done;
    std::unique_ptr<session::Timer> timer;
    std::int64_t left_ms = -1;  // of its timeout, once armed (a dialog pauses it)
    std::int64_t armed_at = 0;  // epoch ms
    session::WaitBoard::Mark mark;
  };
  class InterceptHandle;
  class CallHandle;
  struct PendingCall {
    std::string call_id;
    session::Tool::Progress progress;
    session::Tool::Done done;
    std::unique_ptr<session::Timer> timer;
  };
  struct PendingCommand {
    std::string name;
    std::function<void(session::Status)> done;
    std::unique_ptr<session::Timer> timer;
  };
  /// Ends a command run: ok without `failure`, else its error with that reason.
  void end_command(std::int64_t id, std::optional<std::string> failure,
                   const std::string& cancel_reason);
  /// Tells the extension that request `id` no longer waits (section 4.8).
  void send_cancelled(std::int64_t id, const std::string& reason);
  void end_call(std::int64_t id, session::ToolResult result, const std::string& cancel_reason);
  void on_call_answer(std::int64_t id, const protocol::Json& response);
  void on_tool_update(const protocol::Json& params);

  void fail(std::string error, std::string method);
  /// Every pending interception and command run fails with `intercept_reason` and every call
  /// ends with `call_result` (`cancel_reason` set: the extension gets `cancelled`); dialogs close.
  void end_pending(const std::string& intercept_reason, const session::ToolResult& call_result,
                   const std::string& cancel_reason);
  void post_changed();
  void on_line(std::string_view line);
  void on_initialized(const protocol::Json& response);
  session::Status read_answer(const protocol::Json& result);
  void on_request(const std::string& method, const protocol::Json& params,
                  const protocol::Json& id);
  void open_dialog(const std::string& method, const protocol::Json& params,
                   const protocol::Json& id);
  void close_dialog(std::uint64_t key);
  void arm_intercept_timer(std::int64_t id);
  void end_intercept(std::int64_t id, Interception result, bool cancel, const std::string& why);
  void on_intercept_answer(std::int64_t id, const protocol::Json& response);

  session::Scheduler& scheduler_;
  ExtensionConfig config_;
  Options options_;
  ExtensionHost& host_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

  ExtensionStatus status_ = ExtensionStatus::starting;
  std::string error_;
  std::optional<protocol::Json> server_info_;
  std::vector<std::string> events_;  // as declared
  bool all_events_ = false;
  std::set<std::string, std::less<>> event_set_;
  bool delta_ = false;
  bool initialised_ = false;
  bool intercepts_ = false;
  std::vector<ExtensionTool> tools_;
  std::vector<ExtensionCommand> commands_;

  peer::PeerChild child_;
  std::unique_ptr<protocol::JsonRpcPeer> peer_;
  std::unique_ptr<session::Timer> startup_timer_;
  std::map<std::int64_t, PendingIntercept> intercepts_pending_;
  std::map<std::int64_t, PendingCall> calls_;
  std::map<std::int64_t, PendingCommand> command_runs_;
  std::map<std::uint64_t, std::unique_ptr<session::Waiting>> dialogs_;  // open dialogs
  std::uint64_t next_dialog_ = 1;
  bool change_posted_ = false;
};

}  // namespace rebound::extensions
