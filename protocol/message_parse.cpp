// message_from_json: an AgentMessage back from the JSON that to_json writes (session files).
// Lenient where a field is absent (it takes its default), strict about the role and about
// content that is not an array, so a damaged entry is reported instead of half-read.

#include <nlohmann/json.hpp>

#include "protocol/json_access.h"
#include "protocol/messages.h"

namespace rebound::protocol {

namespace {

double get_double(const Json& j, std::string_view key) {
  const Json& v = get_value(j, key);
  return v.is_number() ? v.get<double>() : 0.0;
}

bool get_bool(const Json& j, std::string_view key, bool absent = false) {
  const Json& v = get_value(j, key);
  return v.is_boolean() ? v.get<bool>() : absent;
}

std::optional<ContentBlock> block_kind_from_json(const Json& b, const std::string& type) {
  if (type == "text") return ContentBlock::make_text(get_string(b, "text"));
  if (type == "thinking") return ContentBlock::make_thinking(get_string(b, "thinking"));
  if (type == "image") {
    return ContentBlock::make_image(get_string(b, "data"), get_string(b, "mimeType"));
  }
  if (type == "toolCall") {
    const Json& args = get_value(b, "arguments");
    return ContentBlock::make_tool_call(get_string(b, "id"), get_string(b, "name"),
                                        args.is_object() ? args : Json::object());
  }
  return std::nullopt;
}

std::optional<ContentBlock> block_from_json(const Json& b) {
  if (!b.is_object()) return std::nullopt;
  std::optional<ContentBlock> block = block_kind_from_json(b, get_string(b, "type"));
  if (block && block->kind != ContentBlock::Kind::image)
    block->signature = get_string(b, signature_key(block->kind));
  if (block && block->kind == ContentBlock::Kind::thinking) {
    const Json& redacted = get_value(b, "redacted");
    block->redacted = redacted.is_boolean() && redacted.get<bool>();
  }
  return block;
}

Usage usage_from_json(const Json& u) {
  Usage out;
  out.input = get_int(u, "input");
  out.output = get_int(u, "output");
  out.cache_read = get_int(u, "cacheRead");
  out.cache_write = get_int(u, "cacheWrite");
  out.total_tokens = get_int(u, "totalTokens");
  const Json& cost = get_object(u, "cost");
  out.cost_input = get_double(cost, "input");
  out.cost_output = get_double(cost, "output");
  out.cost_cache_read = get_double(cost, "cacheRead");
  out.cost_cache_write = get_double(cost, "cacheWrite");
  out.cost_total = get_double(cost, "total");
  return out;
}

std::optional<AgentMessage> fail(std::string* error, std::string text) {
  if (error) *error = std::move(text);
  return std::nullopt;
}

}  // namespace

std::optional<AgentMessage> message_from_json(const Json& j, std::string* error) {
  if (!j.is_object()) return fail(error, "a message must be an object");
  const std::string role = get_string(j, "role");
  AgentMessage m;
  m.timestamp = get_int(j, "timestamp");
  if (role == "bashExecution") {
    m.role = Role::bash_execution;
    m.command = get_string(j, "command");
    m.output = get_string(j, "output");
    if (const Json& code = get_value(j, "exitCode"); code.is_number_integer()) {
      m.exit_code = code.get<std::int64_t>();
    }
    m.cancelled = get_bool(j, "cancelled");
    m.truncated = get_bool(j, "truncated");
    if (const Json& path = get_value(j, "fullOutputPath"); path.is_string()) {
      m.full_output_path = path.get<std::string>();
    }
    return m;
  }
  if (role == "compactionSummary") {
    m.role = Role::compaction_summary;
    m.summary = get_string(j, "summary");
    m.tokens_before = get_int(j, "tokensBefore");
    return m;
  }
  if (role == "user") {
    m.role = Role::user;
  } else if (role == "assistant") {
    m.role = Role::assistant;
  } else if (role == "toolResult") {
    m.role = Role::tool_result;
  } else if (role == "custom") {
    m.role = Role::custom;
    m.custom_type = get_string(j, "customType");
    m.display = get_bool(j, "display", true);
    m.details = get_value(j, "details");
    m.content_is_string = get_value(j, "content").is_string();
  } else {
    return fail(error, role.empty() ? "a message needs a string 'role'"
                                    : "unknown message role '" + role + "'");
  }
  const Json& content = get_value(j, "content");
  if (content.is_string()) {
    m.content.push_back(ContentBlock::make_text(content.get<std::string>()));  // pi's shorthand
  } else if (content.is_array()) {
    for (const auto& b : content) {
      if (auto block = block_from_json(b)) m.content.push_back(std::move(*block));
    }
  } else if (!content.is_null()) {
    return fail(error, "a message's 'content' must be an array");
  }
  if (m.role == Role::assistant) {
    m.api = get_string(j, "api");
    m.provider = get_string(j, "provider");
    m.model = get_string(j, "model");
    m.usage = usage_from_json(get_object(j, "usage"));
    m.stop_reason = stop_reason_from_string(get_string(j, "stopReason")).value_or(StopReason::stop);
    m.response_id = get_string(j, "responseId");
    if (const Json& e = get_value(j, "errorMessage"); e.is_string()) {
      m.error_message = e.get<std::string>();
    }
  } else if (m.role == Role::tool_result) {
    m.tool_call_id = get_string(j, "toolCallId");
    m.tool_name = get_string(j, "toolName");
    m.details = get_value(j, "details");
    m.is_error = get_bool(j, "isError");
  }
  return m;
}

}  // namespace rebound::protocol
