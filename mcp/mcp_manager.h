#pragma once
// The MCP servers of one session (rpc mode: of the process; acp mode: of one ACP session), in
// configuration order (mcp.md sections 1.1, 3 and 8): starts them all at once, offers their
// tools to the session's LLM requests under the names of section 4.1 (session::DynamicTools),
// waits for them before a request, reports status changes (`mcp_server_update`), restarts one
// on request and stops them all. Event loop only.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mcp/mcp_config.h"
#include "mcp/mcp_connection.h"
#include "protocol/json.h"
#include "session/mcp_control.h"
#include "session/scheduler.h"
#include "session/tool.h"
#include "session/wait_board.h"

namespace rebound::mcp {

class McpManager : public session::McpControl {
 public:
  /// `builtin_names`: the tools offered before these (taken names, section 4.1).
  McpManager(session::Scheduler& scheduler, Spawner spawner, std::vector<ServerConfig> servers,
             McpConnection::Options options, std::vector<std::string> builtin_names);
  ~McpManager() override;

  /// Starts every server in the background (one per loop turn).
  void start_all() override;
  bool empty() const { return servers_.empty(); }

  std::unique_ptr<session::Waiting> when_settled(std::function<void()> settled) override;
  std::vector<std::shared_ptr<session::Tool>> offered(std::size_t room) override;
  /// `fn` runs once nothing is starting or re-listing (now, when that is so already).
  void after_settled(std::function<void()> fn) override;

  /// `{"servers":[McpServer…]}` (section 8).
  protocol::Json servers_json() const override;
  /// A server's status changed: `update` gets the mcp_server_update event's fields
  /// (name, status, tools, error?).
  void on_update(std::function<void(const protocol::Json& fields)> update) override {
    update_ = std::move(update);
  }
  /// restart_mcp_server: an error text, or none when `done` will get the McpServer once the
  /// server is ready or failed again.
  std::optional<std::string> restart(const std::string& name,
                                     std::function<void(protocol::Json server)> done) override;
  /// Stops every server at once; `gone` runs once no process of any is left.
  void stop_all(std::function<void()> gone) override;
  bool any_running() const override;
  /// Where a request's wait for servers still starting is marked (one-shot's heartbeat).
  void set_wait_board(std::shared_ptr<session::WaitBoard> board) { board_ = std::move(board); }

 private:
  struct Server {
    std::unique_ptr<McpConnection> connection;
    std::vector<std::string> offered_names;  // of its tools, in its list order ("" = skipped)
    protocol::Json last_update;              // the last mcp_server_update fields sent
  };
  class ToolAdapter;
  class Wait;

  void on_changed();
  void rename_tools();
  // What the offered names were computed from: each server's readiness and tools version.
  std::vector<std::pair<bool, std::uint64_t>> naming_basis() const;
  std::vector<std::pair<bool, std::uint64_t>> named_from_;
  protocol::Json server_json(const Server& server, bool with_info) const;
  bool settled() const;
  std::uint64_t add_waiter(std::function<void()> settled);
  std::int64_t longest_startup_ms() const;

  session::Scheduler& scheduler_;
  McpConnection::Options options_;
  std::vector<std::string> builtin_names_;
  std::vector<Server> servers_;
  std::vector<std::shared_ptr<session::Tool>> tools_;  // offered, in order
  std::function<void(const protocol::Json&)> update_;
  struct Waiter {
    std::uint64_t id;
    std::function<void()> settled;
    std::unique_ptr<session::Timer> limit;
    session::WaitBoard::Mark mark;  // a request's wait (when_settled)
  };
  std::vector<Waiter> waiters_;
  std::shared_ptr<session::WaitBoard> board_;
  std::uint64_t next_waiter_ = 1;
  struct Restart {
    McpConnection* connection;
    std::function<void(protocol::Json)> done;
    bool started = false;
  };
  std::vector<Restart> restarts_;
  bool stopping_all_ = false;  // stop_all() came: nothing starts any more
  std::size_t last_over_limit_ = 0;
  std::vector<std::string> last_names_;  // the set when the limit was last logged
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace rebound::mcp
