#pragma once
// ACP mode (acp.md): one JSON-RPC 2.0 connection over stdio with several agent sessions. Lines
// from the client become session calls; the sessions' typed events become `session/update` and
// `_rebound/*` notifications while a prompt of their session is pending; a prompt is answered
// once its session is idle again (retries, compaction and the continued run included). Every
// request gets exactly one response. Event loop only.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "mcp/mcp_manager.h"
#include "protocol/json.h"
#include "server/acp/acp_updates.h"
#include "server/io/front_end.h"
#include "server/pi/reply.h"
#include "session/agent_session.h"
#include "session/event_sink.h"
#include "session/scheduler.h"
#include "session/tool.h"

namespace rebound::server {

struct AcpOptions {
  bool no_session = false;       // --no-session: no loadSession, no resume
  bool ask_permissions = false;  // --acp-permissions ask
  std::string version;           // agentInfo.version
};

/// A session the factory made, with whatever it depends on (settings, storage), which must
/// outlive it.
struct AcpSessionParts {
  std::shared_ptr<void> keep;            // destroyed after `session`
  std::unique_ptr<mcp::McpManager> mcp;  // the session's MCP servers (mcp.md section 3.4)
  std::unique_ptr<session::AgentSession> session;
};

/// Builds a session whose tools and files live in `cwd` (absolute, an existing directory), its
/// events going to `events` with `slot` and its tool calls to `tools`: a new one, or with
/// `load` the session of that id from its file in the cwd's session directory (session/load
/// and session/resume).
/// `mcp_servers` are the request's `mcpServers` (an array, maybe empty) and `mcp_tools` what the
/// session offers of its MCP servers' tools (the gate around the parts' manager).
/// An error is answered by its kind (not_found: -32002 Resource not found, otherwise -32603).
using AcpSessionFactory = std::function<session::Result<AcpSessionParts>(
    const std::string& cwd, session::SessionSlot slot, session::EventSink& events,
    session::ToolRegistry& tools, const std::optional<std::string>& load,
    const protocol::Json& mcp_servers, session::DynamicTools* mcp_tools)>;

class AcpConnection : public FrontEnd, public session::EventSink {
 public:
  /// `base_tools` are the process's tools; each session runs them through acp mode's gate
  /// (permissions, files through the client). `scheduler` defers completions.
  AcpConnection(AcpOptions options, AcpSessionFactory factory, JsonSink out,
                const session::ToolRegistry& base_tools, session::Scheduler& scheduler);
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
  struct Turn {
    protocol::Json id;  // the session/prompt request's id
    std::uint64_t serial = 0;
    bool cancelled = false;
    std::int64_t retries = 0;
    bool wrote_text = false;
    std::optional<protocol::StopReason> last;
    std::optional<std::string> last_error;
    std::optional<std::string> compaction_error;
    bool overflow_compaction = false;
  };
  struct NextPrompt {
    protocol::Json id;
    session::UserInput input;
  };
  struct ToolState {
    acp::ToolCallInfo info;
    std::optional<std::string> before;  // edit/write: the file before the call (none: absent)
    std::optional<std::string> after;   // what a call through the client wrote
    bool asks = false;                  // in_progress waits for the permission
  };
  struct CallState;
  class GatedTool;
  class GatedCall;
  class GatedMcpTools;
  using ClientAnswer = std::function<void(const protocol::Json& response)>;
  struct Open {
    std::string id;
    std::string cwd;
    session::SessionSlot slot = 0;
    AcpSessionParts parts;
    std::optional<Turn> turn;
    std::optional<NextPrompt> next;
    std::vector<std::function<void()>> when_idle;  // session/close waiting for the turn
    std::map<std::string, ToolState> tools;
    std::string message_id;
    std::string compaction_id;
    bool closing = false;
    std::unique_ptr<session::ToolRegistry> gated_tools;  // this session's tools, as acp runs them
    std::unique_ptr<GatedMcpTools> gated_mcp;            // its MCP tools, as acp runs them
    std::map<std::string, bool, std::less<>> mcp_read_only;   // offered MCP tools: readOnlyHint
    std::map<std::string, bool, std::less<>> always_allowed;  // by tool name
  };

  // The wire.
  void respond(const protocol::Json& id, protocol::Json result);
  void respond_error(std::optional<protocol::Json> id, int code, std::string message);
  void notify(std::string_view method, protocol::Json params);
  void update(Open& s, protocol::Json update);
  void session_notification(Open& s, std::string_view method, protocol::Json event);

