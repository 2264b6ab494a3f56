#pragma once
// Which built-in tools a session offers and what the model is told (tools.md sections 1 and
// 10): the active set from --tools, --no-tools or settings `tools.active`; the registry with
// the file tools and the bash tool; the system prompt with the project context files; and the
// worker threads the file tools run on.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/thread_pool.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "session/scheduler.h"
#include "session/tool.h"
#include "tools/bash_tool.h"
#include "tools/builtin_tools.h"
#include "tools/definitions.h"

namespace rebound::server {

/// The context files and system prompt of a session in `cwd` (tools/system_prompt.h), its
/// files read with the configuration reader (regular files, 4 MiB at most).
std::string system_prompt_for(const std::string& settings_prompt,
                              const std::vector<std::string>& active, bool context_files,
                              const std::filesystem::path& agent_dir,
                              const std::filesystem::path& cwd,
                              const std::string& skills_block = {},
                              const std::string& guideline = {});

/// Worker threads for the file tools.
class PoolOffload : public tools::Offload {
 public:
  explicit PoolOffload(std::size_t threads) : pool_(threads) {}
  ~PoolOffload() override { pool_.join(); }
  void run(std::function<void()> work) override;
  /// Waits for the work in flight (called before what it posts to goes away).
  void join() { pool_.join(); }

 private:
  boost::asio::thread_pool pool_;
};

/// The built-in tools of the server, registered in active order.
struct BuiltinTools {
  BuiltinTools(session::Scheduler& scheduler, const std::vector<std::string>& active,
               tools::BashToolOptions bash_options, tools::ShellSpawner::Spawn spawn);
  ~BuiltinTools();
  PoolOffload offload{2};
  tools::FileTools files;
  std::shared_ptr<tools::BashTool> bash;  // also when not active (kill_background is harmless)
  session::ToolRegistry registry;
};

}  // namespace rebound::server
