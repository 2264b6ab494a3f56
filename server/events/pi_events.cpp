#include "server/events/pi_events.h"

#include <nlohmann/json.hpp>

#include "session/event.h"

namespace rebound::server::pi {

using protocol::to_json;
namespace ev = session::ev;

namespace {
Json typed(std::string_view type) {
  Json j = Json::object();
  j["type"] = type;
  return j;
}
}  // namespace

Json agent_start() {
  return typed(ev::AgentStart::kName);
}

Json agent_end(const std::vector<AgentMessage>& messages, bool will_retry) {
  Json j = typed(ev::AgentEnd::kName);
  j["messages"] = to_json(messages);
  j["willRetry"] = will_retry;
  return j;
}

Json turn_start() {
  return typed(ev::TurnStart::kName);
}

Json turn_end(const AgentMessage& message, const std::vector<AgentMessage>& tool_results) {
  Json j = typed(ev::TurnEnd::kName);
  j["message"] = to_json(message);
  j["toolResults"] = to_json(tool_results);
  return j;
}

Json message_start(const AgentMessage& message) {
  Json j = typed(ev::MessageStart::kName);
  j["message"] = to_json(message);
  return j;
}

Json message_end(const AgentMessage& message) {
  Json j = typed(ev::MessageEnd::kName);
  j["message"] = to_json(message);
  return j;
}

namespace {

// assistantMessageEvent without its `partial` key.
Json update_body(const AssistantUpdate& u) {
  Json e = Json::object();
  e["type"] = u.type;
  e["contentIndex"] = u.content_index;
  if (u.delta) e["delta"] = *u.delta;
  if (u.content) e["content"] = *u.content;
  if (u.tool_call) e["toolCall"] = to_json(*u.tool_call);
  return e;
}

}  // namespace

Json message_update(const AssistantUpdate& u, const AgentMessage& partial) {
  Json partial_json = to_json(partial);
  Json e = update_body(u);
  e["partial"] = partial_json;
  Json j = typed(ev::MessageUpdate::kName);
  j["assistantMessageEvent"] = std::move(e);
  j["message"] = std::move(partial_json);
  return j;
}

Json message_update_delta(const AssistantUpdate& u) {
  Json j = typed(ev::MessageUpdate::kName);
  j["assistantMessageEvent"] = update_body(u);
  j["message"] = Json{{"role", "assistant"}};
  return j;
}

Json tool_execution_start(const std::string& id, const std::string& name, const Json& args) {
  Json j = typed(ev::ToolExecutionStart::kName);
  j["toolCallId"] = id;
  j["toolName"] = name;
  j["args"] = args;
  return j;
}

Json tool_execution_update(const std::string& id, const std::string& name, const Json& args,
                           const Json& partial_result) {
  Json j = typed(ev::ToolExecutionUpdate::kName);
  j["toolCallId"] = id;
  j["toolName"] = name;
  j["args"] = args;
  j["partialResult"] = partial_result;
  return j;
}

Json tool_execution_end(const std::string& id, const std::string& name, const Json& result,
                        bool is_error) {
  Json j = typed(ev::ToolExecutionEnd::kName);
  j["toolCallId"] = id;
  j["toolName"] = name;
  j["result"] = result;
  j["isError"] = is_error;
  return j;
}

Json auto_retry_start(std::int64_t attempt, std::int64_t max_attempts, std::int64_t delay_ms,
                      const std::string& error_message) {
  Json j = typed(ev::AutoRetryStart::kName);
  j["attempt"] = attempt;
  j["maxAttempts"] = max_attempts;
  j["delayMs"] = delay_ms;
  j["errorMessage"] = error_message;
  return j;
}

Json auto_retry_end(bool success, std::int64_t attempt, std::string_view final_error) {
  Json j = typed(ev::AutoRetryEnd::kName);
  j["success"] = success;
  j["attempt"] = attempt;
  if (!success) j["finalError"] = final_error;
  return j;
}

Json auto_compaction_start(std::string_view reason) {
  Json j = typed(ev::AutoCompactionStart::kName);
  j["reason"] = reason;
  return j;
}

Json auto_compaction_end(const std::optional<Json>& result, bool aborted, bool will_retry,
                         const std::optional<std::string>& error_message) {
  Json j = typed(ev::AutoCompactionEnd::kName);
  if (result) j["result"] = *result;
  j["aborted"] = aborted;
  j["willRetry"] = will_retry;
  if (error_message) j["errorMessage"] = *error_message;
  return j;
}

}  // namespace rebound::server::pi
