#pragma once
// Builds what answers LLM requests: the model registry (built-ins plus models.json), a router
// with the scripted provider and one HTTP provider per configured provider, the key resolution
// of runtime.md section 3, and the start-up choice of provider and model (section 6). Part of
// the composition root; everything it makes lives on the server's event loop.

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/auth_store.h"
#include "net/http_client.h"
#include "server/app/cli_options.h"
#include "session/llm/provider_router.h"
#include "session/llm/scripted_provider.h"
#include "session/model_registry.h"
#include "session/scheduler.h"
#include "session/settings.h"

namespace rebound::server {

struct ProviderSetup {
  session::ModelRegistry models;
  std::unique_ptr<session::llm::ProviderRouter> router;
  protocol::Model start_model;
  /// Providers whose models are offered (a key is known, or none is needed).
  std::function<bool(const std::string& provider)> has_key;
  /// Every key the process may send, and the providers' key variables (KeyResolver).
  std::vector<std::string> keys;
  std::vector<std::string> key_variables;
  std::string error;  // non-empty: the server cannot start
};

struct ProviderEnvironment {
  session::Scheduler& scheduler;
  net::HttpClient& http;
  config::AuthStore& auth;
  std::filesystem::path models_file;
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  session::llm::ScriptedProvider::RequestLog script_log;
};

ProviderSetup setup_providers(const CliOptions& options, const session::Settings& settings,
                              ProviderEnvironment env);

}  // namespace rebound::server
