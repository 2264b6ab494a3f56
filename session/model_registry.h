#pragma once
// The models the session may use. Built-in entries for the offline scripted provider
// (runtime.md section 7); real providers add theirs later. Pure data, owned by the session.

#include <optional>
#include <string_view>
#include <vector>

#include "protocol/wire_types.h"

namespace rebound::session {

class ModelRegistry {
 public:
  /// A registry holding the scripted provider's `echo` and `script` models and the built-in
  /// OpenAI (gpt-4o-mini, gpt-4o) and Anthropic (claude-sonnet-4-5, claude-haiku-4-5) models.
  static ModelRegistry with_builtins();

  /// Adds or replaces (same provider and id) a model.
  void upsert(protocol::Model model);
  /// Sets the base URL of every model of a provider.
  void set_base_url(std::string_view provider, const std::string& base_url);
  /// Sets the models.json headers of every model of a provider (providers.md section 7.4).
  void set_headers(std::string_view provider,
                   const std::vector<std::pair<std::string, std::string>>& headers);
  /// The models of one provider, in registry order.
  std::vector<protocol::Model> of_provider(std::string_view provider) const;

  void add(protocol::Model model);
  const protocol::Model* find(std::string_view provider, std::string_view id) const;
  const std::vector<protocol::Model>& all() const { return models_; }

 private:
  std::vector<protocol::Model> models_;
};

/// The scripted provider's model with the given id ("echo" or "script").
protocol::Model scripted_model(std::string_view id);

}  // namespace rebound::session
