#include "workspace/tool_setup.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>

#include "config/json_file.h"
#include "tools/child_spawn.h"
#include "tools/system_prompt.h"

namespace rebound::server {

namespace fs = std::filesystem;
using protocol::Json;

std::string system_prompt_for(const std::string& settings_prompt,
                              const std::vector<std::string>& active, bool context_files,
                              const fs::path& agent_dir, const fs::path& cwd,
                              const std::string& skills_block, const std::string& guideline) {
  std::vector<tools::ContextFile> files;
  if (context_files) {
    files = tools::find_context_files(agent_dir, cwd, [](const fs::path& p) {
      std::error_code ec;
      if (!fs::exists(p, ec)) return tools::ContextRead{};
      const auto read = config::read_regular_file(p, 4 * 1024 * 1024);
      if (read.status != config::FileReadStatus::ok)
        return tools::ContextRead{tools::ContextRead::Status::unreadable, {}, read.error};
      return tools::ContextRead{tools::ContextRead::Status::ok, read.text, {}};
    });
  }
  return tools::build_system_prompt(settings_prompt, active, files, cwd, skills_block, guideline);
}

void PoolOffload::run(std::function<void()> work) {
  boost::asio::post(pool_, std::move(work));
}

BuiltinTools::BuiltinTools(session::Scheduler& scheduler, const std::vector<std::string>& active,
                           tools::BashToolOptions bash_options, tools::ShellSpawner::Spawn spawn)
    : files(scheduler, offload),
      bash(
          std::make_shared<tools::BashTool>(scheduler, std::move(spawn), std::move(bash_options))) {
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
