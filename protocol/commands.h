#pragma once
// The rpc commands' envelope and arguments (protocol.md sections 2 and 4): a line becomes an
// envelope (id, type, the object) or a parse error; each command's argument reader turns the
// object into its typed arguments or an error naming the field path. Which commands exist is
// the server's command table (server/command_table.h), which pairs a name with its reader and
// handler. Nothing throws out of here. Pure.

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "protocol/json.h"
#include "protocol/wire_types.h"

namespace rebound::protocol {

enum class StreamingBehavior { steer, follow_up };

struct ImageContent {
  std::string data;
  std::string mime_type;
};

/// prompt, steer, follow_up.
struct MessageArgs {
  std::string message;
  std::vector<ImageContent> images;
  std::optional<StreamingBehavior> streaming_behavior;  // prompt only
};
struct NewSessionArgs {
  std::optional<std::string> parent_session;
};
struct SetModelArgs {
  std::string provider;
  std::string model_id;
};
struct ThinkingLevelArgs {
  ThinkingLevel level;
};
struct QueueModeArgs {
  QueueMode mode;
};
struct InterruptModeArgs {
  InterruptMode mode;
};
/// set_permission_mode (policy.md section 7): one of the five mode names.
struct PermissionModeArgs {
  std::string mode;
};
struct CompactArgs {
  std::optional<std::string> custom_instructions;
};
struct EnabledArgs {
  bool enabled;
};
struct BashArgs {
  std::string command;
};
struct SwitchSessionArgs {
  std::string session_path;
};
/// The session tree's commands (sessions.md section 2).
struct ForkArgs {
  std::string entry_id;
};
struct SessionNameArgs {
  std::string name;
};
struct EntriesArgs {
  std::optional<std::string> since;
};
struct ExportHtmlArgs {
  std::optional<std::string> output_path;
};
/// get_mcp_servers (mcp.md section 8).
struct McpServersArgs {
  bool wait = false;
};
/// restart_mcp_server.
struct RestartMcpServerArgs {
  std::string name;
};
/// get_extensions (extensions.md section 7.1) reads `wait` as get_mcp_servers does,
/// restart_extension `name` as restart_mcp_server does.
using ExtensionsArgs = McpServersArgs;
using RestartExtensionArgs = RestartMcpServerArgs;
/// extension_ui_response (extensions.md section 7.2).
struct UiResponseArgs {
  std::string id;
  std::optional<std::string> value;
  std::optional<bool> confirmed;
  bool cancelled = false;
};
/// set_event_filter (protocol.md section 8): the allow-list as sent (nullopt: every event).
struct EventFilterArgs {
  std::optional<std::vector<std::string>> events;
  bool delta_updates = false;
};

/// A rejected line or command, ready to become an error response.
/// A missing or mistyped field: thrown by FieldReader, caught by read_command_args only.
struct FieldError {
  std::string path;
  std::string kind;
};

struct ProtocolError {
  std::optional<Json> id;
  std::string command;                             // "parse" or the command's type
  std::string message;                             // the full error text of the response
  std::optional<FieldError> field = std::nullopt;  // a bad argument: which one, expected what
};

/// A line that is a JSON object with a string `type`.
struct CommandEnvelope {
  std::optional<Json> id;  // copied verbatim into the response
  std::string type;
  Json object;  // the whole command
};

struct ParsedEnvelope {
  std::optional<CommandEnvelope> command;
  std::optional<ProtocolError> error;
};

/// Checks a parsed JSON value: an object with a string `type` (else the parse error).
ParsedEnvelope parse_envelope(Json value);
/// Reads a raw protocol line (UTF-8, JSON, then parse_envelope).
ParsedEnvelope parse_envelope_line(std::string_view line);

/// "Unknown command: <type>", the one place that text is written.
ProtocolError unknown_command_error(std::optional<Json> id, const std::string& type);

/// Typed reads of a command object's fields; each throws FieldError naming the field.
class FieldReader {
 public:
  explicit FieldReader(const Json& object) : object_(object) {}
  const Json* find(const char* name) const;
  std::string string(const char* name) const;
  std::optional<std::string> optional_string(const char* name) const;
  bool boolean(const char* name) const;
  std::vector<ImageContent> images() const;
  template <typename E, typename Parse>
  E one_of(const char* name, Parse parse, std::string_view choices) const {
    const Json* v = find(name);
    std::optional<E> value;
    if (v && v->is_string()) value = parse(v->template get_ref<const std::string&>());
    if (!value) throw FieldError{name, "one of " + std::string(choices)};
    return *value;
  }

 private:
  const Json& object_;
};

/// The argument readers of protocol.md section 2, one per argument shape.
MessageArgs read_prompt_args(const FieldReader& f);
MessageArgs read_message_args(const FieldReader& f);  // steer, follow_up
NewSessionArgs read_new_session_args(const FieldReader& f);
SetModelArgs read_set_model_args(const FieldReader& f);
ThinkingLevelArgs read_thinking_level_args(const FieldReader& f);
QueueModeArgs read_queue_mode_args(const FieldReader& f);
InterruptModeArgs read_interrupt_mode_args(const FieldReader& f);
PermissionModeArgs read_permission_mode_args(const FieldReader& f);
CompactArgs read_compact_args(const FieldReader& f);
EnabledArgs read_enabled_args(const FieldReader& f);
BashArgs read_bash_args(const FieldReader& f);
SwitchSessionArgs read_switch_session_args(const FieldReader& f);
ForkArgs read_fork_args(const FieldReader& f);
SessionNameArgs read_session_name_args(const FieldReader& f);
EntriesArgs read_entries_args(const FieldReader& f);
ExportHtmlArgs read_export_html_args(const FieldReader& f);
McpServersArgs read_mcp_servers_args(const FieldReader& f);
RestartMcpServerArgs read_restart_mcp_server_args(const FieldReader& f);
UiResponseArgs read_ui_response_args(const FieldReader& f);
/// Both fields checked before anything is used (all or nothing).
EventFilterArgs read_event_filter_args(const FieldReader& f);

/// Runs `read` over the command's object: its value, or the "Invalid field" error.
template <typename Args>
std::variant<Args, ProtocolError> read_command_args(Args (*read)(const FieldReader&),
                                                    const CommandEnvelope& command) {
  try {
    return read(FieldReader(command.object));
  } catch (const FieldError& e) {
    return ProtocolError{command.id, command.type,
                         "Invalid field '" + e.path + "': expected " + e.kind, e};
  }
}

/// The parse error for a line over the limit.
ProtocolError line_too_long_error(std::size_t max_line_bytes);

}  // namespace rebound::protocol
