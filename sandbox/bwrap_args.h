#pragma once
// bubblewrap's options for one sandboxed command (policy.md sections 8.3 and 8.4): the mounts in
// their order, the namespaces and the process settings. The `.git` list is taken anew per call.

#include <cstddef>
#include <string>
#include <vector>

#include "sandbox/sandbox_config.h"
#include "session/error.h"

namespace rebound::sandbox {

/// At most this many `.git` entries are bound read-only (3 of bubblewrap's at most 9,000
/// arguments each); a command that made more cannot be sandboxed until some are removed.
constexpr std::size_t kMaxGitEntries = 2000;

/// Every `.git` (directory, file or symlink) below `root`, at most 8 directories deep, not
/// inside `node_modules` or another `.git`; symlinks are not followed. The search stops after
/// `limit` + 1 entries.
std::vector<std::string> find_git_entries(const std::string& root,
                                          std::size_t limit = kMaxGitEntries);

/// The root of the git work tree `workspace` lies in: the nearest ancestor (not `workspace`
/// itself, not `home` or above it, not `/`) holding a `.git`; empty when there is none.
std::string enclosing_work_tree(const std::string& workspace, const std::string& home);

/// The options before `--seccomp`, for a sandbox whose workspace is `workspace` (a real path),
/// or why the command cannot be sandboxed now (more than kMaxGitEntries `.git` entries).
/// `hidden`: more paths hidden like `denyRead` entries (where denied files were moved).
session::Result<std::vector<std::string>> bwrap_options(
    const SandboxConfig& config, const std::string& workspace,
    const std::vector<std::string>& hidden = {});

/// Why `workspace` cannot be sandboxed (section 8.3's rules), or empty.
std::string workspace_problem(const SandboxConfig& config, const std::string& workspace);

}  // namespace rebound::sandbox
