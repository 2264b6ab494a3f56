#pragma once
// How a session and its services are put together, once for every front end: the process's
// one session (rpc and one-shot mode) and an ACP session in its own working directory. The
// order is policy.md section 4's: a call meets the front end's own preflight (one-shot's
// limits), the extensions' interceptors, the PreToolUse hooks, then the policy; the tools
// offered besides the built-in ones are the MCP servers', then the extensions', less what a
// whole-tool deny removes. The front end gets the session's maker and a SessionServices handle
// (session/session_services.h) that starts and stops the services in one order. Event loop only.

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/settings_pair.h"
#include "mcp/mcp_config.h"
#include "protocol/json.h"
#include "sandbox/sandbox_spawn.h"
#include "server/io/front_end.h"
#include "session/error.h"
#include "session/session_services.h"
#include "session/wait_board.h"
#include "workspace/hook_setup.h"
#include "workspace/mcp_setup.h"
#include "workspace/policy_wiring.h"
#include "workspace/service_flags.h"
#include "workspace/session_factory.h"
#include "workspace/tool_setup.h"

namespace rebound::server {

/// What every session is made from: the process's parts, built once at start-up.
struct WorkspaceParts {
  const workspace::ServiceFlags& flags;
  std::filesystem::path agent_dir;
  std::filesystem::path cwd;  // absolute
  /// The settings files of the process's cwd and their trust rule, read once at start-up.
  const config::SettingsPair& settings;
  boost::asio::io_context& io;
  session::Scheduler& scheduler;
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

/// What a front end puts around the process's session, in front of everything else (one-shot's
/// limits and structured output: oneshot.md sections 10 and 11). Each part is optional.
struct SessionWrap {
  std::function<std::unique_ptr<session::DynamicTools>(session::DynamicTools* inner)> tools;
  std::function<std::unique_ptr<session::ToolPreflight>(session::ToolPreflight* inner)> preflight;
  std::function<std::unique_ptr<session::RunHooks>(session::RunHooks* inner)> run_hooks;
  std::string prompt_tail;  // appended to the system prompt
};

struct SessionExtensions;

/// The process's one session: how to make it (resuming --session FILE when it exists and is
/// not empty, --resume, --continue), and its services.
struct ProcessSession {
  MakeSession make;
  std::shared_ptr<session::SessionServices> services;
  /// Set by the front end once the first command line was read: events that come from no
  /// command (an MCP server's, a start-up hook's failure) are written only from then on.
  std::shared_ptr<bool> command_seen;
  std::shared_ptr<session::WaitBoard> waits;  // print: what the heartbeat names
  std::shared_ptr<SessionExtensions> extensions;
  std::shared_ptr<PolicyWiring> policy;
  /// Where the extensions' dialogs and the policy's questions go (rpc: the connection's).
  void set_dialogs(session::DialogHost* dialogs);
};

/// `mode` is "rpc" or "print" (the extensions are told it; print makes a wait board). An error:
/// the session file does not load (with --resume, the text starts with `--resume: `).
session::Result<ProcessSession> process_session(WorkspaceParts& parts, const std::string& mode,
                                                SessionWrap wrap = {});

/// An ACP session to open (acp.md): its cwd (absolute, an existing directory), its host slot,
/// where its events go, the tools as the connection runs them, the file of session/load and
/// session/resume, the request's `mcpServers` and the gate around its MCP tools, and where its
/// dialogs go.
struct OpenRequest {
  std::string cwd;
  session::SessionSlot slot = 0;
  session::EventSink& sink;
  session::ToolRegistry& tools;
  std::optional<std::pair<std::string, session::LoadedSession>> load;
  const protocol::Json& mcp_servers;
  session::DynamicTools* mcp_tools = nullptr;
  session::DialogHost* dialogs = nullptr;
};

/// An opened ACP session and what it depends on (`keep`, destroyed after the session).
struct OpenedSession {
  std::shared_ptr<void> keep;
  std::shared_ptr<session::SessionServices> services;
  std::unique_ptr<session::AgentSession> session;
  /// What it offers besides the built-in tools (the MCP servers' and the extensions', behind
  /// its policy); none: the MCP servers'.
  session::DynamicTools* offered = nullptr;
};

/// Reads the cwd's settings, hooks, extensions, MCP servers and policy (an invalid policy or
/// MCP file fails the opening) and makes the session; its services are not started yet.
session::Result<OpenedSession> open_session(WorkspaceParts& parts, OpenRequest request);

}  // namespace rebound::server