  void handle_request(const std::string& method, std::optional<protocol::Json> id,
                      const protocol::Json& params);
  void handle_response(const protocol::Json& message);

  // Methods (id is none for a notification).
  void initialize(const protocol::Json& id, const protocol::Json& params);
  enum class OpenKind { create, load, resume };
  /// session/new, session/load and session/resume.
  void open_session(const protocol::Json& id, const protocol::Json& params, OpenKind kind);
  /// session/load: the conversation of a session just opened, as updates (section 4).
  void replay(Open& s);
  void prompt(const protocol::Json& id, const protocol::Json& params);
  void cancel(const protocol::Json& params);
  void cancel_request(const protocol::Json& params);
  void close(const protocol::Json& id, const protocol::Json& params);
  void rebound_request(const std::string& method, const std::optional<protocol::Json>& id,
                       const protocol::Json& params);

  /// The open session named by params.sessionId; otherwise answers the error itself (`id`)
  /// and returns null.
  Open* session_param(const std::optional<protocol::Json>& id, const protocol::Json& params,
                      int unknown_code, const std::string& unknown_prefix);
  void start_turn(Open& s, protocol::Json id, session::UserInput input);
  /// A prompt waiting for the turn before it to end is answered `cancelled` and dropped.
  void drop_next(Open& s);
  void cancel_turn(Open& s);
  void finish_turn(session::SessionSlot slot, std::uint64_t serial);
  void enable_retry_control();

  // Tool calls (sections 7.3 and 7.4).
  std::unique_ptr<session::ToolCall> start_call(session::SessionSlot slot, session::Tool& inner,
                                                const protocol::Json& args,
                                                const session::ToolContext& context,
                                                session::Tool::Progress progress,
                                                session::Tool::Done done);
  bool asks_permission(const Open& s, std::string_view tool) const;
  void stop_mcp(std::unique_ptr<mcp::McpManager> manager);
  void run_call(const std::shared_ptr<CallState>& call);
  /// A file request (`content` for a write) on behalf of `call`; `answer` runs unless the call
  /// ended meanwhile.
  void call_client(const std::shared_ptr<CallState>& call, const char* method,
                   const std::string& path, const std::string* content, ClientAnswer answer);
  void client_read(const std::shared_ptr<CallState>& call);
  void client_edit(const std::shared_ptr<CallState>& call);
  void client_write(const std::shared_ptr<CallState>& call);
  void finish_call(const std::shared_ptr<CallState>& call, session::ToolResult result);
  ToolState* tool_state(session::SessionSlot slot, const std::string& call_id);
  void request_client(const std::string& method, protocol::Json params, ClientAnswer answer);

  // Events of one session, translated (section 7).
  void on_message_update(Open& s, const session::ev::MessageUpdate& e);
  void on_message_end(Open& s, const session::ev::MessageEnd& e);
  void on_tool_start(Open& s, const session::ev::ToolExecutionStart& e);
  void on_tool_update(Open& s, const session::ev::ToolExecutionUpdate& e);
  void on_tool_end(Open& s, const session::ev::ToolExecutionEnd& e);
  void on_retry(Open& s, const session::Event& event);
  void on_compaction(Open& s, const session::Event& event);

  AcpOptions options_;
  AcpSessionFactory factory_;
  JsonSink out_;
  const session::ToolRegistry& base_tools_;
  session::Scheduler& scheduler_;
  std::map<std::int64_t, ClientAnswer> client_requests_;  // by the id Rebound sent
  std::int64_t next_client_id_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::map<session::SessionSlot, std::unique_ptr<Open>> sessions_;
  std::map<std::string, session::SessionSlot, std::less<>> by_id_;
  session::SessionSlot next_slot_ = 1;
  std::uint64_t next_serial_ = 1;
  std::uint64_t next_message_ = 1;
  bool shutting_down_ = false;
  // MCP sets of closed sessions, until their processes are gone (mcp.md section 3.4).
  std::vector<std::unique_ptr<mcp::McpManager>> stopping_mcp_;
  bool retry_control_ = false;
  IdleWaiter idle_;
  // Client capabilities (section 3).
  bool fs_read_ = false, fs_write_ = false, notices_ = false, compaction_updates_ = false;
};

}  // namespace rebound::server
