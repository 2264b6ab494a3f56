#pragma once
// One MCP server over the stdio transport (mcp.md sections 2, 3, 5 and 7): its process, the
// handshake, paginated tools/list and list_changed re-lists, tools/call with progress, timeout
// and cancellation, the failure texts, and the stop sequence (stdin closed, 1000 ms, SIGTERM to
// the group, 1000 ms, SIGKILL). The process comes from a Spawner (the server's ChildProcess in
// production, a fake in unit tests); time from the session's Scheduler. Event loop only.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/mcp_config.h"
#include "protocol/json.h"
#include "protocol/jsonrpc_peer.h"
#include "protocol/line_reader.h"
#include "session/scheduler.h"
#include "session/tool.h"

namespace rebound::mcp {

/// A running server process as a connection sees it.
class ServerProcess {
 public:
  struct Handlers {
    std::function<void(std::string_view)> out;  // stdout bytes
    std::function<void()> out_end;
    std::function<void(std::string_view)> err;  // stderr bytes
    std::function<void()> err_end;
    std::function<void(int status)> exit;  // the wait status, once reaped
  };
  /// Destroying it kills the process group and reaps the child, with no further callback.
  virtual ~ServerProcess() = default;
  virtual void write(std::string data) = 0;
  virtual void close_stdin() = 0;
  virtual void signal_group(int signal) = 0;
  /// Whether any process of its group is still there.
  virtual bool group_alive() const = 0;
  /// Bytes written to it that it has not read yet.
  virtual std::size_t input_queued() const = 0;
};

struct SpawnSpec {
  std::vector<std::string> argv;
  std::string cwd;
  std::vector<std::string> env;  // NAME=value, nothing else
};

/// Starts a process; nullptr and the system's reason in `error` when it cannot.
using Spawner = std::function<std::unique_ptr<ServerProcess>(
    const SpawnSpec& spec, ServerProcess::Handlers handlers, std::string& error)>;

enum class Status { starting, ready, failed, disabled };
std::string_view status_name(Status status);

/// A tool as its server lists it, once accepted (section 4.2).
struct ServerTool {
  std::string name;  // as the server names it
  std::string description;
  protocol::Json parameters;
  bool read_only = false;
};

inline constexpr std::size_t kMaxMessageBytes = 64u << 20;
inline constexpr int kMaxListPages = 100;
inline constexpr std::int64_t kStopStepMs = 1000;
inline constexpr std::int64_t kStderrGraceMs = 100;

class McpConnection {
 public:
  struct Options {
    std::string session_cwd;
    Getenv getenv;
    McpSettings settings;
    std::string version;  // clientInfo.version
    /// A server that leaves more than this unread on its stdin is failed (its answers to our
    /// messages, pings included, would pile up without limit).
    std::size_t max_queued_input = kMaxMessageBytes;
  };
  /// `changed` runs (never inside a call into this object) when status, error, tools or
  /// whether a listing is in progress changed.
  McpConnection(session::Scheduler& scheduler, Spawner spawner, ServerConfig config,
                Options options, std::function<void()> changed);
  ~McpConnection();
  McpConnection(const McpConnection&) = delete;
  McpConnection& operator=(const McpConnection&) = delete;

  /// Spawns and starts the handshake (or settles at once as disabled / failed by configuration).
  void start();
  /// A start is queued: `starting` until start() runs, unless stop() comes first.
  void mark_starting() {
    if (!config_.disabled) status_ = Status::starting;
    start_queued_ = true;
  }
  bool start_queued() const { return start_queued_; }
  /// Stops the server (section 3.4): pending calls end with "Operation aborted"; `gone` runs
  /// once no process of it is left.
  void stop(std::function<void()> gone);

  const ServerConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }
  Status status() const { return status_; }
  const std::string& error() const { return error_; }
  const std::vector<ServerTool>& tools() const { return tools_; }
  /// Changes whenever tools() does.
  std::uint64_t tools_version() const { return tools_version_; }
  const std::optional<protocol::Json>& server_info() const { return server_info_; }
  /// Starting, or a re-list in progress: the next LLM request waits (section 3.2).
  /// Ends a start that is still `starting` as its own startup timer would (failed, "Startup
  /// timed out after N ms"): for a waiter whose deadline came a moment before the timer.
  void time_out_startup();
  bool unsettled() const { return status_ == Status::starting || (listing_ && ready()); }
  bool ready() const { return status_ == Status::ready; }
  bool running() const { return process_ != nullptr; }

  /// Calls the server's tool `tool` (section 5). `progress` and `done` never run inside this
  /// call; `done` runs exactly once unless the handle is destroyed first.
  std::unique_ptr<session::ToolCall> call(const std::string& tool, const protocol::Json& args,
                                          session::Tool::Progress progress,
                                          session::Tool::Done done);

 private:
  struct PendingCall {
    std::string tool;
    session::Tool::Progress progress;
    session::Tool::Done done;
    std::unique_ptr<session::Timer> timer;
  };
  class CallHandle;

  void fail(std::string error);
  void notify_changed();
  void on_stdout(std::string_view bytes);
  void on_line(std::string_view line);
  void on_notification(const std::string& method, const protocol::Json& params);
  void on_initialized(const protocol::Json& response);
  void list_tools(std::optional<protocol::Json> cursor, int page,
                  std::shared_ptr<std::vector<ServerTool>> so_far);
  void finish_listing(std::vector<ServerTool> tools);
  void accept_tools(const protocol::Json& list, std::vector<ServerTool>& into) const;
  void on_exit(int status);
  void on_stderr(std::string_view bytes);
  void settle_exit();
  void end_call(std::int64_t id, session::ToolResult result);
  void cancel_call(std::int64_t id, const std::string& reason,
                   std::optional<session::ToolResult> result);
  void end_all_calls(const std::string& text);
  std::vector<std::int64_t> call_ids() const;
  void post_done(session::Tool::Done done, session::ToolResult result);
  void begin_stop();
  void kill_step(int step);
  void maybe_gone();

  session::Scheduler& scheduler_;
  Spawner spawner_;
  ServerConfig config_;
  Options options_;
  std::function<void()> changed_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

  Status status_ = Status::starting;
  std::string error_;
  std::vector<ServerTool> tools_;
  std::optional<protocol::Json> server_info_;

  std::unique_ptr<ServerProcess> process_;
  std::unique_ptr<protocol::JsonRpcPeer> peer_;
  protocol::LineReader lines_{kMaxMessageBytes};
  std::string stderr_partial_;
  std::string last_stderr_;
  bool initialized_sent_ = false;
  bool listing_ = false;
  bool relist_ = false;
  bool stdout_ended_ = false;
  bool stderr_ended_ = false;
  std::optional<int> exit_status_;
  bool stopping_ = false;  // stop() or an internal stop: the exit is expected
  bool start_queued_ = false;
  std::vector<std::function<void()>> gone_;
  bool input_overflow_ = false;  // its unread input passed the limit; failing it
  std::uint64_t tools_version_ = 0;
  std::unique_ptr<session::Timer> startup_timer_;
  std::unique_ptr<session::Timer> stop_timer_;
  std::unique_ptr<session::Timer> grace_timer_;
  std::map<std::int64_t, PendingCall> calls_;
  bool change_posted_ = false;
  std::uint64_t epoch_ = 0;  // one per start: callbacks of an older process are dropped
};

}  // namespace rebound::mcp
