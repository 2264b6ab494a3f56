#include "config/models_file.h"

#include "config/json_file.h"
#include "protocol/json_access.h"

namespace rebound::config {

using protocol::get_int;
using protocol::get_object;
using protocol::get_string;
using protocol::get_value;
using protocol::Json;

namespace {

double price(const Json& cost, const char* key) {
  const Json& v = get_value(cost, key);
  return v.is_number() ? v.get<double>() : 0.0;
}

}  // namespace

ModelsFile read_models_file(const std::filesystem::path& path) {
  ModelsFile out;
  JsonFileRead r = read_json_file(path);
  if (r.status == JsonFileStatus::malformed) {
    out.warnings.push_back("models file " + path.string() + " is malformed (" + r.error +
                           "); no custom models are used");
  }
  if (r.status != JsonFileStatus::ok) return out;
  const Json& providers = get_object(r.value, "providers");
  for (auto it = providers.begin(); it != providers.end(); ++it) {
    if (!it->is_object()) {
      out.warnings.push_back("models file: provider '" + it.key() + "' is not an object");
      continue;
    }
    ProviderEntry p;
    p.name = it.key();
    p.api = get_string(*it, "api");
    p.base_url = get_string(*it, "baseUrl");
    if (const Json& key = get_value(*it, "apiKey"); key.is_string())
      p.api_key = key.get<std::string>();
    const Json& models = get_value(*it, "models");
    if (models.is_array()) {
      for (const Json& m : models) {
        const std::string id = get_string(m, "id");
        if (id.empty()) {
          out.warnings.push_back("models file: a model of '" + p.name + "' has no id; skipped");
          continue;
        }
        protocol::Model model;
        model.id = id;
        model.name = get_string(m, "name", id);
        model.api = get_string(m, "api", p.api.empty() ? "openai-completions" : p.api);
        model.provider = p.name;
        model.base_url = get_string(m, "baseUrl", p.base_url);
        const Json& reasoning = get_value(m, "reasoning");
        model.reasoning = reasoning.is_boolean() && reasoning.get<bool>();
        const Json& input = get_value(m, "input");
        if (input.is_array()) {
          model.input.clear();
          for (const Json& i : input) {
            if (i.is_string()) model.input.push_back(i.get<std::string>());
          }
        }
        const Json& cost = get_object(m, "cost");
        model.cost = {price(cost, "input"), price(cost, "output"), price(cost, "cacheRead"),
                      price(cost, "cacheWrite")};
        model.context_window = get_int(m, "contextWindow", 128000);
        model.max_tokens = get_int(m, "maxTokens", 16384);
        out.models.push_back(std::move(model));
      }
    }
    out.providers.push_back(std::move(p));
  }
  return out;
}

}  // namespace rebound::config
