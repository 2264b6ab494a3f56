#include "tools/system_prompt.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>

namespace rebound::tools {

namespace fs = std::filesystem;
using protocol::Json;

std::vector<std::string> active_tool_names(const std::optional<std::vector<std::string>>& chosen,
                                           bool no_tools, const Json& settings,
                                           std::vector<std::string>& warnings) {
  if (chosen) return *chosen;
  if (no_tools) return {};
  if (settings.is_object() && settings.contains("tools") && settings["tools"].is_object() &&
      settings["tools"].contains("active")) {
    const Json& active = settings["tools"]["active"];
    const bool strings =
        active.is_array() &&
        std::all_of(active.begin(), active.end(), [](const Json& v) { return v.is_string(); });
    if (!strings) {
      warnings.push_back("settings: tools.active must be an array of tool names; ignored");
    } else {
      std::vector<std::string> names;
      for (const auto& v : active) {
        const std::string name = v.get<std::string>();
        if (!is_known_tool(name)) {
          warnings.push_back("settings: unknown tool in tools.active: " + name +
                             " (known: " + known_tool_list() + "); skipped");
        } else if (std::find(names.begin(), names.end(), name) == names.end()) {
          names.push_back(name);
        }
      }
      return names;
    }
  }
  return default_tool_names();
}

namespace {

std::optional<ContextFile> context_file_in(const fs::path& dir, const ReadContextFile& read) {
  for (const char* name : {"AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"}) {
    const fs::path p = dir / name;
    ContextRead file = read(p);
    switch (file.status) {
      case ContextRead::Status::missing:
        continue;
      case ContextRead::Status::unreadable:
        spdlog::warn("cannot read the context file {}: {}", p.string(), file.error);
        return std::nullopt;
      case ContextRead::Status::ok:
        return ContextFile{p.string(), std::move(file.text)};
    }
  }
  return std::nullopt;
}

}  // namespace

std::vector<ContextFile> find_context_files(const fs::path& agent_dir, const fs::path& cwd,
                                            const ReadContextFile& read) {
  std::vector<ContextFile> files;
  auto add = [&](std::optional<ContextFile> f) {
    if (!f) return;
    for (const auto& have : files)
      if (have.path == f->path) return;
    files.push_back(std::move(*f));
  };
  add(context_file_in(agent_dir, read));
  std::vector<fs::path> chain;
  for (fs::path d = cwd;; d = d.parent_path()) {
    chain.push_back(d);
    if (d == d.parent_path()) break;
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    add(context_file_in(*it, read));
  return files;
}

std::string build_system_prompt(const std::string& settings_prompt,
                                const std::vector<std::string>& active,
                                const std::vector<ContextFile>& files, const fs::path& cwd,
                                const std::string& skills_block, const std::string& guideline) {
  const std::string base =
      settings_prompt.empty() ? default_base_prompt(active, guideline) : settings_prompt;
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[16];
  std::strftime(date, sizeof date, "%Y-%m-%d", &utc);
  return assemble_system_prompt(base, files, date, cwd.string(), skills_block);
}

}  // namespace rebound::tools
