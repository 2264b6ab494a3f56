#pragma once
// Which tools a session offers and what its system prompt holds (tools.md sections 2 and 10):
// the active set from the command line or settings, the context files (AGENTS.md, CLAUDE.md)
// of the agent directory and of every directory from the root down to the cwd, and the prompt
// assembled from them. The rules live here; reading a file is the caller's (the application
// hands in its bounded regular-file reader). Called at start-up and when a session opens.

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "tools/definitions.h"

namespace rebound::tools {

/// The active tool names: `chosen` (--tools) when given, none with `no_tools`, else settings
/// `tools.active`, else the default set. Unknown or malformed settings entries are reported in
/// `warnings` and skipped.
std::vector<std::string> active_tool_names(const std::optional<std::vector<std::string>>& chosen,
                                           bool no_tools, const protocol::Json& settings,
                                           std::vector<std::string>& warnings);

/// What reading one candidate context file gave.
struct ContextRead {
  enum class Status { missing, ok, unreadable } status = Status::missing;
  std::string text;   // ok
  std::string error;  // unreadable
};
using ReadContextFile = std::function<ContextRead(const std::filesystem::path&)>;

/// The context files of section 10: from the agent directory, then from the root down to
/// `cwd`, each directory's first of AGENTS.md, AGENTS.MD, CLAUDE.md, CLAUDE.MD (an unreadable
/// one is logged and its directory skipped), each path once.
std::vector<ContextFile> find_context_files(const std::filesystem::path& agent_dir,
                                            const std::filesystem::path& cwd,
                                            const ReadContextFile& read);

/// The whole system prompt for a session starting now in `cwd`: the settings' prompt or the
/// default for `active`, the context files (none when `files` is empty), the skills block
/// (sessions.md section 10.3; "" for none), today's date (UTC).
std::string build_system_prompt(const std::string& settings_prompt,
                                const std::vector<std::string>& active,
                                const std::vector<ContextFile>& files,
                                const std::filesystem::path& cwd,
                                const std::string& skills_block = {},
                                const std::string& guideline = {});

}  // namespace rebound::tools
