#include "protocol/messages.h"

#include <array>
#include <cmath>
#include <string>

#include "protocol/wire_types.h"

namespace rebound::protocol {

namespace {
constexpr std::array<std::string_view, 5> kStop{"stop", "length", "toolUse", "error", "aborted"};
}

std::string_view to_string(StopReason reason) {
  return kStop[static_cast<int>(reason)];
}

std::optional<StopReason> stop_reason_from_string(std::string_view s) {
  for (std::size_t i = 0; i < kStop.size(); ++i) {
    if (kStop[i] == s) return static_cast<StopReason>(i);
  }
  return std::nullopt;
}

ContentBlock ContentBlock::make_text(std::string text) {
  ContentBlock b;
  b.kind = Kind::text;
  b.text = std::move(text);
  return b;
}

ContentBlock ContentBlock::make_thinking(std::string thinking) {
  ContentBlock b;
  b.kind = Kind::thinking;
  b.text = std::move(thinking);
  return b;
}

ContentBlock ContentBlock::make_image(std::string data, std::string mime_type) {
  ContentBlock b;
  b.kind = Kind::image;
  b.text = std::move(data);
  b.mime_type = std::move(mime_type);
  return b;
}

ContentBlock ContentBlock::make_tool_call(std::string id, std::string name, Json arguments) {
  ContentBlock b;
  b.kind = Kind::tool_call;
  b.id = std::move(id);
  b.name = std::move(name);
  b.arguments = std::move(arguments);
  return b;
}

std::string AgentMessage::text() const {
  std::string out;
  for (const auto& b : content) {
    if (b.kind == ContentBlock::Kind::text) out += b.text;
  }
  return out;
}

AgentMessage make_custom_message(std::string custom_type, std::string content, Json details,
                                 std::int64_t timestamp) {
  AgentMessage m;
  m.role = Role::custom;
  m.custom_type = std::move(custom_type);
  m.content.push_back(ContentBlock::make_text(std::move(content)));
  m.content_is_string = true;
  m.details = std::move(details);
  m.timestamp = timestamp;
  return m;
}

std::string llm_text(const AgentMessage& m) {
  if (m.role == Role::compaction_summary) {
    return "The conversation before this point was compacted into this summary:\n\n<summary>\n" +
           m.summary + "\n</summary>";
  }
  if (m.role != Role::bash_execution) return m.text();
  std::string out = "Ran `" + m.command + "`\n";
  out += m.output.empty() ? std::string("(no output)") : "```\n" + m.output + "\n```";
  if (m.cancelled) {
    out += "\n\n(command cancelled)";
  } else if (m.exit_code && *m.exit_code != 0) {
    out += "\n\nCommand exited with code " + std::to_string(*m.exit_code);
  }
  if (m.truncated && m.full_output_path) {
    out += "\n\n[Output truncated. Full output: " + *m.full_output_path + "]";
  }
  return out;
}

Usage& operator+=(Usage& a, const Usage& b) {
  a.input += b.input;
  a.output += b.output;
  a.cache_read += b.cache_read;
  a.cache_write += b.cache_write;
  a.total_tokens += b.total_tokens;
  a.cost_input += b.cost_input;
  a.cost_output += b.cost_output;
  a.cost_cache_read += b.cost_cache_read;
  a.cost_cache_write += b.cost_cache_write;
  a.cost_total += b.cost_total;
  return a;
}

Usage operator-(Usage a, const Usage& b) {
  a.input -= b.input;
  a.output -= b.output;
  a.cache_read -= b.cache_read;
  a.cache_write -= b.cache_write;
  a.total_tokens -= b.total_tokens;
  a.cost_input -= b.cost_input;
  a.cost_output -= b.cost_output;
  a.cost_cache_read -= b.cost_cache_read;
  a.cost_cache_write -= b.cost_cache_write;
  a.cost_total -= b.cost_total;
  return a;
}

std::string_view signature_key(ContentBlock::Kind kind) {
  switch (kind) {
    case ContentBlock::Kind::text:
      return "textSignature";
    case ContentBlock::Kind::thinking:
      return "thinkingSignature";
    case ContentBlock::Kind::tool_call:
      return "thoughtSignature";
    case ContentBlock::Kind::image:
      break;
  }
  return {};
}

Json to_json(const ContentBlock& b) {
  Json j = Json::object();
  switch (b.kind) {
    case ContentBlock::Kind::text:
      j["type"] = "text";
      j["text"] = b.text;
      break;
    case ContentBlock::Kind::thinking:
      j["type"] = "thinking";
      j["thinking"] = b.text;
      break;
    case ContentBlock::Kind::image:
      j["type"] = "image";
      j["data"] = b.text;
      j["mimeType"] = b.mime_type;
      break;
    case ContentBlock::Kind::tool_call:
      j["type"] = "toolCall";
      j["id"] = b.id;
      j["name"] = b.name;
      j["arguments"] = b.arguments.is_object() ? b.arguments : Json::object();
      break;
  }
  // After the block's other keys, as pi writes it (providers.md section 2.3).
  if (!b.signature.empty() && b.kind != ContentBlock::Kind::image)
    j[std::string(signature_key(b.kind))] = b.signature;
  if (b.redacted && b.kind == ContentBlock::Kind::thinking) j["redacted"] = true;
  return j;
}

Json to_json(const Usage& u) {
  Json j = Json::object();
  j["input"] = u.input;
  j["output"] = u.output;
  j["cacheRead"] = u.cache_read;
  j["cacheWrite"] = u.cache_write;
  j["totalTokens"] = u.total_tokens;
  Json cost = Json::object();
  cost["input"] = json_number(u.cost_input);
  cost["output"] = json_number(u.cost_output);
  cost["cacheRead"] = json_number(u.cost_cache_read);
  cost["cacheWrite"] = json_number(u.cost_cache_write);
  cost["total"] = json_number(u.cost_total);
  j["cost"] = std::move(cost);
  return j;
}

namespace {

// A number as json_number(value) and to_line() write it.
void append_number(std::string& out, double value) {
  if (std::trunc(value) == value && std::fabs(value) < 9007199254740992.0) {
    out += std::to_string(static_cast<std::int64_t>(value));
  } else if (!std::isfinite(value)) {
    out += "null";  // how the serializer writes what JSON cannot hold
  } else {
    char buffer[64];  // the serializer's own shortest round-trip form
    const char* end = nlohmann::detail::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, static_cast<std::size_t>(end - buffer));
  }
}

}  // namespace

