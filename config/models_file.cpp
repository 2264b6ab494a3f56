#include "config/models_file.h"

#include "config/json_file.h"
#include "protocol/json_access.h"
#include "session/llm/wire_api.h"

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

// A `headers` object's string values, in file order; anything else is skipped with a warning.
std::vector<std::pair<std::string, std::string>> headers_of(const Json& owner,
                                                            const std::string& where,
                                                            std::vector<std::string>& warnings) {
  std::vector<std::pair<std::string, std::string>> out;
  const Json& headers = get_value(owner, "headers");
  if (headers.is_null()) return out;
  if (!headers.is_object()) {
    warnings.push_back("models file: " + where + " headers is not an object; ignored");
    return out;
  }
  for (auto it = headers.begin(); it != headers.end(); ++it) {
    if (!it->is_string()) {
      warnings.push_back("models file: " + where + " header '" + it.key() +
                         "' is not a string; ignored");
      continue;
    }
    out.emplace_back(it.key(), it->get<std::string>());
  }
  return out;
}

// `over` after `base`, a name in both (compared without case) taking `over`'s value.
std::vector<std::pair<std::string, std::string>> merged_headers(
    std::vector<std::pair<std::string, std::string>> base,
    const std::vector<std::pair<std::string, std::string>>& over) {
  for (const auto& h : over) {
    std::erase_if(base,
                  [&](const auto& b) { return session::llm::same_header_name(b.first, h.first); });
    base.push_back(h);
  }
  return base;
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
    p.headers = headers_of(*it, "provider '" + p.name + "'", out.warnings);
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
        model.headers = merged_headers(
            p.headers, headers_of(m, "model '" + p.name + "/" + id + "'", out.warnings));
        const Json& compat = get_object(m, "compat");
        const Json& cache_key = get_value(compat, "promptCacheKey");
        model.prompt_cache_key = cache_key.is_boolean() && cache_key.get<bool>();
        out.models.push_back(std::move(model));
      }
    }
    out.providers.push_back(std::move(p));
  }
  return out;
}

}  // namespace rebound::config
