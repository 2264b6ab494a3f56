#include "tools/definitions.h"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "protocol/name_table.h"

namespace rebound::tools {

using protocol::Json;

namespace {

using K = ToolTraits::Kind;
using T = ToolTraits::Title;

struct Builtin {
  const char* name;
  const char* summary;  // the system prompt's line
  const char* description;
  const char* parameters;
  ToolTraits traits;
};

const Builtin kBuiltins[] = {
    {"read",
     "Read a file's contents",
     "Read a file. Text files come back as text; jpg, png, gif and webp images come back as image "
     "attachments. Text output stops at 2000 lines or 50KB, whichever comes first; page through "
     "longer files with offset and limit, continuing with offset until you have what you need.",
     R"json({"type":"object","required":["path"],"properties":{
 "path":{"type":"string","description":"File to read, relative to the working directory or absolute"},
 "offset":{"type":"number","description":"First line to return, counting from 1"},
 "limit":{"type":"number","description":"Largest number of lines to return"}}})json",
     {K::read, T::verb_path, "Read", false, false, true}},
    {"bash",
     "Run shell commands (ls, grep, find, builds, tests)",
     "Run a command with bash in the working directory and return its combined stdout and "
     "stderr. Output keeps the last 2000 lines or 50KB, whichever comes first; when it is cut, the "
     "complete output is saved to a temporary file whose path is given. An optional timeout in "
     "seconds stops the command.",
     R"json({"type":"object","required":["command"],"properties":{
 "command":{"type":"string","description":"The command line to run"},
 "timeout":{"type":"number","description":"Stop the command after this many seconds (no limit when absent)"}}})json",
     {K::execute, T::command_line, "", false, true, true}},
    {"edit",
     "Change files by exact text replacement, several separate edits per call allowed",
     "Change one file by exact text replacement. Each edits[].oldText must occur exactly once in "
     "the original file and must not overlap another edit. Put changes that touch the same or "
     "neighbouring lines into a single edit, and keep oldText short: just enough to be unique.",
     R"json({"type":"object","required":["path","edits"],"properties":{
 "path":{"type":"string","description":"File to edit, relative to the working directory or absolute"},
 "edits":{"type":"array","items":{"type":"object","required":["oldText","newText"],"properties":{
   "oldText":{"type":"string","description":"Text to replace; it must occur exactly once in the original file and must not overlap any other edit's oldText"},
   "newText":{"type":"string","description":"Text that replaces oldText"}},"additionalProperties":false},
  "description":"The replacements, each matched against the original file, not against the result of earlier edits; no overlapping or nested edits"}},
 "additionalProperties":false})json",
     {K::edit, T::verb_path, "Edit", true, true, true}},
    {"write",
     "Create or overwrite files",
     "Write a file: create it, together with any missing parent directories, or replace all of "
     "its content.",
     R"json({"type":"object","required":["path","content"],"properties":{
 "path":{"type":"string","description":"File to write, relative to the working directory or absolute"},
 "content":{"type":"string","description":"The complete new content of the file"}}})json",
     {K::edit, T::verb_path, "Write", true, true, true}},
    {"grep",
     "Search file contents (respects .gitignore)",
     "Search file contents with a regular expression or a literal string. Returns matching lines "
     "as path:line: text. Files ignored by .gitignore are skipped. Output stops at 100 matches or "
     "50KB, whichever comes first; lines longer than 500 characters are cut.",
     R"json({"type":"object","required":["pattern"],"properties":{
 "pattern":{"type":"string","description":"Regular expression (JavaScript syntax), or plain text with literal"},
 "path":{"type":"string","description":"Directory or file to search (default: the working directory)"},
 "glob":{"type":"string","description":"Only search files whose path matches this glob, e.g. '*.ts' or 'src/**/*.test.ts'"},
 "ignoreCase":{"type":"boolean","description":"Match without regard to case (default: false)"},
 "literal":{"type":"boolean","description":"Treat pattern as plain text, not as a regular expression (default: false)"},
 "context":{"type":"number","description":"Lines to show before and after each match (default: 0)"},
 "limit":{"type":"number","description":"Largest number of matches to return (default: 100)"}}})json",
     {K::search, T::pattern_in_path, "", false, false, false}},
    {"find",
     "Find files by glob pattern (respects .gitignore)",
     "Find files and directories whose names match a glob pattern. Returns paths relative to the "
     "searched directory, directories ending in '/'. Paths ignored by .gitignore are skipped. "
     "Output stops at 1000 results or 50KB, whichever comes first.",
     R"json({"type":"object","required":["pattern"],"properties":{
 "pattern":{"type":"string","description":"Glob to match, e.g. '*.ts', '**/*.json' or 'src/**/*.spec.ts'"},
 "path":{"type":"string","description":"Directory to search (default: the working directory)"},
 "limit":{"type":"number","description":"Largest number of results (default: 1000)"}}})json",
     {K::search, T::pattern_in_path, "", false, false, false}},
    {"ls",
     "List a directory",
     "List a directory: entries in alphabetical order, directories marked with a trailing '/', "
     "dotfiles included. Output stops at 500 entries or 50KB, whichever comes first.",
     R"json({"type":"object","properties":{
 "path":{"type":"string","description":"Directory to list (default: the working directory)"},
 "limit":{"type":"number","description":"Largest number of entries (default: 500)"}}})json",
     {K::read, T::listing, "", false, false, false}},
};

