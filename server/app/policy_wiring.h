#pragma once
// The permission policy wired into the application (policy.md sections 2.2, 4, 7): one gate
// (rpc: for the process), the session preflight it makes, the tools whole-tool denies remove,
// and what get_policy and set_permission_mode see. Event loop only.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/policy_gate.h"
#include "server/app/policy_setup.h"
#include "session/policy_host.h"
#include "session/scheduler.h"
#include "session/tool.h"

namespace rebound::server {

class PolicyWiring : public session::PolicyControl {
 public:
  PolicyWiring(const PolicySetup& setup, session::Scheduler& scheduler);

  policy::PolicyGate& gate() { return gate_; }
  /// `names` without the built-in tools a whole-tool deny removes (recorded for get_policy).
  std::vector<std::string> keep_offered(const std::vector<std::string>& names);
  /// `inner`'s tools without those a whole-tool deny removes.
  std::unique_ptr<session::DynamicTools> filter(session::DynamicTools* inner);
  /// Why a bash command cannot run (the sandbox is on but unavailable), or nothing.
  std::optional<std::string> bash_refusal() const override { return sandbox_refusal_; }

  void describe(bool wait, std::function<void(protocol::Json)> done) override;
  bool set_mode(std::string_view mode) override;
  std::string mode() const override;

 private:
  PolicySetup setup_;
  policy::PolicyGate gate_;
  std::vector<std::string> removed_;
  std::optional<std::string> sandbox_refusal_;
};

}  // namespace rebound::server
