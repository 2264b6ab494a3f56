#pragma once
// The services of one session as a front end holds them: its MCP servers, its extension
// processes (with the hooks they list) and its permission policy. The workspace room builds and
// owns them; a front end starts them, asks whether any of their processes still run and stops
// them, always in the one order this interface gives. Event loop only.

#include <functional>
#include <string>

#include "session/extension_host.h"
#include "session/mcp_control.h"
#include "session/policy_host.h"

namespace rebound::session {

class SessionServices {
 public:
  virtual ~SessionServices() = default;
  /// The MCP servers (none configured: null).
  virtual McpControl* mcp() = 0;
  /// The extension processes and the hooks get_extensions lists (none of either: null).
  virtual ExtensionControl* extensions() = 0;
  /// The permission policy (none: every call runs).
  virtual PolicyControl* policy() = 0;
  /// Starts the extension processes, then the MCP servers (each in the background).
  virtual void start() = 0;
  /// Stops the extension processes (their `session_shutdown` says `reason`) and the MCP servers,
  /// all at once; `gone` runs once, on the loop, when no process of either is left (at once when
  /// none ran).
  virtual void stop(const std::string& reason, std::function<void()> gone) = 0;
  /// A process of an MCP server or an extension still runs.
  virtual bool running() const = 0;
};

}  // namespace rebound::session