const Builtin& builtin(std::string_view name) {
  for (const auto& b : kBuiltins) {
    if (name == b.name) return b;
  }
  throw std::invalid_argument("not a built-in tool: " + std::string(name));
}

}  // namespace

const std::vector<std::string>& known_tool_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& b : kBuiltins)
      out.emplace_back(b.name);
    return out;
  }();
  return names;
}

const std::vector<std::string>& default_tool_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& b : kBuiltins)
      if (b.traits.active_by_default) out.emplace_back(b.name);
    return out;
  }();
  return names;
}

const ToolTraits* builtin_traits(std::string_view name) {
  for (const auto& b : kBuiltins) {
    if (name == b.name) return &b.traits;
  }
  return nullptr;
}

std::string_view kind_name(ToolTraits::Kind kind) {
  static constexpr protocol::Named<ToolTraits::Kind> kNames[] = {
      {K::read, "read"}, {K::edit, "edit"}, {K::execute, "execute"}, {K::search, "search"}};
  return protocol::name_of(kind, kNames);
}

bool is_known_tool(std::string_view name) {
  const auto& n = known_tool_names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

std::string known_tool_list() {
  std::string s;
  for (const auto& n : known_tool_names())
    s += (s.empty() ? "" : ", ") + n;
  return s;
}

const session::ToolDefinition& builtin_definition(std::string_view name) {
  static const auto definitions = [] {
    std::map<std::string, session::ToolDefinition, std::less<>> m;
    for (const auto& b : kBuiltins)
      m[b.name] = session::ToolDefinition{b.name, b.description, Json::parse(b.parameters)};
    return m;
  }();
  builtin(name);  // throws for an unknown name
  return definitions.find(name)->second;
}

std::vector<std::string> split_tool_list(std::string_view list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view item = list.substr(start, comma - start);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front())))
      item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back())))
      item.remove_suffix(1);
    if (!item.empty() && std::find(out.begin(), out.end(), item) == out.end())
      out.emplace_back(item);
    start = comma + 1;
  }
  return out;
}

std::string default_base_prompt(const std::vector<std::string>& active,
                                const std::string& guideline) {
  auto has = [&](std::string_view n) {
    return std::find(active.begin(), active.end(), n) != active.end();
  };
  std::string s =
      "You are a coding assistant working in the user's project through the tools listed below. "
      "You read files, run commands, edit code and write new files to get the user's task "
      "done.\n\nAvailable tools:\n";
  bool any = false;
  for (const auto& name : active) {
    if (!is_known_tool(name)) continue;
    s += "- " + name + ": " + builtin(name).summary + "\n";
    any = true;
  }
  if (!any) s += "(none)\n";
  s += "\nGuidelines:\n";
  const bool explore = has("grep") || has("find") || has("ls");
  if (has("bash") && !explore) s += "- Use bash for file operations such as ls, rg and find.\n";
  if (has("bash") && explore)
    s += "- Prefer the grep, find and ls tools to bash for exploring files: they are faster and "
         "respect .gitignore.\n";
  if (has("read")) s += "- Use read, not cat or sed, to look at files.\n";
  if (has("edit")) {
    s += "- Use edit for targeted changes; oldText must match the file exactly.\n";
    s += "- Change several places of one file with one edit call that holds several edits.\n";
  }
  if (has("write")) s += "- Use write only for new files or complete rewrites.\n";
  if (!guideline.empty()) s += "- " + guideline + "\n";
  s += "- Be concise.\n- Show file paths clearly when you work with files.";
  return s;
}

std::string assemble_system_prompt(const std::string& base, const std::vector<ContextFile>& files,
                                   const std::string& date, const std::string& cwd,
                                   const std::string& skills_block) {
  std::string s = base;
  if (!files.empty()) {
    s += "\n\n# Project Context\n\nProject-specific instructions and guidelines:\n\n";
    for (const auto& f : files)
      s += "## " + f.path + "\n\n" + f.content + "\n\n";
  }
  s += skills_block;  // between the project context and the date line
  s += "\nCurrent date: " + date;
  s += "\nCurrent working directory: " + cwd;
  return s;
}

}  // namespace rebound::tools
