// OpenAI's Responses API request (providers.md section 2.1): the whole context as `input`
// items every time (`store:false`, no `previous_response_id`), reasoning items and message ids
// sent back only to the model that made them.
#include <algorithm>

#include "protocol/json_line.h"
#include "session/llm/request_codec.h"

namespace rebound::session::llm {

using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::Json;
using protocol::Role;
using protocol::ThinkingLevel;

namespace {

constexpr std::size_t kMaxItemId = 64;

// A tool call's `call_id`: the part of the block id before its first `|` (section 2.3), kept to
// [A-Za-z0-9_-] and 64 characters, as the API takes it. A call id the API made itself passes
// unchanged, so a call and its result always agree.
std::string call_id_of(const std::string& block_id) {
  const std::string before = block_id.substr(0, block_id.find('|'));
  std::string out;
  for (char c : before) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (ok) out += c;
    if (out.size() == kMaxItemId) break;
  }
  return out;
}

// The item id after the first `|`, when there is one.
std::string item_id_of(const std::string& block_id) {
  const std::size_t bar = block_id.find('|');
  return bar == std::string::npos ? std::string() : block_id.substr(bar + 1);
}

// The message item id a text block's signature holds ({"v":1,"id":…}), when usable.
std::string text_item_id(const ContentBlock& b) {
  if (b.signature.empty()) return {};
  const auto parsed = protocol::parse_provider_json(b.signature);
  if (!parsed.value || !parsed.value->is_object()) return {};
  const auto it = parsed.value->find("id");
  if (it == parsed.value->end() || !it->is_string()) return {};
  std::string id = it->get<std::string>();
  return id.size() > kMaxItemId ? std::string() : id;
}

Json user_item(const AgentMessage& m) {
  Json parts = Json::array();
  for (const auto& b : m.content) {
    if (b.kind == ContentBlock::Kind::text) {
      parts.push_back(Json{{"type", "input_text"}, {"text", b.text}});
    } else if (b.kind == ContentBlock::Kind::image) {
      parts.push_back(Json{{"type", "input_image"},
                           {"detail", "auto"},
                           {"image_url", "data:" + b.mime_type + ";base64," + b.text}});
    }
  }
  return Json{{"role", "user"}, {"content", std::move(parts)}};
}

Json user_text_item(const std::string& text) {
  return Json{{"role", "user"},
              {"content", Json::array({Json{{"type", "input_text"}, {"text", text}}})}};
}

// One item per block of an assistant message, in block order.
void assistant_items(const AgentMessage& m, std::size_t index, bool same_model, Json& input) {
  for (const auto& b : m.content) {
    if (b.kind == ContentBlock::Kind::thinking) {
      // The reasoning item it was, verbatim; without one (or from elsewhere) it is dropped.
      if (!same_model || b.signature.empty()) continue;
      auto item = protocol::parse_provider_json(b.signature);
      if (item.value && item.value->is_object()) input.push_back(std::move(*item.value));
    } else if (b.kind == ContentBlock::Kind::text) {
      if (b.text.empty()) continue;
      std::string id = same_model ? text_item_id(b) : std::string();
      if (id.empty()) id = "msg_" + std::to_string(index);
      input.push_back(Json{{"type", "message"},
                           {"role", "assistant"},
                           {"content", Json::array({Json{{"type", "output_text"},
                                                         {"text", b.text},
                                                         {"annotations", Json::array()}}})},
                           {"status", "completed"},
                           {"id", std::move(id)}});
    } else if (b.kind == ContentBlock::Kind::tool_call) {
      Json call{{"type", "function_call"}};
      const std::string item = same_model ? item_id_of(b.id) : std::string();
      if (!item.empty()) call["id"] = item;
      call["call_id"] = call_id_of(b.id);
      call["name"] = b.name;
      call["arguments"] = (b.arguments.is_object() ? b.arguments : Json::object()).dump();
      input.push_back(std::move(call));
    }
  }
}

bool reasons_at_off(const std::string& model_id) {
  static const char* const kAlways[] = {"gpt-5", "gpt-5-mini", "gpt-5-codex", "gpt-5.1-codex"};
  return std::any_of(std::begin(kAlways), std::end(kAlways),
                     [&](const char* id) { return model_id == id; });
}

}  // namespace

Json openai_responses_request_body(const LlmRequest& r) {
  Json input = Json::array();
  if (!r.system_prompt.empty())
    input.push_back(
        Json{{"role", r.model.reasoning ? "developer" : "system"}, {"content", r.system_prompt}});
  for (std::size_t i = 0; i < r.messages.size(); ++i) {
    const AgentMessage& m = r.messages[i];
    if (m.role == Role::user) {
      input.push_back(user_item(m));
    } else if (m.role == Role::assistant) {
      if (m.failed()) continue;
      const bool same_model =
          m.provider == r.model.provider && m.api == r.model.api && m.model == r.model.id;
      assistant_items(m, i, same_model, input);
    } else if (m.role == Role::tool_result) {
      input.push_back(Json{{"type", "function_call_output"},
                           {"call_id", call_id_of(m.tool_call_id)},
                           {"output", joined_text(m)}});
    } else {
      // bashExecution and compactionSummary reach the model as user text.
      input.push_back(user_text_item(protocol::llm_text(m)));
    }
  }
  Json body{{"model", r.model.id}, {"input", std::move(input)}, {"stream", true}};
  if (!r.session_id.empty()) body["prompt_cache_key"] = r.session_id;
  body["store"] = false;
  if (r.model.max_tokens > 0) body["max_output_tokens"] = r.model.max_tokens;
  if (!r.tools.empty()) {
    Json tools = Json::array();
    for (const auto& t : r.tools)
      tools.push_back(Json{{"type", "function"},
                           {"name", t.name},
                           {"description", t.description},
                           {"parameters", t.parameters},
                           {"strict", false}});
    body["tools"] = std::move(tools);
  }
  if (r.model.reasoning) {
    if (r.thinking_level != ThinkingLevel::off) {
      body["reasoning"] = Json{{"effort", reasoning_effort(r.thinking_level)}, {"summary", "auto"}};
      body["include"] = Json::array({"reasoning.encrypted_content"});
    } else if (!reasons_at_off(r.model.id)) {
      body["reasoning"] = Json{{"effort", "none"}};
    }
  }
  return body;
}

}  // namespace rebound::session::llm
