#include "server/app/server_app.h"

#include <fcntl.h>
#include <pwd.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "config/auth_store.h"
#include "config/file_session_storage.h"
#include "config/file_settings_store.h"
#include "mcp/mcp_manager.h"
#include "net/http_client.h"
#include "protocol/json_line.h"
#include "protocol/line_reader.h"
#include "server/acp/acp_connection.h"
#include "server/io/asio_scheduler.h"
#include "tools/bash_runner.h"
#include "server/pi/event_output.h"
#include "server/io/jsonl_appender.h"
#include "server/app/mcp_setup.h"
#include "server/app/provider_setup.h"
#include "server/pi/rpc_dispatcher.h"
#include "server/io/stdio_transport.h"
#include "process/stop_signals.h"
#include "server/app/tool_setup.h"
#include "session/event_sink.h"
#include "session/session_host.h"
#include "session/session_id.h"
#include "session/tool.h"

namespace rebound::server {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// How long shutdown may wait for stdout to drain before giving up on a reader that stopped
// reading.
constexpr auto kShutdownDrainLimit = std::chrono::seconds(2);
// What MCP servers add to it: their stop sequence (stdin closed, 1 s, SIGTERM, 1 s, SIGKILL).
constexpr auto kMcpStopLimit = std::chrono::seconds(1);

fs::path resolve_agent_dir(const CliOptions& o) {
  if (o.agent_dir) return *o.agent_dir;
  if (const char* env = std::getenv("REBOUND_AGENT_DIR"); env && *env) return env;
  const char* home = std::getenv("HOME");
  if (!home || !*home) {
    if (const passwd* pw = ::getpwuid(::getuid())) home = pw->pw_dir;
  }
  return fs::path(home ? home : ".") / ".rebound" / "agent";
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

}  // namespace

int run_server(const CliOptions& options) {
  FdFlagsGuard fd_flags;
  const fs::path agent_dir = resolve_agent_dir(options);
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  config::FileSettingsStore settings_store(agent_dir / "settings.json",
                                           cwd / ".rebound" / "settings.json");
  config::FileSessionStorage session_storage(config::SessionStorageOptions{
      agent_dir, fs::absolute(cwd, ec),
      options.session_dir ? std::optional(fs::absolute(*options.session_dir, ec)) : std::nullopt,
      options.no_session});
  // --session FILE resumes FILE, or starts a new session written there when it does not exist
  // (or is empty).
  std::optional<session::LoadedSession> resume;
  std::optional<std::string> session_file;
  if (options.session_file) {
    session_file = fs::absolute(*options.session_file, ec).string();
    if (fs::exists(*session_file, ec) && fs::file_size(*session_file, ec) > 0) {
      auto loaded = session_storage.load(*session_file);
      if (auto* error = std::get_if<std::string>(&loaded)) {
        spdlog::error("{}", *error);
        return 1;
      }
      resume = std::move(std::get<session::LoadedSession>(loaded));
      for (const auto& w : resume->warnings)
        spdlog::warn("{}: {}", *session_file, w);
    }
  }

  std::vector<std::string> warnings;
  const protocol::Json settings_json = settings_store.load();
  const session::Settings startup_settings = session::settings_from_json(settings_json, warnings);
  std::vector<std::string> tool_warnings;
  const std::vector<std::string> active_tools =
      active_tool_names(options, settings_json, tool_warnings);
  for (const auto& w : tool_warnings)
    spdlog::warn("{}", w);
  const tools::BashToolOptions bash_tool_options = bash_tool_options_from(settings_json);

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
  StdoutWriter writer(io.get_executor(), STDOUT_FILENO);
  JsonSink out = [&writer](const protocol::Json& j) { writer.write_line(protocol::to_line(j)); };
  EventOutput events(writer, options.envelope);
  config::AuthStore credentials(agent_dir / "auth.json", [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  });
  auto getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v || !*v) return std::nullopt;
    return std::string(v);
  };
  // MCP servers of rpc mode (mcp.md section 1.1); acp mode reads them per session, but a bad
  // --mcp-config file stops either mode here.
  std::unique_ptr<mcp::McpManager> rpc_mcp;
  auto sources = read_mcp_sources(options, agent_dir, fs::absolute(cwd, ec), getenv);
  if (auto* error = std::get_if<std::string>(&sources)) {
    spdlog::error("{}", *error);
    return 1;
  }
  if (options.mode != "acp") {
    rpc_mcp = make_mcp_set(io.get_executor(), scheduler, std::move(std::get<McpSources>(sources)),
                           fs::absolute(cwd, ec).string(), getenv, active_tools);
  }
  net::HttpClient http(io.get_executor(), net::ProxyConfig::from_environment(getenv));
  // A client that reads stdout slowly slows the model's stream down instead of filling memory.
  http.set_body_gate(
      [&writer](std::function<void()> resume) { return writer.admit(std::move(resume)); });
  ProviderSetup providers =
      setup_providers(options, startup_settings,
                      ProviderEnvironment{scheduler, http, credentials, agent_dir / "models.json",
                                          getenv, [&script_log](const protocol::Json& line) {
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
  tools::BashRunner bash(io.get_executor());
  BuiltinTools builtin_tools(io.get_executor(), scheduler, active_tools, bash_tool_options);
  auto system_prompt = [&, session_cwd = fs::absolute(cwd, ec)](const std::string& base) {
    return build_system_prompt(base, active_tools, !options.no_context_files, agent_dir,
                               session_cwd);
  };
  // The front end: rpc mode drives one session through the command table; acp mode opens
  // sessions as the editor asks, each in its own working directory.
  session::SessionHost host;
  std::unique_ptr<RpcDispatcher> dispatcher;
  std::unique_ptr<AcpConnection> acp;
  session::SessionSlot rpc_slot = 0;
  if (options.mode == "acp") {
    struct SessionFiles {
      SessionFiles(const fs::path& agent_dir, const fs::path& cwd,
                   config::SessionStorageOptions storage_options)
          : settings(agent_dir / "settings.json", cwd / ".rebound" / "settings.json"),
            storage(std::move(storage_options)) {}
      config::FileSettingsStore settings;
      config::FileSessionStorage storage;
    };
    AcpSessionFactory factory =
        [&](const std::string& session_cwd, session::SessionSlot slot, session::EventSink& sink,
            session::ToolRegistry& tools, const std::optional<std::string>& load,
            const protocol::Json& mcp_servers,
            session::DynamicTools* mcp_tools) -> std::variant<AcpSessionParts, AcpOpenError> {
      const fs::path dir(session_cwd);
      auto files = std::make_shared<SessionFiles>(
          agent_dir, dir,
          config::SessionStorageOptions{agent_dir, dir,
                                        options.session_dir
                                            ? std::optional(fs::absolute(*options.session_dir, ec))
                                            : std::nullopt,
                                        options.no_session});
      std::optional<std::string> file;
      std::optional<session::LoadedSession> loaded;
      std::string id = session::new_session_id();
      if (load) {
        file = files->storage.find_session_file(*load);
        if (!file) return AcpOpenError{-32002, "Resource not found: session " + *load};
        auto read = files->storage.load(*file);
        if (auto* error = std::get_if<std::string>(&read))
          return AcpOpenError{-32603, "Internal error: " + *error};
        loaded = std::move(std::get<session::LoadedSession>(read));
        for (const auto& w : loaded->warnings)
          spdlog::warn("{}: {}", *file, w);
        id = loaded->header.id;
      }
      auto prompt = [&, dir](const std::string& base) {
        return build_system_prompt(base, active_tools, !options.no_context_files, agent_dir, dir);
      };
      // Its MCP servers: sources 1 to 4 for its cwd, then the request's (mcp.md section 1.1).
      std::vector<std::string> mcp_warnings;
      auto sources = read_mcp_sources(options, agent_dir, dir, getenv,
                                      mcp::read_acp_servers(mcp_servers, mcp_warnings));
      for (const auto& w : mcp_warnings)
        spdlog::warn("acp: mcpServers: {}", w);
      if (auto* error = std::get_if<std::string>(&sources))
        return AcpOpenError{-32603, "Internal error: " + *error};
      auto mcp_set =
          make_mcp_set(io.get_executor(), scheduler, std::move(std::get<McpSources>(sources)),
                       session_cwd, getenv, active_tools);
      auto made = std::make_unique<session::AgentSession>(
          session::SessionOptions{providers.start_model, std::move(id), providers.has_key,
                                  std::move(file), std::move(loaded),
                                  !options.model && !options.provider, slot},
          providers.models,
          session::SessionDeps{scheduler, sink, *providers.router, credentials, files->settings,
                               files->storage, bash, tools, prompt, &jitter, mcp_tools});
      return AcpSessionParts{std::move(files), std::move(mcp_set), std::move(made)};
    };
    acp = std::make_unique<AcpConnection>(
        AcpOptions{options.no_session, options.acp_ask_permissions, REBOUND_VERSION},
        std::move(factory), out, builtin_tools.registry, scheduler);
  } else {
    rpc_slot = host.add([&](session::SessionSlot slot) {
      return std::make_unique<session::AgentSession>(
          session::SessionOptions{providers.start_model, session::new_session_id(),
                                  providers.has_key, session_file, std::move(resume),
                                  !options.model && !options.provider, slot},
          std::move(providers.models),
          session::SessionDeps{scheduler, events, *providers.router, credentials, settings_store,
                               session_storage, bash, builtin_tools.registry, system_prompt,
                               &jitter, rpc_mcp.get()});
    });
    dispatcher = std::make_unique<RpcDispatcher>(*host.find(rpc_slot), out, &events, rpc_mcp.get());
  }
  // MCP status changes are events once the first command was read (mcp.md section 8).
  bool command_seen = false;
  if (rpc_mcp) {
    rpc_mcp->on_update([&](const protocol::Json& fields) {
      if (command_seen)
        events.on_event(session::Event{rpc_slot, session::ev::McpServerUpdate{&fields}});
    });
  }
  StdinReader reader(io.get_executor(), STDIN_FILENO);
  protocol::LineReader lines(options.max_line_bytes);
  asio::steady_timer drain_deadline(io);

  bool shutting_down = false;
  std::optional<process::StopSignalWatch> signals;
  std::function<void()> finish_when_quiet;
  asio::steady_timer quiet_check(io);
  auto shutdown = [&](const char* why) {
    if (shutting_down) return;
    shutting_down = true;
    spdlog::debug("shutting down: {}", why);
    reader.stop();
    if (acp) acp->shutdown();               // cancels every session, answers its prompt
    host.shutdown_all();                    // aborts runs; a running bash command's group is killed
    bash.kill_background();                 // and what earlier commands left running
    builtin_tools.bash->kill_background();  // and what bash tool calls left running
    // MCP servers stop after the protocol work above, all at once (mcp.md section 3.4).
    if (rpc_mcp) rpc_mcp->stop_all({});
    // The whole shutdown is bounded: whatever still keeps the loop busy after the limit (a
    // reader that stopped reading stdout, a child that does not die) is given up on.
    drain_deadline.expires_after(kShutdownDrainLimit + ((rpc_mcp && rpc_mcp->any_running()) || acp
                                                            ? kMcpStopLimit
                                                            : std::chrono::seconds(0)));
    drain_deadline.async_wait([&io](const boost::system::error_code& e) {
      if (!e) {
        spdlog::warn("shutdown did not finish within its limit; exiting anyway");
        io.stop();
      }
    });
    finish_when_quiet();
  };
  // The loop ends once stdout has drained and no killed bash command still has to answer
  // (its response is written first); then the deadline is cancelled.
  finish_when_quiet = [&] {
    writer.when_drained([&] {
      if (acp ? acp->busy()
              : host.find(rpc_slot)->is_bash_running() || (rpc_mcp && rpc_mcp->any_running())) {
        quiet_check.expires_after(std::chrono::milliseconds(5));
        quiet_check.async_wait([&](const boost::system::error_code& e) {
          if (!e) finish_when_quiet();
        });
        return;
      }
      drain_deadline.cancel();
      signals.reset();  // the handlers stay (stop_signals.h); only the loop stops listening
    });
  };

  auto on_item = [&](protocol::LineItem item) {
    if (shutting_down) return;
    command_seen = true;
    if (item.kind == protocol::LineItem::Kind::too_long) {
      if (acp) {
        acp->handle_too_long(lines.max_line_bytes());
      } else {
        dispatcher->handle_too_long(lines.max_line_bytes());
      }
    } else if (acp) {
      acp->handle_line(item.text);
    } else {
      dispatcher->handle_line(item.text);
    }
  };
  writer.on_broken([&] { shutdown("stdout closed"); });
  reader.start([&](std::string_view data) { lines.feed(data, on_item); },
               [&] {
                 lines.finish(on_item);
                 shutdown("end of input");
               });
  // The MCP servers start on the loop's first turn, once the answer to a command that was
  // already waiting on stdin is written: spawning them (a few ms each, the parent held until
  // the exec) does not delay it.
  if (rpc_mcp) {
    asio::post(io, [&] {
      writer.when_drained([&] {
        if (!shutting_down) rpc_mcp->start_all();
      });
    });
  }
  // A signal asks for the shutdown that end of input asks for; repeats change nothing (the
  // shutdown is bounded anyway) and never end the process by the signal's default action.
  signals.emplace(io.get_executor(), [&](int signo) {
    const char* name = signo == SIGTERM ? "SIGTERM" : signo == SIGINT ? "SIGINT" : "SIGHUP";
    if (shutting_down) {
      spdlog::debug("{} during shutdown: ignored", name);
      return;
    }
    shutdown(name);
  });

  io.run();
  return 0;
}

}  // namespace rebound::server
