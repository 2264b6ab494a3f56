#pragma once
// bubblewrap's options for one sandboxed command (policy.md sections 8.3 and 8.4): the mounts in
// their order, the namespaces and the process settings. The `.git` list is taken anew per call.

#include <string>
#include <vector>

#include "sandbox/sandbox_config.h"

namespace rebound::sandbox {

/// Every `.git` (directory or file) below `root`, at most 8 directories deep, not inside
/// `node_modules` or another `.git`; symlinks are not followed.
std::vector<std::string> find_git_entries(const std::string& root);

/// The root of the git work tree `workspace` lies in: the nearest ancestor (not `workspace`
/// itself, not `home` or above it, not `/`) holding a `.git`; empty when there is none.
std::string enclosing_work_tree(const std::string& workspace, const std::string& home);

/// The options before `--seccomp`, for a sandbox whose workspace is `workspace` (a real path).
std::vector<std::string> bwrap_options(const SandboxConfig& config, const std::string& workspace);

/// Why `workspace` cannot be sandboxed (section 8.3's rules), or empty.
std::string workspace_problem(const SandboxConfig& config, const std::string& workspace);

}  // namespace rebound::sandbox
