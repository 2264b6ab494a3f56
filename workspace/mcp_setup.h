#pragma once
// Where a session's MCP servers come from (mcp.md section 1.1: settings files, .mcp.json when
// enabled globally, --mcp-config files, --no-mcp) and how their processes start (the server's
// ChildProcess behind the MCP client's process seam). Event loop only.

#include <boost/asio/any_io_executor.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "mcp/mcp_config.h"
#include "mcp/mcp_connection.h"
#include "mcp/mcp_manager.h"
#include "sandbox/sandbox.h"
#include "session/error.h"
#include "session/scheduler.h"
#include "workspace/service_flags.h"

#include "config/settings_pair.h"

namespace rebound::server {

struct McpSources {
  std::vector<mcp::ServerConfig> servers;  // sources 1 to 4, merged, limit applied
  mcp::McpSettings settings;
};

/// The servers configured for `cwd` (sources 1 to 4, section 1.1) plus `extra` (ACP's source 5),
/// or why a --mcp-config file cannot be used (the server then exits 1).
session::Result<McpSources> read_mcp_sources(const workspace::ServiceFlags& options,
                                             const config::SettingsPair& files,
                                             const std::filesystem::path& cwd,
                                             const mcp::Getenv& getenv,
                                             std::vector<mcp::ServerConfig> extra = {});

/// Starts server processes as ChildProcess children (stdin/stdout pipes, stderr separate, a
/// process group of their own); a spec marked sandboxed in `box` (policy.md section 8.8), its
/// command looked up on `path`, or not at all.
mcp::Spawner child_process_spawner(boost::asio::any_io_executor executor,
                                   std::shared_ptr<sandbox::Sandbox> box = nullptr,
                                   std::string path = {});

/// How a session's MCP servers meet the sandbox (policy.md section 8.8): the session's sandbox
/// (none: off), whether servers without a `sandbox` key go in (sandbox.mcpServers), and where
/// the names of those that do are listed (get_policy).
struct McpSandboxing {
  std::shared_ptr<sandbox::Sandbox> box;
  bool by_default = false;
  std::vector<std::string>* sandboxed = nullptr;
};

/// The MCP servers of a session working in `cwd` (rpc mode: the process's; acp mode: one ACP
/// session's), not started yet; `builtin_names` are the tools offered before theirs.
std::unique_ptr<mcp::McpManager> make_mcp_set(boost::asio::any_io_executor executor,
                                              session::Scheduler& scheduler, McpSources sources,
                                              std::string cwd, mcp::Getenv getenv,
                                              std::vector<std::string> builtin_names,
                                              const McpSandboxing& sandboxing = {});

}  // namespace rebound::server