void append_usage_json(std::string& out, const Usage& u) {
  out += "{\"input\":";
  out += std::to_string(u.input);
  out += ",\"output\":";
  out += std::to_string(u.output);
  out += ",\"cacheRead\":";
  out += std::to_string(u.cache_read);
  out += ",\"cacheWrite\":";
  out += std::to_string(u.cache_write);
  out += ",\"totalTokens\":";
  out += std::to_string(u.total_tokens);
  out += ",\"cost\":{\"input\":";
  append_number(out, u.cost_input);
  out += ",\"output\":";
  append_number(out, u.cost_output);
  out += ",\"cacheRead\":";
  append_number(out, u.cost_cache_read);
  out += ",\"cacheWrite\":";
  append_number(out, u.cost_cache_write);
  out += ",\"total\":";
  append_number(out, u.cost_total);
  out += "}}";
}

Json to_json(const AgentMessage& m) {
  Json j = Json::object();
  Json content = Json::array();
  for (const auto& b : m.content)
    content.push_back(to_json(b));
  switch (m.role) {
    case Role::user:
      j["role"] = "user";
      j["content"] = std::move(content);
      j["timestamp"] = m.timestamp;
      break;
    case Role::assistant:
      j["role"] = "assistant";
      j["content"] = std::move(content);
      j["api"] = m.api;
      j["provider"] = m.provider;
      j["model"] = m.model;
      j["usage"] = to_json(m.usage);
      j["stopReason"] = to_string(m.stop_reason);
      j["timestamp"] = m.timestamp;
      if (!m.response_id.empty()) j["responseId"] = m.response_id;
      if (m.error_message) j["errorMessage"] = *m.error_message;
      break;
    case Role::tool_result:
      j["role"] = "toolResult";
      j["toolCallId"] = m.tool_call_id;
      j["toolName"] = m.tool_name;
      j["content"] = std::move(content);
      if (!m.details.is_null()) j["details"] = m.details;
      j["isError"] = m.is_error;
      j["timestamp"] = m.timestamp;
      break;
    case Role::bash_execution:
      j["role"] = "bashExecution";
      j["command"] = m.command;
      j["output"] = m.output;
      j["exitCode"] = m.exit_code ? Json(*m.exit_code) : Json(nullptr);
      j["cancelled"] = m.cancelled;
      j["truncated"] = m.truncated;
      if (m.full_output_path) j["fullOutputPath"] = *m.full_output_path;
      j["timestamp"] = m.timestamp;
      break;
    case Role::compaction_summary:
      j["role"] = "compactionSummary";
      j["summary"] = m.summary;
      j["tokensBefore"] = m.tokens_before;
      j["timestamp"] = m.timestamp;
      break;
    case Role::custom:
      j["role"] = "custom";
      j["customType"] = m.custom_type;
      j["content"] = m.content_is_string ? Json(m.text()) : std::move(content);
      j["display"] = m.display;
      if (!m.details.is_null()) j["details"] = m.details;
      j["timestamp"] = m.timestamp;
      break;
  }
  return j;
}

Json to_json(const std::vector<AgentMessage>& messages) {
  Json j = Json::array();
  for (const auto& m : messages)
    j.push_back(to_json(m));
  return j;
}

}  // namespace rebound::protocol
