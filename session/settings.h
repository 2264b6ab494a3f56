#pragma once
// The settings of runtime.md section 3 as typed values, read from the merged settings JSON.
// Bad values are reported (returned as warnings for the caller to log once) and replaced by
// their defaults. Pure; the files themselves are read and written by a SettingsStore.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "protocol/wire_types.h"

namespace rebound::session {

struct RetrySettings {
  bool enabled = true;
  std::int64_t max_retries = 3;
  std::int64_t base_delay_ms = 2000;
};

struct CompactionSettings {
  bool enabled = true;
  std::int64_t reserve_tokens = 16384;
  std::int64_t keep_recent_tokens = 20000;
};

struct HttpSettings {
  std::int64_t connect_timeout_ms = 10000;
  std::int64_t response_timeout_ms = 60000;
  std::int64_t idle_timeout_ms = 120000;
};

struct Settings {
  std::optional<std::string> default_provider;
  std::optional<std::string> default_model;
  protocol::ThinkingLevel default_thinking_level = protocol::ThinkingLevel::off;
  protocol::QueueMode steering_mode = protocol::QueueMode::one_at_a_time;
  protocol::QueueMode follow_up_mode = protocol::QueueMode::one_at_a_time;
  protocol::InterruptMode interrupt_mode = protocol::InterruptMode::immediate;
  std::string system_prompt;
  /// `prompts` and `skills` (sessions.md sections 9.1, 10.1): arrays of paths, as written
  /// (checked where they are read); null when absent.
  protocol::Json prompts;
  protocol::Json skills;
  RetrySettings retry;
  CompactionSettings compaction;
  HttpSettings http;
  /// `cacheRetention` (providers.md section 7.3); REBOUND_CACHE_RETENTION overrides it where the
  /// HTTP providers are set up.
  protocol::CacheRetention cache_retention = protocol::CacheRetention::short_term;
};

/// Reads settings from merged JSON; every value that is present but unusable yields a warning
/// naming its key and the default stays.
Settings settings_from_json(const protocol::Json& merged, std::vector<std::string>& warnings);

/// `over` merged into `base`: objects merge key by key, anything else replaces.
protocol::Json deep_merge(protocol::Json base, const protocol::Json& over);

}  // namespace rebound::session
