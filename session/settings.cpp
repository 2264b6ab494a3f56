#include "session/settings.h"

#include <nlohmann/json.hpp>

namespace rebound::session {

using protocol::Json;

namespace {

class Reader {
 public:
  Reader(const Json& root, std::vector<std::string>& warnings) : root_(root), warnings_(warnings) {}

  // The value at a dotted path, or nullptr when absent (or a parent is not an object).
  const Json* at(const std::string& path) const {
    const Json* node = &root_;
    std::size_t start = 0;
    while (true) {
      const auto dot = path.find('.', start);
      const auto key = path.substr(start, dot - start);
      if (!node->is_object()) return nullptr;
      const auto it = node->find(key);
      if (it == node->end()) return nullptr;
      node = &*it;
      if (dot == std::string::npos) return node;
      start = dot + 1;
    }
  }

  void boolean(const std::string& path, bool& out) {
    if (const Json* v = at(path)) {
      if (v->is_boolean()) {
        out = v->get<bool>();
      } else {
        warn(path, "a boolean", out ? "true" : "false");
      }
    }
  }

  void non_negative(const std::string& path, std::int64_t& out) {
    if (const Json* v = at(path)) {
      if (v->is_number_integer() && v->get<std::int64_t>() >= 0) {
        out = v->get<std::int64_t>();
      } else {
        warn(path, "a non-negative integer", std::to_string(out));
      }
    }
  }

  void string(const std::string& path, std::optional<std::string>& out) {
    if (const Json* v = at(path)) {
      if (v->is_string()) {
        out = v->get<std::string>();
      } else {
        warn(path, "a string", "unset");
      }
    }
  }

  template <typename E, typename Parse>
  void choice(const std::string& path, E& out, Parse parse) {
    if (const Json* v = at(path)) {
      std::optional<E> parsed;
      if (v->is_string()) parsed = parse(v->get_ref<const std::string&>());
      if (parsed) {
        out = *parsed;
      } else {
        warn(path, "a known value", std::string(protocol::to_string(out)));
      }
    }
  }

 private:
  void warn(const std::string& path, const std::string& expected, const std::string& fallback) {
    warnings_.push_back("settings: '" + path + "' must be " + expected + " (got " +
                        at(path)->dump() + "); using the default " + fallback);
  }

  const Json& root_;
  std::vector<std::string>& warnings_;
};

}  // namespace

Settings settings_from_json(const Json& merged, std::vector<std::string>& warnings) {
  Settings s;
  Reader r(merged, warnings);
  r.string("defaultProvider", s.default_provider);
  r.string("defaultModel", s.default_model);
  r.choice("defaultThinkingLevel", s.default_thinking_level, protocol::thinking_level_from_string);
  r.choice("steeringMode", s.steering_mode, protocol::queue_mode_from_string);
  r.choice("followUpMode", s.follow_up_mode, protocol::queue_mode_from_string);
  r.choice("interruptMode", s.interrupt_mode, protocol::interrupt_mode_from_string);
  std::optional<std::string> system_prompt;
  r.string("systemPrompt", system_prompt);
  s.system_prompt = system_prompt.value_or("");
  if (merged.is_object()) {
    if (auto it = merged.find("prompts"); it != merged.end()) s.prompts = *it;
    if (auto it = merged.find("skills"); it != merged.end()) s.skills = *it;
  }
  r.boolean("retry.enabled", s.retry.enabled);
  r.non_negative("retry.maxRetries", s.retry.max_retries);
  r.non_negative("retry.baseDelayMs", s.retry.base_delay_ms);
  r.boolean("compaction.enabled", s.compaction.enabled);
  r.non_negative("compaction.reserveTokens", s.compaction.reserve_tokens);
  r.non_negative("compaction.keepRecentTokens", s.compaction.keep_recent_tokens);
  r.non_negative("http.connectTimeoutMs", s.http.connect_timeout_ms);
  r.non_negative("http.responseTimeoutMs", s.http.response_timeout_ms);
  r.non_negative("http.idleTimeoutMs", s.http.idle_timeout_ms);
  r.choice("cacheRetention", s.cache_retention, protocol::cache_retention_from_string);
  return s;
}

Json deep_merge(Json base, const Json& over) {
  if (!base.is_object() || !over.is_object()) return over;
  for (auto it = over.begin(); it != over.end(); ++it) {
    auto existing = base.find(it.key());
    if (existing != base.end() && existing->is_object() && it->is_object()) {
      *existing = deep_merge(std::move(*existing), *it);
    } else {
      base[it.key()] = *it;
    }
  }
  return base;
}

}  // namespace rebound::session
