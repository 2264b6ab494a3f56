#include "config/settings_pair.h"

#include "config/json_file.h"

namespace rebound::config {

std::string trust_hint(const std::filesystem::path& global_file) {
  return "\"trustProjectSettings\": true in " + global_file.string();
}

std::string SettingsPair::trust_hint() const {
  return config::trust_hint(global_file);
}

bool trusts_projects(const protocol::Json& global) {
  return settings_member(global, "trustProjectSettings") == true;
}

SettingsPair read_settings_pair(const std::filesystem::path& agent_dir,
                                const std::filesystem::path& cwd) {
  SettingsPair out;
  out.global_file = agent_dir / "settings.json";
  out.project_file = cwd / ".rebound" / "settings.json";
  out.global = settings_object(out.global_file);
  out.project = settings_object(out.project_file);
  out.trusted = trusts_projects(out.global);
  return out;
}

}  // namespace rebound::config
