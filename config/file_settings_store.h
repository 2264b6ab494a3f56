#pragma once
// settings.json on disk (runtime.md section 3): the global file in the agent directory with the
// project file (<cwd>/.rebound/settings.json) merged over it; runtime changes are merged into
// the global file atomically. A malformed file is reported on stderr, read as empty and never
// overwritten. Used on the event loop only.

#include <filesystem>

#include "session/settings_store.h"

namespace rebound::config {

class FileSettingsStore : public session::SettingsStore {
 public:
  FileSettingsStore(std::filesystem::path global_file, std::filesystem::path project_file);

  protocol::Json load() override;
  void persist(const protocol::Json& patch) override;

 private:
  std::filesystem::path global_;
  std::filesystem::path project_;
};

}  // namespace rebound::config
