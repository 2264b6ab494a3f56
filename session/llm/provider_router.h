#pragma once
// Sends each request to the provider registered for its model's provider name (scripted,
// openai, anthropic, a models.json provider), so switching models never rebuilds the session.
// Event loop only.

#include <map>
#include <memory>
#include <string>

#include "session/llm/provider.h"
#include "session/scheduler.h"

namespace rebound::session::llm {

class ProviderRouter : public Provider {
 public:
  explicit ProviderRouter(Scheduler& scheduler) : scheduler_(scheduler) {}

  void add(const std::string& provider_name, std::unique_ptr<Provider> provider);
  bool has(const std::string& provider_name) const { return providers_.count(provider_name) > 0; }

  /// A model whose provider is not registered ends with an error event, posted (never inside
  /// stream()).
  std::unique_ptr<StreamHandle> stream(const LlmRequest& request, StreamHandler handler) override;

 private:
  Scheduler& scheduler_;
  std::map<std::string, std::unique_ptr<Provider>> providers_;
};

}  // namespace rebound::session::llm
