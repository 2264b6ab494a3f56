#include "session/llm/script.h"

#include <algorithm>

namespace rebound::session::llm {

using protocol::Json;

namespace {

struct StepError {
  std::string message;
};

std::int64_t non_negative(const Json& step, const char* key, std::int64_t fallback) {
  const auto it = step.find(key);
  if (it == step.end()) return fallback;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0) {
    throw StepError{std::string("'") + key + "' must be a non-negative integer"};
  }
  return it->get<std::int64_t>();
}

std::optional<std::string> optional_string(const Json& step, const char* key) {
  const auto it = step.find(key);
  if (it == step.end()) return std::nullopt;
  if (!it->is_string()) throw StepError{std::string("'") + key + "' must be a string"};
  return it->get<std::string>();
}

ScriptStep parse_step(const Json& j) {
  if (!j.is_object()) throw StepError{"a step must be an object"};
  static const std::vector<std::string> kKnown{"text",       "chunks",    "delayMs", "chunkDelayMs",
                                               "thinking",   "toolCalls", "usage",   "error",
                                               "stopReason", "hang"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(kKnown.begin(), kKnown.end(), it.key()) == kKnown.end()) {
      throw StepError{"unknown field '" + it.key() + "'"};
    }
  }
  ScriptStep s;
  s.text = optional_string(j, "text");
  s.chunks = non_negative(j, "chunks", 1);
  if (s.chunks == 0) throw StepError{"'chunks' must be at least 1"};
  s.delay_ms = non_negative(j, "delayMs", 0);
  s.chunk_delay_ms = non_negative(j, "chunkDelayMs", 0);
  s.thinking = optional_string(j, "thinking");
  s.error = optional_string(j, "error");
  if (const auto it = j.find("toolCalls"); it != j.end()) {
    if (!it->is_array()) throw StepError{"'toolCalls' must be an array"};
    for (const auto& c : *it) {
      if (!c.is_object() || !c.contains("name") || !c["name"].is_string()) {
        throw StepError{"each tool call needs a string 'name'"};
      }
      Json args = c.value("arguments", Json::object());
      if (!args.is_object()) throw StepError{"tool call 'arguments' must be an object"};
      s.tool_calls.push_back({c["name"].get<std::string>(), std::move(args)});
    }
  }
  if (const auto it = j.find("usage"); it != j.end()) {
    if (!it->is_object()) throw StepError{"'usage' must be an object"};
    protocol::Usage u;
    u.input = non_negative(*it, "input", 0);
    u.output = non_negative(*it, "output", 0);
    u.cache_read = non_negative(*it, "cacheRead", 0);
    u.cache_write = non_negative(*it, "cacheWrite", 0);
    u.total_tokens = u.input + u.output + u.cache_read + u.cache_write;
    s.usage = u;
  }
  if (const auto reason = optional_string(j, "stopReason")) {
    s.stop_reason = protocol::stop_reason_from_string(*reason);
    if (!s.stop_reason)
      throw StepError{"'stopReason' must be one of stop, length, toolUse, error, aborted"};
  }
  if (const auto it = j.find("hang"); it != j.end()) {
    if (!it->is_boolean()) throw StepError{"'hang' must be a boolean"};
    s.hang = it->get<bool>();
  }
  return s;
}

std::size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  if ((lead >> 3) == 0x1E) return 4;
  return 1;
}

}  // namespace

ScriptParse parse_script(const Json& script) {
  ScriptParse r;
  if (!script.is_array()) {
    r.error = "the script must be a JSON array of steps";
    return r;
  }
  if (script.empty()) {
    r.error = "the script has no steps";
    return r;
  }
  for (std::size_t i = 0; i < script.size(); ++i) {
    try {
      r.steps.push_back(parse_step(script[i]));
    } catch (const StepError& e) {
      r.steps.clear();
      r.error = "step " + std::to_string(i) + ": " + e.message;
      return r;
    }
  }
  return r;
}

std::vector<std::string> split_into_chunks(const std::string& text, std::int64_t chunks) {
  std::vector<std::size_t> starts;  // byte offset of each character
  for (std::size_t i = 0; i < text.size();) {
    starts.push_back(i);
    i += utf8_length(static_cast<unsigned char>(text[i]));
  }
  const std::size_t n = starts.size();
  std::vector<std::string> out;
  if (n == 0) return out;
  const std::size_t pieces = std::min<std::size_t>(n, static_cast<std::size_t>(chunks));
  std::size_t char_pos = 0;
  for (std::size_t p = 0; p < pieces; ++p) {
    const std::size_t len = n / pieces + (p < n % pieces ? 1 : 0);
    const std::size_t from = starts[char_pos];
    char_pos += len;
    const std::size_t to = char_pos < n ? starts[char_pos] : text.size();
    out.push_back(text.substr(from, to - from));
  }
  return out;
}

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t end = text.find(' ', i);
    end = end == std::string::npos ? text.size() : text.find_first_not_of(' ', end);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(i, end - i));
    i = end;
  }
  return out;
}

}  // namespace rebound::session::llm
