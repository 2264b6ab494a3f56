#pragma once
// The agent session: the state behind RpcSessionState and the controls that change it
// (protocol.md sections 2 and 6). The server's dispatcher calls it; everything runs on the one
// event loop, so it holds no locks. Runtime changes that the spec persists go to the
// SettingsStore.

#include <string>
#include <vector>

#include "protocol/wire_types.h"
#include "session/model_registry.h"
#include "session/settings.h"
#include "session/settings_store.h"

namespace rebound::session {

struct SessionOptions {
  protocol::Model model;   // the model the session starts with
  std::string session_id;  // fresh for a new session
};

class AgentSession {
 public:
  /// Reads the settings once from `store` (warnings go to the log) and keeps `store` to persist
  /// runtime changes; `store` must outlive the session.
  AgentSession(SessionOptions options, ModelRegistry models, SettingsStore& store);

  protocol::RpcSessionState state() const;
  const Settings& settings() const { return settings_; }
  const ModelRegistry& models() const { return models_; }

  /// retry.md section 6: applies to the next decision, persisted as retry.enabled.
  void set_auto_retry(bool enabled);
  bool auto_retry_enabled() const { return settings_.retry.enabled; }
  /// Cancels a retry backoff when one runs; with no chain active there is nothing to cancel.
  void abort_retry();
  bool is_retrying() const { return false; }

  void set_auto_compaction(bool enabled);
  void set_steering_mode(protocol::QueueMode mode) { steering_mode_ = mode; }
  void set_follow_up_mode(protocol::QueueMode mode) { follow_up_mode_ = mode; }
  void set_interrupt_mode(protocol::InterruptMode mode) { interrupt_mode_ = mode; }

  /// Sets the level, clamped to what the model supports ("off" for a model without reasoning);
  /// a change is persisted as defaultThinkingLevel.
  void set_thinking_level(protocol::ThinkingLevel level);
  /// The levels the current model offers, "off" first.
  std::vector<protocol::ThinkingLevel> available_thinking_levels() const;

 private:
  ModelRegistry models_;
  SettingsStore& store_;
  Settings settings_;
  protocol::Model model_;
  std::string session_id_;
  protocol::ThinkingLevel thinking_level_;
  protocol::QueueMode steering_mode_;
  protocol::QueueMode follow_up_mode_;
  protocol::InterruptMode interrupt_mode_;
};

}  // namespace rebound::session
