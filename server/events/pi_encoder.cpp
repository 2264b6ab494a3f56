#include "server/events/pi_encoder.h"

#include <charconv>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "protocol/json_line.h"
#include "server/events/pi_events.h"

namespace rebound::server {

using protocol::Json;
using session::AssistantUpdateKind;
namespace ev = session::ev;

namespace {

bool is_text_delta(AssistantUpdateKind k) {
  return k == AssistantUpdateKind::text_delta || k == AssistantUpdateKind::thinking_delta;
}

pi::AssistantUpdate assistant_update(const ev::MessageUpdate& u) {
  pi::AssistantUpdate out{pi_update_name(u.kind), u.content_index, std::nullopt, std::nullopt,
                          nullptr};
  const auto& block = u.partial.content.at(u.content_index);
  switch (u.kind) {
    case AssistantUpdateKind::text_delta:
    case AssistantUpdateKind::thinking_delta:
    case AssistantUpdateKind::toolcall_delta:
      out.delta = std::string(u.delta);
      break;
    case AssistantUpdateKind::text_end:
    case AssistantUpdateKind::thinking_end:
      out.content = block.text;
      break;
    case AssistantUpdateKind::toolcall_end:
      out.tool_call = &block;
      break;
    default:
      break;
  }
  return out;
}

}  // namespace

std::string_view pi_update_name(AssistantUpdateKind kind) {
  return protocol::name_of(kind, session::kStreamKindNames);
}

Json pi_tool_result_json(const session::ToolResult& result) {
  return session::tool_result_json(result);
}

Json pi_compaction_result_json(const session::CompactionResult& result) {
  Json j = Json::object();
  j["summary"] = result.summary;
  j["firstKeptEntryId"] = result.first_kept_entry_id;
  j["tokensBefore"] = result.tokens_before;
  return j;
}

Json pi_event_json(const session::Event& event) {
  return std::visit(
      [](const auto& e) -> Json {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, ev::AgentStart>) {
          return pi::agent_start();
        } else if constexpr (std::is_same_v<T, ev::AgentEnd>) {
          return pi::agent_end(e.messages, e.will_retry);
        } else if constexpr (std::is_same_v<T, ev::TurnStart>) {
          return pi::turn_start();
        } else if constexpr (std::is_same_v<T, ev::TurnEnd>) {
          return pi::turn_end(e.message, e.tool_results);
        } else if constexpr (std::is_same_v<T, ev::MessageStart>) {
          return pi::message_start(e.message);
        } else if constexpr (std::is_same_v<T, ev::MessageUpdate>) {
          return pi::message_update(assistant_update(e), e.partial);
        } else if constexpr (std::is_same_v<T, ev::MessageEnd>) {
          return pi::message_end(e.message);
        } else if constexpr (std::is_same_v<T, ev::ToolExecutionStart>) {
          return pi::tool_execution_start(e.tool_call_id, e.tool_name, e.args);
        } else if constexpr (std::is_same_v<T, ev::ToolExecutionUpdate>) {
          return pi::tool_execution_update(e.tool_call_id, e.tool_name, e.args,
                                           pi_tool_result_json(e.partial_result));
        } else if constexpr (std::is_same_v<T, ev::ToolExecutionEnd>) {
          return pi::tool_execution_end(e.tool_call_id, e.tool_name, pi_tool_result_json(e.result),
                                        e.result.is_error);
        } else if constexpr (std::is_same_v<T, ev::AutoRetryStart>) {
          Json j = pi::auto_retry_start(e.attempt, e.max_attempts, e.delay_ms, e.error_message);
          if (e.details) {
            // retry.md section 12: after the existing keys, in this order.
            j["errorClass"] = e.details->error_class;
            if (e.details->http_status) j["httpStatus"] = *e.details->http_status;
            j["delaySource"] = e.details->delay_source;
            j["nextAttemptAt"] = e.details->next_attempt_at;
          }
          return j;
        } else if constexpr (std::is_same_v<T, ev::AutoRetryEnd>) {
          Json j = pi::auto_retry_end(e.success, e.attempt, e.final_error.value_or(""));
          if (e.reason) j["reason"] = *e.reason;
          return j;
        } else if constexpr (std::is_same_v<T, ev::AutoCompactionStart>) {
          return pi::auto_compaction_start(session::compaction_reason_name(e.reason));
        } else if constexpr (std::is_same_v<T, ev::McpServerUpdate> ||
                             std::is_same_v<T, ev::ExtensionUiRequest>) {
          // Their type, then the fields as the server built them.
          Json j = Json::object();
          j["type"] = T::kName;
          for (const auto& [key, value] : e.fields->items())
            j[key] = value;
          return j;
        } else if constexpr (std::is_same_v<T, ev::QueueUpdate>) {
          Json j = Json::object();
          j["type"] = T::kName;
          j["steering"] = e.steering;
          j["followUp"] = e.follow_up;
          return j;
        } else if constexpr (std::is_same_v<T, ev::ToolOutcomeUnknown>) {
          Json j = Json::object();
          j["type"] = T::kName;
          j["toolCallId"] = e.tool_call_id;
          j["toolName"] = e.tool_name;
          j["startedAt"] = e.started_at;
          return j;
        } else if constexpr (std::is_same_v<T, ev::SessionInfoChanged>) {
          Json j = Json::object();
          j["type"] = T::kName;
          j["name"] = e.name;
          return j;
        } else if constexpr (std::is_same_v<T, ev::ExtensionError>) {
          Json j = Json::object();
          j["type"] = ev::ExtensionError::kName;
          j["extensionPath"] = e.extension_path;
          j["event"] = e.event;
          j["error"] = e.error;
          return j;
        } else {
          static_assert(std::is_same_v<T, ev::AutoCompactionEnd>);
          std::optional<Json> result;
          if (e.result) result = pi_compaction_result_json(*e.result);
          std::optional<std::string> error;
          if (e.error_message) error = std::string(*e.error_message);
          return pi::auto_compaction_end(result, e.aborted, e.will_retry, error);
        }
      },
      event.body);
}

