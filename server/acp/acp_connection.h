#pragma once
// ACP mode (acp.md): one JSON-RPC 2.0 connection over stdio with several agent sessions. A line
// is read by protocol's JSON-RPC shape checks and worded as section 10 says; a request runs
// through the method table (every request answered exactly once by an AcpReply), a response
// goes to the JsonRpcPeer that sent Rebound's request. Sessions live in a SessionHost; the
// sessions' typed events become `session/update` and `_rebound/*` notifications while a prompt
// of their session is pending (acp_translate.h); a prompt is answered once its session is idle
// again (retries, compaction and the continued run included). Tool calls pass the ToolGate.
// Event loop only.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"
#include "protocol/jsonrpc_peer.h"
#include "server/acp/acp_gate.h"
#include "server/acp/acp_methods.h"
#include "server/acp/acp_session.h"
#include "server/io/front_end.h"
#include "server/pi/command_table.h"
#include "server/pi/reply.h"
#include "session/agent_session.h"
#include "session/error.h"
#include "session/event_sink.h"
#include "session/policy_host.h"
#include "session/scheduler.h"
#include "session/session_host.h"
#include "session/session_services.h"
#include "session/tool.h"

namespace rebound::tools {
class FileTools;
}

namespace rebound::server {

struct AcpOptions {
  bool no_session = false;  // --no-session: no loadSession, no resume
  std::string version;      // agentInfo.version
};

/// A session the factory made, with whatever it depends on (settings, storage), which must
/// outlive it.
struct AcpSessionParts {
  std::shared_ptr<void> keep;  // destroyed after `session`
  /// Its MCP servers (mcp.md section 3.4), extension processes (extensions.md section 9) and
  /// policy, not started yet.
  std::shared_ptr<session::SessionServices> services;
  std::unique_ptr<session::AgentSession> session;
  /// What it offers besides the built-in tools when extensions offer tools too (the MCP servers'
  /// and then the extensions', owned by `keep`); none: the MCP servers'.
  session::DynamicTools* offered = nullptr;
  /// Its permission policy (policy.md section 7: modes, session/set_mode, _rebound/get_policy);
  /// none: every call runs, the mode is bypassPermissions.
  std::shared_ptr<session::PolicyControl> policy = nullptr;
};

/// Builds a session whose tools and files live in `cwd` (absolute, an existing directory), its
/// events going to `events` with `slot` and its tool calls to `tools`: a new one, or with
/// `load` the session of that id from its file in the cwd's session directory (session/load
/// and session/resume). `mcp_servers` are the request's `mcpServers` (an array, maybe empty)
/// and `mcp_tools` what the session offers of its MCP servers' tools (the gate around the
/// parts' manager). An error is answered by its kind (acp::acp_error).
/// A session file read for session/load or session/resume: its path and its parsed, restored
/// content.
struct AcpLoadedFile {
  std::string file;
  session::LoadedSession loaded;
};

using AcpSessionFactory = std::function<session::Result<AcpSessionParts>(
    const std::string& cwd, session::SessionSlot slot, session::EventSink& events,
    session::ToolRegistry& tools, std::optional<AcpLoadedFile> load,
    const protocol::Json& mcp_servers, session::DynamicTools* mcp_tools,
    session::DialogHost* dialogs)>;

/// Reads the file of session `id` in `cwd`'s session directory off the event loop; `done` runs
/// on the loop with it or the error (not_found: no such session). Returns what cancels the
/// read (`done` then gets an error at once).
using AcpSessionLoader =
    std::function<std::function<void()>(const std::string& cwd, const std::string& id,
                                        std::function<void(session::Result<AcpLoadedFile>)> done)>;

class AcpConnection : public FrontEnd, public session::EventSink {
 public:
  /// `base_tools` are the process's tools; each session runs them through acp mode's gate
  /// (permissions, files through the client). `files` reads and writes local workspace files
  /// for the gate (none: they count as unreadable). `scheduler` defers completions.
  AcpConnection(AcpOptions options, AcpSessionFactory factory, AcpSessionLoader loader,
                JsonSink out, const session::ToolRegistry& base_tools,
                session::Scheduler& scheduler, tools::FileTools* files = nullptr);
  ~AcpConnection() override;

  void handle_line(std::string_view line) override;
  void handle_too_long(std::size_t max_line_bytes) override;
  /// End of input or a signal (section 13): every session is cancelled, every pending prompt
  /// answered `cancelled`.
  void shutdown() override;
  /// A session still has a bash command or an MCP server process that must end before the
  /// process exits.
  bool busy() const override;
  void when_idle(std::function<void()> idle) override;
  /// Its sessions may have MCP servers to stop.
  bool stops_processes() const override { return true; }

  void on_event(const session::Event& event) override;

 private:
  using OpenSession = acp::OpenSession;
  enum class OpenKind { create, load, resume };

