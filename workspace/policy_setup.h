#pragma once
// The permission policy's configuration (policy.md section 1): the `permissions` and `sandbox`
// keys of the global and the project settings file and the command line, validated (an invalid
// one stops the server with exit status 2) and combined (rules only added; the trust switch for
// what a project grants; the sandbox only tightened by a project).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy.h"
#include "policy/policy_gate.h"
#include "protocol/json.h"
#include "session/error.h"
#include "workspace/service_flags.h"

namespace rebound::server {

/// The sandbox settings as combined (section 1.2); `enabled` is the switch of section 8.
struct SandboxSettings {
  bool enabled = false;
  bool network = false;
  std::vector<std::string> writable_roots, read_only_paths, deny_read;  // absolute
  std::vector<std::pair<std::string, std::string>> env;
  bool mcp_servers = false;
  std::optional<std::string> bwrap_path;
};

struct PolicySetup {
  policy::PolicySettings settings;
  policy::AskSettings ask;
  SandboxSettings sandbox;
  protocol::Json sources = protocol::Json::array();  // get_policy's `sources`
  /// Settings `shellPath` and `shellCommandPrefix`: the global file's, a trusted project's over
  /// them (policy.md 1.2).
  std::optional<std::string> shell_path, shell_command_prefix;
};

/// The policy of a session working in `cwd` (rpc: the process's cwd; acp: the session's), or
/// the message that stops the server (exit 2) or fails the ACP session's opening. `extensions`
/// says whether extension processes are configured (an unknown tool name in a rule is then
/// taken for one of their tools). Without `read_project` only the global file and the command
/// line count (acp mode's check at start-up: each session reads its own project file).
session::Result<PolicySetup> read_policy_setup(const workspace::ServiceFlags& options,
                                               const std::filesystem::path& agent_dir,
                                               const std::filesystem::path& cwd, bool extensions,
                                               bool read_project = true);

}  // namespace rebound::server
