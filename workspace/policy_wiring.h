#pragma once
// The permission policy wired into the application (policy.md sections 2.2, 4, 7): one gate
// (rpc: for the process), the session preflight it makes, the tools whole-tool denies remove,
// and what get_policy and set_permission_mode see. Event loop only.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy_gate.h"
#include "sandbox/file_roots.h"
#include "sandbox/sandbox.h"
#include "session/policy_host.h"
#include "session/scheduler.h"
#include "session/tool.h"
#include "workspace/mcp_setup.h"
#include "workspace/policy_setup.h"

namespace rebound::server {

class PolicyWiring : public session::PolicyControl {
 public:
  PolicyWiring(const PolicySetup& setup, session::Scheduler& scheduler);

  policy::PolicyGate& gate() { return gate_; }
  /// `names` without the built-in tools a whole-tool deny removes (recorded for get_policy).
  std::vector<std::string> keep_offered(const std::vector<std::string>& names);
  /// `inner`'s tools without those a whole-tool deny removes.
  std::unique_ptr<session::DynamicTools> filter(session::DynamicTools* inner);
  /// The sandbox bash calls run in (none: off); its check decides their refusal.
  void set_sandbox(std::shared_ptr<sandbox::Sandbox> box);
  /// What walks leave out: the policy's read denials, and with the sandbox what lies outside
  /// its readable roots.
  std::function<bool(std::string_view, bool)> walk_filter() const;
  /// With the sandbox's roots: the file tools open beneath them (policy.md section 8.9).
  session::FileOpener file_opener() const;
  /// How the session's MCP servers meet its sandbox (section 8.8); the names of those that run
  /// in it are kept for get_policy.
  McpSandboxing mcp_sandboxing() {
    return McpSandboxing{sandbox_, setup_.sandbox.mcp_servers, &sandboxed_servers_};
  }

  void describe(bool wait, std::function<void(protocol::Json)> done) override;
  bool set_mode(std::string_view mode) override;
  std::string mode() const override;

 private:
  PolicySetup setup_;
  policy::PolicyGate gate_;
  std::vector<std::string> removed_;
  std::vector<std::string> sandboxed_servers_;
  std::shared_ptr<sandbox::Sandbox> sandbox_;
  std::shared_ptr<const sandbox::FileRoots> roots_;
};

/// The sandbox of policy.md section 8 for `setup` (none when it is off), its check started;
/// `env` is the environment of unsandboxed commands.
std::shared_ptr<sandbox::Sandbox> make_sandbox(
    const PolicySetup& setup, const std::vector<std::string>& env,
    const std::vector<std::string>& key_variables,
    const std::function<std::optional<std::string>(const std::string&)>& getenv);

/// The default system prompt's line while the sandbox is enabled (section 8.7).
std::string sandbox_guideline(bool network);

}  // namespace rebound::server
