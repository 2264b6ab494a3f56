#include "workspace/policy_setup.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <tuple>
#include <utility>

#include "config/json_file.h"
#include "config/settings_pair.h"

namespace rebound::server {

namespace fs = std::filesystem;
using protocol::Json;

namespace {

struct Invalid {
  std::string text;
};

struct FileSettings {
  std::string path;
  bool read = false;
  Json permissions, sandbox;
  Json shell_path, shell_command_prefix;  // tools.md 4.4, when strings
  bool trusts_projects = false;           // meaningful in the user's own file only
};

std::string settings_error(const std::string& file, const std::string& what) {
  return "Invalid settings " + file + ": " + what;
}

FileSettings read_file(const fs::path& path) {
  FileSettings f;
  f.path = path.string();
  const config::JsonFileRead r = config::read_json_file(path);
  if (r.status == config::JsonFileStatus::ok && r.value.is_object()) {
    f.read = true;
    f.permissions = config::settings_member(r.value, "permissions");
    f.sandbox = config::settings_member(r.value, "sandbox");
    f.trusts_projects = config::trusts_projects(r.value);
    for (auto [key, into] : {std::pair{"shellPath", &f.shell_path},
                             std::pair{"shellCommandPrefix", &f.shell_command_prefix}}) {
      Json v = config::settings_member(r.value, key);
      if (v.is_string()) *into = std::move(v);
    }
    return f;
  }
  if (r.status == config::JsonFileStatus::missing) return f;
  // A file that is not valid JSON stops the server only when it meant to say something here.
  const config::FileRead raw = config::read_regular_file(path);
  if (raw.status == config::FileReadStatus::ok &&
      (raw.text.find("\"permissions\"") != std::string::npos ||
       raw.text.find("\"sandbox\"") != std::string::npos))
    throw Invalid{settings_error(f.path, r.error.empty() ? "not a JSON object" : r.error)};
  return f;
}

bool string_array(const Json& v) {
  if (!v.is_array()) return false;
  for (const auto& e : v)
    if (!e.is_string()) return false;
  return true;
}

bool string_object(const Json& v) {
  if (!v.is_object()) return false;
  for (const auto& [k, e] : v.items())
    if (!e.is_string()) return false;
  return true;
}

void validate(const FileSettings& f) {
  if (!f.permissions.is_null()) {
    if (!f.permissions.is_object())
      throw Invalid{settings_error(f.path, "permissions must be an object")};
    for (const auto& [key, v] : f.permissions.items()) {
      const std::string name = "permissions." + key;
      if (key == "allow" || key == "ask" || key == "deny" || key == "additionalDirectories") {
        if (!string_array(v))
          throw Invalid{settings_error(f.path, name + " must be an array of strings")};
      } else if (key == "defaultMode") {
        if (!v.is_string()) throw Invalid{settings_error(f.path, name + " must be a string")};
        if (!policy::parse_mode(v.get<std::string>()))
          throw Invalid{policy::invalid_mode_text(v.get<std::string>(),
                                                  "permissions.defaultMode in " + f.path)};
      } else if (key == "askTimeoutMs") {
        if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
          throw Invalid{settings_error(f.path, name + " must be a positive integer")};
      } else {
        throw Invalid{settings_error(f.path, "unknown key " + name)};
      }
    }
  }
  if (!f.sandbox.is_null()) {
    if (!f.sandbox.is_object()) throw Invalid{settings_error(f.path, "sandbox must be an object")};
    for (const auto& [key, v] : f.sandbox.items()) {
      const std::string name = "sandbox." + key;
      if (key == "enabled" || key == "network" || key == "mcpServers") {
        if (!v.is_boolean()) throw Invalid{settings_error(f.path, name + " must be a boolean")};
      } else if (key == "writableRoots" || key == "readOnlyPaths" || key == "denyRead") {
        if (!string_array(v))
          throw Invalid{settings_error(f.path, name + " must be an array of strings")};
      } else if (key == "env") {
        if (!string_object(v))
          throw Invalid{settings_error(f.path, name + " must be an object of strings")};
      } else if (key == "bwrapPath") {
        if (!v.is_string()) throw Invalid{settings_error(f.path, name + " must be a string")};
      } else {
        throw Invalid{settings_error(f.path, "unknown key " + name)};
      }
    }
  }
}

Json member(const Json& object, const char* key) {
  return object.is_object() ? config::settings_member(object, key) : Json();
}

// How loose a mode is (section 1.2): plan and dontAsk are each looser than the other.
bool looser(policy::Mode project, policy::Mode user) {
  using policy::Mode;
  auto rank = [](Mode m) {
    switch (m) {
      case Mode::bypass:
        return 4;
      case Mode::accept_edits:
        return 3;
      case Mode::default_mode:
        return 2;
      default:
        return 1;
    }
  };
  if (project != user && rank(project) == 1 && rank(user) == 1) return true;
  return rank(project) > rank(user);
}

std::string expand_path(const std::string& p, const std::string& home, const std::string& cwd) {
  return policy::join_path(cwd, p, home);
}

std::vector<std::string> paths(const Json& list, const std::string& home, const std::string& cwd) {
  std::vector<std::string> out;
  if (!list.is_array()) return out;
  for (const auto& e : list)
    out.push_back(expand_path(e.get<std::string>(), home, cwd));
  return out;
}

void add_rules(std::vector<policy::Rule>& out, const std::vector<std::string>& texts,
               policy::Behavior behavior, const std::string& where_prefix, const std::string& file,
               const std::string& source, const policy::RuleSyntax& syntax) {
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::string where =
        file.empty() ? where_prefix : where_prefix + "[" + std::to_string(i) + "] in " + file;
    auto parsed = policy::parse_rule(texts[i], behavior, syntax);
    if (!parsed)
      throw Invalid{"Invalid permission rule '" + texts[i] + "' (" + where +
                    "): " + parsed.error().message};
    policy::Rule rule = std::move(*parsed);
    rule.source = source;
    if (rule.kind == policy::RuleTool::foreign)
      spdlog::warn("permission rule '{}' names a tool Rebound does not have; it matches nothing",
                   rule.text);
    out.push_back(std::move(rule));
  }
}

std::vector<std::string> strings(const Json& v) {
  std::vector<std::string> out;
  if (v.is_array())
    for (const auto& e : v)
      out.push_back(e.get<std::string>());
  return out;
}

void add_file_rules(std::vector<policy::Rule>& out, const FileSettings& f, const std::string& kind,
                    bool grants, const policy::RuleSyntax& syntax) {
  const char* keys[] = {"allow", "ask", "deny"};
  const policy::Behavior behaviors[] = {policy::Behavior::allow, policy::Behavior::ask,
                                        policy::Behavior::deny};
  for (int i = 0; i < 3; ++i) {
    std::vector<std::string> texts = strings(member(f.permissions, keys[i]));
    if (behaviors[i] == policy::Behavior::allow && !grants) {
      // Still checked: validation covers an untrusted project's file too (section 1.4).
      std::vector<policy::Rule> checked;
      add_rules(checked, texts, behaviors[i], std::string("permissions.") + keys[i], f.path, kind,
                syntax);
      continue;
    }
    add_rules(out, texts, behaviors[i], std::string("permissions.") + keys[i], f.path, kind,
              syntax);
  }
}

SandboxSettings combine_sandbox(const workspace::ServiceFlags& options, const FileSettings& global,
                                const FileSettings& project, const std::string& home,
                                const std::string& cwd) {
  SandboxSettings s;
  const Json& g = global.sandbox;
  const Json& p = project.sandbox;
  auto flag = [](const Json& o, const char* key) -> std::optional<bool> {
    const Json v = member(o, key);
    return v.is_boolean() ? std::optional<bool>(v.get<bool>()) : std::nullopt;
  };
  auto ignored = [&project](const std::string& key, const Json& value) {
    spdlog::warn("{}: sandbox.{} {} cannot loosen the global sandbox settings; ignored",
                 project.path, key, value.dump());
  };
  s.enabled = flag(g, "enabled").value_or(false) || flag(p, "enabled").value_or(false);
  if (flag(p, "enabled") == false && flag(g, "enabled") == true) ignored("enabled", false);
  s.mcp_servers = flag(g, "mcpServers").value_or(false) || flag(p, "mcpServers").value_or(false);
  if (flag(p, "mcpServers") == false && flag(g, "mcpServers") == true) ignored("mcpServers", false);
  s.network = flag(g, "network").value_or(false) && flag(p, "network") != false;
  if (flag(p, "network") == true && !flag(g, "network").value_or(false)) ignored("network", true);
  s.writable_roots = paths(member(g, "writableRoots"), home, cwd);
  s.read_only_paths = paths(member(g, "readOnlyPaths"), home, cwd);
  // A project's roots never count, trusted or not (amendment A17): inside the workspace they
  // add nothing, outside (a symlink in the repository included) they would loosen.
  for (const char* key : {"writableRoots", "readOnlyPaths"}) {
    const Json list = member(p, key);
    if (list.is_array() && !list.empty()) ignored(key, list);
  }
  s.deny_read = paths(member(g, "denyRead"), home, cwd);
  for (auto& d : paths(member(p, "denyRead"), home, cwd))
    s.deny_read.push_back(std::move(d));
  const Json env = member(g, "env");
  if (env.is_object())
    for (const auto& [k, v] : env.items())
      s.env.emplace_back(k, v.get<std::string>());
  if (member(p, "env").is_object() && !member(p, "env").empty()) ignored("env", member(p, "env"));
  if (member(g, "bwrapPath").is_string())
    s.bwrap_path = expand_path(member(g, "bwrapPath").get<std::string>(), home, cwd);
  if (member(p, "bwrapPath").is_string()) ignored("bwrapPath", member(p, "bwrapPath"));
  if (options.sandbox) s.enabled = *options.sandbox;
  return s;
}

}  // namespace

