#pragma once
// The two settings files a session reads (the user's `<agent-dir>/settings.json` and the
// project's `<cwd>/.rebound/settings.json`) and the trust rule between them, in one place: a
// project's keys that can start processes or loosen the policy count only when the user's own
// file says `"trustProjectSettings": true` (a project cannot trust itself). Read once per
// working directory and handed to every set-up that needs them.

#include <filesystem>
#include <string>

#include "protocol/json.h"

namespace rebound::config {

struct SettingsPair {
  std::filesystem::path global_file, project_file;
  protocol::Json global = protocol::Json::object();   // {} when missing or unreadable
  protocol::Json project = protocol::Json::object();  // {} when missing or unreadable
  bool trusted = false;                               // the global file trusts project settings

  /// How a warning tells the user to trust the project (trust_hint below).
  std::string trust_hint() const;
};

/// Whether settings object `global` (the user's own) trusts project settings.
bool trusts_projects(const protocol::Json& global);
/// `"trustProjectSettings": true in <global_file>`: what a warning tells the user to set.
std::string trust_hint(const std::filesystem::path& global_file);

SettingsPair read_settings_pair(const std::filesystem::path& agent_dir,
                                const std::filesystem::path& cwd);

}  // namespace rebound::config
