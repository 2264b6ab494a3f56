#include "server/app/provider_setup.h"

#include <spdlog/spdlog.h>

#include "config/json_file.h"
#include "config/models_file.h"
#include "net/http_provider.h"
#include "protocol/json_line.h"
#include "session/llm/script.h"
#include "session/llm/wire_api.h"

namespace rebound::server {

namespace {

struct ProviderInfo {
  std::string api;
  std::string base_url;
  std::optional<std::string> models_json_key;
  std::optional<std::string> env_var;  // built-in providers only
};

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

  std::map<std::string, ProviderInfo> providers{
      {"openai", {"openai-completions", "https://api.openai.com/v1", {}, "OPENAI_API_KEY"}},
      {"anthropic", {"anthropic-messages", "https://api.anthropic.com", {}, "ANTHROPIC_API_KEY"}},
  };
  config::ModelsFile file = config::read_models_file(env.models_file);
  for (const auto& w : file.warnings)
    spdlog::warn("{}", w);
  for (const auto& p : file.providers) {
    if (p.name == "scripted") continue;
    ProviderInfo& info = providers[p.name];
    if (!p.api.empty()) info.api = p.api;
    if (info.api.empty()) info.api = "openai-completions";
    if (!p.base_url.empty()) {
      info.base_url = p.base_url;
      out.models.set_base_url(p.name, p.base_url);
    }
    info.models_json_key = p.api_key;
  }
  for (auto& m : file.models)
    out.models.upsert(std::move(m));

  // The provider named at start-up, for --base-url and --api-key.
  std::string selected = o.provider.value_or("");
  if (selected.empty() && !o.script && settings.default_provider) {
    selected = *settings.default_provider;
  }
  if (selected.empty() && !o.script) {
    for (const char* name : {"openai", "anthropic"}) {
      if (env.getenv(providers[name].env_var.value())) {
        selected = name;
        break;
      }
    }
  }
  if (selected.empty()) selected = "scripted";
  if (selected != "scripted" && !providers.count(selected)) {
    out.error = "unknown provider '" + selected + "' (built in: scripted, openai, anthropic; " +
                "others come from models.json)";
    return out;
  }
  if (o.base_url) {
    if (selected == "scripted") {
      spdlog::warn("--base-url has no meaning for the scripted provider; ignored");
    } else {
      providers[selected].base_url = *o.base_url;
      out.models.set_base_url(selected, *o.base_url);
    }
  }

  // Key resolution, first that exists: --api-key, stored credentials, environment, models.json.
  auto resolve = [&auth = env.auth, getenv = env.getenv, providers, selected, flag = o.api_key](
                     const std::string& provider,
                     const std::string& session_id) -> std::optional<net::ApiKey> {
    if (flag && provider == selected) return net::ApiKey{*flag, "--api-key"};
    if (auto stored = auth.resolve_key(provider, session_id)) {
      return net::ApiKey{*stored, "auth.json (provider '" + provider + "')"};
    }
    const auto it = providers.find(provider);
    if (it == providers.end()) return std::nullopt;
    if (it->second.env_var) {
      if (auto v = getenv(*it->second.env_var)) {
        return net::ApiKey{*v, "the environment variable " + *it->second.env_var};
      }
    }
    if (!it->second.models_json_key) return std::nullopt;
    return net::ApiKey{*it->second.models_json_key, "models.json (provider '" + provider + "')"};
  };
  out.has_key = [resolve, providers](const std::string& provider) {
    if (provider == "scripted") return true;
    const auto it = providers.find(provider);
    if (it == providers.end()) return false;
    // A custom provider without any key talks to a local server and needs none.
    const bool custom = !it->second.env_var.has_value();
    return resolve(provider, "").has_value() || (custom && !it->second.models_json_key);
  };

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
    config.api_key = [resolve, name = name](const std::string& sid) { return resolve(name, sid); };
    config.timeouts = {settings.http.connect_timeout_ms, settings.http.response_timeout_ms,
                       settings.http.idle_timeout_ms};
    config.now_epoch_ms = [&s = env.scheduler] { return s.now_epoch_ms(); };
    out.router->add(name, std::make_unique<net::HttpProvider>(env.http, std::move(config)));
  }

  // The starting model: --model, else the settings' default for this provider, else the first.
  std::string model_id = o.model.value_or("");
  if (model_id.empty() && settings.default_model &&
      (!settings.default_provider || *settings.default_provider == selected)) {
    model_id = *settings.default_model;
  }
  if (model_id.empty() && selected == "scripted") model_id = o.script ? "script" : "echo";
  const auto offered = out.models.of_provider(selected);
  if (model_id.empty() && !offered.empty()) model_id = offered.front().id;
  const protocol::Model* model = out.models.find(selected, model_id);
  if (!model) {
    std::string names;
    for (const auto& m : offered)
      names += (names.empty() ? "" : ", ") + m.id;
    out.error = "unknown model '" + selected + "/" + model_id + "' (available: " + names + ")";
    return out;
  }
  if (selected == "scripted" && !o.provider && !o.script) {
    spdlog::info("no provider configured: the offline scripted provider's echo model answers");
  }
  out.start_model = *model;
  return out;
}

}  // namespace rebound::server
