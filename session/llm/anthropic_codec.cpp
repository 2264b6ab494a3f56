// Anthropic's Messages API request (runtime.md section 2, providers.md section 7): the context in
// alternating user and assistant messages (tool results as user tool_result blocks), signed
// thinking blocks back to the model that made them, tool-call ids fitted to the API's pattern,
// and the prompt-cache breakpoints of section 7.3.
#include <algorithm>
#include <optional>

#include "session/llm/request_codec.h"
#include "session/llm/request_context.h"

namespace rebound::session::llm {

using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::Json;
using protocol::Role;
using protocol::ThinkingLevel;

namespace {

// A message's text and image blocks in Anthropic's form (user content, tool_result content).
Json anthropic_text_and_images(const AgentMessage& m) {
  Json blocks = Json::array();
  for (const auto& b : m.content) {
    if (b.kind == ContentBlock::Kind::text) {
      // The API refuses an empty text block ("text content blocks must be non-empty").
      if (!b.text.empty()) blocks.push_back(Json{{"type", "text"}, {"text", b.text}});
    } else if (b.kind == ContentBlock::Kind::image) {
      blocks.push_back(Json{
          {"type", "image"},
          {"source", Json{{"type", "base64"}, {"media_type", b.mime_type}, {"data", b.text}}}});
    }
  }
  return blocks;
}

// tools.md section 8: the schema's properties and required (always present); a top-level
// additionalProperties is not sent.
Json anthropic_input_schema(const Json& parameters) {
  Json schema = parameters.is_object() ? parameters : Json::object();
  schema.erase("additionalProperties");
  schema["type"] = "object";
  if (!schema.contains("properties")) schema["properties"] = Json::object();
  if (!schema.contains("required")) schema["required"] = Json::array();
  return schema;
}

// A thinking block the API takes back: made by this model, with its signature (providers.md
// section 7.1); a redacted one as the data it was (amendments A21).
std::optional<Json> anthropic_thinking_block(const ContentBlock& b) {
  if (b.signature.empty()) return std::nullopt;
  if (b.redacted) return Json{{"type", "redacted_thinking"}, {"data", b.signature}};
  return Json{{"type", "thinking"}, {"thinking", b.text}, {"signature", b.signature}};
}

// Whether thinking must stay off for this request (providers.md section 7.1, amendments A21):
// the API asks the assistant message whose tool calls the last user message answers to open
// with a thinking block while thinking is on. When it does not (another model made it, or it
// was cut), the request goes without thinking, and so does every request of that tool loop,
// since the turns made meanwhile have none either, until a user message answers no tool call.
bool loop_without_thinking(const Json& messages) {
  if (messages.size() < 2 || messages.back()["role"] != "user") return false;
  bool answers = false;
  for (const auto& b : messages.back()["content"])
    answers = answers || b.value("type", "") == "tool_result";
  if (!answers) return false;
  const Json& assistant = messages[messages.size() - 2];
  if (assistant["role"] != "assistant" || assistant["content"].empty()) return true;
  const std::string first = assistant["content"][0].value("type", "");
  return first != "thinking" && first != "redacted_thinking";
}

Json cache_marker(protocol::CacheRetention retention) {
  Json marker{{"type", "ephemeral"}};
  if (retention == protocol::CacheRetention::long_term) marker["ttl"] = "1h";
  return marker;
}

}  // namespace

std::int64_t anthropic_thinking_budget(ThinkingLevel level) {
  switch (level) {
    case ThinkingLevel::off:
      return 0;
    case ThinkingLevel::minimal:
      return 1024;
    case ThinkingLevel::low:
      return 2048;
    case ThinkingLevel::medium:
      return 8192;
    case ThinkingLevel::high:
      return 16384;
    case ThinkingLevel::xhigh:
      return 32768;
  }
  return 0;
}

Json anthropic_request_body(const LlmRequest& r, protocol::CacheRetention retention) {
  const std::vector<AgentMessage> context = sendable_context(r.messages);
  const ToolIdMap ids(context, kAnthropicIds);
  Json messages = Json::array();
  auto append = [&](const char* role, Json blocks) {
    if (blocks.empty()) return;
    // The API wants alternating roles: consecutive messages of one role become one.
    if (!messages.empty() && messages.back()["role"] == role) {
      for (auto& b : blocks)
        messages.back()["content"].push_back(std::move(b));
    } else {
      messages.push_back(Json{{"role", role}, {"content", std::move(blocks)}});
    }
  };
  for (const auto& m : context) {
    Json blocks = Json::array();
    if (m.role == Role::user) {
      append("user", anthropic_text_and_images(m));
    } else if (m.role == Role::assistant) {
      const bool same = made_by(m, r.model);
      for (const auto& b : m.content) {
        if (b.kind == ContentBlock::Kind::text && !b.text.empty()) {
          blocks.push_back(Json{{"type", "text"}, {"text", b.text}});
        } else if (b.kind == ContentBlock::Kind::thinking) {
          // Back in its place, only to the model that made it (providers.md section 7.1).
          if (!same) continue;
          if (auto block = anthropic_thinking_block(b)) blocks.push_back(std::move(*block));
        } else if (b.kind == ContentBlock::Kind::tool_call) {
          blocks.push_back(Json{{"type", "tool_use"},
                                {"id", ids(b.id)},
                                {"name", b.name},
                                {"input", b.arguments.is_object() ? b.arguments : Json::object()}});
        }
      }
      append("assistant", std::move(blocks));
    } else if (m.role == Role::tool_result) {
      Json content = joined_text(m);
      if (has_images(m) && r.model.takes_images()) content = anthropic_text_and_images(m);
      blocks.push_back(Json{{"type", "tool_result"},
                            {"tool_use_id", ids(m.tool_call_id)},
                            {"content", std::move(content)},
                            {"is_error", m.is_error}});
      append("user", std::move(blocks));
    } else {
      blocks.push_back(Json{{"type", "text"}, {"text", protocol::llm_text(m)}});
      append("user", std::move(blocks));
    }
  }
  const bool cache = retention != protocol::CacheRetention::none;
  // Prompt caching (providers.md section 7.3): the last block of the last user message (tool
  // results included) is the third breakpoint after the system prompt and the tools.
  if (cache && !messages.empty() && messages.back()["role"] == "user") {
    Json& last = messages.back()["content"].back();
    last["cache_control"] = cache_marker(retention);
  }
  std::int64_t max_tokens = r.model.max_tokens > 0 ? r.model.max_tokens : 4096;
  Json body{{"model", r.model.id}, {"max_tokens", max_tokens}, {"stream", true}};
  if (!r.system_prompt.empty()) {
    if (cache) {
      body["system"] = Json::array({Json{{"type", "text"},
                                         {"text", r.system_prompt},
                                         {"cache_control", cache_marker(retention)}}});
    } else {
      body["system"] = r.system_prompt;
    }
  }
  body["messages"] = std::move(messages);
  if (!r.tools.empty()) {
    Json tools = Json::array();
    for (const auto& t : r.tools)
      tools.push_back(
          Json{{"name", t.name},
               {"description", t.description},
               {"input_schema", t.external ? t.parameters : anthropic_input_schema(t.parameters)}});
    if (cache) tools.back()["cache_control"] = cache_marker(retention);
    body["tools"] = std::move(tools);
  }
  if (r.model.reasoning && r.thinking_level != ThinkingLevel::off && max_tokens > 1024 &&
      !loop_without_thinking(body["messages"])) {
    // The budget must stay below max_tokens; the API's floor is 1024.
    const std::int64_t budget = std::max<std::int64_t>(
        1024, std::min(anthropic_thinking_budget(r.thinking_level), max_tokens - 1024));
    body["thinking"] = Json{{"type", "enabled"}, {"budget_tokens", budget}};
  }
  return body;
}

}  // namespace rebound::session::llm
