#pragma once
// The built-in tools' definitions as the model sees them (tools.md section 2), argument
// checking (section 5), the active set (section 1) and the system prompt (section 10). Pure.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/json.h"
#include "session/tool.h"

namespace rebound::tools {

/// read, bash, edit, write, grep, find, ls.
const std::vector<std::string>& known_tool_names();
/// The tools active by default (their traits say so): read, bash, edit, write.
const std::vector<std::string>& default_tool_names();
bool is_known_tool(std::string_view name);
/// "read, bash, edit, write, grep, find, ls".
std::string known_tool_list();

/// The definition of a built-in tool (pinned description, exact parameter schema).
const session::ToolDefinition& builtin_definition(std::string_view name);

/// What a front end needs of a built-in tool, declared with its definition: how an editor
/// shows a call (ACP's kind and title, acp.md section 7.2), whether the call changes a file
/// (its diff), whether ACP's `ask` mode asks before it runs, and whether it is active by
/// default.
struct ToolTraits {
  enum class Kind { read, edit, execute, search };
  enum class Title {
    verb_path,        // "<verb> <path>"; its location the path (read: the offset's line)
    command_line,     // the command's first line, 200 characters at most
    pattern_in_path,  // "<name> <pattern>" and " in <path>" when a path is given
    listing,          // "ls <path or .>"
  };
  Kind kind;
  Title title;
  std::string_view verb;  // verb_path's verb
  bool edits_file = false;
  bool asks_permission = false;
  bool active_by_default = false;
};
/// The traits of a built-in tool; null for any other name (an MCP tool).
const ToolTraits* builtin_traits(std::string_view name);
/// ACP's word for a kind ("read", "edit", "execute", "search").
std::string_view kind_name(ToolTraits::Kind kind);

/// Splits `--tools LIST`: blanks around names ignored, empty items dropped, duplicates once.
std::vector<std::string> split_tool_list(std::string_view list);

/// Section 10, part 1: Rebound's default base text for the active tools.
/// `guideline`: one more line before "Be concise." (the sandbox's, policy.md section 8.7).
std::string default_base_prompt(const std::vector<std::string>& active,
                                const std::string& guideline = {});

struct ContextFile {
  std::string path;  // absolute
  std::string content;
};

/// Section 10: base text, project context, the skills block (sessions.md 10.3), date and cwd.
std::string assemble_system_prompt(const std::string& base, const std::vector<ContextFile>& files,
                                   const std::string& date, const std::string& cwd,
                                   const std::string& skills_block = {});

}  // namespace rebound::tools
