#include "server/rpc_dispatcher.h"

#include <nlohmann/json.hpp>

#include "protocol/responses.h"

namespace rebound::server {

using protocol::CommandType;
using protocol::Json;

RpcDispatcher::RpcDispatcher(session::AgentSession& session, JsonSink out)
    : session_(session), out_(std::move(out)) {}

void RpcDispatcher::handle_too_long(std::size_t max_line_bytes) {
  out_(protocol::error_response(protocol::line_too_long_error(max_line_bytes)));
}

void RpcDispatcher::handle_line(std::string_view line) {
  protocol::ParsedCommand parsed = protocol::parse_command_line(line);
  if (parsed.error) {
    out_(protocol::error_response(*parsed.error));
    return;
  }
  protocol::Command& command = *parsed.command;
  Reply reply(command.id, std::string(protocol::command_name(command.type)), out_);
  dispatch(command, reply);
}

void RpcDispatcher::dispatch(protocol::Command& command, Reply& reply) {
  const protocol::CommandArgs& args = command.args;
  switch (command.type) {
    case CommandType::get_state:
      reply.ok(protocol::to_json(session_.state()));
      return;
    case CommandType::set_auto_retry:
      session_.set_auto_retry(std::get<protocol::EnabledArgs>(args).enabled);
      reply.ok();
      return;
    case CommandType::abort_retry:
      session_.abort_retry();
      reply.ok();
      return;
    case CommandType::prompt: {
      auto& a = std::get<protocol::MessageArgs>(command.args);
      if (auto error = session_.prompt({std::move(a.message), std::move(a.images)},
                                       a.streaming_behavior, [&reply] { reply.ok(); })) {
        reply.fail(*error);
      }
      return;
    }
    case CommandType::steer: {
      auto& a = std::get<protocol::MessageArgs>(command.args);
      session_.steer({std::move(a.message), std::move(a.images)}, [&reply] { reply.ok(); });
      return;
    }
    case CommandType::follow_up: {
      auto& a = std::get<protocol::MessageArgs>(command.args);
      session_.follow_up({std::move(a.message), std::move(a.images)}, [&reply] { reply.ok(); });
      return;
    }
    case CommandType::abort:
      session_.abort();
      reply.ok();
      return;
    case CommandType::set_auto_compaction:
      session_.set_auto_compaction(std::get<protocol::EnabledArgs>(args).enabled);
      reply.ok();
      return;
    case CommandType::set_steering_mode:
      session_.set_steering_mode(std::get<protocol::QueueModeArgs>(args).mode);
      reply.ok();
      return;
    case CommandType::set_follow_up_mode:
      session_.set_follow_up_mode(std::get<protocol::QueueModeArgs>(args).mode);
      reply.ok();
      return;
    case CommandType::set_interrupt_mode:
      session_.set_interrupt_mode(std::get<protocol::InterruptModeArgs>(args).mode);
      reply.ok();
      return;
    case CommandType::set_thinking_level:
      session_.set_thinking_level(std::get<protocol::ThinkingLevelArgs>(args).level);
      reply.ok();
      return;
    default:
      // Implemented by later work; until then the command is honestly unknown here.
      reply.fail("Unknown command: " + std::string(protocol::command_name(command.type)));
      return;
  }
}

}  // namespace rebound::server
