#pragma once
// The commands a front end answers: one registration per command (its wire name, its argument
// reader from protocol/commands.h, its handler). The dispatcher looks a command up here; a name
// that is not registered gets the one "Unknown command" error. Adding a command is one add()
// here (rpc_commands.cpp) plus its client helper. Event loop only.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "protocol/commands.h"
#include "server/pi/reply.h"
#include "session/extension_host.h"
#include "session/policy_host.h"

namespace rebound::session {
class AgentSession;
class McpControl;
}  // namespace rebound::session

namespace rebound::server {

class EventOutput;
class RpcDialogs;

/// What a handler works on: the session the front end drives, the connection's event output
/// (set_event_filter) and the MCP servers (get_mcp_servers, restart_mcp_server).
struct CommandContext {
  session::AgentSession& session;
  EventOutput* events;                 // none: the front end has no rpc event output (ACP)
  session::McpControl* mcp = nullptr;  // the process's MCP servers (none: no server configured)
  bool persist_settings = true;        // set_auto_retry writes settings.json (not in ACP)
  /// The extension processes (get_extensions, restart_extension; none: nothing configured) and
  /// the connection's dialogs (extension_ui_response; none: no rpc client can answer).
  session::ExtensionControl* extensions = nullptr;
  RpcDialogs* dialogs = nullptr;
  session::PolicyControl* policy = nullptr;  // get_policy, set_permission_mode (none: not rpc)
};

class CommandTable {
 public:
  /// Runs a looked-up command: reads its arguments (an invalid field answers it) and hands
  /// them with the Reply to the handler, which answers now or later, exactly once.
  using Run = std::function<void(CommandContext&, const protocol::CommandEnvelope&, Reply)>;

  template <typename Args>
  void add(std::string name, Args (*read)(const protocol::FieldReader&),
           std::function<void(CommandContext&, Args, Reply)> handle) {
    entries_[std::move(name)] = [read, handle = std::move(handle)](
                                    CommandContext& context,
                                    const protocol::CommandEnvelope& command, Reply reply) {
      auto args = protocol::read_command_args(read, command);
      if (auto* error = std::get_if<protocol::ProtocolError>(&args)) {
        reply.fail(error->field
                       ? session::field_error(error->field->path, error->field->kind)
                       : session::Error{session::ErrorKind::invalid_argument, error->message});
        return;
      }
      handle(context, std::move(std::get<Args>(args)), std::move(reply));
    };
  }
  /// A command without arguments (extra fields are ignored, as for every command).
  void add(std::string name, std::function<void(CommandContext&, Reply)> handle) {
    entries_[std::move(name)] = [handle = std::move(handle)](
                                    CommandContext& context, const protocol::CommandEnvelope&,
                                    Reply reply) { handle(context, std::move(reply)); };
  }

  /// A command whose handler reads the whole object itself (set_retry_policy: its fields take
  /// `null` and are validated all or nothing).
  void add_object(std::string name,
                  std::function<void(CommandContext&, const protocol::Json&, Reply)> handle) {
    entries_[std::move(name)] = [handle = std::move(handle)](
                                    CommandContext& context,
                                    const protocol::CommandEnvelope& command, Reply reply) {
      handle(context, command.object, std::move(reply));
    };
  }

  const Run* find(std::string_view name) const {
    const auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, run] : entries_)
      out.push_back(name);
    return out;
  }

 private:
  std::map<std::string, Run, std::less<>> entries_;
};

/// The rpc mode's commands (protocol.md section 2).
CommandTable rpc_command_table();

}  // namespace rebound::server
