#include "protocol/wire_types.h"

#include <array>
#include <cmath>
#include <nlohmann/json.hpp>

namespace rebound::protocol {

namespace {

template <typename E, std::size_t N>
std::optional<E> from_table(const std::array<std::string_view, N>& names, std::string_view s) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == s) return static_cast<E>(i);
  }
  return std::nullopt;
}

constexpr std::array<std::string_view, 6> kThinking{"off",    "minimal", "low",
                                                    "medium", "high",    "xhigh"};
constexpr std::array<std::string_view, 2> kQueue{"all", "one-at-a-time"};
constexpr std::array<std::string_view, 2> kInterrupt{"immediate", "wait"};

}  // namespace

Json json_number(double value) {
  // JavaScript clients write 3 rather than 3.0; whole numbers go out as integers.
  if (std::trunc(value) == value && std::fabs(value) < 9007199254740992.0) {
    return static_cast<std::int64_t>(value);
  }
  return value;
}

std::string_view to_string(ThinkingLevel level) {
  return kThinking[static_cast<int>(level)];
}
std::string_view to_string(QueueMode mode) {
  return kQueue[static_cast<int>(mode)];
}
std::string_view to_string(InterruptMode mode) {
  return kInterrupt[static_cast<int>(mode)];
}

std::optional<ThinkingLevel> thinking_level_from_string(std::string_view s) {
  return from_table<ThinkingLevel>(kThinking, s);
}
std::optional<QueueMode> queue_mode_from_string(std::string_view s) {
  return from_table<QueueMode>(kQueue, s);
}
std::optional<InterruptMode> interrupt_mode_from_string(std::string_view s) {
  return from_table<InterruptMode>(kInterrupt, s);
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
  j["autoCompactionEnabled"] = s.auto_compaction_enabled;
  j["messageCount"] = s.message_count;
  j["queuedMessageCount"] = s.queued_message_count;
  return j;
}

}  // namespace rebound::protocol
