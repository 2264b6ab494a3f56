// OpenAI's Responses API request (providers.md section 2.1): the whole context as `input`
// items every time (`store:false`, no `previous_response_id`), reasoning items and message ids
// sent back only to the model that made them.
#include <algorithm>
#include <optional>

#include "protocol/json_line.h"
#include "session/llm/request_codec.h"
#include "session/llm/request_context.h"

namespace rebound::session::llm {

using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::Json;
using protocol::Role;
using protocol::ThinkingLevel;

namespace {

constexpr std::size_t kMaxItemId = 64;

// A tool call's `call_id` before mapping: the part of the block id before its first `|`
// (section 2.3); ToolIdMap then fits it to the API's 64 characters (amendments A20), the same
// for a call and its result.
std::string call_part(const std::string& block_id) {
  return block_id.substr(0, block_id.find('|'));
}

// The message item id a text block's signature holds ({"v":1,"id":…}), when usable.
std::string text_item_id(const ContentBlock& b) {
  if (b.signature.empty()) return {};
  const auto parsed = protocol::parse_provider_json(b.signature);
  if (!parsed.value || !parsed.value->is_object()) return {};
  const auto it = parsed.value->find("id");
  if (it == parsed.value->end() || !it->is_string()) return {};
  std::string id = it->get<std::string>();
  // The API takes back only its own message ids, which begin with "msg".
  return id.size() > kMaxItemId || !id.starts_with("msg") ? std::string() : id;
}

// The reasoning item a thinking block's signature holds, when the API can take it back: with
// store:false only an item that carries its encrypted_content (providers.md section 7.1).
std::optional<Json> reasoning_item(const ContentBlock& b) {
  if (b.signature.empty()) return std::nullopt;
  auto item = protocol::parse_provider_json(b.signature);
  if (!item.value || !item.value->is_object()) return std::nullopt;
  const auto enc = item.value->find("encrypted_content");
  if (enc == item.value->end() || !enc->is_string() || enc->get_ref<const std::string&>().empty())
    return std::nullopt;
  return std::move(*item.value);
}

// A function_call item id the API made (it begins with "fc").
std::string function_item_id(const std::string& block_id) {
  const std::size_t bar = block_id.find('|');
  if (bar == std::string::npos) return {};
  std::string id = block_id.substr(bar + 1);
  return id.starts_with("fc") && id.size() <= kMaxItemId ? id : std::string();
}

// A message's text and images as input parts (a user message, a tool result's output).
Json input_parts(const AgentMessage& m) {
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
  return parts;
}

Json user_item(const AgentMessage& m) {
  return Json{{"role", "user"}, {"content", input_parts(m)}};
}

Json user_text_item(const std::string& text) {
  return Json{{"role", "user"},
              {"content", Json::array({Json{{"type", "input_text"}, {"text", text}}})}};
}

// One item per block of an assistant message, in block order.
void assistant_items(const AgentMessage& m, std::size_t index, bool same_model,
                     const ToolIdMap& ids, Json& input) {
  const std::size_t first = input.size();
  for (const auto& b : m.content) {
    if (b.kind == ContentBlock::Kind::thinking) {
      // The reasoning item it was, verbatim; without one (or from elsewhere) it is dropped.
      if (!same_model) continue;
      if (auto item = reasoning_item(b)) input.push_back(std::move(*item));
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
      const std::string item = same_model ? function_item_id(b.id) : std::string();
      if (!item.empty()) call["id"] = item;
      call["call_id"] = ids(b.id);
      call["name"] = b.name;
      call["arguments"] = (b.arguments.is_object() ? b.arguments : Json::object()).dump();
      input.push_back(std::move(call));
    }
  }
  // A reasoning item must be followed by the item it led to: trailing ones are left out.
  while (input.size() > first && input.back().value("type", "") == "reasoning")
    input.erase(input.size() - 1);
}

// A tool result's `output`: its text, or with images (a model that takes them) input parts
// (providers.md section 7.4).
Json result_output(const AgentMessage& m, bool images) {
  if (!images || !has_images(m)) return joined_text(m);
  return input_parts(m);
}

}  // namespace

Json openai_responses_request_body(const LlmRequest& r) {
  Json input = Json::array();
  if (!r.system_prompt.empty())
    input.push_back(
        Json{{"role", r.model.reasoning ? "developer" : "system"}, {"content", r.system_prompt}});
  const std::vector<AgentMessage> context = sendable_context(r.messages);
  const ToolIdMap ids(context, kResponsesCallIds, call_part);
  for (std::size_t i = 0; i < context.size(); ++i) {
    const AgentMessage& m = context[i];
    if (m.role == Role::user) {
      input.push_back(user_item(m));
    } else if (m.role == Role::assistant) {
      assistant_items(m, i, made_by(m, r.model), ids, input);
    } else if (m.role == Role::tool_result) {
      input.push_back(Json{{"type", "function_call_output"},
                           {"call_id", ids(m.tool_call_id)},
                           {"output", result_output(m, r.model.takes_images())}});
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
    // Amendments A19: the effort the model takes, and `include` on every request, so that the
    // reasoning item comes back replayable under store:false (providers.md section 7.1).
    const OpenAiEffort effort = openai_effort(r.model.id, r.thinking_level);
    if (effort.send) {
      Json reasoning{{"effort", effort.value}};
      if (r.thinking_level != ThinkingLevel::off) reasoning["summary"] = "auto";
      body["reasoning"] = std::move(reasoning);
    }
    body["include"] = Json::array({"reasoning.encrypted_content"});
  }
  return body;
}

}  // namespace rebound::session::llm
