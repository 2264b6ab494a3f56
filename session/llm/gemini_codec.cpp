// Google's Gemini API request (providers.md section 3.1): `contents` in Gemini's roles (user,
// model), the system prompt as `systemInstruction`, every tool in one `functionDeclarations`
// entry, and a thinking config that goes by the model id. Thought parts and signatures go back
// only to the provider and model that made them.
#include "session/llm/request_codec.h"
#include "session/llm/request_context.h"

namespace rebound::session::llm {

using protocol::AgentMessage;
using protocol::ContentBlock;
using protocol::Json;
using protocol::Role;
using protocol::ThinkingLevel;

namespace {

// A signature the API can take back: base64 (length a multiple of 4, [A-Za-z0-9+/] then at
// most two '=').
bool valid_signature(const std::string& s) {
  if (s.empty() || s.size() % 4 != 0) return false;
  std::size_t pad = 0;
  for (const char c : s) {
    if (c == '=') {
      ++pad;
      continue;
    }
    const bool b64 = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '+' || c == '/';
    if (!b64 || pad > 0) return false;
  }
  return pad <= 2;
}

Json with_signature(Json part, const std::string& signature, bool same_model) {
  if (same_model && valid_signature(signature)) part["thoughtSignature"] = signature;
  return part;
}

Json user_parts(const AgentMessage& m) {
  Json parts = Json::array();
  for (const auto& b : m.content) {
    if (b.kind == ContentBlock::Kind::text) {
      parts.push_back(Json{{"text", b.text}});
    } else if (b.kind == ContentBlock::Kind::image) {
      parts.push_back(Json{{"inlineData", {{"mimeType", b.mime_type}, {"data", b.text}}}});
    }
  }
  return parts;
}

Json model_parts(const AgentMessage& m, bool same_model) {
  Json parts = Json::array();
  for (const auto& b : m.content) {
    if (b.kind == ContentBlock::Kind::text) {
      if (b.text.empty()) continue;
      parts.push_back(with_signature(Json{{"text", b.text}}, b.signature, same_model));
    } else if (b.kind == ContentBlock::Kind::thinking) {
      // Thinking from another model is dropped (runtime.md section 2).
      if (!same_model || (b.text.empty() && !valid_signature(b.signature))) continue;
      parts.push_back(
          with_signature(Json{{"text", b.text}, {"thought", true}}, b.signature, same_model));
    } else if (b.kind == ContentBlock::Kind::tool_call) {
      Json call{{"name", b.name}, {"args", b.arguments.is_object() ? b.arguments : Json::object()}};
      parts.push_back(
          with_signature(Json{{"functionCall", std::move(call)}}, b.signature, same_model));
    }
  }
  return parts;
}

// Gemini 3's generation from the model id: "pro", "flash" or empty (not Gemini 3).
std::string gemini3_kind(const std::string& id) {
  for (std::size_t at = id.find("gemini-3"); at != std::string::npos;
       at = id.find("gemini-3", at + 1)) {
    std::size_t i = at + 8;
    if (i < id.size() && id[i] == '.') {
      std::size_t digits = i + 1;
      while (digits < id.size() && id[digits] >= '0' && id[digits] <= '9')
        ++digits;
      if (digits == i + 1) continue;
      i = digits;
    }
    const std::string_view rest = std::string_view(id).substr(i);
    if (rest.starts_with("-pro")) return "pro";
    if (rest.starts_with("-flash")) return "flash";
  }
  return {};
}

// minimal, low, medium, high (xhigh as high) as 0 to 3.
int level_index(ThinkingLevel level) {
  switch (level) {
    case ThinkingLevel::minimal:
      return 0;
    case ThinkingLevel::low:
      return 1;
    case ThinkingLevel::medium:
      return 2;
    default:
      return 3;
  }
}

// section 3.1's thinkingConfig, or null for none (section 5.1's `off` for 2.5 Pro included).
Json thinking_config(const protocol::Model& model, ThinkingLevel level) {
  if (!model.reasoning) return nullptr;
  const std::string& id = model.id;
  const std::string g3 = gemini3_kind(id);
  const bool pro25 = id.find("2.5-pro") != std::string::npos;
  if (level == ThinkingLevel::off) {
    if (pro25) return nullptr;
    if (g3 == "pro") return Json{{"thinkingLevel", "LOW"}};
    if (g3 == "flash") return Json{{"thinkingLevel", "MINIMAL"}};
    return Json{{"thinkingBudget", 0}};
  }
  const int i = level_index(level);
  Json config{{"includeThoughts", true}};
  if (g3 == "pro") {
    config["thinkingLevel"] = i <= 1 ? "LOW" : "HIGH";
  } else if (g3 == "flash") {
    static const char* const kLevels[] = {"MINIMAL", "LOW", "MEDIUM", "HIGH"};
    config["thinkingLevel"] = kLevels[i];
  } else {
    static const std::int64_t kPro[] = {128, 2048, 8192, 32768};
    static const std::int64_t kLite[] = {512, 2048, 8192, 24576};
    static const std::int64_t kFlash[] = {128, 2048, 8192, 24576};
    std::int64_t budget = -1;  // dynamic
    if (pro25) {
      budget = kPro[i];
    } else if (id.find("2.5-flash-lite") != std::string::npos) {
      budget = kLite[i];
    } else if (id.find("2.5-flash") != std::string::npos) {
      budget = kFlash[i];
    }
    config["thinkingBudget"] = budget;
  }
  return config;
}

Json inline_data(const ContentBlock& b) {
  return Json{{"inlineData", {{"mimeType", b.mime_type}, {"data", b.text}}}};
}

// Gemini 3 asks for a signature on the first function call of each step of the current turn
// (providers.md section 7.1); a call another model made has none, and goes with the value
// Google documents for calls it did not sign.
constexpr const char* kUnsignedCall = "skip_thought_signature_validator";
constexpr const char* kImagesIntro = "Images from the tool results:";

void sign_current_turn(Json& contents) {
  std::size_t start = contents.size();
  while (start > 0) {
    const Json& c = contents[start - 1];
    const bool results = c["role"] == "user" && !c["parts"].empty() &&
                         (c["parts"][0].contains("functionResponse") ||
                          c["parts"][0].value("text", "") == kImagesIntro);
    if (c["role"] == "user" && !results) break;
    --start;
  }
  for (std::size_t i = start; i < contents.size(); ++i) {
    if (contents[i]["role"] != "model") continue;
    for (Json& part : contents[i]["parts"]) {
      if (!part.contains("functionCall")) continue;
      if (!part.contains("thoughtSignature")) part["thoughtSignature"] = kUnsignedCall;
      break;
    }
  }
}

}  // namespace

Json gemini_request_body(const LlmRequest& r) {
  const std::vector<AgentMessage> context = sendable_context(r.messages);
  const bool gemini3 = !gemini3_kind(r.model.id).empty();
  const bool images = r.model.takes_images();
  Json contents = Json::array();
  bool after_results = false;  // the last content holds tool results
  // Images of the tool results since the last model turn, for models that take them only in a
  // user turn after the function responses (amendments A31).
  Json pending_images = Json::array();
  auto flush_images = [&] {
    if (pending_images.empty()) return;
    Json parts = Json::array({Json{{"text", kImagesIntro}}});
    for (auto& p : pending_images)
      parts.push_back(std::move(p));
    pending_images = Json::array();
    contents.push_back(Json{{"role", "user"}, {"parts", std::move(parts)}});
  };
  for (const AgentMessage& m : context) {
    const bool result = m.role == Role::tool_result;
    if (!result) flush_images();
    if (result) {
      Json response = Json::object();
      response[m.is_error ? "error" : "output"] = joined_text(m);
      Json call{{"name", m.tool_name}, {"response", std::move(response)}};
      if (images) {
        Json image_parts = Json::array();
        for (const auto& b : m.content) {
          if (b.kind != ContentBlock::Kind::image) continue;
          if (gemini3) {
            image_parts.push_back(inline_data(b));
          } else {
            pending_images.push_back(inline_data(b));
          }
        }
        if (!image_parts.empty()) call["parts"] = std::move(image_parts);
      }
      Json part{{"functionResponse", std::move(call)}};
      if (after_results) {
        contents.back()["parts"].push_back(std::move(part));
      } else {
        contents.push_back(Json{{"role", "user"}, {"parts", Json::array({std::move(part)})}});
      }
    } else if (m.role == Role::user) {
      Json parts = user_parts(m);
      if (!parts.empty()) contents.push_back(Json{{"role", "user"}, {"parts", std::move(parts)}});
    } else if (m.role == Role::assistant) {
      const bool same_model = m.provider == r.model.provider && m.model == r.model.id;
      Json parts = model_parts(m, same_model);
      if (!parts.empty()) contents.push_back(Json{{"role", "model"}, {"parts", std::move(parts)}});
    } else {
      // bashExecution and compactionSummary reach the model as user text.
      contents.push_back(
          Json{{"role", "user"}, {"parts", Json::array({Json{{"text", protocol::llm_text(m)}}})}});
    }
    after_results = result;
  }
  flush_images();
  if (gemini3) sign_current_turn(contents);
  Json body{{"contents", std::move(contents)}};
  if (!r.system_prompt.empty())
    body["systemInstruction"] = Json{{"parts", Json::array({Json{{"text", r.system_prompt}}})}};
  if (!r.tools.empty()) {
    Json declarations = Json::array();
    for (const auto& t : r.tools)
      declarations.push_back(Json{{"name", t.name},
                                  {"description", t.description},
                                  {"parametersJsonSchema", t.parameters}});
    body["tools"] = Json::array({Json{{"functionDeclarations", std::move(declarations)}}});
  }
  Json config = Json::object();
  if (r.model.max_tokens > 0) config["maxOutputTokens"] = r.model.max_tokens;
  Json thinking = thinking_config(r.model, r.thinking_level);
  if (!thinking.is_null()) config["thinkingConfig"] = std::move(thinking);
  if (!config.empty()) body["generationConfig"] = std::move(config);
  return body;
}

}  // namespace rebound::session::llm