session::Result<PolicySetup> read_policy_setup(const workspace::ServiceFlags& options,
                                               const fs::path& agent_dir_given, const fs::path& cwd,
                                               bool extensions, bool read_project) {
  std::error_code ec;
  const fs::path agent_dir = fs::absolute(agent_dir_given, ec).lexically_normal();
  const char* home_env = std::getenv("HOME");
  const std::string home = home_env ? home_env : "/";
  const std::string workspace = policy::join_path("/", cwd.string(), home);
  PolicySetup out;
  try {
    const FileSettings global = read_file(agent_dir / "settings.json");
    const FileSettings project =
        read_project ? read_file(cwd / ".rebound" / "settings.json") : FileSettings{};
    validate(global);
    validate(project);
    // Only the user's own file can trust a project.
    const bool trusted = global.trusts_projects;
    policy::RuleSyntax syntax;
    syntax.extensions_configured = extensions;
    auto& s = out.settings;
    s.workspace = workspace;
    s.home = home;
    add_file_rules(s.rules, global, "global", true, syntax);
    add_file_rules(s.rules, project, "project", trusted, syntax);
    add_rules(s.rules, options.allowed_tools, policy::Behavior::allow, "--allowed-tools", "", "cli",
              syntax);
    add_rules(s.rules, options.disallowed_tools, policy::Behavior::deny, "--disallowed-tools", "",
              "cli", syntax);
    // The mode: the command line, else the project's (when it counts), else the user's.
    std::vector<std::string> skipped, skipped_shell;
    if (!trusted && !strings(member(project.permissions, "allow")).empty())
      skipped.push_back("permissions.allow");
    const Json global_mode = member(global.permissions, "defaultMode");
    const policy::Mode user_mode = global_mode.is_string()
                                       ? *policy::parse_mode(global_mode.get<std::string>())
                                       : policy::Mode::bypass;
    s.mode = user_mode;
    s.mode_source = global_mode.is_string() ? "global" : "default";
    for (auto& d : paths(member(global.permissions, "additionalDirectories"), home, workspace))
      s.additional_directories.push_back(std::move(d));
    const Json project_dirs = member(project.permissions, "additionalDirectories");
    if (trusted) {
      for (auto& d : paths(project_dirs, home, workspace))
        s.additional_directories.push_back(std::move(d));
    } else if (!strings(project_dirs).empty()) {
      skipped.push_back("permissions.additionalDirectories");
    }
    const Json project_mode = member(project.permissions, "defaultMode");
    if (project_mode.is_string()) {
      const policy::Mode m = *policy::parse_mode(project_mode.get<std::string>());
      if (trusted || !looser(m, user_mode)) {
        s.mode = m;
        s.mode_source = "project";
      } else {
        skipped.push_back("permissions.defaultMode " + project_mode.get<std::string>());
      }
    }
    // The shell settings run code on every bash call: a project's count only when it is
    // trusted (policy.md 1.2, amendment A17).
    for (auto [key, global_value, project_value, into] :
         {std::tuple{"shellPath", &global.shell_path, &project.shell_path, &out.shell_path},
          std::tuple{"shellCommandPrefix", &global.shell_command_prefix,
                     &project.shell_command_prefix, &out.shell_command_prefix}}) {
      if (global_value->is_string()) *into = global_value->get<std::string>();
      if (!project_value->is_string()) continue;
      if (trusted)
        *into = project_value->get<std::string>();
      else
        skipped_shell.push_back(key);
    }
    s.shell_command_prefix = out.shell_command_prefix.value_or("");
    if (options.permission_mode) {
      s.mode = *policy::parse_mode(*options.permission_mode);
      s.mode_source = "cli";
    }
    skipped.insert(skipped.end(), skipped_shell.begin(), skipped_shell.end());
    if (!skipped.empty()) {
      std::string what;
      for (const auto& k : skipped)
        what += (what.empty() ? "" : ", ") + k;
      spdlog::warn("{}: {} ignored: the project is not trusted (set {})", project.path, what,
                   config::trust_hint(agent_dir / "settings.json"));
    }
    bool allows = false;
    for (const auto& r : s.rules)
      allows = allows || r.behavior == policy::Behavior::allow;
    if (allows && s.mode == policy::Mode::bypass)
      spdlog::warn(
          "permissions: allow rules have no effect in bypassPermissions mode (every call runs)");
    const Json gt = member(global.permissions, "askTimeoutMs");
    const Json pt = member(project.permissions, "askTimeoutMs");
    if (gt.is_number_integer()) out.ask.timeout_ms = gt.get<std::int64_t>();
    if (pt.is_number_integer()) out.ask.timeout_ms = pt.get<std::int64_t>();
    out.ask.client = options.permission_prompts_client;
    out.sandbox = combine_sandbox(options, global, project, home, workspace);
    out.sources.push_back(Json{{"kind", "global"}, {"path", global.path}, {"read", global.read}});
    if (read_project)
      out.sources.push_back(
          Json{{"kind", "project"}, {"path", project.path}, {"read", project.read}});
  } catch (const Invalid& e) {
    return session::failure(e.text);
  }
  return out;
}

}  // namespace rebound::server
