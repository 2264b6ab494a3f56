#include "config/provider_catalog.h"

namespace rebound::config {

ProviderMap provider_catalog(const ModelsFile& file, session::ModelRegistry& models) {
  ProviderMap providers{
      {"openai", {"openai-completions", "https://api.openai.com/v1", {}, {"OPENAI_API_KEY"}}},
      {"anthropic", {"anthropic-messages", "https://api.anthropic.com", {}, {"ANTHROPIC_API_KEY"}}},
      {"google",
       {"google-generative-ai",
        "https://generativelanguage.googleapis.com/v1beta",
        {},
        {"GEMINI_API_KEY", "GOOGLE_API_KEY"}}},
      // No built-in models (they are deployments) and no base URL until the environment gives
      // one (setup fills it in).
      {"azure-openai-responses", {"azure-openai-responses", "", {}, {"AZURE_OPENAI_API_KEY"}}},
  };
  for (const auto& p : file.providers) {
    if (p.name == "scripted") continue;
    ProviderInfo& info = providers[p.name];
    if (!p.api.empty()) info.api = p.api;
    if (info.api.empty()) info.api = "openai-completions";
    if (!p.base_url.empty()) {
      info.base_url = p.base_url;
      models.set_base_url(p.name, p.base_url);
    }
    info.models_json_key = p.api_key;
    // The provider's headers reach its built-in models too (a file model has them merged in).
    if (!p.headers.empty()) models.set_headers(p.name, p.headers);
  }
  for (const auto& m : file.models)
    models.upsert(m);
  return providers;
}

session::Result<std::string> select_provider(const ProviderMap& providers,
                                             const std::optional<std::string>& flag, bool script,
                                             const session::Settings& settings,
                                             const Getenv& getenv) {
  std::string selected = flag.value_or("");
  if (selected.empty() && !script && settings.default_provider) {
    selected = *settings.default_provider;
  }
  if (selected.empty() && !script) {
    for (const char* name : {"openai", "anthropic", "google"}) {
      const auto it = providers.find(name);
      if (it == providers.end()) continue;
      for (const auto& var : it->second.env_vars) {
        if (getenv(var)) selected = name;
      }
      if (!selected.empty()) break;
    }
  }
  if (selected.empty()) selected = "scripted";
  if (selected != "scripted" && !providers.count(selected)) {
    return session::Error{session::ErrorKind::not_found,
                          "unknown provider '" + selected +
                              "' (built in: scripted, openai, anthropic, google, "
                              "azure-openai-responses; others come from models.json)"};
  }
  return selected;
}

std::optional<ResolvedKey> KeyResolver::resolve(const std::string& provider,
                                                const std::string& session_id) const {
  if (flag_key_ && provider == selected_) return ResolvedKey{*flag_key_, "--api-key"};
  if (auto stored = auth_->resolve_key(provider, session_id)) {
    return ResolvedKey{*stored, "auth.json (provider '" + provider + "')"};
  }
  const auto it = providers_.find(provider);
  if (it == providers_.end()) return std::nullopt;
  for (const auto& var : it->second.env_vars) {
    if (auto v = getenv_(var)) return ResolvedKey{*v, "the environment variable " + var};
  }
  if (!it->second.models_json_key) return std::nullopt;
  return ResolvedKey{*it->second.models_json_key, "models.json (provider '" + provider + "')"};
}

bool KeyResolver::offered(const std::string& provider) const {
  if (provider == "scripted") return true;
  const auto it = providers_.find(provider);
  if (it == providers_.end()) return false;
  // A custom provider without any key talks to a local server and needs none.
  const bool custom = it->second.env_vars.empty();
  return resolve(provider, "").has_value() || (custom && !it->second.models_json_key);
}

std::vector<std::string> KeyResolver::known_keys() const {
  std::vector<std::string> keys = auth_->all_keys();
  if (flag_key_) keys.push_back(*flag_key_);
  for (const auto& [name, info] : providers_) {
    for (const auto& var : info.env_vars) {
      if (auto v = getenv_(var)) keys.push_back(*v);
    }
    if (info.models_json_key) keys.push_back(*info.models_json_key);
  }
  return keys;
}

std::vector<std::string> KeyResolver::key_variables() const {
  std::vector<std::string> names;
  for (const auto& [name, info] : providers_)
    for (const auto& var : info.env_vars)
      names.push_back(var);
  return names;
}

std::string azure_base_url(const Getenv& getenv) {
  if (auto url = getenv("AZURE_OPENAI_BASE_URL"); url && !url->empty()) return *url;
  if (auto name = getenv("AZURE_OPENAI_RESOURCE_NAME"); name && !name->empty())
    return "https://" + *name + ".openai.azure.com/openai/v1";
  return {};
}

session::Result<protocol::Model> start_model(const session::ModelRegistry& models,
                                             const std::string& selected,
                                             const std::optional<std::string>& flag, bool script,
                                             const session::Settings& settings) {
  std::string model_id = flag.value_or("");
  if (model_id.empty() && settings.default_model &&
      (!settings.default_provider || *settings.default_provider == selected)) {
    model_id = *settings.default_model;
  }
  if (model_id.empty() && selected == "scripted") model_id = script ? "script" : "echo";
  const auto offered = models.of_provider(selected);
  if (model_id.empty() && !offered.empty()) model_id = offered.front().id;
  const protocol::Model* model = models.find(selected, model_id);
  if (!model) {
    std::string names;
    for (const auto& m : offered)
      names += (names.empty() ? "" : ", ") + m.id;
    return session::Error{
        session::ErrorKind::not_found,
        "unknown model '" + selected + "/" + model_id + "' (available: " + names + ")"};
  }
  return *model;
}

}  // namespace rebound::config
