#include "session/llm/request_codec.h"

#include <algorithm>
#include <optional>

#include "protocol/json_line.h"
#include "session/llm/secret_text.h"
#include "session/retry_policy.h"

namespace rebound::session::llm {

using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::Json;
using protocol::Role;
using protocol::ThinkingLevel;

namespace {

constexpr std::size_t kMaxErrorBody = 2000;

// Gemini's RetryInfo (providers.md section 3.3): a `details` entry of that @type whose
// `retryDelay` is "<decimal seconds>s", in ms.
std::optional<std::int64_t> retry_info_ms(const Json& error) {
  if (!error.is_object() || !error.contains("details") || !error["details"].is_array())
    return std::nullopt;
  std::optional<std::int64_t> out;
  for (const auto& d : error["details"]) {
    if (!d.is_object() || !d.contains("@type") || !d.contains("retryDelay")) continue;
    if (d["@type"] != "type.googleapis.com/google.rpc.RetryInfo" || !d["retryDelay"].is_string())
      continue;
    const std::string delay = d["retryDelay"].get<std::string>();
    if (delay.size() < 2 || delay.back() != 's') continue;
    // A plain decimal: digits with at most one '.', nothing else (no sign, no exponent).
    double seconds = 0, scale = 0;
    bool ok = true, digit = false;
    for (std::size_t i = 0; i + 1 < delay.size() && ok; ++i) {
      const char c = delay[i];
      if (c == '.' && scale == 0) {
        scale = 1;
      } else if (c >= '0' && c <= '9') {
        digit = true;
        if (scale == 0) {
          seconds = seconds * 10 + (c - '0');
        } else {
          scale /= 10;
          seconds += (c - '0') * scale;
        }
      } else {
        ok = false;
      }
    }
    if (!ok || !digit || seconds > 1e9) continue;
    out = std::max(out.value_or(0), static_cast<std::int64_t>(seconds * 1000 + 0.5));
  }
  return out;
}

bool has_images(const AgentMessage& m) {
  return std::any_of(m.content.begin(), m.content.end(),
                     [](const ContentBlock& b) { return b.kind == ContentBlock::Kind::image; });
}

Json openai_image_part(const ContentBlock& b) {
  return Json{{"type", "image_url"},
              {"image_url", Json{{"url", "data:" + b.mime_type + ";base64," + b.text}}}};
}

// A message's text and image blocks in Anthropic's form (user content, tool_result content).
Json anthropic_text_and_images(const AgentMessage& m) {
  Json blocks = Json::array();
  for (const auto& b : m.content) {
    if (b.kind == ContentBlock::Kind::text) {
      blocks.push_back(Json{{"type", "text"}, {"text", b.text}});
    } else if (b.kind == ContentBlock::Kind::image) {
      blocks.push_back(Json{
          {"type", "image"},
          {"source", Json{{"type", "base64"}, {"media_type", b.mime_type}, {"data", b.text}}}});
    }
  }
  return blocks;
}

Json openai_user_content(const AgentMessage& m) {
  if (!has_images(m)) return joined_text(m);
  Json parts = Json::array();
  for (const auto& b : m.content) {
    if (b.kind == ContentBlock::Kind::text) {
      parts.push_back(Json{{"type", "text"}, {"text", b.text}});
    } else if (b.kind == ContentBlock::Kind::image) {
      parts.push_back(openai_image_part(b));
    }
  }
  return parts;
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

}  // namespace

std::string reasoning_effort(ThinkingLevel level) {
  switch (level) {
    case ThinkingLevel::minimal:
      return "minimal";
    case ThinkingLevel::low:
      return "low";
    case ThinkingLevel::medium:
      return "medium";
    default:
      return "high";  // high and xhigh
  }
}

std::string joined_text(const AgentMessage& m) {
  std::string out;
  for (const auto& b : m.content) {
    if (b.kind == ContentBlock::Kind::text) {
      if (!out.empty()) out += "\n";
      out += b.text;
    }
  }
  return out;
}

Json openai_request_body(const LlmRequest& r) {
  Json messages = Json::array();
  if (!r.system_prompt.empty()) {
    messages.push_back(Json{{"role", "system"}, {"content", r.system_prompt}});
  }
  const bool images = r.model.takes_images();
  bool tool_history = false;
  // Images of consecutive tool results follow those tool messages as one user message.
  Json pending_images = Json::array();
  auto flush_images = [&] {
    if (pending_images.empty()) return;
    Json parts =
        Json::array({Json{{"type", "text"}, {"text", "Attached image(s) from tool result:"}}});
    for (auto& p : pending_images)
      parts.push_back(std::move(p));
    pending_images = Json::array();
    messages.push_back(Json{{"role", "user"}, {"content", std::move(parts)}});
  };
  for (const auto& m : r.messages) {
    if (m.role != Role::tool_result) flush_images();
    if (m.role == Role::user) {
      messages.push_back(Json{{"role", "user"}, {"content", openai_user_content(m)}});
    } else if (m.role == Role::assistant) {
      if (m.failed()) continue;
      Json a{{"role", "assistant"}};
      const std::string text = joined_text(m);
      a["content"] = text.empty() ? Json(nullptr) : Json(text);
      Json calls = Json::array();
      for (const auto& b : m.content) {
        if (b.kind != ContentBlock::Kind::tool_call) continue;
        calls.push_back(
            Json{{"id", b.id},
                 {"type", "function"},
                 {"function", Json{{"name", b.name}, {"arguments", b.arguments.dump()}}}});
      }
      if (!calls.empty()) {
        a["tool_calls"] = std::move(calls);
        tool_history = true;
      }
      if (text.empty() && !a.contains("tool_calls")) continue;  // thinking only: nothing to send
      messages.push_back(std::move(a));
    } else if (m.role == Role::tool_result) {
      tool_history = true;
      std::string text = joined_text(m);
      if (text.empty() && has_images(m)) text = "(see attached image)";
      messages.push_back(
          Json{{"role", "tool"}, {"content", std::move(text)}, {"tool_call_id", m.tool_call_id}});
      if (images) {
        for (const auto& b : m.content)
          if (b.kind == ContentBlock::Kind::image) pending_images.push_back(openai_image_part(b));
      }
    } else {
      // bashExecution and compactionSummary reach the model as user text.
      messages.push_back(Json{{"role", "user"}, {"content", protocol::llm_text(m)}});
    }
  }
  flush_images();
  Json body{{"model", r.model.id}, {"messages", std::move(messages)}, {"stream", true}};
  body["stream_options"] = Json{{"include_usage", true}};
  if (!r.tools.empty()) {
    Json tools = Json::array();
    for (const auto& t : r.tools) {
      tools.push_back(Json{
          {"type", "function"},
          {"function",
           Json{{"name", t.name}, {"description", t.description}, {"parameters", t.parameters}}}});
    }
    body["tools"] = std::move(tools);
  } else if (tool_history) {
    body["tools"] = Json::array();  // some OpenAI-compatible proxies want the key then
  }
  if (r.model.max_tokens > 0) {
    body[r.model.reasoning ? "max_completion_tokens" : "max_tokens"] = r.model.max_tokens;
  }
  if (r.model.reasoning && r.thinking_level != ThinkingLevel::off) {
    body["reasoning_effort"] = reasoning_effort(r.thinking_level);
  }
  return body;
}

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

Json anthropic_request_body(const LlmRequest& r) {
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
  for (const auto& m : r.messages) {
    Json blocks = Json::array();
    if (m.role == Role::user) {
      append("user", anthropic_text_and_images(m));
    } else if (m.role == Role::assistant) {
      if (m.failed()) continue;
      for (const auto& b : m.content) {
        if (b.kind == ContentBlock::Kind::text && !b.text.empty()) {
          blocks.push_back(Json{{"type", "text"}, {"text", b.text}});
        } else if (b.kind == ContentBlock::Kind::tool_call) {
          blocks.push_back(Json{{"type", "tool_use"},
                                {"id", b.id},
                                {"name", b.name},
                                {"input", b.arguments.is_object() ? b.arguments : Json::object()}});
        }
      }
      append("assistant", std::move(blocks));
    } else if (m.role == Role::tool_result) {
      Json content = joined_text(m);
      if (has_images(m) && r.model.takes_images()) content = anthropic_text_and_images(m);
      blocks.push_back(Json{{"type", "tool_result"},
                            {"tool_use_id", m.tool_call_id},
                            {"content", std::move(content)},
                            {"is_error", m.is_error}});
      append("user", std::move(blocks));
    } else {
      blocks.push_back(Json{{"type", "text"}, {"text", protocol::llm_text(m)}});
      append("user", std::move(blocks));
    }
  }
  std::int64_t max_tokens = r.model.max_tokens > 0 ? r.model.max_tokens : 4096;
  Json body{{"model", r.model.id}, {"max_tokens", max_tokens}, {"stream", true}};
  if (!r.system_prompt.empty()) body["system"] = r.system_prompt;
  body["messages"] = std::move(messages);
  if (!r.tools.empty()) {
    Json tools = Json::array();
    for (const auto& t : r.tools)
      tools.push_back(
          Json{{"name", t.name},
               {"description", t.description},
               {"input_schema", t.external ? t.parameters : anthropic_input_schema(t.parameters)}});
    body["tools"] = std::move(tools);
  }
  if (r.model.reasoning && r.thinking_level != ThinkingLevel::off) {
    // The budget must stay below max_tokens; the API's floor is 1024.
    const std::int64_t budget = std::max<std::int64_t>(
        1024, std::min(anthropic_thinking_budget(r.thinking_level), max_tokens - 1024));
    body["thinking"] = Json{{"type", "enabled"}, {"budget_tokens", budget}};
  }
  return body;
}

std::string http_error_message(int status, std::string_view body,
                               const std::map<std::string, std::string>& headers,
                               std::int64_t now_epoch_ms,
                               const std::optional<std::string>& secret) {
  std::string message;
  std::optional<std::int64_t> hint;
  const auto parsed = protocol::parse_provider_json(body);
  if (parsed.value && parsed.value->is_object() && parsed.value->contains("error")) {
    const Json& e = (*parsed.value)["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string()) {
      message = e["message"].get<std::string>();
    } else if (e.is_string()) {
      message = e.get<std::string>();
    }
    hint = retry_info_ms(e);
  }
  if (message.empty()) {
    if (body.empty()) {
      message = "status code (no body)";
    } else {
      message = cut_without_secret(body, kMaxErrorBody, secret);
    }
  }
  std::string out = std::to_string(status) + " " + message;
  // A hint only where a retry may follow (retry.md section 8): its digits would make a 4xx
  // match the retry pattern.
  if (status != 429 && (status < 500 || status > 599)) return out;
  for (const char* name :
       {"retry-after-ms", "retry-after", "x-ratelimit-reset-ms", "x-ratelimit-reset"}) {
    const auto it = headers.find(name);
    if (it == headers.end()) continue;
    if (auto ms = parse_retry_hint_ms(std::string(name) + ": " + it->second, now_epoch_ms)) {
      hint = std::max(hint.value_or(0), *ms);
    }
  }
  if (hint) out += " retry-after-ms=" + std::to_string(*hint);
  return out;
}

}  // namespace rebound::session::llm
