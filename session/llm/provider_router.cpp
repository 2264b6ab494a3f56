#include "session/llm/provider_router.h"

namespace rebound::session::llm {

void ProviderRouter::add(const std::string& provider_name, std::unique_ptr<Provider> provider) {
  providers_[provider_name] = std::move(provider);
}

std::unique_ptr<StreamHandle> ProviderRouter::stream(const LlmRequest& request,
                                                     StreamHandler handler) {
  if (const auto it = providers_.find(request.model.provider); it != providers_.end()) {
    return it->second->stream(request, std::move(handler));
  }
  struct Pending : StreamHandle {
    std::shared_ptr<bool> live = std::make_shared<bool>(true);
    ~Pending() override { *live = false; }
    void cancel() override { *live = false; }
  };
  auto handle = std::make_unique<Pending>();
  scheduler_.post([live = handle->live, handler = std::move(handler),
                   text = "No provider '" + request.model.provider + "' is configured"] {
    if (!*live) return;
    StreamEvent e;
    e.kind = StreamEvent::Kind::error;
    e.text = text;
    handler(std::move(e));
  });
  return handle;
}

}  // namespace rebound::session::llm
