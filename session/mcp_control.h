#pragma once
// A set of MCP servers as the front ends see it (mcp.md section 8): the tools they offer (a
// DynamicTools), their states, a restart, and the life of their processes. The MCP room's
// McpManager implements it; the application makes one and hands it over, so no front end
// includes the MCP room. Event loop only.

#include <functional>
#include <optional>
#include <string>

#include "protocol/json.h"
#include "session/tool.h"

namespace rebound::session {

class McpControl : public DynamicTools {
 public:
  ~McpControl() override = default;
  /// Starts every server in the background.
  virtual void start_all() = 0;
  /// `fn` runs once nothing is starting or re-listing (now, when that is so already).
  virtual void after_settled(std::function<void()> fn) = 0;
  /// `{"servers":[McpServer…]}`.
  virtual protocol::Json servers_json() const = 0;
  /// A server's status changed: `update` gets the mcp_server_update event's fields.
  virtual void on_update(std::function<void(const protocol::Json& fields)> update) = 0;
  /// restart_mcp_server: an error text, or none when `done` will get the McpServer once the
  /// server is ready or failed again.
  virtual std::optional<std::string> restart(const std::string& name,
                                             std::function<void(protocol::Json server)> done) = 0;
  /// Stops every server at once; `gone` runs once no process of any is left.
  virtual void stop_all(std::function<void()> gone) = 0;
  virtual bool any_running() const = 0;
};

}  // namespace rebound::session
