#pragma once
// ACP mode's gate around a session's tool calls (acp.md sections 7.3 and 7.4), once the
// permission policy's preflight allowed them: each is shown in_progress as it starts; read,
// write and edit go through the client's
// fs/read_text_file and fs/write_text_file when it offers them; an edit or write keeps the file
// before and after it for the diff. Local files are read and written through the tools' file
// layer (regular files only, non-blocking, bounded, on a worker thread, in the write queue),
// never on the event loop. The tools themselves do not know. Event loop only.

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "protocol/json.h"
#include "protocol/jsonrpc_peer.h"
#include "server/acp/acp_session.h"
#include "session/scheduler.h"
#include "session/tool.h"

namespace rebound::tools {
class FileTools;
}

namespace rebound::server::acp {

/// What the client said it can do (section 3).
struct ClientCaps {
  bool fs_read = false, fs_write = false, notices = false, compaction_updates = false;
};

class ToolGate;

/// A session's MCP tools as acp mode runs them: through the gate like the built-in ones.
class GatedMcpTools : public session::DynamicTools {
 public:
  GatedMcpTools(ToolGate& gate, session::SessionSlot slot) : gate_(gate), slot_(slot) {}
  /// What is offered besides the built-in tools (the MCP servers', then the extensions').
  void set_inner(session::DynamicTools* inner) { inner_ = inner; }
  std::unique_ptr<session::Waiting> when_settled(std::function<void()> settled) override;
  std::vector<std::shared_ptr<session::Tool>> offered(std::size_t room) override;

 private:
  ToolGate& gate_;
  session::SessionSlot slot_;
  session::DynamicTools* inner_ = nullptr;
};

class ToolGate {
 public:
  struct Env {
    session::Scheduler& scheduler;
    tools::FileTools* files;  // local workspace files; none: unreadable, not writable
    const ClientCaps& caps;
    std::function<OpenSession*(session::SessionSlot)> find;
    std::function<void(const std::string& method, protocol::Json params,
                       protocol::JsonRpcPeer::Answer answer)>
        request_client;
    std::function<void(OpenSession&, protocol::Json body)> update;
  };
  explicit ToolGate(Env env);
  ~ToolGate();

  /// `base` as the session in `slot` runs it (the registry must outlive the session).
  std::unique_ptr<session::ToolRegistry> gate_tools(const session::ToolRegistry& base,
                                                    session::SessionSlot slot);

 private:
  friend class GatedMcpTools;
  struct CallState;
  class GatedTool;
  class GatedCall;
  using Call = std::shared_ptr<CallState>;

  std::unique_ptr<session::ToolCall> start_call(session::SessionSlot slot, session::Tool& inner,
                                                const protocol::Json& args,
                                                const session::ToolContext& context,
                                                session::Tool::Progress progress,
                                                session::Tool::Done done);
  void prepare(const Call& call);  // the file before an edit or write, then run
  void run(const Call& call);
  void run_locally(const Call& call);
  void finish(const Call& call, session::ToolResult result);
  ToolState* state_of(const Call& call);
  /// A file request on behalf of `call`; `answer` runs unless the call ended meanwhile.
  void call_client(const Call& call, const char* method, const std::string& path,
                   const std::string* content, protocol::JsonRpcPeer::Answer answer);
  void client_read(const Call& call);
  void client_write(const Call& call);
  void client_edit(const Call& call);
  void edit_text(const Call& call, const std::string& original);
  /// Local files through the tools' file layer; `done` runs unless the call ended meanwhile.
  void read_local(const Call& call, const std::string& path,
                  std::function<void(std::optional<std::string>, int)> done);
  void write_local(const Call& call, const std::string& path, std::string content,
                   std::function<void(int)> done);
  static bool take_answer(const std::weak_ptr<bool>& alive, const Call& call);

  Env env_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace rebound::server::acp