void PiEventEncoder::append_delta_line(std::string& out, const session::Event& event) {
  const auto* u = std::get_if<ev::MessageUpdate>(&event.body);
  if (!u) {
    out += protocol::to_line(pi_event_json(event));
    return;
  }
  skipped_update();  // the incremental state no longer follows the partial message
  if (!is_text_delta(u->kind) && u->kind != AssistantUpdateKind::toolcall_delta) {
    out += protocol::to_line(pi::message_update_delta(assistant_update(*u)));
    return;
  }
  // The hot path (one line per streamed delta): built without a JSON tree, byte for byte what
  // to_line() writes for the same object.
  char index[24];
  const auto [index_end, ec] = std::to_chars(std::begin(index), std::end(index), u->content_index);
  using namespace std::string_view_literals;  // no strlen per piece
  out += R"({"type":"message_update","assistantMessageEvent":{"type":")"sv;
  out += pi_update_name(u->kind);
  out += R"(","contentIndex":)"sv;
  out.append(index, index_end);
  out += R"(,"delta":")"sv;
  append_escaped_json_string(out, u->delta);
  out += "\"},\"message\":{\"role\":\"assistant\"}}\n"sv;
}

OutLine PiEventEncoder::out_line(const session::Event& event) {
  const auto* u = std::get_if<ev::MessageUpdate>(&event.body);
  if (!u) return OutLine(protocol::to_line(pi_event_json(event)));
  const bool same = have_partial_ && version_ == u->partial_version && slot_ == event.session;
  const bool same_usage = same && usage_version_ == u->usage_version;
  // With the version unchanged only a text delta changed the content (appended to its last
  // block when that is text), and a usage change only the keys after it; anything else is
  // serialised afresh.
  if (same && is_text_delta(u->kind) && lines_.appendable()) {
    lines_.append_to_last_block(u->delta);
    if (!same_usage) lines_.replace_usage(u->partial);
  } else if (!same || !same_usage || is_text_delta(u->kind)) {
    lines_.reset(u->partial);
  }
  have_partial_ = true;
  version_ = u->partial_version;
  usage_version_ = u->usage_version;
  slot_ = event.session;
  return lines_.out_line(assistant_update(*u));
}

}  // namespace rebound::server
