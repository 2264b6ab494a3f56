#include "session/model_registry.h"

namespace rebound::session {

protocol::Model scripted_model(std::string_view id) {
  protocol::Model m;
  m.id = std::string(id);
  m.name = id == "echo" ? "Echo (offline)" : "Script (offline)";
  m.api = "scripted";
  m.provider = "scripted";
  m.base_url = "";
  m.reasoning = false;
  m.input = {"text"};
  m.context_window = 128000;
  m.max_tokens = 16384;
  return m;
}

ModelRegistry ModelRegistry::with_builtins() {
  ModelRegistry r;
  r.add(scripted_model("echo"));
  r.add(scripted_model("script"));
  return r;
}

void ModelRegistry::add(protocol::Model model) {
  models_.push_back(std::move(model));
}

const protocol::Model* ModelRegistry::find(std::string_view provider, std::string_view id) const {
  for (const auto& m : models_) {
    if (m.provider == provider && m.id == id) return &m;
  }
  return nullptr;
}

}  // namespace rebound::session