  // The wire.
  void error_line(int code, std::string message);
  void notify(std::string_view method, protocol::Json params);
  void update(OpenSession& s, protocol::Json body);
  void handle_message(protocol::Json message);
  void run_method(const std::string& method, std::optional<protocol::Json> id,
                  const protocol::Json& params);

  // Methods (acp_methods.cpp registers them).
  void add_methods();
  void add_rebound_methods();
  void initialize(acp::InitializeParams params, acp::AcpReply reply);
  void open_session(acp::OpenParams params, OpenKind kind, acp::AcpReply reply);
  /// open_session's second half, once a loaded session's file is read.
  void open_loaded(acp::OpenParams params, OpenKind kind, acp::AcpReply reply,
                   std::optional<AcpLoadedFile> loaded);
  void prompt(acp::SessionParams params, acp::AcpReply reply);
  void cancel(acp::SessionParams params);
  void cancel_request(const protocol::Json& params);
  void close(acp::SessionParams params, acp::AcpReply reply);
  void set_mode(acp::SessionParams params, acp::AcpReply reply);
  /// The session's `modes` (policy.md section 7).
  protocol::Json modes_of(const OpenSession& s) const;
  /// The open session named `id`, or null.
  OpenSession* find(const std::string& id);
  /// The open session named `id`; else null, `reply` failed with section 5's error.
  OpenSession* require(const std::string& id, acp::AcpReply& reply);
  OpenSession* find(session::SessionSlot slot);

  /// The one available_commands_update of sessions.md section 15, once the session's commands
  /// are known, when it has any.
  void advertise_commands(session::SessionSlot slot);

  // Turns.
  void start_turn(OpenSession& s, acp::AcpReply reply, session::UserInput input);
  /// A prompt waiting for the turn before it to end is answered `cancelled` and dropped.
  void drop_next(OpenSession& s);
  void cancel_turn(OpenSession& s);
  void finish_turn(session::SessionSlot slot, std::uint64_t serial);
  /// The prompt's run (no slash command took it).
  void run_turn(OpenSession& s, session::UserInput input);
  /// The prompt was not taken (a UserPromptSubmit hook refused it, an abort, a busy session).
  void prompt_refused(OpenSession& s, const session::Error& error);
  /// An extension's slash command answered the prompt (`status` its outcome).
  void command_ran(OpenSession& s, session::Status status);
  /// A turn was answered: what waited for the session to be idle, then the next prompt.
  void after_turn(session::SessionSlot slot);
  void enable_retry_control();
  void stop_services(std::shared_ptr<session::SessionServices> services, const std::string& reason);

  // Events of one session, translated (acp_events.cpp).
  /// An extension_error or notice of session `s`: shown or logged; false for other events.
  bool on_extension_event(OpenSession& s, const session::Event& event);
  void on_message_update(OpenSession& s, const session::ev::MessageUpdate& e);
  void on_message_end(OpenSession& s, const session::ev::MessageEnd& e);
  void on_tool_start(OpenSession& s, const session::ev::ToolExecutionStart& e);
  void on_tool_end(OpenSession& s, const session::ev::ToolExecutionEnd& e);
  void on_retry(OpenSession& s, const session::Event& event);
  void on_compaction(OpenSession& s, const session::Event& event);

  AcpOptions options_;
  AcpSessionFactory factory_;
  AcpSessionLoader loader_;
  // Sessions whose file is being read (session/load, session/resume): the requests that name
  // them wait here until the load is answered (acp.md section 13), then run in order.
  struct Waiting {
    std::string method;
    std::optional<protocol::Json> id;
    protocol::Json params;
  };
  struct Loading {
    std::function<void()> cancel;
    std::vector<Waiting> waiting;
  };
  std::map<std::string, Loading> loading_;
  JsonSink out_;
  const session::ToolRegistry& base_tools_;
  session::Scheduler& scheduler_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  acp::ClientCaps caps_;
  protocol::JsonRpcPeer client_;  // Rebound's requests to the client, ids from 0
  acp::AcpMethodTable methods_;
  CommandTable commands_;  // the rpc commands behind `_rebound/*`
  std::map<session::SessionSlot, std::unique_ptr<OpenSession>> open_;
  std::map<std::string, session::SessionSlot, std::less<>> by_id_;
  acp::ToolGate gate_;
  session::SessionHost host_;  // after what its sessions use: destroyed first
  std::uint64_t next_serial_ = 1;
  std::uint64_t next_message_ = 1;
  bool shutting_down_ = false;
  // MCP sets of closed sessions, until their processes are gone (mcp.md section 3.4).
  std::vector<std::shared_ptr<session::SessionServices>> stopping_;
  bool retry_control_ = false;
  IdleWaiter idle_;
};

}  // namespace rebound::server
