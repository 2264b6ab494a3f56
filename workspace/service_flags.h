#pragma once
// The command line's say in a session and its services (its file, its prompt's sources, the MCP
// servers, hooks and extensions, the permission policy and the sandbox): the flags the workspace
// room reads. The application's
// CliOptions holds them as its base, so the set-ups take the options as they are parsed.

#include <optional>
#include <string>
#include <vector>

namespace rebound::workspace {

struct ServiceFlags {
  std::vector<std::string> mcp_configs;        // --mcp-config FILE…
  bool no_mcp = false;                         // --no-mcp
  std::vector<std::string> extensions;         // --extension CMD…
  bool no_extensions = false;                  // --no-extensions
  std::optional<std::string> permission_mode;  // --permission-mode, or --acp-permissions' mode
  std::vector<std::string> allowed_tools;      // --allowed-tools LIST…, split into rules
  std::vector<std::string> disallowed_tools;   // --disallowed-tools LIST…
  bool permission_prompts_client = true;       // --permission-prompts client|none
  std::optional<bool> sandbox;                 // --sandbox / --no-sandbox, the last one given
  std::optional<std::string> session_file;     // --session FILE
  std::optional<std::string> session_name;     // --name (sessions.md section 5), trimmed
  std::optional<std::string> session_dir;      // --session-dir
  bool no_session = false;                     // --no-session
  bool continue_session = false;               // --continue (oneshot.md section 14)
  std::optional<std::string> resume;           // --resume PATH
  bool no_context_files = false;               // --no-context-files
  bool no_prompt_templates = false;            // --no-prompt-templates (sessions.md section 9.1)
  bool no_skills = false;                      // --no-skills (section 10.1)
};

}  // namespace rebound::workspace
