#include "server/app/policy_wiring.h"

#include <spdlog/spdlog.h>

namespace rebound::server {

using protocol::Json;

namespace {

// The tools of an MCP server or an extension a whole-tool deny rule takes out.
class FilteredTools : public session::DynamicTools {
 public:
  FilteredTools(session::DynamicTools* inner, const policy::Policy& policy)
      : inner_(inner), policy_(policy) {}
  std::unique_ptr<session::Waiting> when_settled(std::function<void()> settled) override {
    return inner_ ? inner_->when_settled(std::move(settled)) : nullptr;
  }
  std::vector<std::shared_ptr<session::Tool>> offered(std::size_t room) override {
    std::vector<std::shared_ptr<session::Tool>> out;
    if (!inner_) return out;
    for (auto& tool : inner_->offered(room)) {
      const auto& d = tool->definition();
      if (!policy_.removes(d.name, d.mcp_server)) out.push_back(std::move(tool));
    }
    return out;
  }

 private:
  session::DynamicTools* inner_;
  const policy::Policy& policy_;
};

Json strings(const std::vector<std::string>& v) {
  Json out = Json::array();
  for (const auto& s : v)
    out.push_back(s);
  return out;
}

}  // namespace

PolicyWiring::PolicyWiring(const PolicySetup& setup, session::Scheduler& scheduler)
    : setup_(setup), gate_(policy::Policy(setup.settings), setup.ask, scheduler) {
  if (setup_.sandbox.enabled) {
    // Fail closed (policy.md section 8.10): this build cannot sandbox, so nothing runs bare.
    sandbox_refusal_ = "Sandbox unavailable: this build of Rebound has no sandbox support yet";
    spdlog::warn(
        "sandbox unavailable: this build of Rebound has no sandbox support yet; bash "
        "calls will fail");
    gate_.set_sandbox_refusal(*sandbox_refusal_);
  }
}

std::vector<std::string> PolicyWiring::keep_offered(const std::vector<std::string>& names) {
  std::vector<std::string> kept;
  for (const auto& name : names) {
    if (gate_.policy().removes(name, "")) {
      removed_.push_back(name);
    } else {
      kept.push_back(name);
    }
  }
  return kept;
}

std::unique_ptr<session::DynamicTools> PolicyWiring::filter(session::DynamicTools* inner) {
  return std::make_unique<FilteredTools>(inner, gate_.policy());
}

bool PolicyWiring::set_mode(std::string_view mode) {
  const auto m = policy::parse_mode(mode);
  if (!m) return false;
  gate_.policy().set_mode(*m, "session");
  return true;
}

std::string PolicyWiring::mode() const {
  return std::string(policy::mode_name(gate_.policy().mode()));
}

void PolicyWiring::describe(bool wait, std::function<void(Json)> done) {
  (void)wait;  // the sandbox check is immediate in this build
  const policy::Policy& p = gate_.policy();
  Json out = Json::object();
  out["mode"] = mode();
  out["modeSource"] = p.mode_source();
  out["prompts"] = gate_.ask().client ? "client" : "none";
  out["askTimeoutMs"] = gate_.ask().timeout_ms;
  out["workingDirectories"] = strings(p.working_directories());
  Json rules = Json::array();
  for (const auto& r : p.rules()) {
    Json j = Json::object();
    j["behavior"] = policy::behavior_name(r.behavior);
    j["rule"] = r.text;
    j["tool"] = r.tool;
    if (r.specifier) j["specifier"] = *r.specifier;
    j["source"] = r.source;
    rules.push_back(std::move(j));
  }
  out["rules"] = std::move(rules);
  out["removedTools"] = strings(removed_);
  const SandboxSettings& s = setup_.sandbox;
  Json sandbox = Json::object();
  sandbox["enabled"] = s.enabled;
  sandbox["status"] = s.enabled ? "unavailable" : "off";
  if (sandbox_refusal_)
    sandbox["reason"] = sandbox_refusal_->substr(std::string("Sandbox unavailable: ").size());
  sandbox["network"] = s.network;
  sandbox["workspace"] = p.workspace();
  sandbox["writableRoots"] = strings(s.writable_roots);
  sandbox["readOnlyPaths"] = strings(s.read_only_paths);
  sandbox["denyRead"] = strings(s.deny_read);
  sandbox["mcpServers"] = Json::array();
  out["sandbox"] = std::move(sandbox);
  out["sources"] = setup_.sources;
  done(std::move(out));
}

}  // namespace rebound::server
