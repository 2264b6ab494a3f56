#include "session/llm/request_codec.h"

#include <algorithm>
#include <optional>

#include "protocol/json_line.h"
#include "session/llm/request_context.h"
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

Json openai_image_part(const ContentBlock& b) {
  return Json{{"type", "image_url"},
              {"image_url", Json{{"url", "data:" + b.mime_type + ";base64," + b.text}}}};
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

namespace {

bool digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

OpenAiEffort openai_effort(std::string_view id, ThinkingLevel level) {
  // Amendments A19: one table by id, first match wins; a level the model cannot take goes to
  // the next higher one it takes, else its highest.
  static const std::vector<std::string> kNoneToHigh{"none", "low", "medium", "high"};
  static const std::vector<std::string> kMinimalToHigh{"minimal", "low", "medium", "high"};
  static const std::vector<std::string> kLowToHigh{"low", "medium", "high"};
  const std::vector<std::string>* accepted = nullptr;
  bool off_sends_nothing = true;
  if (id.starts_with("gpt-5.") && id.size() > 6 && digit(id[6]) && id[6] != '0') {
    accepted = &kNoneToHigh;
    off_sends_nothing = false;
  } else if (id == "gpt-5" || id.starts_with("gpt-5-")) {
    accepted = &kMinimalToHigh;
  } else if (id.size() >= 2 && id[0] == 'o' && digit(id[1])) {
    accepted = &kLowToHigh;
  }
  if (!accepted) {
    // Any other reasoning model: the level's own effort, `none` for off (section 5.1).
    return {level == ThinkingLevel::off ? "none" : reasoning_effort(level), true, false};
  }
  if (level == ThinkingLevel::off) {
    if (off_sends_nothing) return {"", false, true};
    return {"none", true, true};
  }
  static const char* const kOrder[] = {"none", "minimal", "low", "medium", "high", "xhigh"};
  const std::size_t wanted = static_cast<std::size_t>(level);  // off=0 … xhigh=5, as kOrder
  for (std::size_t i = wanted; i < std::size(kOrder); ++i) {
    for (const auto& a : *accepted)
      if (a == kOrder[i]) return {a, true, true};
  }
  return {accepted->back(), true, true};
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

namespace {

// Amendments A30: Chat Completions gets `prompt_cache_key` from OpenAI's own host, or where the
// model entry says the endpoint takes it.
bool takes_prompt_cache_key(const protocol::Model& model) {
  if (model.prompt_cache_key) return true;
  std::string_view url = model.base_url;
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return false;
  url.remove_prefix(scheme + 3);
  const std::string_view host = url.substr(0, url.find_first_of(":/?#"));
  return host == "api.openai.com";
}

}  // namespace

Json openai_request_body(const LlmRequest& r) {
  const std::vector<AgentMessage> context = sendable_context(r.messages);
  const ToolIdMap ids(context, kChatCompletionsIds);
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
  for (const auto& m : context) {
    if (m.role != Role::tool_result) flush_images();
    if (m.role == Role::user) {
      messages.push_back(Json{{"role", "user"}, {"content", openai_user_content(m)}});
    } else if (m.role == Role::assistant) {
      Json a{{"role", "assistant"}};
      const std::string text = joined_text(m);
      a["content"] = text.empty() ? Json(nullptr) : Json(text);
      Json calls = Json::array();
      for (const auto& b : m.content) {
        if (b.kind != ContentBlock::Kind::tool_call) continue;
        calls.push_back(
            Json{{"id", ids(b.id)},
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
      messages.push_back(Json{
          {"role", "tool"}, {"content", std::move(text)}, {"tool_call_id", ids(m.tool_call_id)}});
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
  if (!r.session_id.empty() && takes_prompt_cache_key(r.model))
    body["prompt_cache_key"] = r.session_id;
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
  if (r.model.reasoning) {
    const OpenAiEffort effort = openai_effort(r.model.id, r.thinking_level);
    // Only a value the model takes (amendments A19); a model off the table keeps `off` silent.
    if (effort.send && (r.thinking_level != ThinkingLevel::off || effort.on_table))
      body["reasoning_effort"] = effort.value;
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
