#pragma once
// The rules of runtime.md section 2 for providers, apart from the wiring: which providers exist
// (the built-in openai, anthropic, google and azure-openai-responses of providers.md section 1,
// then models.json's over them), which one a process starts
// with, where a request's API key comes from (in order: --api-key for the provider named at
// start-up, auth.json, the provider's environment variable, models.json), which providers are
// offered (they have a key, or are custom ones that need none) and the starting model. Reads
// no file itself: the models file and the credentials come in. Event loop only.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/auth_store.h"
#include "config/models_file.h"
#include "protocol/wire_types.h"
#include "session/error.h"
#include "session/model_registry.h"
#include "session/settings.h"

namespace rebound::config {

struct ProviderInfo {
  std::string api;
  std::string base_url;
  std::optional<std::string> models_json_key;
  std::vector<std::string> env_vars;  // built-in providers only: the key's, first set wins
};

/// A key and where it came from ("--api-key", "auth.json (provider 'x')", …), for errors that
/// must name the key without showing it.
struct ResolvedKey {
  std::string value;
  std::string source;
};

using Getenv = std::function<std::optional<std::string>(const std::string& name)>;

using ProviderMap = std::map<std::string, ProviderInfo>;

/// The built-in providers with models.json's entries over them; the file's base URLs and models
/// go into `models` too.
ProviderMap provider_catalog(const ModelsFile& file, session::ModelRegistry& models);

/// The provider named at start-up: `flag` (--provider), else the settings' defaultProvider,
/// else the first built-in one whose key variable is set (neither with a script), else
/// "scripted"; not_found for a name nobody knows.
session::Result<std::string> select_provider(const ProviderMap& providers,
                                             const std::optional<std::string>& flag, bool script,
                                             const session::Settings& settings,
                                             const Getenv& getenv);

/// Key resolution. Copyable: each HTTP provider keeps one.
class KeyResolver {
 public:
  KeyResolver(ProviderMap providers, AuthStore& auth, Getenv getenv, std::string selected,
              std::optional<std::string> flag_key)
      : providers_(std::move(providers)),
        auth_(&auth),
        getenv_(std::move(getenv)),
        selected_(std::move(selected)),
        flag_key_(std::move(flag_key)) {}

  /// The first key that exists for `provider` (a session's own credential from auth.json).
  std::optional<ResolvedKey> resolve(const std::string& provider,
                                     const std::string& session_id) const;
  /// Whether `provider`'s models are offered: scripted always, a provider with a key, and a
  /// custom one that needs none (no key configured anywhere: a local server).
  bool offered(const std::string& provider) const;
  /// Every key this process may send (--api-key, auth.json's, the providers' variables' values,
  /// models.json's): what must never reach a tool's environment, the context or a file.
  std::vector<std::string> known_keys() const;
  /// The providers' key variables (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, …).
  std::vector<std::string> key_variables() const;

 private:
  ProviderMap providers_;
  AuthStore* auth_;
  Getenv getenv_;
  std::string selected_;
  std::optional<std::string> flag_key_;
};

/// Azure OpenAI's base URL where models.json gave none (providers.md section 2.5):
/// AZURE_OPENAI_BASE_URL, else https://<AZURE_OPENAI_RESOURCE_NAME>.openai.azure.com/openai/v1,
/// else empty (a request then fails with a configuration error).
std::string azure_base_url(const Getenv& getenv);

/// The starting model: `flag` (--model), else the settings' defaultModel when it belongs to
/// `selected`, else the scripted provider's ("script" with a script, else "echo"), else the
/// provider's first; not_found naming the available ones.
session::Result<protocol::Model> start_model(const session::ModelRegistry& models,
                                             const std::string& selected,
                                             const std::optional<std::string>& flag, bool script,
                                             const session::Settings& settings);

}  // namespace rebound::config
