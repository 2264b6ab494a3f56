#include "server/app/provider_setup.h"

#include <spdlog/spdlog.h>

#include "config/json_file.h"
#include "config/models_file.h"
#include "config/provider_catalog.h"
#include "net/http_provider.h"
#include "protocol/json_line.h"
#include "session/llm/script.h"
#include "session/llm/wire_api.h"

namespace rebound::server {

namespace {

std::optional<std::vector<session::llm::ScriptStep>> load_script(const std::string& path,
                                                                 std::string& error) {
  const config::FileRead file = config::read_regular_file(path);
  if (file.status != config::FileReadStatus::ok) {
    error = "cannot read the script file " + path +
            (file.status == config::FileReadStatus::missing ? ": not found" : ": " + file.error);
    return std::nullopt;
  }
  auto parsed = protocol::parse_json_line(file.text);
  if (!parsed.value) {
    error = "the script file " + path + " is not JSON: " + parsed.error;
    return std::nullopt;
  }
  auto script = session::llm::parse_script(*parsed.value);
  if (!script.error.empty()) {
    error = "the script file " + path + " is unusable: " + script.error;
    return std::nullopt;
  }
  return std::move(script.steps);
}

}  // namespace

ProviderSetup setup_providers(const CliOptions& o, const session::Settings& settings,
                              ProviderEnvironment env) {
  ProviderSetup out;
  out.models = session::ModelRegistry::with_builtins();
  out.router = std::make_unique<session::llm::ProviderRouter>(env.scheduler);
  const config::ModelsFile file = config::read_models_file(env.models_file);
  for (const auto& w : file.warnings)
    spdlog::warn("{}", w);
  config::ProviderMap providers = config::provider_catalog(file, out.models);
  for (auto& [name, info] : providers) {
    if (info.api != "azure-openai-responses" || !info.base_url.empty()) continue;
    info.base_url = config::azure_base_url(env.getenv);
    if (!info.base_url.empty()) out.models.set_base_url(name, info.base_url);
  }
  session::llm::WireOptions wire_options;
  if (auto v = env.getenv("AZURE_OPENAI_API_VERSION"); v && !v->empty())
    wire_options.azure_api_version = *v;
  if (auto v = env.getenv("AZURE_OPENAI_DEPLOYMENT_NAME_MAP"))
    wire_options.azure_deployments = session::llm::parse_deployment_map(*v);
  if (auto v = env.getenv("REBOUND_CACHE_RETENTION"); v && !v->empty()) {
    wire_options.cache_retention = protocol::cache_retention_from_string(*v);
    if (!wire_options.cache_retention)
      spdlog::warn("REBOUND_CACHE_RETENTION must be none, short or long (got '{}'); ignored", *v);
  }

  // The provider named at start-up, for --base-url and --api-key.
  auto selected =
      config::select_provider(providers, o.provider, o.script.has_value(), settings, env.getenv);
  if (!selected) {
    out.error = selected.error().message;
    return out;
  }
  if (o.base_url) {
    if (*selected == "scripted") {
      spdlog::warn("--base-url has no meaning for the scripted provider; ignored");
    } else {
      providers[*selected].base_url = *o.base_url;
      out.models.set_base_url(*selected, *o.base_url);
    }
  }
  const config::KeyResolver keys(providers, env.auth, env.getenv, *selected, o.api_key);
  out.has_key = [keys](const std::string& provider) { return keys.offered(provider); };
  out.keys = keys.known_keys();
  out.key_variables = keys.key_variables();

  std::string script_error;
  std::optional<std::vector<session::llm::ScriptStep>> script;
  if (o.script) {
    script = load_script(*o.script, script_error);
    if (!script) {
      out.error = script_error;
      return out;
    }
  }
  out.router->add("scripted", std::make_unique<session::llm::ScriptedProvider>(
                                  env.scheduler, std::move(script), env.script_log));
  for (const auto& [name, info] : providers) {
    net::HttpProviderConfig config;
    // The wire API is chosen here, once; an API this build does not speak is spoken as the
    // default one (OpenAI Chat Completions), as models.json providers without `api` are.
    if (const auto* api = session::llm::find_wire_api(info.api)) {
      config.api = api;
    } else {
      spdlog::warn("provider '{}': unknown api '{}'; using {}", name, info.api,
                   session::llm::default_wire_api().name);
    }
    config.base_url = info.base_url;
    config.wire_options = wire_options;
    config.api_key = [keys, name = name](const std::string& sid) -> std::optional<net::ApiKey> {
      auto key = keys.resolve(name, sid);
      if (!key) return std::nullopt;
      return net::ApiKey{std::move(key->value), std::move(key->source)};
    };
    config.timeouts = {settings.http.connect_timeout_ms, settings.http.response_timeout_ms,
                       settings.http.idle_timeout_ms};
    config.now_epoch_ms = [&s = env.scheduler] { return s.now_epoch_ms(); };
    config.getenv = env.getenv;
    out.router->add(name, std::make_unique<net::HttpProvider>(env.http, std::move(config)));
  }

  auto model = config::start_model(out.models, *selected, o.model, o.script.has_value(), settings);
  if (!model) {
    out.error = model.error().message;
    return out;
  }
  if (*selected == "scripted" && !o.provider && !o.script) {
    spdlog::info("no provider configured: the offline scripted provider's echo model answers");
  }
  out.start_model = *model;
  return out;
}

}  // namespace rebound::server
