#pragma once
// The modes of the command line's --mode: each is a name and the function that builds its
// front end from what the application built. Adding a mode is one line in modes.cpp. Called
// once at start-up, on the event loop's thread.

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/settings_pair.h"
#include "mcp/mcp_config.h"
#include "sandbox/sandbox_spawn.h"
#include "server/app/cli_options.h"
#include "server/app/session_factory.h"
#include "server/app/tool_setup.h"
#include "server/io/front_end.h"
#include "server/io/stdio_transport.h"
#include "workspace/hook_setup.h"
#include "workspace/mcp_setup.h"
#include "workspace/policy_wiring.h"

namespace rebound::server {

/// What every mode builds on: the process's parts, made by run_server.
struct AppParts {
  const CliOptions& options;
  std::filesystem::path agent_dir;
  std::filesystem::path cwd;  // absolute
  /// The settings files of the process's cwd and their trust rule, read once at start-up.
  const config::SettingsPair& settings;
  boost::asio::io_context& io;
  session::Scheduler& scheduler;
  StdoutWriter& writer;
  SessionFactory& sessions;
  BuiltinTools& tools;
  std::vector<std::string> active_tools;
  mcp::Getenv getenv;
  /// The MCP servers configured for the process's cwd (sources 1 to 4), read once at start-up
  /// so that a bad --mcp-config file stops every mode first.
  McpSources mcp_sources;
  /// The environment of shell commands and hooks (no provider key), and the hooks.
  const std::vector<std::string>& shell_env;
  const HookSetup& hooks;
  /// The permission policy of the process's cwd (rpc: the process's gate; acp: the global file
  /// and the command line only, each session reading its own).
  std::shared_ptr<PolicyWiring> policy;
  /// acp: the sessions' sandboxes, by workspace (rpc: none, the process has one).
  std::shared_ptr<sandbox::WorkspaceSandboxes> sandboxes;
  /// The providers' key variables (kept out of a sandbox's environment).
  std::vector<std::string> key_variables;
};

/// A front end, or why the mode cannot start (the server exits 1 with it).
using ModeStart = std::variant<std::unique_ptr<FrontEnd>, std::string>;

struct Mode {
  std::string_view name;
  ModeStart (*start)(AppParts& app);
  /// Why --session FILE cannot be used with this mode; empty when it can.
  std::string_view no_session_file = {};
  /// Each session has its own policy and sandbox, from its own cwd (acp).
  bool session_policy = false;
  /// Chosen by other flags than --mode (print: -p), not listed among --mode's values.
  bool internal = false;
};

/// Every mode, the default first.
const std::vector<Mode>& modes();
/// Their names, for the command line's check and help.
std::vector<std::string> mode_names();
/// The mode of that name, or null.
const Mode* find_mode(std::string_view name);

}  // namespace rebound::server
