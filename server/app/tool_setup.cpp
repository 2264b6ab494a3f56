#include "server/app/tool_setup.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <ctime>

#include "config/json_file.h"
#include "tools/definitions.h"

namespace rebound::server {

namespace fs = std::filesystem;
using protocol::Json;

std::vector<std::string> active_tool_names(const CliOptions& options, const Json& settings,
                                           std::vector<std::string>& warnings) {
  if (options.tools) return *options.tools;
  if (options.no_tools) return {};
  if (settings.is_object() && settings.contains("tools") && settings["tools"].is_object() &&
      settings["tools"].contains("active")) {
    const Json& active = settings["tools"]["active"];
    bool strings = active.is_array();
    if (strings) {
      for (const auto& v : active)
        strings = strings && v.is_string();
    }
    if (!strings) {
      warnings.push_back("settings: tools.active must be an array of tool names; ignored");
    } else {
      std::vector<std::string> names;
      for (const auto& v : active) {
        const std::string name = v.get<std::string>();
        if (!tools::is_known_tool(name)) {
          warnings.push_back("settings: unknown tool in tools.active: " + name +
                             " (known: " + tools::known_tool_list() + "); skipped");
        } else if (std::find(names.begin(), names.end(), name) == names.end()) {
          names.push_back(name);
        }
      }
      return names;
    }
  }
  return tools::default_tool_names();
}

tools::BashToolOptions bash_tool_options_from(const Json& settings) {
  tools::BashToolOptions o;
  auto text = [&](const char* key) -> std::optional<std::string> {
    if (settings.is_object() && settings.contains(key) && settings[key].is_string())
      return settings[key].get<std::string>();
    return std::nullopt;
  };
  o.shell_path = text("shellPath");
  o.command_prefix = text("shellCommandPrefix");
  return o;
}

namespace {

std::optional<tools::ContextFile> context_file_in(const fs::path& dir) {
  for (const char* name : {"AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"}) {
    const fs::path p = dir / name;
    std::error_code ec;
    if (!fs::exists(p, ec)) continue;
    const auto read = config::read_regular_file(p, 4 * 1024 * 1024);
    if (read.status != config::FileReadStatus::ok) {
      spdlog::warn("cannot read the context file {}: {}", p.string(), read.error);
      return std::nullopt;
    }
    return tools::ContextFile{p.string(), read.text};
  }
  return std::nullopt;
}

}  // namespace

std::vector<tools::ContextFile> find_context_files(const fs::path& agent_dir, const fs::path& cwd) {
  std::vector<tools::ContextFile> files;
  auto add = [&](std::optional<tools::ContextFile> f) {
    if (!f) return;
    for (const auto& have : files)
      if (have.path == f->path) return;
    files.push_back(std::move(*f));
  };
  add(context_file_in(agent_dir));
  std::vector<fs::path> chain;
  for (fs::path d = cwd;; d = d.parent_path()) {
    chain.push_back(d);
    if (d == d.parent_path()) break;
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it)
    add(context_file_in(*it));
  return files;
}

std::string build_system_prompt(const std::string& settings_prompt,
                                const std::vector<std::string>& active, bool context_files,
                                const fs::path& agent_dir, const fs::path& cwd) {
  const std::string base =
      settings_prompt.empty() ? tools::default_base_prompt(active) : settings_prompt;
  std::vector<tools::ContextFile> files;
  if (context_files) files = find_context_files(agent_dir, cwd);
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char date[16];
  std::strftime(date, sizeof date, "%Y-%m-%d", &utc);
  return tools::assemble_system_prompt(base, files, date, cwd.string());
}

void PoolOffload::run(std::function<void()> work) {
  boost::asio::post(pool_, std::move(work));
}

BuiltinTools::BuiltinTools(boost::asio::any_io_executor executor, session::Scheduler& scheduler,
                           const std::vector<std::string>& active, tools::BashToolOptions bash_options)
    : files(scheduler, offload),
      bash(std::make_shared<tools::BashTool>(std::move(executor), std::move(bash_options))) {
  for (const auto& name : active) {
    if (name == "bash") {
      registry.add(bash);
    } else if (auto tool = files.make(name)) {
      registry.add(std::move(tool));
    }
  }
}

BuiltinTools::~BuiltinTools() {
  offload.join();  // no worker may still post a result once the tools are gone
}

}  // namespace rebound::server
