#include "workspace/policy_wiring.h"

#include <spdlog/spdlog.h>

#include "peer/peer_process.h"
#include "tools/paths.h"

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
    : setup_(setup), gate_(policy::Policy(setup.settings), setup.ask, scheduler) {}

void PolicyWiring::set_sandbox(std::shared_ptr<sandbox::Sandbox> box) {
  sandbox_ = std::move(box);
  // A bash call waits for the check; an unavailable sandbox refuses it before any hook or rule
  // (policy.md section 4 step 2, 8.10).
  gate_.set_sandbox_refusal([box = sandbox_]() -> std::optional<std::string> {
    const auto& c = box->checked();
    if (c.problem.empty()) return std::nullopt;
    return "Sandbox unavailable: " + c.problem;
  });
  // The file tools keep to the sandbox's roots, available or not (section 8.9).
  roots_ = std::make_shared<const sandbox::FileRoots>(sandbox_->config(), sandbox_->denied_files());
  gate_.set_root_check([roots = roots_, cwd = sandbox_->config().workspace](
                           std::string_view tool, const Json& input) -> std::optional<std::string> {
    const bool write = tool == "edit" || tool == "write";
    if (!write && tool != "read" && tool != "grep" && tool != "find" && tool != "ls")
      return std::nullopt;
    std::string path = ".";
    if (auto it = input.find("path"); it != input.end() && it->is_string())
      path = it->get<std::string>();
    return roots->check(tools::resolve_path(path, cwd), write);
  });
}

std::function<bool(std::string_view, bool)> PolicyWiring::walk_filter() const {
  auto rules = gate_.policy().walk_filter();
  if (!roots_) return rules;
  return [rules, roots = roots_](std::string_view abs, bool dir) {
    return (rules && rules(abs, dir)) || roots->hidden(std::string(abs));
  };
}

session::FileOpener PolicyWiring::file_opener() const {
  if (!roots_) return nullptr;
  return [roots = roots_](const std::string& abs, int flags, unsigned mode, bool write) {
    return roots->open_beneath(abs, flags, mode, write);
  };
}

std::shared_ptr<sandbox::Sandbox> make_sandbox(
    const PolicySetup& setup, const std::vector<std::string>& env,
    const std::vector<std::string>& key_variables,
    const std::function<std::optional<std::string>(const std::string&)>& getenv) {
  const SandboxSettings& s = setup.sandbox;
  if (!s.enabled) return nullptr;
  sandbox::SandboxConfig config;
  config.workspace = setup.settings.workspace;
  config.home = setup.settings.home;
  config.network = s.network;
  config.writable_roots = s.writable_roots;
  config.read_only_paths = s.read_only_paths;
  config.deny_read = s.deny_read;
  config.bwrap_path = s.bwrap_path;
  // sandbox.env: ${VAR}, ${VAR:-default} and ~/ (mcp.md section 1.3); a variable that is not
  // set leaves its entry out.
  for (const auto& [name, raw] : s.env) {
    std::optional<std::string> missing;
    std::string value = peer::expand_variables(raw, getenv, missing);
    if (missing) {
      spdlog::warn("sandbox.env.{}: environment variable {} is not set; left out", name, *missing);
      continue;
    }
    if (value == "~" || value.rfind("~/", 0) == 0) value = config.home + value.substr(1);
    config.env.emplace_back(name, std::move(value));
  }
  auto box = std::make_shared<sandbox::Sandbox>(
      config, sandbox::sandbox_environment(env, key_variables, config.env));
  box->start_check();
  return box;
}

std::string sandbox_guideline(bool network) {
  return std::string(
             "Commands run in a sandbox: they can change files only in the working directory "
             "(not in .git), the network is ") +
         (network ? "on" : "off") + ", and background processes end when the command does.";
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
  if (!sandbox_) {
    sandbox["status"] = "off";
  } else if (!wait && !sandbox_->check_done()) {
    sandbox["status"] = "checking";
  } else {
    // wait:true blocks until the check is done (a few ms; bounded by its own timeouts).
    const auto& c = sandbox_->checked();
    sandbox["status"] = c.problem.empty() ? "active" : "unavailable";
    if (!c.problem.empty()) sandbox["reason"] = c.problem;
    if (!c.bwrap.empty()) sandbox["bwrap"] = c.bwrap;
    if (!c.version.empty()) sandbox["bwrapVersion"] = c.version;
  }
  sandbox["network"] = s.network;
  sandbox["workspace"] = p.workspace();
  sandbox["writableRoots"] = strings(s.writable_roots);
  sandbox["readOnlyPaths"] = strings(s.read_only_paths);
  sandbox["denyRead"] = strings(s.deny_read);
  sandbox["mcpServers"] = strings(sandboxed_servers_);
  out["sandbox"] = std::move(sandbox);
  out["sources"] = setup_.sources;
  done(std::move(out));
}

}  // namespace rebound::server
