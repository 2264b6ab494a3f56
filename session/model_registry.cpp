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

namespace {

protocol::Model priced(std::string id, std::string name, std::string api, std::string provider,
                       std::string base_url, bool reasoning, protocol::ModelCost cost,
                       std::int64_t context_window, std::int64_t max_tokens) {
  protocol::Model m;
  m.id = std::move(id);
  m.name = std::move(name);
  m.api = std::move(api);
  m.provider = std::move(provider);
  m.base_url = std::move(base_url);
  m.reasoning = reasoning;
  m.input = {"text", "image"};
  m.cost = cost;
  m.context_window = context_window;
  m.max_tokens = max_tokens;
  return m;
}

}  // namespace

ModelRegistry ModelRegistry::with_builtins() {
  ModelRegistry r;
  r.add(scripted_model("echo"));
  r.add(scripted_model("script"));
  const std::string openai = "https://api.openai.com/v1";
  const std::string anthropic = "https://api.anthropic.com";
  r.add(priced("gpt-4o-mini", "GPT-4o mini", "openai-completions", "openai", openai, false,
               {0.15, 0.6, 0.075, 0}, 128000, 16384));
  r.add(priced("gpt-4o", "GPT-4o", "openai-completions", "openai", openai, false,
               {2.5, 10, 1.25, 0}, 128000, 16384));
  // The Responses API's models (providers.md section 5): the built-in openai provider mixes APIs.
  r.add(priced("gpt-5", "GPT-5", "openai-responses", "openai", openai, true, {1.25, 10, 0.125, 0},
               400000, 128000));
  r.add(priced("gpt-5-mini", "GPT-5 mini", "openai-responses", "openai", openai, true,
               {0.25, 2, 0.025, 0}, 400000, 128000));
  r.add(priced("gpt-5-codex", "GPT-5 Codex", "openai-responses", "openai", openai, true,
               {1.25, 10, 0.125, 0}, 400000, 128000));
  r.add(priced("gpt-5.1-codex", "GPT-5.1 Codex", "openai-responses", "openai", openai, true,
               {1.25, 10, 0.125, 0}, 400000, 128000));
  r.add(priced("claude-sonnet-4-5", "Claude Sonnet 4.5", "anthropic-messages", "anthropic",
               anthropic, true, {3, 15, 0.3, 3.75}, 200000, 64000));
  r.add(priced("claude-haiku-4-5", "Claude Haiku 4.5", "anthropic-messages", "anthropic", anthropic,
               true, {1, 5, 0.1, 1.25}, 200000, 64000));
  const std::string google = "https://generativelanguage.googleapis.com/v1beta";
  r.add(priced("gemini-2.5-pro", "Gemini 2.5 Pro", "google-generative-ai", "google", google, true,
               {1.25, 10, 0.125, 0}, 1048576, 65536));
  r.add(priced("gemini-2.5-flash", "Gemini 2.5 Flash", "google-generative-ai", "google", google,
               true, {0.3, 2.5, 0.03, 0}, 1048576, 65536));
  return r;
}

void ModelRegistry::upsert(protocol::Model model) {
  for (auto& m : models_) {
    if (m.provider == model.provider && m.id == model.id) {
      m = std::move(model);
      return;
    }
  }
  models_.push_back(std::move(model));
}

void ModelRegistry::set_base_url(std::string_view provider, const std::string& base_url) {
  for (auto& m : models_) {
    if (m.provider == provider) m.base_url = base_url;
  }
}

void ModelRegistry::set_headers(std::string_view provider,
                                const std::vector<std::pair<std::string, std::string>>& headers) {
  for (auto& m : models_) {
    if (m.provider == provider) m.headers = headers;
  }
}

std::vector<protocol::Model> ModelRegistry::of_provider(std::string_view provider) const {
  std::vector<protocol::Model> out;
  for (const auto& m : models_) {
    if (m.provider == provider) out.push_back(m);
  }
  return out;
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
