#include "protocol/wire_types.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "protocol/name_table.h"

namespace rebound::protocol {

namespace {

constexpr Named<ThinkingLevel> kThinking[] = {
    {ThinkingLevel::off, "off"},   {ThinkingLevel::minimal, "minimal"},
    {ThinkingLevel::low, "low"},   {ThinkingLevel::medium, "medium"},
    {ThinkingLevel::high, "high"}, {ThinkingLevel::xhigh, "xhigh"}};
constexpr Named<QueueMode> kQueue[] = {{QueueMode::all, "all"},
                                       {QueueMode::one_at_a_time, "one-at-a-time"}};
constexpr Named<InterruptMode> kInterrupt[] = {{InterruptMode::immediate, "immediate"},
                                               {InterruptMode::wait, "wait"}};
constexpr Named<CacheRetention> kRetention[] = {{CacheRetention::none, "none"},
                                                {CacheRetention::short_term, "short"},
                                                {CacheRetention::long_term, "long"}};

}  // namespace

Json json_number(double value) {
  // JavaScript clients write 3 rather than 3.0; whole numbers go out as integers.
  if (std::trunc(value) == value && std::fabs(value) < 9007199254740992.0) {
    return static_cast<std::int64_t>(value);
  }
  return value;
}

std::string_view to_string(ThinkingLevel level) {
  return name_of(level, kThinking);
}
std::string_view to_string(QueueMode mode) {
  return name_of(mode, kQueue);
}
std::string_view to_string(InterruptMode mode) {
  return name_of(mode, kInterrupt);
}

std::string_view to_string(CacheRetention retention) {
  return name_of(retention, kRetention);
}
std::optional<CacheRetention> cache_retention_from_string(std::string_view s) {
  return value_named(s, kRetention);
}

std::optional<ThinkingLevel> thinking_level_from_string(std::string_view s) {
  return value_named(s, kThinking);
}
std::optional<QueueMode> queue_mode_from_string(std::string_view s) {
  return value_named(s, kQueue);
}
std::optional<InterruptMode> interrupt_mode_from_string(std::string_view s) {
  return value_named(s, kInterrupt);
}

const std::vector<ThinkingLevel>& all_thinking_levels() {
  static const std::vector<ThinkingLevel> levels{ThinkingLevel::off,  ThinkingLevel::minimal,
                                                 ThinkingLevel::low,  ThinkingLevel::medium,
                                                 ThinkingLevel::high, ThinkingLevel::xhigh};
  return levels;
}

Json to_json(const Model& m) {
  Json j;
  j["id"] = m.id;
  j["name"] = m.name;
  j["api"] = m.api;
  j["provider"] = m.provider;
  j["baseUrl"] = m.base_url;
  j["reasoning"] = m.reasoning;
  j["input"] = m.input;
  j["cost"] = Json{{"input", json_number(m.cost.input)},
                   {"output", json_number(m.cost.output)},
                   {"cacheRead", json_number(m.cost.cache_read)},
                   {"cacheWrite", json_number(m.cost.cache_write)}};
  j["contextWindow"] = m.context_window;
  j["maxTokens"] = m.max_tokens;
  return j;
}

Json to_json(const RpcSessionState& s) {
  Json j = Json::object();
  if (s.model) j["model"] = to_json(*s.model);
  j["thinkingLevel"] = to_string(s.thinking_level);
  j["isStreaming"] = s.is_streaming;
  j["isCompacting"] = s.is_compacting;
  j["steeringMode"] = to_string(s.steering_mode);
  j["followUpMode"] = to_string(s.follow_up_mode);
  j["interruptMode"] = to_string(s.interrupt_mode);
  if (s.session_file) j["sessionFile"] = *s.session_file;
  j["sessionId"] = s.session_id;
  if (s.session_name) j["sessionName"] = *s.session_name;
  j["autoCompactionEnabled"] = s.auto_compaction_enabled;
  j["messageCount"] = s.message_count;
  j["queuedMessageCount"] = s.queued_message_count;
  return j;
}

}  // namespace rebound::protocol
