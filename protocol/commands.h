#pragma once
// Typed commands of protocol.md section 2 and their validation (section 4). A JSON object
// becomes either a Command or a ProtocolError naming the field path; nothing throws.
// Called by the server's dispatcher on the event loop; pure.

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "protocol/json.h"
#include "protocol/wire_types.h"

namespace rebound::protocol {

enum class CommandType {
  prompt,
  steer,
  follow_up,
  abort,
  new_session,
  get_state,
  set_model,
  cycle_model,
  get_available_models,
  set_thinking_level,
  cycle_thinking_level,
  set_steering_mode,
  set_follow_up_mode,
  set_interrupt_mode,
  compact,
  set_auto_compaction,
  set_auto_retry,
  abort_retry,
  bash,
  abort_bash,
  get_session_stats,
  switch_session,
  get_last_assistant_text,
  get_messages,
};

/// The wire name of a command type ("follow_up", "get_state", ...).
std::string_view command_name(CommandType type);
/// The type for a wire name, or nullopt for an unknown one.
std::optional<CommandType> command_type_from_name(std::string_view name);

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

using CommandArgs = std::variant<std::monostate, MessageArgs, NewSessionArgs, SetModelArgs,
                                 ThinkingLevelArgs, QueueModeArgs, InterruptModeArgs, CompactArgs,
                                 EnabledArgs, BashArgs, SwitchSessionArgs>;

struct Command {
  std::optional<Json> id;  // copied verbatim into the response
  CommandType type;
  CommandArgs args;
};

/// A rejected line or command, ready to become an error response.
struct ProtocolError {
  std::optional<Json> id;
  std::string command;  // "parse" or the command's type
  std::string message;  // the full error text of the response
};

struct ParsedCommand {
  std::optional<Command> command;
  std::optional<ProtocolError> error;
};

/// Validates a parsed JSON value as a command.
ParsedCommand parse_command(const Json& value);

/// Reads a raw protocol line into a command (UTF-8, JSON, object, type, fields).
ParsedCommand parse_command_line(std::string_view line);

/// The parse error for a line over the limit.
ProtocolError line_too_long_error(std::size_t max_line_bytes);

}  // namespace rebound::protocol
