#include "session/slash_commands.h"

namespace rebound::session {

std::optional<SlashCall> parse_slash_call(std::string_view text) {
  if (text.size() < 2 || text.front() != '/') return std::nullopt;
  const auto space = text.find(' ');
  SlashCall call;
  call.name = std::string(text.substr(1, space == std::string_view::npos ? text.npos : space - 1));
  if (call.name.empty()) return std::nullopt;
  if (space != std::string_view::npos) call.args = std::string(text.substr(space + 1));
  return call;
}

std::string queued_command_error(std::string_view name) {
  return "Extension command \"/" + std::string(name) +
         "\" cannot be queued. Use prompt or execute the command when not streaming.";
}

}  // namespace rebound::session
