#include "session/agent_session.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

namespace rebound::session {

using protocol::Json;
using protocol::ThinkingLevel;

namespace {

Settings load_settings(SettingsStore& store) {
  std::vector<std::string> warnings;
  Settings s = settings_from_json(store.load(), warnings);
  for (const auto& w : warnings)
    spdlog::warn("{}", w);
  return s;
}

}  // namespace

AgentSession::AgentSession(SessionOptions options, ModelRegistry models, SettingsStore& store)
    : models_(std::move(models)),
      store_(store),
      settings_(load_settings(store)),
      model_(std::move(options.model)),
      session_id_(std::move(options.session_id)),
      thinking_level_(ThinkingLevel::off),
      steering_mode_(settings_.steering_mode),
      follow_up_mode_(settings_.follow_up_mode),
      interrupt_mode_(settings_.interrupt_mode) {
  const auto levels = available_thinking_levels();
  for (auto level : levels) {
    if (level == settings_.default_thinking_level) thinking_level_ = level;
  }
}

protocol::RpcSessionState AgentSession::state() const {
  protocol::RpcSessionState s;
  s.model = model_;
  s.thinking_level = thinking_level_;
  s.is_streaming = false;
  s.is_compacting = false;
  s.steering_mode = steering_mode_;
  s.follow_up_mode = follow_up_mode_;
  s.interrupt_mode = interrupt_mode_;
  s.session_id = session_id_;
  s.auto_compaction_enabled = settings_.compaction.enabled;
  s.message_count = 0;
  s.queued_message_count = 0;
  return s;
}

void AgentSession::set_auto_retry(bool enabled) {
  settings_.retry.enabled = enabled;
  store_.persist(Json{{"retry", Json{{"enabled", enabled}}}});
}

void AgentSession::abort_retry() {
  // No retry chain exists until the agent loop runs requests; nothing to cancel.
}

void AgentSession::set_auto_compaction(bool enabled) {
  settings_.compaction.enabled = enabled;
  store_.persist(Json{{"compaction", Json{{"enabled", enabled}}}});
}

std::vector<ThinkingLevel> AgentSession::available_thinking_levels() const {
  if (!model_.reasoning) return {ThinkingLevel::off};
  return protocol::all_thinking_levels();
}

void AgentSession::set_thinking_level(ThinkingLevel level) {
  const auto levels = available_thinking_levels();
  ThinkingLevel effective = levels.front();
  // Clamp down to the highest offered level not above the request.
  for (auto offered : levels) {
    if (offered <= level) effective = offered;
  }
  if (effective == thinking_level_) return;
  thinking_level_ = effective;
  store_.persist(Json{{"defaultThinkingLevel", std::string(protocol::to_string(effective))}});
}

}  // namespace rebound::session
