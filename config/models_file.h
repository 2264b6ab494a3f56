#pragma once
// models.json in the pi agent's format (runtime.md section 3): custom providers with their base
// URL, API, key and models, and base-URL overrides for built-in providers. A file from a pi user
// works unchanged; unknown fields are ignored. Reading never throws.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "protocol/wire_types.h"

namespace rebound::config {

struct ProviderEntry {
  std::string name;
  std::string api;       // empty: not given (a built-in provider keeps its own)
  std::string base_url;  // empty: not given
  std::optional<std::string> api_key;
  /// `headers`: sent on every request of the provider's models (a model's own win).
  std::vector<std::pair<std::string, std::string>> headers;
};

struct ModelsFile {
  std::vector<ProviderEntry> providers;
  std::vector<protocol::Model> models;
  std::vector<std::string> warnings;  // for the log, one per skipped part
};

ModelsFile read_models_file(const std::filesystem::path& path);

}  // namespace rebound::config
