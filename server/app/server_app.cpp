#include "server/app/server_app.h"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "config/auth_store.h"
#include "config/file_settings_store.h"
#include "config/session_lock.h"
#include "config/settings_pair.h"
#include "net/http_client.h"
#include "process/descendants.h"
#include "process/stop_signals.h"
#include "protocol/line_reader.h"
#include "sandbox/sandbox_spawn.h"
#include "server/app/modes.h"
#include "server/app/provider_setup.h"
#include "server/io/asio_scheduler.h"
#include "server/io/jsonl_appender.h"
#include "server/io/stdio_transport.h"
#include "tools/bash_runner.h"
#include "tools/child_spawn.h"
#include "tools/system_prompt.h"
#include "workspace/extension_setup.h"
#include "workspace/mcp_setup.h"
#include "workspace/policy_setup.h"
#include "workspace/session_factory.h"
#include "workspace/tool_setup.h"

namespace rebound::server {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// How long shutdown may wait for stdout to drain before giving up on a reader that stopped
// reading.
constexpr auto kShutdownDrainLimit = std::chrono::seconds(2);
// What a front end that stops processes (MCP servers) adds to it: their stop sequence (stdin
// closed, 1 s, SIGTERM, 1 s, SIGKILL).
constexpr auto kProcessStopLimit = std::chrono::seconds(1);

fs::path resolve_agent_dir(const CliOptions& o) {
  if (o.agent_dir) return *o.agent_dir;
  if (const char* env = std::getenv("REBOUND_AGENT_DIR"); env && *env) return env;
  const char* home = std::getenv("HOME");
  if (!home || !*home) {
    if (const passwd* pw = ::getpwuid(::getuid())) home = pw->pw_dir;
  }
  return fs::path(home ? home : ".") / ".rebound" / "agent";
}

std::optional<std::string> getenv_value(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Asio puts the descriptors into non-blocking mode, which is shared with whoever else holds the
// same open file (a terminal, the parent's pipe). Put the original flags back on the way out.
class FdFlagsGuard {
 public:
  FdFlagsGuard() {
    for (int fd = 0; fd < 2; ++fd)
      flags_[fd] = ::fcntl(fd, F_GETFL);
  }
  ~FdFlagsGuard() {
    for (int fd = 0; fd < 2; ++fd) {
      if (flags_[fd] >= 0) ::fcntl(fd, F_SETFL, flags_[fd]);
    }
  }

 private:
  int flags_[2];
};

// What the settings files say at start-up about the tools (the sessions read their settings
// again themselves).
struct StartupSettings {
  session::Settings settings;
  std::vector<std::string> active_tools;
  tools::BashToolOptions bash;  // from the policy set-up, which applies the trust rule
};

StartupSettings read_startup_settings(const CliOptions& options, const fs::path& agent_dir,
                                      const fs::path& cwd) {
  config::FileSettingsStore store(agent_dir / "settings.json", cwd / ".rebound" / "settings.json");
  const protocol::Json json = store.load();
  std::vector<std::string> warnings;
  StartupSettings out;
  out.settings = session::settings_from_json(json, warnings);
  out.active_tools = tools::active_tool_names(options.tools, options.no_tools, json, warnings);
  for (const auto& w : warnings)
    spdlog::warn("{}", w);
  return out;
}

// The loop's life: lines from stdin to the front end until end of input, a signal or a closed
// stdout; then the bounded shutdown (the front end's work, stdout drained, its processes gone).
// `kill_background` ends what bash commands and bash tool calls left running.
void run_loop(asio::io_context& io, session::Scheduler& scheduler, StdoutWriter& writer,
              FrontEnd& front, const std::function<void()>& kill_background,
              std::size_t max_line_bytes) {
  StdinReader reader(io.get_executor(), STDIN_FILENO);
  protocol::LineReader lines(max_line_bytes);
  std::unique_ptr<session::Timer> deadline = scheduler.make_timer();
  // Orphans of commands' background processes are reparented to us (the subreaper): reaped
  // every second so they do not stay zombies.
  std::unique_ptr<session::Timer> reaper = scheduler.make_timer();
  std::function<void()> reap_orphans = [&] {
    process::reap_orphans();
    reaper->start(std::chrono::milliseconds(1000), reap_orphans);
  };
  reaper->start(std::chrono::milliseconds(1000), reap_orphans);
  std::optional<process::StopSignalWatch> signals;
  bool shutting_down = false;

  auto finish = [&] {
    deadline->cancel();
    reaper->cancel();
    signals.reset();  // the handlers stay (stop_signals.h); only the loop stops listening
  };
  auto shutdown = [&](const char* why) {
    if (shutting_down) return;
    shutting_down = true;
    spdlog::debug("shutting down: {}", why);
    reader.stop();
    front.shutdown();  // its sessions stop their work; what is pending is answered
    kill_background();
    // The whole shutdown is bounded: whatever still keeps the loop busy after the limit (a
    // reader that stopped reading stdout, a child that does not die) is given up on.
    const auto limit = kShutdownDrainLimit +
                       (front.stops_processes() ? kProcessStopLimit : std::chrono::seconds(0));
    deadline->start(std::chrono::duration_cast<std::chrono::milliseconds>(limit), [&io] {
      spdlog::warn("shutdown did not finish within its limit; exiting anyway");
      io.stop();
    });
    // Stdout drained, then the front end's work done (a killed bash command answers first),
    // then drained again: the loop has nothing left and ends.
    writer.when_drained([&] { front.when_idle([&] { writer.when_drained(finish); }); });
  };

  auto on_item = [&](protocol::LineItem item) {
    if (shutting_down) return;
    if (item.kind == protocol::LineItem::Kind::too_long) {
      front.handle_too_long(lines.max_line_bytes());
    } else {
      front.handle_line(item.text);
    }
  };
  writer.on_broken([&] {
    front.interrupted(SIGPIPE);
    shutdown("stdout closed");
  });
  front.set_finish([&] { shutdown("run finished"); });
  // Input waits while the client leaves stdout unread (answers would pile up without limit).
  // (No flush first: what is gathered stays under 64 KiB and leaves with its loop turn, so a
  // burst of commands still gets its answers in one write.)
  reader.set_gate(
      [&writer](std::function<void()> resume) { return writer.admit(std::move(resume)); });
  if (!front.reads_data()) {
    reader.start([&](std::string_view data) { lines.feed(data, on_item); },
                 [&] {
                   lines.finish(on_item);
                   shutdown("end of input");
                 });
  } else if (::isatty(STDIN_FILENO) == 1) {
    // A terminal is never read (oneshot.md section 3).
    scheduler.post([&front] { front.handle_input_end(); });
  } else {
    reader.start([&](std::string_view data) { front.handle_input(data); },
                 [&front] { front.handle_input_end(); });
  }
  front.start();
  // A signal asks for the shutdown that end of input asks for; repeats change nothing (the
  // shutdown is bounded anyway) and never end the process by the signal's default action.
  signals.emplace(io.get_executor(), [&](int signo) {
    const char* name = signo == SIGTERM ? "SIGTERM" : signo == SIGINT ? "SIGINT" : "SIGHUP";
    if (shutting_down) {
      spdlog::debug("{} during shutdown: ignored", name);
      return;
    }
    front.interrupted(signo);
    shutdown(name);
  });
  io.run();
}

}  // namespace

int run_server(const CliOptions& options) {
  FdFlagsGuard fd_flags;
  const Mode* mode = find_mode(options.mode);
  if (!mode) {
    spdlog::error("unknown mode '{}'", options.mode);
    return 1;
  }
  // oneshot.md section 2: no PROMPT while stdin is a terminal is a bad command line: exit 2, the
  // reason on stderr, nothing on stdout (issue 50: a result line was written too).
  if (options.mode == "print" && !options.prompt && ::isatty(STDIN_FILENO) == 1) {
    std::fputs("rebound: No prompt: give PROMPT or pipe text on stdin\n", stderr);
    return 2;
  }
  const fs::path agent_dir = resolve_agent_dir(options);
  std::error_code ec;
  const fs::path cwd = fs::absolute(fs::current_path(ec), ec);
  StartupSettings startup = read_startup_settings(options, agent_dir, cwd);
  // The settings files of this cwd and the trust rule between them, read once (ACP sessions in
  // other directories read their own).
  const config::SettingsPair settings = config::read_settings_pair(agent_dir, cwd);
  // The permission policy (policy.md section 1): an invalid one stops the server before any
  // command is read, with exit status 2.
  auto policy_read = read_policy_setup(
      options, agent_dir, cwd, !read_extension_configs(options, settings, getenv_value).empty(),
      !mode->session_policy);
  if (!policy_read) {
    spdlog::error("{}", policy_read.error().message);
    return 2;
  }
  // The shell settings as the policy's trust rule leaves them (policy.md 1.2).
  startup.bash.shell_path = policy_read.value().shell_path;
  startup.bash.command_prefix = policy_read.value().shell_command_prefix;

  std::optional<JsonlAppender> script_log;
  if (options.script_log) {
    script_log.emplace(*options.script_log);
    if (!script_log->ok()) {
      spdlog::error("cannot open the script log {}", *options.script_log);
      return 1;
    }
  }

  asio::io_context io;
  AsioScheduler scheduler(io.get_executor());
  auto policy = std::make_shared<PolicyWiring>(policy_read.value(), scheduler);
  // A whole-tool deny takes the tool out of what is offered (policy.md section 2.2).
  startup.active_tools = policy->keep_offered(startup.active_tools);
  StdoutWriter writer(io.get_executor(), STDOUT_FILENO);
  config::AuthStore credentials(agent_dir / "auth.json", steady_ms);
  // MCP servers of the process's cwd (mcp.md section 1.1): a bad --mcp-config file stops either
  // mode here.
  auto sources = read_mcp_sources(options, settings, cwd, getenv_value);
  if (!sources) {
    spdlog::error("{}", sources.error().message);
    return 1;
  }
  net::HttpClient http(io.get_executor(), net::ProxyConfig::from_environment(getenv_value));
  // A client that reads stdout slowly slows the model's stream down instead of filling memory.
  http.set_body_gate(
      [&writer](std::function<void()> resume) { return writer.admit(std::move(resume)); });
  ProviderSetup providers =
      setup_providers(options, startup.settings,
                      ProviderEnvironment{scheduler, http, credentials, agent_dir / "models.json",
                                          getenv_value, [&script_log](const protocol::Json& line) {
                                            if (script_log) script_log->append(line);
                                          }});
  if (!providers.error.empty()) {
    spdlog::error("{}", providers.error);
    return 1;
  }
  // The jitter generator of retry.md section 15, one per process.
  session::SplitMix64 jitter(options.retry_seed ? *options.retry_seed
                                                : (std::uint64_t{std::random_device{}()} << 32) ^
                                                      std::random_device{}());
  // Shell commands never see a key: not under the providers' variables, not under any other
  // name; a key that reaches a result anyway is redacted by the session.
  const std::vector<std::string> shell_env =
      tools::shell_environment(environ, providers.key_variables, providers.keys);
  const session::Secrets secrets(providers.keys);
  // With the sandbox on, every shell command (the bash tool's and the rpc `bash` command's) runs
  // in it; it is checked in the background from now on (policy.md section 8.10).
  tools::ShellSpawner::Spawn spawn = tools::child_process_spawn(io.get_executor(), shell_env);
  std::string guideline;
  std::shared_ptr<sandbox::WorkspaceSandboxes> sandboxes;
  if (mode->session_policy) {
    // acp: each session's policy says whether its commands run in a sandbox of its workspace.
    sandboxes = std::make_shared<sandbox::WorkspaceSandboxes>(io.get_executor(), spawn);
    spawn = sandboxes->spawn();
  } else if (auto box = make_sandbox(policy_read.value(), shell_env, providers.key_variables,
                                     getenv_value)) {
    spawn = sandbox::sandboxed_spawn(io.get_executor(), box);
    policy->set_sandbox(box);
    guideline = sandbox_guideline(box->config().network);
  }
  tools::BashRunner bash(scheduler, spawn);
  BuiltinTools builtin_tools(scheduler, startup.active_tools, startup.bash, spawn);
  const HookSetup hooks = read_hook_setup(options, settings);
  SessionModels models{providers.models, *providers.router, providers.start_model,
                       providers.has_key, !options.model && !options.provider};
  SessionFactory sessions(SessionFactoryDeps{options, agent_dir, scheduler, std::move(models),
                                             credentials, bash, jitter, startup.active_tools,
                                             &secrets, guideline});
  AppParts app{{options, agent_dir, cwd, settings, io, scheduler, sessions, builtin_tools,
                startup.active_tools, getenv_value, std::move(*sources), shell_env, hooks, policy,
                sandboxes, providers.key_variables},
               options,
               writer};
  ModeStart started = mode->start(app);
  if (!started) {
    const std::string* error = &started.error().message;
    // A --resume PATH that does not load is a bad command line (oneshot.md section 2).
    // So is a session another process is running (amendments A3).
    const bool in_use = error->find(config::session_in_use_text("")) != std::string::npos;
    if ((options.resume && error->rfind("--resume: ", 0) == 0) || in_use) {
      std::fputs(("rebound: " + *error + "\n").c_str(), stderr);
      return 2;
    }
    spdlog::error("{}", *error);
    return 1;
  }
  std::unique_ptr<FrontEnd> front = std::move(*started);
  run_loop(
      io, scheduler, writer, *front,
      [&] {
        bash.kill_background();
        builtin_tools.bash->kill_background();
      },
      options.max_line_bytes);
  // What commands started and left running (`setsid cmd &` included: we are their subreaper)
  // ends with the server.
  if (const std::size_t killed = process::kill_descendants())
    spdlog::debug("killed {} processes left by commands", killed);
  return front->exit_code();
}

}  // namespace rebound::server
