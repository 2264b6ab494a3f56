// The events of ACP sessions while a prompt of theirs is pending (acp.md sections 6 to 9):
// what the connection remembers of each (message ids, the announced calls, the turn's ending)
// and the updates acp_translate.h builds from them.

#include <type_traits>

#include <spdlog/spdlog.h>

#include "server/acp/acp_connection.h"
#include "server/acp/acp_translate.h"
#include "server/events/pi_encoder.h"

namespace rebound::server {

using protocol::Json;
namespace ev = session::ev;

void AcpConnection::on_event(const session::Event& event) {
  OpenSession* found = find(event.session);
  if (!found) return;
  OpenSession& s = *found;
  if (on_extension_event(s, event)) return;
  if (!s.turn) return;  // nothing for a session outside its prompt (section 12)
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, ev::MessageStart>) {
          if (e.message.is_assistant()) s.message_id = "m" + std::to_string(next_message_++);
        } else if constexpr (std::is_same_v<T, ev::MessageUpdate>) {
          on_message_update(s, e);
        } else if constexpr (std::is_same_v<T, ev::MessageEnd>) {
          on_message_end(s, e);
        } else if constexpr (std::is_same_v<T, ev::ToolExecutionStart>) {
          on_tool_start(s, e);
        } else if constexpr (std::is_same_v<T, ev::ToolExecutionUpdate>) {
          if (auto body = acp::tool_progress_update(e)) update(s, std::move(*body));
        } else if constexpr (std::is_same_v<T, ev::ToolExecutionEnd>) {
          on_tool_end(s, e);
        } else if constexpr (std::is_same_v<T, ev::AutoRetryStart> ||
                             std::is_same_v<T, ev::AutoRetryEnd>) {
          on_retry(s, event);
        } else if constexpr (std::is_same_v<T, ev::AutoCompactionStart> ||
                             std::is_same_v<T, ev::AutoCompactionEnd>) {
          on_compaction(s, event);
        } else if constexpr (std::is_same_v<T, ev::ExtensionError> ||
                             std::is_same_v<T, ev::ExtensionUiRequest>) {
          // on_extension_event took them.
        } else {
          // What ACP shows nothing of (section 7: the prompt's answer ends the turn; MCP status
          // is rpc mode's; ACP has no queue and no title, sessions.md section 15). A new event type
          // stops the build here until ACP decides.
          static_assert(std::is_same_v<T, ev::AgentStart> || std::is_same_v<T, ev::AgentEnd> ||
                            std::is_same_v<T, ev::TurnStart> || std::is_same_v<T, ev::TurnEnd> ||
                            std::is_same_v<T, ev::McpServerUpdate> ||
                            std::is_same_v<T, ev::QueueUpdate> ||
                            std::is_same_v<T, ev::SessionInfoChanged> ||
                            // A7: session/load's replay shows such a call failed, with its text.
                            std::is_same_v<T, ev::ToolOutcomeUnknown>,
                        "acp: decide how this event is shown");
        }
      },
      event.body);
}

bool AcpConnection::on_extension_event(OpenSession& s, const session::Event& event) {
  // A notice while a prompt of the session is pending and the client takes notices, else the
  // log (extensions.md sections 6.2, 9); dialogs are acp_dialogs.cpp's.
  const bool shown = s.turn.has_value() && caps_.notices;
  if (const auto* error = std::get_if<ev::ExtensionError>(&event.body)) {
    if (shown) {
      update(s, acp::extension_error_notice(*error));
      return true;
    }
    spdlog::warn("{} failed ({}): {}", error->extension_path, error->event, error->error);
    return true;
  }
  if (const auto* request = std::get_if<ev::ExtensionUiRequest>(&event.body)) {
    auto body = acp::extension_notify_notice(*request->fields);
    if (shown && body) {
      update(s, std::move(*body));
      return true;
    }
    spdlog::info("acp: extension notice not shown: {}", request->fields->dump());
    return true;
  }
  return false;
}

