#include "server/rpc_dispatcher.h"

#include <nlohmann/json.hpp>

#include "protocol/responses.h"

namespace rebound::server {

RpcDispatcher::RpcDispatcher(session::AgentSession& session, JsonSink out)
    : context_{session}, commands_(rpc_command_table()), out_(std::move(out)) {}

void RpcDispatcher::handle_too_long(std::size_t max_line_bytes) {
  out_(protocol::error_response(protocol::line_too_long_error(max_line_bytes)));
}

void RpcDispatcher::handle_line(std::string_view line) {
  protocol::ParsedEnvelope parsed = protocol::parse_envelope_line(line);
  if (parsed.error) {
    out_(protocol::error_response(*parsed.error));
    return;
  }
  const protocol::CommandEnvelope& command = *parsed.command;
  const CommandTable::Run* run = commands_.find(command.type);
  if (!run) {
    out_(protocol::error_response(protocol::unknown_command_error(command.id, command.type)));
    return;
  }
  (*run)(context_, command, Reply(command.id, command.type, out_));
}

}  // namespace rebound::server
