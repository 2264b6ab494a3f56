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
    case CommandType::get_messages:
      reply.ok(Json{{"messages", protocol::to_json(session_.messages())}});
      return;
    case CommandType::get_last_assistant_text: {
      const auto text = session_.last_assistant_text();
      reply.ok(text ? Json{{"text", *text}} : Json::object());
      return;
    }
    case CommandType::get_session_stats: {
      const auto st = session_.stats();
      Json data = Json::object();
      if (session_.session_file()) data["sessionFile"] = *session_.session_file();
      data["sessionId"] = session_.session_id();
      data["userMessages"] = st.user_messages;
      data["assistantMessages"] = st.assistant_messages;
      data["toolCalls"] = st.tool_calls;
      data["toolResults"] = st.tool_results;
      data["totalMessages"] = st.total_messages;
      data["tokens"] = Json{{"input", st.tokens.input},
                            {"output", st.tokens.output},
                            {"cacheRead", st.tokens.cache_read},
                            {"cacheWrite", st.tokens.cache_write},
                            {"total", st.tokens.total_tokens}};
      data["cost"] = protocol::json_number(st.tokens.cost_total);
      reply.ok(std::move(data));
      return;
    }
    case CommandType::get_available_models: {
      Json models = Json::array();
      for (const auto& m : session_.available_models())
        models.push_back(protocol::to_json(m));
      reply.ok(Json{{"models", std::move(models)}});
      return;
    }
    case CommandType::set_model: {
      const auto& a = std::get<protocol::SetModelArgs>(args);
      auto result = session_.set_model(a.provider, a.model_id);
      if (auto* error = std::get_if<std::string>(&result)) {
        reply.fail(*error);
      } else {
        reply.ok(protocol::to_json(std::get<protocol::Model>(result)));
      }
      return;
    }
    case CommandType::cycle_model: {
      const auto next = session_.cycle_model();
      if (!next) {
        reply.ok(Json(nullptr));
        return;
      }
      Json data = Json::object();
      data["model"] = protocol::to_json(next->model);
      data["thinkingLevel"] = protocol::to_string(next->thinking_level);
      data["isScoped"] = false;
      reply.ok(std::move(data));
      return;
    }
    case CommandType::cycle_thinking_level: {
      const auto level = session_.cycle_thinking_level();
      reply.ok(level ? Json{{"level", protocol::to_string(*level)}} : Json(nullptr));
      return;
    }
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
    case CommandType::new_session:
      session_.new_session(std::get<protocol::NewSessionArgs>(args).parent_session);
      reply.ok(Json{{"cancelled", false}});  // no hook can veto it here (docs/decisions.md)
      return;
    case CommandType::switch_session: {
      const auto& a = std::get<protocol::SwitchSessionArgs>(args);
      if (auto error = session_.switch_session(a.session_path)) {
        reply.fail(*error);
      } else {
        reply.ok(Json{{"cancelled", false}});
      }
      return;
    }
    case CommandType::bash: {
      // The answer comes when the command ends; other commands go on meanwhile.
      auto pending = std::make_shared<Reply>(std::move(reply));
      auto error = session_.bash(
          std::get<protocol::BashArgs>(args).command, [pending](const protocol::AgentMessage& m) {
            Json data = Json::object();
            data["output"] = m.output;
            data["exitCode"] = m.exit_code ? Json(*m.exit_code) : Json(nullptr);
            data["cancelled"] = m.cancelled;
            data["truncated"] = m.truncated;
            if (m.full_output_path) data["fullOutputPath"] = *m.full_output_path;
            pending->ok(std::move(data));
          });
      if (error) pending->fail(*error);
      return;
    }
    case CommandType::compact: {
      // Answered when the summary is in (or fails); other commands go on meanwhile.
      auto pending = std::make_shared<Reply>(std::move(reply));
      session_.compact(std::get<protocol::CompactArgs>(args).custom_instructions,
                       [pending](std::variant<Json, std::string> result) {
                         if (auto* error = std::get_if<std::string>(&result)) {
                           pending->fail(*error);
                         } else {
                           pending->ok(std::move(std::get<Json>(result)));
                         }
                       });
      return;
    }
    case CommandType::abort_bash:
      session_.abort_bash();
      reply.ok();
      return;
    default:
      // Implemented by later work; until then the command is honestly unknown here.
      reply.fail("Unknown command: " + std::string(protocol::command_name(command.type)));
      return;
  }
}

}  // namespace rebound::server
