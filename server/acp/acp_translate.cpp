#include "server/acp/acp_translate.h"

#include <utility>

#include "server/events/pi_encoder.h"

namespace rebound::server::acp {

namespace ev = session::ev;

namespace {

Json notice(const char* severity, std::string title) {
  Json body = Json::object();
  body["sessionUpdate"] = "notice";
  body["severity"] = severity;
  body["title"] = std::move(title);
  return body;
}

}  // namespace

Json session_update(const std::string& session_id, Json body) {
  Json params = Json::object();
  params["sessionId"] = session_id;
  params["update"] = std::move(body);
  return params;
}

Json rebound_params(const std::string& session_id, const Json& rpc_event) {
  Json params = Json::object();
  params["sessionId"] = session_id;
  for (auto& [key, value] : rpc_event.items()) {
    if (key != "type") params[key] = value;
  }
  return params;
}

std::optional<Json> delta_chunk(const ev::MessageUpdate& e, const std::string& message_id) {
  using K = session::AssistantUpdateKind;
  if (e.kind != K::text_delta && e.kind != K::thinking_delta) return std::nullopt;
  if (e.delta.empty()) return std::nullopt;
  Json chunk = Json::object();
  chunk["sessionUpdate"] = e.kind == K::text_delta ? "agent_message_chunk" : "agent_thought_chunk";
  chunk["content"] = text_content(std::string(e.delta));
  chunk["messageId"] = message_id;
  return chunk;
}

Json tool_call_pending(const protocol::ContentBlock& call, const ToolCallInfo& info) {
  Json body = Json::object();
  body["sessionUpdate"] = "tool_call";
  body["toolCallId"] = call.id;
  body["title"] = info.title;
  body["kind"] = info.kind;
  body["status"] = "pending";
  if (!info.locations.is_null()) body["locations"] = info.locations;
  body["rawInput"] = call.arguments.is_object() ? call.arguments : Json::object();
  return body;
}

Json usage_update(const protocol::AgentMessage& message, std::int64_t context_window,
                  double cost_total) {
  Json body = Json::object();
  body["sessionUpdate"] = "usage_update";
  body["used"] = message.usage.total_tokens;
  body["size"] = context_window;
  Json cost = Json::object();
  cost["amount"] = cost_total;
  cost["currency"] = "USD";
  body["cost"] = std::move(cost);
  return body;
}

Json in_progress_update(const std::string& tool_call_id) {
  Json body = Json::object();
  body["sessionUpdate"] = "tool_call_update";
  body["toolCallId"] = tool_call_id;
  body["status"] = "in_progress";
  return body;
}

std::optional<Json> tool_progress_update(const ev::ToolExecutionUpdate& e) {
  if (!has_text(e.partial_result)) return std::nullopt;
  Json body = Json::object();
  body["sessionUpdate"] = "tool_call_update";
  body["toolCallId"] = e.tool_call_id;
  body["content"] = Json::array({content_entry(text_content(result_text(e.partial_result)))});
  return body;
}

Json tool_end_update(const ev::ToolExecutionEnd& e, const ToolState* state) {
  Json body = Json::object();
  body["sessionUpdate"] = "tool_call_update";
  body["toolCallId"] = e.tool_call_id;
  body["status"] = e.result.is_error ? "failed" : "completed";
  if (!e.result.is_error && state && state->info.edits_file && state->after) {
    body["content"] = Json::array({diff_content(state->info.path, state->before, *state->after)});
  } else {
    body["content"] = content_of(e.result);
  }
  body["rawOutput"] = pi_tool_result_json(e.result);
  return body;
}

Json retry_start_notice(const ev::AutoRetryStart& e) {
  Json meta = Json::object();
  meta["event"] = "auto_retry_start";
  meta["attempt"] = e.attempt;
  meta["maxAttempts"] = e.max_attempts;
  meta["delayMs"] = e.delay_ms;
  Json body = notice("warning", retry_notice_title(e.attempt, e.max_attempts, e.delay_ms));
  body["description"] = e.error_message;
  body["_meta"] = Json{{"rebound", std::move(meta)}};
  return body;
}

std::optional<Json> retry_end_notice(const ev::AutoRetryEnd& e) {
  if (!e.success) return std::nullopt;
  Json meta = Json::object();
  meta["event"] = "auto_retry_end";
  meta["success"] = true;
  meta["attempt"] = e.attempt;
  Json body = notice("info", recovered_notice_title(e.attempt));
  body["_meta"] = Json{{"rebound", std::move(meta)}};
  return body;
}

Json compaction_started(const std::string& compaction_id) {
  Json body = Json::object();
  body["sessionUpdate"] = "compaction_update";
  body["compactionId"] = compaction_id;
  body["status"] = "in_progress";
  return body;
}

Json compaction_notice(session::CompactionReason reason) {
  return notice("info", "Compacting the conversation (" +
                            std::string(session::compaction_reason_name(reason)) + ")");
}

Json compaction_ended(const ev::AutoCompactionEnd& e, const std::string& compaction_id) {
  Json body = Json::object();
  body["sessionUpdate"] = "compaction_update";
  body["compactionId"] = compaction_id;
  if (e.result) {
    body["status"] = "completed";
    body["summary"] = Json::array({text_content(e.result->summary)});
  } else if (e.aborted) {
    body["status"] = "cancelled";
  } else {
    body["status"] = "failed";
    body["error"] = e.error_message ? std::string(*e.error_message) : std::string();
  }
  return body;
}

Json text_chunk(const std::string& text, const std::string& message_id) {
  Json chunk = Json::object();
  chunk["sessionUpdate"] = "agent_message_chunk";
  chunk["content"] = text_content(text);
  chunk["messageId"] = message_id;
  return chunk;
}

Json error_chunk(const std::string& message, bool after_text, const std::string& message_id) {
  return text_chunk((after_text ? "\n\nError: " : "Error: ") + message, message_id);
}

Json turn_result(const TurnEnding& ending, std::int64_t retries,
                 const std::optional<std::string>& error_message) {
  Json meta = Json::object();
  meta["outcome"] = ending.outcome;
  meta["retries"] = retries;
  if (error_message) meta["errorMessage"] = *error_message;
  Json result = Json::object();
  result["stopReason"] = ending.stop_reason;
  result["_meta"] = Json{{"rebound", std::move(meta)}};
  return result;
}

Json extension_error_notice(const ev::ExtensionError& e) {
  Json body = notice("error", "Extension error: " + std::string(e.extension_path));
  body["description"] = e.error;
  return body;
}

std::optional<Json> extension_notify_notice(const Json& fields) {
  if (fields.value("method", Json()) != "notify") return std::nullopt;
  const std::string type = fields.value("notifyType", Json()).is_string()
                               ? fields["notifyType"].get<std::string>()
                               : std::string("info");
  const char* severity = type == "warning" ? "warning" : type == "error" ? "error" : "info";
  return notice(severity, fields.value("message", Json("")).is_string()
                              ? fields["message"].get<std::string>()
                              : std::string());
}

Json available_commands_update(std::vector<Json> commands) {
  Json available = Json::array();
  for (auto& c : commands)
    available.push_back(std::move(c));
  return Json{{"sessionUpdate", "available_commands_update"},
              {"availableCommands", std::move(available)}};
}

Json cancelled_result() {
  return turn_result(TurnEnding{"cancelled", "cancelled"}, 0, std::nullopt);
}

Json permission_options(bool offer_always) {
  Json options = Json::array();
  for (const auto& [id, name] :
       {std::pair{"allow_once", "Allow"}, std::pair{"allow_always", "Always allow"},
        std::pair{"reject_once", "Reject"}}) {
    if (!offer_always && std::string_view(id) == "allow_always") continue;
    Json option = Json::object();
    option["optionId"] = id;
    option["name"] = name;
    option["kind"] = id;
    options.push_back(std::move(option));
  }
  return options;
}

Json permission_request(const std::string& session_id, const std::string& tool_call_id,
                        const ToolCallInfo& info, const Json& args, bool offer_always) {
  Json tool_call = Json::object();
  tool_call["toolCallId"] = tool_call_id;
  tool_call["title"] = info.title;
  tool_call["kind"] = info.kind;
  tool_call["status"] = "pending";
  tool_call["rawInput"] = args.is_object() ? args : Json::object();
  Json params = Json::object();
  params["sessionId"] = session_id;
  params["toolCall"] = std::move(tool_call);
  params["options"] = permission_options(offer_always);
  return params;
}

Json session_modes(const std::string& current) {
  struct ModeText {
    const char *id, *name, *description;
  };
  static constexpr ModeText kAvailable[] = {
      {"default", "Default", "Ask before edits, commands and reads outside the project"},
      {"acceptEdits", "Accept edits", "Edit files in the project without asking"},
      {"plan", "Plan", "Read and plan; no file changes"},
      {"dontAsk", "Don't ask", "Deny whatever would need approval"},
      {"bypassPermissions", "Bypass permissions", "Run every tool call without asking"},
  };
  Json available = Json::array();
  for (const ModeText& m : kAvailable) {
    Json mode = Json::object();
    mode["id"] = m.id;
    mode["name"] = m.name;
    mode["description"] = m.description;
    available.push_back(std::move(mode));
  }
  Json modes = Json::object();
  modes["currentModeId"] = current;
  modes["availableModes"] = std::move(available);
  return modes;
}

const std::vector<std::string>& rebound_methods() {
  static const std::vector<std::string> methods{
      "_rebound/abort_retry", "_rebound/set_auto_retry",   "_rebound/get_retry_state",
      "_rebound/retry_now",   "_rebound/set_retry_policy", "_rebound/get_policy"};
  return methods;
}

Json initialize_result(bool no_session, const std::string& version) {
  Json prompt_caps = Json::object();
  prompt_caps["image"] = true;
  prompt_caps["audio"] = false;
  prompt_caps["embeddedContext"] = true;
  Json mcp = Json::object();
  mcp["http"] = false;
  mcp["sse"] = false;
  Json session_caps = Json::object();
  if (!no_session) session_caps["resume"] = Json::object();
  session_caps["close"] = Json::object();
  Json rebound = Json::object();
  rebound["retryNotifications"] = true;
  rebound["compactionNotifications"] = true;
  rebound["methods"] = rebound_methods();
  Json agent = Json::object();
  agent["loadSession"] = !no_session;
  agent["promptCapabilities"] = std::move(prompt_caps);
  agent["mcpCapabilities"] = std::move(mcp);
  agent["sessionCapabilities"] = std::move(session_caps);
  agent["_meta"] = Json{{"rebound", std::move(rebound)}};
  Json info = Json::object();
  info["name"] = "rebound";
  info["title"] = "Rebound";
  info["version"] = version;
  Json result = Json::object();
  result["protocolVersion"] = 1;
  result["agentCapabilities"] = std::move(agent);
  result["agentInfo"] = std::move(info);
  result["authMethods"] = Json::array();
  return result;
}

}  // namespace rebound::server::acp
