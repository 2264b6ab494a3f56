#include "server/pi/rpc_dispatcher.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "protocol/json_line.h"
#include "protocol/jsonrpc.h"
#include "protocol/responses.h"

namespace rebound::server {

namespace {

std::unique_ptr<EventOutput> own_output_if(EventOutput* events, LineWriter& nowhere) {
  if (events) return nullptr;
  return std::make_unique<EventOutput>(nowhere, EnvelopeMode::pi);
}

}  // namespace

RpcDispatcher::RpcDispatcher(session::AgentSession& session, JsonSink out, EventOutput* events,
                             session::McpControl* mcp, session::ExtensionControl* extensions,
                             RpcDialogs* dialogs, session::PolicyControl* policy)
    : own_events_(own_output_if(events, no_output_)),
      events_(events ? *events : *own_events_),
      context_{session, &events_, mcp, true, extensions, dialogs, policy},
      commands_(rpc_command_table()),
      out_(std::move(out)) {}

void RpcDispatcher::line_error(const protocol::ProtocolError& error) {
  // A line that cannot carry its own envelope gets the connection's (protocol.md section 9).
  if (events_.jsonrpc()) {
    out_(protocol::jsonrpc_error(protocol::jsonrpc_parse_error(error.message)));
  } else {
    out_(protocol::error_response(error));
  }
}

void RpcDispatcher::handle_too_long(std::size_t max_line_bytes) {
  line_error(protocol::line_too_long_error(max_line_bytes));
}

void RpcDispatcher::handle_line(std::string_view line) {
  protocol::JsonLine parsed = protocol::parse_json_line(line);
  if (!parsed.value) {
    line_error(
        protocol::ProtocolError{std::nullopt, "parse", "Failed to parse command: " + parsed.error});
    return;
  }
  protocol::Json& value = *parsed.value;
  if (value.is_object() && value.contains("jsonrpc")) {
    handle_jsonrpc(std::move(value));
    return;
  }
  if (protocol::is_refused_batch(value, events_.jsonrpc())) {
    out_(protocol::jsonrpc_error(protocol::jsonrpc_batch_error()));
    return;
  }
  if (!value.is_object() && events_.jsonrpc()) {
    out_(protocol::jsonrpc_error(protocol::jsonrpc_not_an_object()));
    return;
  }
  protocol::ParsedEnvelope command = protocol::parse_envelope(std::move(value));
  if (command.error) {
    out_(protocol::error_response(*command.error));
    return;
  }
  run(*command.command, ReplyStyle::pi);
}

void RpcDispatcher::handle_jsonrpc(protocol::Json object) {
  protocol::JsonRpcRequest request = protocol::read_jsonrpc_request(std::move(object));
  // The switch comes before the request runs, so the events it causes are notifications.
  if (request.valid) events_.on_jsonrpc_request();
  if (request.error) {
    if (request.valid && !request.id) {
      // A notification is never answered, not even when it fails.
      spdlog::warn("notification '{}' failed: {}", request.error->command.value_or(""),
                   request.error->message);
      return;
    }
    out_(protocol::jsonrpc_error(*request.error));
    return;
  }
  run(*request.command, request.id ? ReplyStyle::jsonrpc : ReplyStyle::jsonrpc_silent);
}

void RpcDispatcher::run(const protocol::CommandEnvelope& command, ReplyStyle style) {
  const CommandTable::Run* found = commands_.find(command.type);
  if (!found) {
    const protocol::ProtocolError error = protocol::unknown_command_error(command.id, command.type);
    switch (style) {
      case ReplyStyle::pi:
        out_(protocol::error_response(error));
        break;
      case ReplyStyle::jsonrpc:
        out_(protocol::jsonrpc_error(protocol::JsonRpcError{
            command.id, protocol::jsonrpc_code::method_not_found, error.message, command.type}));
        break;
      case ReplyStyle::jsonrpc_silent:
        spdlog::warn("notification '{}' failed: {}", command.type, error.message);
        break;
    }
    return;
  }
  Reply reply(command.id, command.type, out_, style);
  if (line_sink_) reply.set_line_sink(line_sink_);
  (*found)(context_, command, std::move(reply));
}

}  // namespace rebound::server
