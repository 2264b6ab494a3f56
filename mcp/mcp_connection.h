#pragma once
// One MCP server over the stdio transport (mcp.md sections 2, 3, 5 and 7): its process, the
// handshake, paginated tools/list and list_changed re-lists, tools/call with progress, timeout
// and cancellation, and the failure texts. The process, its stderr, exit texts and stop sequence
// are a peer::PeerChild's (from a Spawner: the server's ChildProcess in production, a fake in
// unit tests); time from the session's Scheduler. Event loop only.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mcp/mcp_config.h"
#include "peer/peer_child.h"
#include "protocol/json.h"
#include "protocol/jsonrpc_peer.h"
#include "session/scheduler.h"
#include "session/tool.h"

namespace rebound::mcp {

/// The server process behind its seam (peer/peer_process.h).
using ServerProcess = peer::PeerProcess;
using SpawnSpec = peer::SpawnSpec;
using Spawner = peer::Spawner;

enum class Status { starting, ready, failed, disabled };
std::string_view status_name(Status status);

/// A tool as its server lists it, once accepted (section 4.2).
struct ServerTool {
  std::string name;  // as the server names it
  std::string description;
  protocol::Json parameters;
  bool read_only = false;
};

using peer::kMaxMessageBytes;
using peer::kStderrGraceMs;
using peer::kStopStepMs;
inline constexpr int kMaxListPages = 100;

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
  bool running() const { return child_.running(); }

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
  void on_line(std::string_view line);
  void on_notification(const std::string& method, const protocol::Json& params);
  void on_initialized(const protocol::Json& response);
  void list_tools(std::optional<protocol::Json> cursor, int page,
                  std::shared_ptr<std::vector<ServerTool>> so_far);
  void finish_listing(std::vector<ServerTool> tools);
  void accept_tools(const protocol::Json& list, std::vector<ServerTool>& into) const;
  void end_call(std::int64_t id, session::ToolResult result);
  void cancel_call(std::int64_t id, const std::string& reason,
                   std::optional<session::ToolResult> result);
  void end_all_calls(const std::string& text);
  std::vector<std::int64_t> call_ids() const;
  void post_done(session::Tool::Done done, session::ToolResult result);

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

  peer::PeerChild child_;
  std::unique_ptr<protocol::JsonRpcPeer> peer_;
  bool initialized_sent_ = false;
  bool listing_ = false;
  bool relist_ = false;
  bool start_queued_ = false;
  std::uint64_t tools_version_ = 0;
  std::unique_ptr<session::Timer> startup_timer_;
  std::map<std::int64_t, PendingCall> calls_;
  bool change_posted_ = false;
};

}  // namespace rebound::mcp
