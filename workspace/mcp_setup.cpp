#include "workspace/mcp_setup.h"

#include <spdlog/spdlog.h>

#include <utility>

#include <unistd.h>
#include "config/json_file.h"

#include "process/child_process.h"
#include "session/settings.h"

namespace rebound::server {

namespace fs = std::filesystem;
using protocol::Json;

namespace {

void add_source(std::vector<mcp::ServerConfig>& into, const Json& file, const std::string& where,
                const mcp::Getenv& getenv) {
  const auto servers = file.find("mcpServers");
  if (servers == file.end()) return;
  if (!servers->is_object()) {
    spdlog::warn("{}: mcpServers is not an object; ignored", where);
    return;
  }
  std::vector<std::string> warnings;
  auto read = mcp::read_servers(*servers, getenv, warnings);
  for (const auto& w : warnings)
    spdlog::warn("{}: {}", where, w);
  mcp::merge_servers(into, std::move(read));
}

class ChildServerProcess : public mcp::ServerProcess {
 public:
  /// `status_fd`: a sandboxed server's end of bubblewrap's status pipe, kept open while it runs
  /// (bubblewrap writes there at its end).
  explicit ChildServerProcess(std::unique_ptr<process::ChildProcess> child, int status_fd = -1)
      : child_(std::move(child)), status_fd_(status_fd) {}
  ~ChildServerProcess() override {
    child_.reset();
    if (status_fd_ >= 0) ::close(status_fd_);
  }
  ChildServerProcess(const ChildServerProcess&) = delete;
  ChildServerProcess& operator=(const ChildServerProcess&) = delete;
  void write(std::string data) override { child_->write_stdin(std::move(data)); }
  void close_stdin() override { child_->close_stdin(); }
  void signal_group(int signal) override { child_->kill_group(signal); }
  bool group_alive() const override { return child_->group_alive(); }
  std::size_t input_queued() const override { return child_->stdin_queued(); }

 private:
  std::unique_ptr<process::ChildProcess> child_;
  int status_fd_;
};

}  // namespace

session::Result<McpSources> read_mcp_sources(const workspace::ServiceFlags& options,
                                             const config::SettingsPair& files, const fs::path& cwd,
                                             const mcp::Getenv& getenv,
                                             std::vector<mcp::ServerConfig> extra) {
  McpSources out;
  const fs::path& global_file = files.global_file;
  const fs::path& project_file = files.project_file;
  const Json& global = files.global;
  const Json& project = files.project;
  out.settings = mcp::read_mcp_settings(session::deep_merge(global, project), global);
  if (!options.no_mcp) {
    add_source(out.servers, global, global_file.string(), getenv);
    // A cloned repository starts nothing by being opened: only the user's own settings can
    // trust a project (extensions.md section 1.1; the project's own key is ignored).
    if (files.trusted) {
      add_source(out.servers, project, project_file.string(), getenv);
    } else if (const auto servers = project.find("mcpServers");
               servers != project.end() && servers->is_object() && !servers->empty()) {
      spdlog::warn("mcp: {} defines {} MCP servers; not started (project servers need {})",
                   project_file.string(), servers->size(), files.trust_hint());
    }
    if (out.settings.project_mcp_json) {
      const fs::path mcp_json = cwd / ".mcp.json";
      config::JsonFileRead r = config::read_json_file(mcp_json);
      if (r.status == config::JsonFileStatus::malformed) {
        spdlog::warn("{} is malformed ({}); ignored", mcp_json.string(), r.error);
      } else if (r.status == config::JsonFileStatus::ok && r.value.is_object()) {
        add_source(out.servers, r.value, mcp_json.string(), getenv);
      }
    }
  }
  for (const auto& file : options.mcp_configs) {
    config::JsonFileRead r = config::read_json_file(file);
    if (r.status == config::JsonFileStatus::missing)
      return session::failure("--mcp-config " + file + ": no such file");
    if (r.status == config::JsonFileStatus::malformed)
      return session::failure("--mcp-config " + file + ": not JSON (" + r.error + ")");
    if (!r.value.is_object() || !r.value.contains("mcpServers") ||
        !r.value["mcpServers"].is_object())
      return session::failure("--mcp-config " + file + ": no mcpServers object");
    add_source(out.servers, r.value, file, getenv);
  }
  mcp::merge_servers(out.servers, std::move(extra));
  mcp::apply_server_limit(out.servers);
  return out;
}

mcp::Spawner child_process_spawner(boost::asio::any_io_executor executor,
                                   std::shared_ptr<sandbox::Sandbox> box, std::string path) {
  return [executor, box, path](const mcp::SpawnSpec& spec, mcp::ServerProcess::Handlers handlers,
                               std::string& error) -> std::unique_ptr<mcp::ServerProcess> {
    process::ChildSpec child;
    child.argv = spec.argv;
    child.cwd = spec.cwd;
    child.env = spec.env;
    child.input = process::ChildSpec::Input::pipe;
    child.output = process::ChildSpec::Output::separate;
    std::optional<sandbox::Launch> launch;
    if (spec.sandboxed) {
      // Never bare (policy.md section 8.8): no sandbox, or one that cannot be used, is a failure.
      if (!box) {
        error = "Sandbox unavailable: the sandbox is not enabled (sandbox.enabled)";
        return nullptr;
      }
      auto launched = box->launch_server(spec.argv, spec.cwd, spec.env, path);
      if (!launched) {
        error = launched.error().message;
        return nullptr;
      }
      launch = std::move(*launched);
      child.argv = launch->argv;
      child.env = launch->env;
      child.pass_fds = {launch->seccomp_fd, launch->status_write, launch->args_fd};
    }
    auto process = process::ChildProcess::spawn(executor, child, error);
    if (launch) sandbox::close_launch_fds(*launch, process != nullptr);
    if (!process) return nullptr;
    process->read_stdout(std::move(handlers.out), std::move(handlers.out_end));
    process->read_stderr(std::move(handlers.err), std::move(handlers.err_end));
    process->wait_exit(std::move(handlers.exit));
    return std::make_unique<ChildServerProcess>(std::move(process),
                                                launch ? launch->status_read : -1);
  };
}

std::unique_ptr<mcp::McpManager> make_mcp_set(boost::asio::any_io_executor executor,
                                              session::Scheduler& scheduler, McpSources sources,
                                              std::string cwd, mcp::Getenv getenv,
                                              std::vector<std::string> builtin_names,
                                              const McpSandboxing& sandboxing) {
  // Which stdio servers run sandboxed (policy.md section 8.8): the entry's `sandbox`, else
  // sandbox.mcpServers while the sandbox is enabled.
  for (auto& s : sources.servers) {
    if (s.transport != mcp::Transport::stdio) {
      s.sandbox = false;
      continue;
    }
    if (!s.sandbox) s.sandbox = sandboxing.box && sandboxing.by_default;
    if (*s.sandbox && !s.error && !s.disabled && sandboxing.sandboxed)
      sandboxing.sandboxed->push_back(s.name);
  }
  const std::string path = getenv("PATH").value_or("");
  return std::make_unique<mcp::McpManager>(
      scheduler, child_process_spawner(std::move(executor), sandboxing.box, path),
      std::move(sources.servers),
      mcp::McpConnection::Options{std::move(cwd), std::move(getenv), sources.settings,
                                  REBOUND_VERSION},
      std::move(builtin_names));
}

}  // namespace rebound::server