void AcpConnection::on_message_update(OpenSession& s, const ev::MessageUpdate& e) {
  if (auto chunk = acp::delta_chunk(e, s.message_id)) {
    if (e.kind == session::AssistantUpdateKind::text_delta) s.turn->wrote_text = true;
    update(s, std::move(*chunk));
    return;
  }
  if (e.kind != session::AssistantUpdateKind::toolcall_end) return;
  if (e.content_index >= e.partial.content.size()) return;
  const protocol::ContentBlock& call = e.partial.content[e.content_index];
  acp::ToolState state;
  state.info = acp::tool_call_info(call.name, call.arguments, s.cwd);
  Json body = acp::tool_call_pending(call, state.info);
  s.tools[call.id] = std::move(state);
  update(s, std::move(body));
}

void AcpConnection::on_message_end(OpenSession& s, const ev::MessageEnd& e) {
  if (!e.message.is_assistant()) return;
  s.turn->last = e.message.stop_reason;
  s.turn->last_error = e.message.error_message;
  if (e.message.failed()) return;
  const auto model = s.session->state().model;
  update(s, acp::usage_update(e.message, model ? model->context_window : 0,
                              s.session->stats().tokens.cost_total));
}

void AcpConnection::on_tool_start(OpenSession& s, const ev::ToolExecutionStart& e) {
  auto it = s.tools.find(e.tool_call_id);
  if (it == s.tools.end()) {
    acp::ToolState state;
    state.info = acp::tool_call_info(e.tool_name, e.args, s.cwd);
    it = s.tools.emplace(e.tool_call_id, std::move(state)).first;
  }
  // The gate shows it in_progress once the policy allowed it (section 7.3) and reads the file
  // before an edit or write just before it runs.
}

void AcpConnection::on_tool_end(OpenSession& s, const ev::ToolExecutionEnd& e) {
  const auto it = s.tools.find(e.tool_call_id);
  Json body = acp::tool_end_update(e, it == s.tools.end() ? nullptr : &it->second);
  if (it != s.tools.end()) s.tools.erase(it);
  update(s, std::move(body));
}

void AcpConnection::on_retry(OpenSession& s, const session::Event& event) {
  const Json rpc = pi_event_json(event);
  if (const auto* start = std::get_if<ev::AutoRetryStart>(&event.body)) {
    ++s.turn->retries;
    notify("_rebound/auto_retry_start", acp::rebound_params(s.id, rpc));
    if (caps_.notices) update(s, acp::retry_start_notice(*start));
    return;
  }
  const auto& end = std::get<ev::AutoRetryEnd>(event.body);
  notify("_rebound/auto_retry_end", acp::rebound_params(s.id, rpc));
  if (!caps_.notices) return;
  if (auto body = acp::retry_end_notice(end)) update(s, std::move(*body));
}

void AcpConnection::on_compaction(OpenSession& s, const session::Event& event) {
  const Json rpc = pi_event_json(event);
  if (const auto* start = std::get_if<ev::AutoCompactionStart>(&event.body)) {
    s.turn->overflow_compaction = start->reason == session::CompactionReason::overflow;
    s.compaction_id = acp::random_hex_id();
    notify("_rebound/auto_compaction_start", acp::rebound_params(s.id, rpc));
    if (caps_.compaction_updates) {
      update(s, acp::compaction_started(s.compaction_id));
    } else if (caps_.notices) {
      update(s, acp::compaction_notice(start->reason));
    }
    return;
  }
  const auto& end = std::get<ev::AutoCompactionEnd>(event.body);
  if (end.error_message && !end.aborted && s.turn->overflow_compaction)
    s.turn->compaction_error = std::string(*end.error_message);
  notify("_rebound/auto_compaction_end", acp::rebound_params(s.id, rpc));
  if (caps_.compaction_updates) update(s, acp::compaction_ended(end, s.compaction_id));
}

}  // namespace rebound::server
