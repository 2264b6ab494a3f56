#pragma once
// What the sandbox of policy.md section 8 is configured with (the combined `sandbox` settings
// of section 1.2, paths absolute).

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rebound::sandbox {

struct SandboxConfig {
  std::string workspace;  // the session cwd
  std::string home;       // $HOME
  bool network = false;
  std::vector<std::string> writable_roots, read_only_paths, deny_read;
  std::vector<std::pair<std::string, std::string>> env;  // sandbox.env, expanded
  std::optional<std::string> bwrap_path;                 // the global sandbox.bwrapPath
};

}  // namespace rebound::sandbox
