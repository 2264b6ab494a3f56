#include "tests/support/strict_rules.h"

#include <algorithm>
#include <functional>
#include <map>

namespace rebound::testing {

using protocol::Json;

namespace {

std::string base64(const std::string& in) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(in[i]) << 16) |
                       (static_cast<unsigned char>(in[i + 1]) << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6)
      out += kAlphabet[(v >> s) & 63];
  }
  if (i < in.size()) {
    unsigned v = static_cast<unsigned char>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<unsigned char>(in[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string str(const Json& j, const char* key) {
  return json_string(j, key);
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool matches_word_pattern(const std::string& s, std::size_t max) {
  if (s.empty() || s.size() > max) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

}  // namespace

// --- the error bodies -------------------------------------------------------------------------

// Anthropic, "Errors" (docs.claude.com/en/api/errors): {"type":"error","error":{"type":…,
// "message":…},"request_id":…}.
Refusal anthropic_error(int status, const std::string& type, const std::string& message) {
  return {status,
          Json{{"type", "error"},
               {"error", {{"type", type}, {"message", message}}},
               {"request_id", "req_strict"}}
              .dump(),
          message};
}
namespace {

Refusal anthropic_invalid(const std::string& message) {
  return anthropic_error(400, "invalid_request_error", message);
}

}  // namespace

// OpenAI, "Error codes" (platform.openai.com/docs/guides/error-codes): {"error":{"message",
// "type","param","code"}}.
Refusal openai_error(int status, const std::string& message, const std::string& param,
                     const std::string& code, const std::string& type) {
  Json error{{"message", message}, {"type", type}};
  error["param"] = param.empty() ? Json(nullptr) : Json(param);
  error["code"] = code.empty() ? Json(nullptr) : Json(code);
  return {status, Json{{"error", error}}.dump(), message};
}

// Google, "Troubleshooting" (ai.google.dev/gemini-api/docs/troubleshooting): the google.rpc
// Status {"error":{"code","message","status"}}.
Refusal gemini_error(int status, const std::string& message, const std::string& state) {
  return {status,
          Json{{"error", {{"code", status}, {"message", message}, {"status", state}}}}.dump(),
          message};
}

// --- Anthropic Messages ----------------------------------------------------------------------

namespace {

std::optional<Refusal> check_cache_control(const Json& body) {
  // Prompt caching (docs.claude.com/en/docs/build-with-claude/prompt-caching): "You can define
  // up to 4 cache breakpoints"; "thinking blocks cannot be explicitly marked with
  // cache_control"; ttl is "5m" or "1h", and "longer TTL entries must appear before shorter".
  int count = 0;
  bool seen_short = false;
  std::optional<Refusal> bad;
  auto visit = [&](const Json& block, const std::string& where) {
    if (!block.is_object() || !block.contains("cache_control")) return;
    ++count;
    const Json& cc = block["cache_control"];
    if (str(block, "type") == "thinking" || str(block, "type") == "redacted_thinking") {
      if (!bad)
        bad = anthropic_invalid(where + ".thinking.cache_control: Extra inputs are not permitted");
      return;
    }
    if (str(cc, "type") != "ephemeral" && !bad)
      bad = anthropic_invalid(where + ".cache_control.type: Input should be 'ephemeral'");
    const std::string ttl = cc.contains("ttl") ? str(cc, "ttl") : "5m";
    if (ttl != "5m" && ttl != "1h" && !bad)
      bad = anthropic_invalid(where + ".cache_control.ttl: Input should be '5m' or '1h'");
    if (ttl == "1h" && seen_short && !bad)
      bad = anthropic_invalid(
          "A cache_control block with ttl='1h' must not come after a block with ttl='5m'.");
    if (ttl == "5m") seen_short = true;
  };
  if (body.contains("tools"))
    for (std::size_t i = 0; i < body["tools"].size(); ++i)
      visit(body["tools"][i], "tools." + std::to_string(i));
  if (body.contains("system") && body["system"].is_array())
    for (std::size_t i = 0; i < body["system"].size(); ++i)
      visit(body["system"][i], "system." + std::to_string(i));
  for (std::size_t i = 0; i < body["messages"].size(); ++i) {
    const Json& content = body["messages"][i]["content"];
    if (!content.is_array()) continue;
    for (std::size_t j = 0; j < content.size(); ++j)
      visit(content[j], "messages." + std::to_string(i) + ".content." + std::to_string(j));
  }
  if (bad) return bad;
  if (count > 4)
    return anthropic_invalid("A maximum of 4 blocks with cache_control may be provided. Found " +
                             std::to_string(count) + ".");
  return std::nullopt;
}

}  // namespace

std::string json_string(const Json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string Issued::make(const std::string& model) {
  const std::string token = base64("strict-fake/" + model + "/" + std::to_string(++next_) + "/");
  tokens_.insert({model, token});
  return token;
}

bool Issued::valid(const std::string& model, const std::string& token) const {
  return tokens_.count({model, token}) > 0;
}

std::optional<Refusal> check_anthropic(const std::map<std::string, std::string>& headers,
                                       const Json& body, const Issued& issued) {
  // Versioning (docs.claude.com/en/api/versioning): the anthropic-version header is required.
  if (!headers.count("anthropic-version"))
    return anthropic_invalid("anthropic-version: header is required");
  // Messages API reference (docs.claude.com/en/api/messages): model, max_tokens and messages
  // are required; roles are "user" and "assistant".
  if (!body.is_object() || !body.contains("max_tokens") || !body["max_tokens"].is_number_integer())
    return anthropic_invalid("max_tokens: Field required");
  if (!body.contains("messages") || !body["messages"].is_array() || body["messages"].empty())
    return anthropic_invalid("messages: at least one message is required");
  const std::string model = str(body, "model");
  // Tool definitions (docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use):
  // names match ^[a-zA-Z0-9_-]{1,128}$ and are unique.
  if (body.contains("tools")) {
    std::set<std::string> names;
    for (std::size_t i = 0; i < body["tools"].size(); ++i) {
      const std::string name = str(body["tools"][i], "name");
      if (!matches_word_pattern(name, 128))
        return anthropic_invalid("tools." + std::to_string(i) +
                                 ".custom.name: String should match pattern "
                                 "'^[a-zA-Z0-9_-]{1,128}$'");
      if (!names.insert(name).second) return anthropic_invalid("tools: Tool names must be unique.");
    }
  }
  // Extended thinking (docs.claude.com/en/docs/build-with-claude/extended-thinking):
  // budget_tokens at least 1024 and below max_tokens.
  bool thinking = false;
  if (body.contains("thinking") && str(body["thinking"], "type") == "enabled") {
    thinking = true;
    const Json& budget = body["thinking"]["budget_tokens"];
    if (!budget.is_number_integer() || budget.get<std::int64_t>() < 1024)
      return anthropic_invalid(
          "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
    if (budget.get<std::int64_t>() >= body["max_tokens"].get<std::int64_t>())
      return anthropic_invalid(
          "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
          "documentation at https://docs.claude.com/en/docs/build-with-claude/"
          "extended-thinking#max-tokens-and-context-window-size");
  }
  if (auto bad = check_cache_control(body)) return bad;
  const Json& messages = body["messages"];
  std::vector<std::string> open_calls;  // tool_use ids of the previous assistant message
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    const std::string role = str(m, "role");
    const std::string at = "messages." + std::to_string(i);
    if (role != "user" && role != "assistant")
      return anthropic_invalid(at + ".role: Input should be 'user' or 'assistant'");
    const Json& content = m["content"];
    std::vector<std::string> calls, results;
    if (content.is_string()) {
      if (content.get<std::string>().empty())
        return anthropic_invalid("messages: text content blocks must be non-empty");
    } else if (content.is_array()) {
      for (std::size_t j = 0; j < content.size(); ++j) {
        const Json& b = content[j];
        const std::string type = str(b, "type");
        const std::string where = at + ".content." + std::to_string(j);
        if (type == "text") {
          if (str(b, "text").empty())
            return anthropic_invalid("messages: text content blocks must be non-empty");
        } else if (type == "tool_use") {
          if (role != "assistant")
            return anthropic_invalid(where +
                                     ".type: tool_use blocks are only allowed in "
                                     "assistant messages");
          // Tool use (implement-tool-use): "id" matches ^[a-zA-Z0-9_-]+$.
          const std::string id = str(b, "id");
          if (!matches_word_pattern(id, 64))
            return anthropic_invalid(where +
                                     ".tool_use.id: String should match pattern "
                                     "'^[a-zA-Z0-9_-]+$'");
          calls.push_back(id);
        } else if (type == "tool_result") {
          results.push_back(str(b, "tool_use_id"));
          if (std::find(open_calls.begin(), open_calls.end(), results.back()) == open_calls.end())
            return anthropic_invalid(where +
                                     ": unexpected `tool_use_id` found in `tool_result` "
                                     "blocks: " +
                                     results.back() +
                                     ". Each `tool_result` block must have a corresponding "
                                     "`tool_use` block in the previous message.");
        } else if (type == "thinking" || type == "redacted_thinking") {
          if (role != "assistant")
            return anthropic_invalid(where +
                                     ".type: thinking blocks are only allowed in "
                                     "assistant messages");
          // Preserving thinking blocks (extended-thinking): the signature is verified; a
          // block not made by this model is refused.
          const std::string token = type == "thinking" ? str(b, "signature") : str(b, "data");
          if (!issued.valid(model, token))
            return anthropic_invalid(where + ": Invalid `signature` in `thinking` block");
        } else if (type == "image") {
          // Vision (docs.claude.com/en/docs/build-with-claude/vision): base64 with one of four
          // media types.
          static const std::set<std::string> kTypes{"image/jpeg", "image/png", "image/gif",
                                                    "image/webp"};
          if (!kTypes.count(str(b["source"], "media_type")))
            return anthropic_invalid(where +
                                     ".source.base64.media_type: Input should be "
                                     "'image/jpeg', 'image/png', 'image/gif' or "
                                     "'image/webp'");
        } else {
          return anthropic_invalid(where + ".type: Input tag '" + type +
                                   "' found using 'type' does not match any of the expected "
                                   "tags");
        }
      }
    } else {
      return anthropic_invalid(at + ".content: Input should be a valid list");
    }
    // Tool use (implement-tool-use): "tool result blocks must immediately follow their
    // corresponding tool use blocks", every call answered in the next message.
    if (!open_calls.empty()) {
      std::vector<std::string> missing;
      for (const auto& id : open_calls)
        if (std::find(results.begin(), results.end(), id) == results.end()) missing.push_back(id);
      if (!missing.empty()) {
        std::string list;
        for (const auto& id : missing)
          list += (list.empty() ? "" : ", ") + id;
        return anthropic_invalid("messages." + std::to_string(i - 1) +
                                 ": `tool_use` ids were found without `tool_result` blocks "
                                 "immediately after: " +
                                 list +
                                 ". Each `tool_use` block must have a corresponding "
                                 "`tool_result` block in the next message.");
      }
    }
    open_calls = role == "assistant" ? calls : std::vector<std::string>();
  }
  if (!open_calls.empty())
    return anthropic_invalid("messages." + std::to_string(messages.size() - 1) +
                             ": `tool_use` ids were found without `tool_result` blocks "
                             "immediately after: " +
                             open_calls.front() +
                             ". Each `tool_use` block must have a corresponding `tool_result` "
                             "block in the next message.");
  // Thinking with tool use (extended-thinking): while thinking is on, the assistant message
  // whose tool calls the last user message answers must start with its thinking block.
  const Json& last = messages.back();
  bool answering = false;
  if (str(last, "role") == "user" && last["content"].is_array())
    for (const auto& b : last["content"])
      answering = answering || str(b, "type") == "tool_result";
  if (thinking && answering && messages.size() >= 2) {
    const std::size_t i = messages.size() - 2;
    const Json& first = messages[i]["content"][0];
    const std::string type = str(first, "type");
    if (type != "thinking" && type != "redacted_thinking")
      return anthropic_invalid(
          "messages." + std::to_string(i) +
          ".content.0.type: Expected `thinking` or `redacted_thinking`, but found `" + type +
          "`. When `thinking` is enabled, a final `assistant` message must start with a "
          "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "
          "We recommend you include thinking blocks from previous turns. To avoid this "
          "requirement, disable `thinking`. Please consult our documentation at "
          "https://docs.claude.com/en/docs/build-with-claude/extended-thinking");
  }
  return std::nullopt;
}

AnthropicCache::Usage AnthropicCache::account(const Json& body) {
  // The prefix order is tools, system, messages (prompt-caching: "cache prefixes are created in
  // the following order: tools, system, then messages").
  std::vector<Json> blocks;
  std::vector<bool> breakpoint;
  auto add = [&](Json block) {
    breakpoint.push_back(block.is_object() && block.contains("cache_control"));
    if (block.is_object()) block.erase("cache_control");
    blocks.push_back(std::move(block));
  };
  if (body.contains("tools"))
    for (const auto& t : body["tools"])
      add(t);
  if (body.contains("system")) {
    if (body["system"].is_array()) {
      for (const auto& b : body["system"])
        add(b);
    } else {
      add(body["system"]);
    }
  }
  for (const auto& m : body["messages"]) {
    if (m["content"].is_array()) {
      for (const auto& b : m["content"]) {
        const bool marked = b.is_object() && b.contains("cache_control");
        Json block = b;
        if (marked) block.erase("cache_control");
        add(Json{{"role", m["role"]}, {"block", std::move(block)}});
        breakpoint.back() = marked;
      }
    } else {
      add(Json{{"role", m["role"]}, {"block", m["content"]}});
    }
  }
  // Cumulative tokens and a key per prefix (the model's cache is its own).
  std::vector<std::int64_t> tokens(blocks.size() + 1, 0);
  std::vector<std::string> keys(blocks.size() + 1);
  keys[0] = str(body, "model");
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const std::string text = blocks[i].dump();
    tokens[i + 1] = tokens[i] + static_cast<std::int64_t>((text.size() + 3) / 4);
    keys[i + 1] = keys[i] + "\x1f" + std::to_string(std::hash<std::string>{}(keys[i] + text));
    keys[i + 1] = keys[0] + "/" + std::to_string(std::hash<std::string>{}(keys[i + 1]));
  }
  constexpr std::int64_t kMinimum = 1024;  // Sonnet and Opus models' minimum cacheable prompt
  constexpr std::size_t kLookback = 20;
  std::size_t hit = 0;
  std::size_t last_break = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    if (!breakpoint[b]) continue;
    last_break = b + 1;
    for (std::size_t back = 0; back < kLookback && back <= b; ++back) {
      const std::size_t end = b + 1 - back;  // prefix of `end` blocks
      if (cached_.count(keys[end])) {
        hit = std::max(hit, end);
        break;
      }
    }
  }
  Usage u;
  u.cache_read = tokens[hit];
  if (last_break > hit && tokens[last_break] >= kMinimum) {
    u.cache_write = tokens[last_break] - tokens[hit];
    for (std::size_t b = 0; b < blocks.size(); ++b)
      if (breakpoint[b] && tokens[b + 1] >= kMinimum) cached_.insert(keys[b + 1]);
  }
  u.input = tokens.back() - u.cache_read - u.cache_write;
  return u;
}

// --- OpenAI Chat Completions -----------------------------------------------------------------

namespace {

// Reasoning guide (platform.openai.com/docs/guides/reasoning): the efforts a model family takes,
// on both OpenAI APIs.
std::vector<std::string> accepted_efforts(const std::string& model) {
  if (model.starts_with("gpt-5.")) return {"none", "low", "medium", "high"};
  if (model.size() > 1 && model[0] == 'o' && is_digit(model[1])) return {"low", "medium", "high"};
  return {"minimal", "low", "medium", "high"};
}

}  // namespace

std::optional<Refusal> check_chat(const Json& body) {
  // Chat Completions reference (platform.openai.com/docs/api-reference/chat/create): model and
  // messages are required.
  if (!body.is_object() || !body.contains("messages") || !body["messages"].is_array())
    return openai_error(400, "Missing required parameter: 'messages'.", "messages",
                        "missing_required_parameter");
  const std::string model = str(body, "model");
  const bool reasoning_model =
      model.starts_with("gpt-5") || (model.size() > 1 && model[0] == 'o' && is_digit(model[1]));
  // Reasoning models (platform.openai.com/docs/guides/reasoning): max_completion_tokens, not
  // max_tokens; reasoning_effort among the values the model takes.
  if (reasoning_model && body.contains("max_tokens"))
    return openai_error(400,
                        "Unsupported parameter: 'max_tokens' is not supported with this model. "
                        "Use 'max_completion_tokens' instead.",
                        "max_tokens", "unsupported_parameter");
  if (body.contains("reasoning_effort")) {
    const std::string effort = str(body, "reasoning_effort");
    const std::vector<std::string> accepted = accepted_efforts(model);
    if (std::find(accepted.begin(), accepted.end(), effort) == accepted.end())
      return openai_error(400,
                          "Unsupported value: 'reasoning_effort' does not support '" + effort +
                              "' with this model.",
                          "reasoning_effort", "unsupported_value");
  }
  if (body.contains("prompt_cache_key") && !body["prompt_cache_key"].is_string())
    return openai_error(400, "Invalid type for 'prompt_cache_key': expected a string.",
                        "prompt_cache_key", "invalid_type");
  // Function calling (platform.openai.com/docs/guides/function-calling): names match
  // ^[a-zA-Z0-9_-]{1,64}$.
  if (body.contains("tools"))
    for (std::size_t i = 0; i < body["tools"].size(); ++i)
      if (!matches_word_pattern(str(body["tools"][i]["function"], "name"), 64))
        return openai_error(400,
                            "Invalid 'tools[" + std::to_string(i) +
                                "].function.name': string does not match pattern. Expected a "
                                "string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
                            "tools[" + std::to_string(i) + "].function.name", "invalid_value");
  const Json& messages = body["messages"];
  std::vector<std::string> open;  // tool_call ids still to be answered
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const Json& m = messages[i];
    const std::string role = str(m, "role");
    const std::string at = "messages[" + std::to_string(i) + "]";
    if (role != "tool" && !open.empty()) {
      std::string list;
      for (const auto& id : open)
        list += (list.empty() ? "" : ", ") + id;
      return openai_error(400,
                          "An assistant message with 'tool_calls' must be followed by tool "
                          "messages responding to each 'tool_call_id'. The following "
                          "tool_call_ids did not have response messages: " +
                              list,
                          at + ".role", "");
    }
    if (role == "tool") {
      const std::string id = str(m, "tool_call_id");
      const auto it = std::find(open.begin(), open.end(), id);
      if (it == open.end())
        return openai_error(400,
                            "Invalid parameter: messages with role 'tool' must be a response to "
                            "a preceeding message with 'tool_calls'.",
                            at + ".role", "");
      open.erase(it);
      // Images only in user messages (vision guide: images are user content).
      if (m["content"].is_array())
        for (const auto& p : m["content"])
          if (str(p, "type") == "image_url")
            return openai_error(400,
                                "Invalid 'messages[" + std::to_string(i) +
                                    "]'. Image URLs are only allowed for messages with role "
                                    "'user', but this message with role 'tool' contains an "
                                    "image URL.",
                                at, "invalid_value");
      continue;
    }
    if (role == "assistant" && m.contains("tool_calls")) {
      for (std::size_t j = 0; j < m["tool_calls"].size(); ++j) {
        const std::string id = str(m["tool_calls"][j], "id");
        // Chat reference: a tool call's id is at most 40 characters.
        if (id.size() > 40)
          return openai_error(400,
                              "Invalid '" + at + ".tool_calls[" + std::to_string(j) +
                                  "].id': string too long. Expected a string with maximum "
                                  "length 40, but got a string with length " +
                                  std::to_string(id.size()) + " instead.",
                              at + ".tool_calls[" + std::to_string(j) + "].id",
                              "string_above_max_length");
        open.push_back(id);
      }
    } else if (role != "system" && role != "developer" && role != "user" && role != "assistant") {
      return openai_error(400,
                          "Invalid value: '" + role +
                              "'. Supported values are: 'system', "
                              "'assistant', 'user', 'function', 'tool', and 'developer'.",
                          at + ".role", "invalid_value");
    }
  }
  if (!open.empty())
    return openai_error(400,
                        "An assistant message with 'tool_calls' must be followed by tool messages "
                        "responding to each 'tool_call_id'. The following tool_call_ids did not "
                        "have response messages: " +
                            open.front(),
                        "messages", "");
  return std::nullopt;
}

// --- OpenAI Responses ------------------------------------------------------------------------

std::optional<Refusal> check_responses(const Json& body, const Issued& issued) {
  if (!body.is_object() || !body.contains("input") || !body["input"].is_array())
    return openai_error(400, "Missing required parameter: 'input'.", "input",
                        "missing_required_parameter");
  const std::string model = str(body, "model");
  // Reasoning guide (platform.openai.com/docs/guides/reasoning): the effort values each model
  // family takes.
  if (body.contains("reasoning") && body["reasoning"].contains("effort")) {
    const std::string effort = str(body["reasoning"], "effort");
    const std::vector<std::string> accepted = accepted_efforts(model);
    if (std::find(accepted.begin(), accepted.end(), effort) == accepted.end()) {
      std::string list;
      for (std::size_t i = 0; i < accepted.size(); ++i)
        list += (i ? (i + 1 == accepted.size() ? ", and '" : ", '") : "'") + accepted[i] + "'";
      return openai_error(400,
                          "Unsupported value: '" + effort + "' is not supported with the '" +
                              model + "' model. Supported values are: " + list + ".",
                          "reasoning.effort", "unsupported_value");
    }
  }
  const bool stored = !body.contains("store") || body["store"] != false;
  const Json& input = body["input"];
  std::set<std::string> calls, answered;
  for (std::size_t i = 0; i < input.size(); ++i) {
    const Json& item = input[i];
    const std::string type = str(item, "type");
    const std::string at = "input[" + std::to_string(i) + "]";
    if (type == "reasoning") {
      const std::string id = str(item, "id");
      // Reasoning guide, "encrypted reasoning items": with store:false the item only comes
      // back as its encrypted_content; an id alone refers to nothing stored.
      if (!stored && str(item, "encrypted_content").empty())
        return openai_error(404,
                            "Item with id '" + id +
                                "' not found. Items are not persisted when `store` is set to "
                                "false. Try again with `store` set to true, or remove this item "
                                "from your input.",
                            "input", "");
      if (!issued.valid(model, str(item, "encrypted_content")))
        return openai_error(400, "The encrypted content for item " + id + " could not be verified.",
                            "", "invalid_encrypted_content");
      // A reasoning item is followed by the item it led to.
      if (i + 1 == input.size() || str(input[i + 1], "type") == "function_call_output" ||
          (input[i + 1].contains("role") && str(input[i + 1], "role") != "assistant"))
        return openai_error(400,
                            "Item '" + id +
                                "' of type 'reasoning' was provided without its required "
                                "following item.",
                            "input", "");
    } else if (type == "function_call") {
      const std::string call_id = str(item, "call_id");
      // Function calling: call_id at most 64 characters; an item id the API made begins "fc".
      if (call_id.empty() || call_id.size() > 64)
        return openai_error(400,
                            "Invalid '" + at +
                                ".call_id': string too long. Expected a string with maximum "
                                "length 64, but got a string with length " +
                                std::to_string(call_id.size()) + " instead.",
                            at + ".call_id", "string_above_max_length");
      if (item.contains("id") && !str(item, "id").starts_with("fc"))
        return openai_error(400,
                            "Invalid '" + at + ".id': '" + str(item, "id") +
                                "'. Expected an ID that begins with 'fc'.",
                            at + ".id", "invalid_value");
      calls.insert(call_id);
    } else if (type == "function_call_output") {
      const std::string call_id = str(item, "call_id");
      if (!calls.count(call_id))
        return openai_error(
            400, "No tool call found for function call output with call_id " + call_id + ".",
            "input", "");
      answered.insert(call_id);
    } else if (type == "message" && item.contains("id") && !str(item, "id").starts_with("msg")) {
      return openai_error(400,
                          "Invalid '" + at + ".id': '" + str(item, "id") +
                              "'. Expected an ID that begins with 'msg'.",
                          at + ".id", "invalid_value");
    }
  }
  for (const auto& c : calls)
    if (!answered.count(c))
      return openai_error(400, "No tool output found for function call " + c + ".", "input", "");
  return std::nullopt;
}

// --- Google Gemini ---------------------------------------------------------------------------

std::optional<Refusal> check_gemini(const std::string& model, const Json& body,
                                    const Issued& issued) {
  if (!body.is_object() || !body.contains("contents") || !body["contents"].is_array() ||
      body["contents"].empty())
    return gemini_error(400, "* GenerateContentRequest.contents: contents is not specified\n");
  const bool gemini3 = model.find("gemini-3") != std::string::npos;
  // Thinking (ai.google.dev/gemini-api/docs/thinking): thinkingLevel is for Gemini 3 models;
  // Gemini 2.5 Pro cannot turn thinking off.
  if (body.contains("generationConfig") && body["generationConfig"].contains("thinkingConfig")) {
    const Json& tc = body["generationConfig"]["thinkingConfig"];
    if (tc.contains("thinkingLevel") && !gemini3)
      return gemini_error(400, "Thinking level is not supported for this model.");
    if (tc.contains("thinkingBudget") && tc["thinkingBudget"] == 0 &&
        model.find("2.5-pro") != std::string::npos)
      return gemini_error(400, "Budget 0 is invalid. This model only works in thinking mode.");
  }
  const Json& contents = body["contents"];
  // The current turn: from the last user content that is not function responses.
  std::size_t turn = 0;
  for (std::size_t i = 0; i < contents.size(); ++i) {
    const Json& c = contents[i];
    const bool responses = !c["parts"].empty() && c["parts"][0].contains("functionResponse");
    const bool images =
        !c["parts"].empty() && str(c["parts"][0], "text") == "Images from the tool results:";
    if (str(c, "role") == "user" && !responses && !images) turn = i;
  }
  std::size_t pending_calls = 0;
  for (std::size_t i = 0; i < contents.size(); ++i) {
    const Json& c = contents[i];
    const std::string role = str(c, "role");
    // Content reference (ai.google.dev/api/caching#Content): role "user" or "model".
    if (role != "user" && role != "model")
      return gemini_error(400, "Please use a valid role: user, model.");
    if (!c.contains("parts") || !c["parts"].is_array() || c["parts"].empty())
      return gemini_error(400, "* GenerateContentRequest.contents[" + std::to_string(i) +
                                   "].parts: contents.parts must not be empty.\n");
    std::size_t calls = 0, responses = 0;
    bool first_call = true;
    for (const auto& p : c["parts"]) {
      if (p.contains("thoughtSignature")) {
        // Thought signatures (ai.google.dev/gemini-api/docs/thought-signatures): returned as
        // they were given; the documented placeholder for calls the model did not make is
        // accepted.
        const std::string sig = str(p, "thoughtSignature");
        if (sig != "skip_thought_signature_validator" && !issued.valid(model, sig))
          return gemini_error(400, "Corrupted thought signature.");
      }
      if (p.contains("functionCall")) {
        if (role != "model")
          return gemini_error(400,
                              "Please ensure that function call turn comes immediately "
                              "after a user turn or after a function response turn.");
        // Gemini 3: the first function call of each step of the current turn carries its
        // signature, or the request is refused.
        if (gemini3 && first_call && i > turn && !p.contains("thoughtSignature"))
          return gemini_error(
              400,
              "Function call is missing a thought_signature in functionCall parts. This is "
              "required for tools to work correctly, and missing thought_signature may lead to "
              "degraded model performance. Additional data, function call `default_api:" +
                  str(p["functionCall"], "name") + "` , position " + std::to_string(i + 1) +
                  ". Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures "
                  "for more details.");
        first_call = false;
        ++calls;
      }
      if (p.contains("functionResponse")) {
        // Function calling with multimodal responses is a Gemini 3 feature.
        if (p["functionResponse"].contains("parts") && !gemini3)
          return gemini_error(400,
                              "Multimodal function responses are not supported by this "
                              "model.");
        ++responses;
      }
    }
    // Function calling (ai.google.dev/gemini-api/docs/function-calling): the responses come
    // in the turn right after the calls, one per call.
    if (responses > 0 && pending_calls == 0)
      return gemini_error(400,
                          "Please ensure that function response turn comes immediately "
                          "after a function call turn.");
    if (pending_calls > 0 && responses != pending_calls)
      return gemini_error(400,
                          "Please ensure that the number of function response parts is "
                          "equal to the number of function call parts of the function call "
                          "turn.");
    pending_calls = calls;
  }
  return std::nullopt;
}

}  // namespace rebound::testing
