#pragma once
// The rpc mode (protocol.md): the pi dialect on stdio, driving one session through the command
// table, its events through the connection's event output, and the process's MCP servers
// (mcp.md section 8: started once the answer to a command already waiting is written, status
// changes as events once the first command was read). Built by the application, which hands it
// the way to make its session. Event loop only.

#include <functional>
#include <memory>
#include <string_view>

#include "server/events/event_output.h"
#include "server/io/front_end.h"
#include "server/io/stdio_transport.h"
#include "server/pi/rpc_dialogs.h"
#include "server/pi/rpc_dispatcher.h"
#include "session/scheduler.h"
#include "session/session_host.h"
#include "session/session_services.h"

namespace rebound::server {

using MakeRpcSession = MakeSession;

struct RpcFrontEndDeps {
  StdoutWriter& writer;
  EnvelopeMode envelope;
  session::Scheduler& scheduler;
  /// Makes the one session of the connection, with its events going to `events`; kept until
  /// the session is gone (what it holds may outlive the session).
  MakeRpcSession make_session;
  /// The session's MCP servers, extension processes and policy, started once the answer to a
  /// command already waiting is written and stopped at shutdown.
  std::shared_ptr<session::SessionServices> services;
  /// Set once the first command line was read: events that do not come from a command (an
  /// MCP server's, a start-up hook's failure) are written only from then on.
  std::shared_ptr<bool> command_seen;
};

class RpcFrontEnd : public FrontEnd {
 public:
  explicit RpcFrontEnd(RpcFrontEndDeps deps);
  ~RpcFrontEnd() override;

  /// The MCP servers start once the answer to a command already waiting on stdin is written.
  void start() override;
  void handle_line(std::string_view line) override;
  void handle_too_long(std::size_t max_line_bytes) override;
  void shutdown() override;
  bool busy() const override;
  void when_idle(std::function<void()> idle) override;
  bool stops_processes() const override;
  /// The connection's dialogs (extension_ui_request lines).
  RpcDialogs& dialogs() { return dialogs_; }

 private:
  void write(const protocol::Json& line);
  session::McpControl* mcp() const { return services_ ? services_->mcp() : nullptr; }

  StdoutWriter& writer_;
  session::Scheduler& scheduler_;
  std::shared_ptr<session::SessionServices> services_;  // outlive the session (its tools)
  EventOutput events_;
  MakeRpcSession make_session_;
  session::SessionHost host_;
  session::SessionSlot slot_ = 0;
  RpcDialogs dialogs_;
  std::unique_ptr<RpcDispatcher> dispatcher_;
  IdleWaiter idle_;
  std::shared_ptr<bool> command_seen_;  // shared with the wiring (RpcFrontEndDeps)
  bool shutting_down_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace rebound::server
