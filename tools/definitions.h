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
/// read, bash, edit, write.
const std::vector<std::string>& default_tool_names();
bool is_known_tool(std::string_view name);
/// "read, bash, edit, write, grep, find, ls".
std::string known_tool_list();

/// The definition of a built-in tool (pinned description, exact parameter schema).
const session::ToolDefinition& builtin_definition(std::string_view name);

/// Splits `--tools LIST`: blanks around names ignored, empty items dropped, duplicates once.
std::vector<std::string> split_tool_list(std::string_view list);

/// Section 10, part 1: Rebound's default base text for the active tools.
std::string default_base_prompt(const std::vector<std::string>& active);

struct ContextFile {
  std::string path;  // absolute
  std::string content;
};

/// Section 10: base text, project context, date and cwd.
std::string assemble_system_prompt(const std::string& base, const std::vector<ContextFile>& files,
                                   const std::string& date, const std::string& cwd);

}  // namespace rebound::tools
