#pragma once
// Small value types shared by commands, responses and events: the enums of the protocol with
// their wire spellings, the Model object and RpcSessionState (protocol.md sections 5 and 6).
// Pure; no I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/json.h"

namespace rebound::protocol {

enum class ThinkingLevel { off, minimal, low, medium, high, xhigh };
enum class QueueMode { all, one_at_a_time };
enum class InterruptMode { immediate, wait };
/// Settings `cacheRetention` (providers.md section 7.3): Anthropic's cache breakpoints with the
/// 5-minute cache, with the 1-hour one, or none.
enum class CacheRetention { none, short_term, long_term };

std::string_view to_string(ThinkingLevel level);
std::string_view to_string(QueueMode mode);
std::string_view to_string(InterruptMode mode);
std::string_view to_string(CacheRetention retention);
std::optional<CacheRetention> cache_retention_from_string(std::string_view s);
std::optional<ThinkingLevel> thinking_level_from_string(std::string_view s);
std::optional<QueueMode> queue_mode_from_string(std::string_view s);
std::optional<InterruptMode> interrupt_mode_from_string(std::string_view s);

/// A number as JavaScript would write it: whole values as integers, others as doubles.
Json json_number(double value);

/// Every thinking level in order, "off" first.
const std::vector<ThinkingLevel>& all_thinking_levels();

struct ModelCost {
  double input = 0, output = 0, cache_read = 0, cache_write = 0;  // per million tokens
};

struct Model {
  std::string id;
  std::string name;
  std::string api;
  std::string provider;
  std::string base_url;
  bool reasoning = false;
  std::vector<std::string> input{"text"};
  ModelCost cost;
  std::int64_t context_window = 0;
  std::int64_t max_tokens = 0;
  /// models.json `headers` (the model's over its provider's; providers.md section 7.4), values as
  /// written (`${VAR}` and variable names expanded when sent). Never on the wire or in a log.
  std::vector<std::pair<std::string, std::string>> headers;
  /// models.json `compat.promptCacheKey`: Chat Completions gets `prompt_cache_key` although
  /// the base URL is not OpenAI's (amendments A30).
  bool prompt_cache_key = false;

  /// Whether `input` includes "image" (images are sent to this model).
  bool takes_images() const {
    for (const auto& kind : input)
      if (kind == "image") return true;
    return false;
  }
};

Json to_json(const Model& model);

struct RpcSessionState {
  std::optional<Model> model;
  ThinkingLevel thinking_level = ThinkingLevel::off;
  bool is_streaming = false;
  bool is_compacting = false;
  QueueMode steering_mode = QueueMode::one_at_a_time;
  QueueMode follow_up_mode = QueueMode::one_at_a_time;
  InterruptMode interrupt_mode = InterruptMode::immediate;
  std::optional<std::string> session_file;
  std::string session_id;
  std::optional<std::string> session_name;  // sessions.md section 5
  bool auto_compaction_enabled = true;
  std::int64_t message_count = 0;
  std::int64_t queued_message_count = 0;
};

Json to_json(const RpcSessionState& state);

}  // namespace rebound::protocol
