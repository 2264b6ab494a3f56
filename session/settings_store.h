#pragma once
// Where settings come from and where runtime changes go (runtime.md section 3). The session
// calls it on its event loop; implementations do file I/O (config/) or keep JSON in memory
// (tests).

#include "protocol/json.h"

namespace rebound::session {

class SettingsStore {
 public:
  virtual ~SettingsStore() = default;
  /// The merged settings (project over global); an unreadable file counts as empty.
  virtual protocol::Json load() = 0;
  /// Merges `patch` (e.g. {"retry":{"enabled":false}}) into the global file. Failures are
  /// reported by the implementation, never thrown.
  virtual void persist(const protocol::Json& patch) = 0;
};

}  // namespace rebound::session
