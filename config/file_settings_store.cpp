#include "config/file_settings_store.h"

#include <spdlog/spdlog.h>
#include <nlohmann/json.hpp>

#include "config/json_file.h"
#include "session/settings.h"

namespace rebound::config {

namespace fs = std::filesystem;
using protocol::Json;

FileSettingsStore::FileSettingsStore(fs::path global_file, fs::path project_file)
    : global_(std::move(global_file)), project_(std::move(project_file)) {}

Json FileSettingsStore::load() {
  Json merged = Json::object();
  for (const fs::path* file : {&global_, &project_}) {
    JsonFileRead r = read_json_file(*file);
    if (r.status == JsonFileStatus::malformed) {
      spdlog::warn("settings file {} is malformed ({}); using the defaults", file->string(),
                   r.error);
    } else if (r.status == JsonFileStatus::ok) {
      merged = session::deep_merge(std::move(merged), r.value);
    }
  }
  return merged;
}

void FileSettingsStore::persist(const Json& patch) {
  JsonFileRead current = read_json_file(global_);
  if (current.status == JsonFileStatus::malformed) {
    spdlog::warn(
        "settings file {} is malformed ({}); not overwriting it, the change holds for "
        "this session only",
        global_.string(), current.error);
    return;
  }
  Json base = current.status == JsonFileStatus::ok ? std::move(current.value) : Json::object();
  if (auto err = write_json_file_atomically(global_, session::deep_merge(std::move(base), patch),
                                            fs::perms::owner_read | fs::perms::owner_write |
                                                fs::perms::group_read | fs::perms::others_read)) {
    spdlog::warn("could not save settings: {}", *err);
  }
}

}  // namespace rebound::config
