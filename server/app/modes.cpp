#include "server/app/modes.h"

#include <spdlog/spdlog.h>

#include "extensions/hook_preflight.h"
#include "extensions/hook_run_hooks.h"
#include "mcp/mcp_manager.h"
#include "protocol/json_line.h"
#include "server/acp/acp_connection.h"
#include "server/app/extension_setup.h"
#include "server/app/mcp_setup.h"
#include "server/pi/rpc_front_end.h"
#include "session/session_id.h"

namespace rebound::server {

namespace fs = std::filesystem;

namespace {

// A notice for the client: a `notify` extension_ui_request (extensions.md section 6.1), written
// only once the first command was read.
void write_notice(session::EventSink& sink, session::SessionSlot slot, const bool& command_seen,
                  std::string_view type, const std::string& message) {
  if (!command_seen) return;
  protocol::Json fields = protocol::Json::object();
  fields["id"] = session::new_session_id();  // a fresh UUID v4
  fields["method"] = "notify";
  fields["message"] = message;
  fields["notifyType"] = type;
  sink.on_event(session::Event{slot, session::ev::ExtensionUiRequest{&fields}});
}

// A session's extension processes (rpc: the connection's; acp: one ACP session's): their set,
// what they ask of the session (its state, abort and messages), and where their events and
// failures go.
struct SessionExtensions {
  extensions::ExtensionHost host;
  std::shared_ptr<extensions::ExtensionSet> set;
  session::AgentSession* session = nullptr;
  session::EventSink* sink = nullptr;  // the tap in front of the connection's output
  session::SessionSlot slot = 0;
  std::unique_ptr<session::DynamicTools> tools;  // the MCP servers' and the extensions' tools
};

// The extensions of a session working in `cwd` (rpc: the process's; acp: one ACP session's),
// not started yet; none configured: no set. Their failures and notices are events of the
// session once `written` says so (rpc: the first command was read; acp: never, they are logged).
std::shared_ptr<SessionExtensions> make_extensions(AppParts& app, const fs::path& cwd,
                                                   const std::string& mode,
                                                   std::shared_ptr<bool> written) {
  auto configs = read_extension_configs(app.options, app.agent_dir, cwd, app.getenv);
  auto ext = std::make_shared<SessionExtensions>();
  if (configs.empty()) return ext;
  SessionExtensions* e = ext.get();
  e->host.error = [e, written](const std::string& name, std::string_view method,
                               const std::string& error) {
    // Before the first command only get_extensions shows it (section 7.3).
    if (*written && e->sink)
      e->sink->on_event(session::Event{e->slot, session::ev::ExtensionError{name, method, error}});
  };
  e->host.changed = [e] { e->set->on_changed(); };
  e->host.notify = [e, written](const std::string& message, const std::string& type) {
    if (e->sink) write_notice(*e->sink, e->slot, *written, type, message);
    if (!*written) spdlog::info("extension notice ({}): {}", type, message);
  };
  e->host.state = [e] {
    return e->session ? protocol::to_json(e->session->state()) : protocol::Json::object();
  };
  e->host.abort = [e](std::function<void()> done) {
    if (!e->session) return done();
    e->session->abort(std::move(done));
  };
  e->host.send_user_message = [e](session::UserInput input, session::SubmitKind kind,
                                  std::function<void(session::Status)> done) {
    if (!e->session) return done(session::Error{session::ErrorKind::failed, "No session"});
    e->session->submit(std::move(input), kind, std::nullopt, std::move(done));
  };
  e->host.session = [e] {
    protocol::Json out = protocol::Json::object();
    if (!e->session) return out;
    out["sessionId"] = e->session->session_id();
    if (e->session->session_file()) out["sessionFile"] = *e->session->session_file();
    return out;
  };
  extensions::ExtensionConnection::Options options;
  options.session_cwd = cwd.string();
  options.getenv = app.getenv;
  options.settings = app.hooks.runner;
  options.version = REBOUND_VERSION;
  options.mode = mode;
  options.ui = mode;
  e->set = std::make_shared<extensions::ExtensionSet>(
      app.scheduler, child_process_spawner(app.io.get_executor()), std::move(configs), options,
      e->host, &app.hooks.config);
  return ext;
}

// rpc: one session for the process (resuming --session FILE when it exists and is not empty),
// the process's MCP servers (mcp.md section 1.1).
ModeStart start_rpc(AppParts& app) {
  const CliOptions& o = app.options;
  auto files = app.sessions.files_for(app.cwd);
  std::optional<session::LoadedSession> resume;
  std::optional<std::string> session_file;
  if (o.session_file) {
    std::error_code ec;
    session_file = fs::absolute(*o.session_file, ec).string();
    if (fs::exists(*session_file, ec) && fs::file_size(*session_file, ec) > 0) {
      auto loaded = files->storage.load(*session_file);
      if (auto* error = std::get_if<std::string>(&loaded)) return *error;
      resume = std::move(std::get<session::LoadedSession>(loaded));
      for (const auto& w : resume->warnings)
        spdlog::warn("{}: {}", *session_file, w);
    }
  }
  auto mcp = make_mcp_set(app.io.get_executor(), app.scheduler, std::move(app.mcp_sources),
                          app.cwd.string(), app.getenv, app.active_tools);
  session::DynamicTools* dynamic_tools = mcp.get();
  // The hooks' runner and observer sit between the session and the front end's event output.
  auto runner = std::make_shared<extensions::HookRunner>(
      app.io.get_executor(), app.scheduler,
      extensions::HookEnvironment(app.cwd.string(), app.shell_env, std::string()));
  std::shared_ptr<HookObserver> observer;
  std::shared_ptr<extensions::HookPreflight> preflight;
  std::shared_ptr<extensions::HookRunHooks> run_hooks;
  auto command_seen = std::make_shared<bool>(false);
  auto ext = make_extensions(app, app.cwd, "rpc", command_seen);
  if (ext->set) {
    ext->tools = ext->set->tools(dynamic_tools, app.active_tools);
    dynamic_tools = ext->tools.get();
  }
  std::shared_ptr<ExtensionEventTap> tap;
  std::shared_ptr<session::ToolPreflight> ext_preflight;
  std::shared_ptr<session::RunHooks> ext_run_hooks;
  auto make_session = [&app, files, dynamic_tools, runner, observer, preflight, run_hooks,
                       command_seen, ext, tap, ext_preflight, ext_run_hooks,
                       file = std::move(session_file), resume = std::move(resume)](
                          session::SessionSlot slot, session::EventSink& client) mutable {
    // With extensions, every event also goes to those that subscribed (extensions.md 4.3).
    if (ext->set) tap = std::make_shared<ExtensionEventTap>(client, *ext->set);
    session::EventSink& events = tap ? static_cast<session::EventSink&>(*tap) : client;
    ext->sink = &events;
    ext->slot = slot;
    // The files, the runner, the observer and the hooks stay with this function object,
    // which the front end keeps until after its session is gone.
    // A failed hook is an extension_error event of this session (extensions.md section 3.10),
    // a notice a `notify` extension_ui_request (section 6.1).
    extensions::HookReport report;
    // Neither is written before the first command (a start-up hook's; it is logged).
    report.failure = [&events, slot, command_seen, ext](const std::string& path,
                                                        std::string_view event,
                                                        const std::string& error) {
      if (ext->set) ext->set->hook_failed(path.substr(path.find(':') + 1), error);
      if (*command_seen)
        events.on_event(session::Event{slot, session::ev::ExtensionError{path, event, error}});
    };
    report.notice = [&events, slot, command_seen](std::string_view type,
                                                  const std::string& message) {
      write_notice(events, slot, *command_seen, type, message);
    };
    observer =
        std::make_shared<HookObserver>(events, app.hooks.config, *runner, app.cwd.string(), report);
    const bool resumed = resume.has_value();
    auto made = app.sessions.make(SessionSpec{app.cwd, slot, *observer, app.tools.registry,
                                              dynamic_tools, std::move(file), std::move(resume)},
                                  *files);
    observer->set_session(made.get());
    ext->session = made.get();
    using extensions::HookEvent;
    const auto has = [&app](HookEvent e) { return extensions::has_hooks(app.hooks.config, e); };
    auto info = [s = made.get(), cwd = app.cwd.string()] {
      return extensions::HookSessionInfo{s->session_id(), s->session_file(), cwd, s->prompt_id()};
    };
    if (has(HookEvent::pre_tool_use) || has(HookEvent::post_tool_use) ||
        has(HookEvent::post_tool_use_failure)) {
      preflight =
          std::make_shared<extensions::HookPreflight>(app.hooks.config, *runner, info, report);
      made->set_tool_preflight(preflight.get());
    }
    // With any hook configured: also what kills the running hooks at shutdown.
    if (!app.hooks.config.handlers.empty()) {
      run_hooks = std::make_shared<extensions::HookRunHooks>(
          app.hooks.config, *runner, app.scheduler, info, report, app.hooks.runner);
      made->set_run_hooks(run_hooks.get());
      // Before any command: the first LLM request waits for its texts (extensions.md 3.9).
      made->start_session_hooks(resumed ? "resume" : "startup");
    }
    // The interceptors first, then the hooks (extensions.md section 2); session changes are
    // told to the extensions (section 8).
    if (ext->set) {
      ext_preflight = ext->set->preflight(preflight.get());
      made->set_tool_preflight(ext_preflight.get());
      ext_run_hooks = ext->set->run_hooks(run_hooks.get(), ext->host.session);
      made->set_run_hooks(ext_run_hooks.get());
      made->set_slash_commands(ext->set.get());
    }
    return made;
  };
  // The front end's handle keeps the whole wiring (the set's host) alive.
  std::shared_ptr<session::ExtensionControl> control;
  if (ext->set) control = std::shared_ptr<session::ExtensionControl>(ext, ext->set.get());
  auto front = std::make_unique<RpcFrontEnd>(
      RpcFrontEndDeps{app.writer, o.envelope, app.scheduler, std::move(make_session),
                      std::move(mcp), std::move(command_seen), std::move(control)});
  ext->host.dialogs = &front->dialogs();
  return std::unique_ptr<FrontEnd>(std::move(front));
}

// What an ACP session depends on besides its MCP servers: its files and its extensions.
struct AcpKeep {
  // The extensions outlive it while they stop: from here on they reach no session.
  ~AcpKeep() {
    if (ext) {
      ext->session = nullptr;
      ext->sink = nullptr;
    }
  }
  std::shared_ptr<SessionFiles> files;
  std::shared_ptr<SessionExtensions> ext;
  std::shared_ptr<ExtensionEventTap> tap;
  std::unique_ptr<session::ToolPreflight> preflight;
  std::unique_ptr<session::RunHooks> run_hooks;
};

// acp: sessions as the editor opens them, each in its own cwd with its own MCP servers
// (sources 1 to 4 for that cwd, then the request's).
ModeStart start_acp(AppParts& app) {
  AcpSessionFactory factory =
      [&app](const std::string& session_cwd, session::SessionSlot slot, session::EventSink& sink,
             session::ToolRegistry& tools, std::optional<AcpLoadedFile> load,
             const protocol::Json& mcp_servers, session::DynamicTools* mcp_tools,
             session::DialogHost* dialogs) -> session::Result<AcpSessionParts> {
    const fs::path dir(session_cwd);
    auto keep = std::make_shared<AcpKeep>();
    keep->files = app.sessions.files_for(dir);
    auto& files = keep->files;
    // Its own extensions, from its cwd's settings (extensions.md section 9); their failures and
    // notices are events of the session, which the connection shows as notices or logs.
    keep->ext = make_extensions(app, dir, "acp", std::make_shared<bool>(true));
    SessionExtensions& ext = *keep->ext;
    if (ext.set) {
      ext.host.dialogs = dialogs;
      keep->tap = std::make_shared<ExtensionEventTap>(sink, *ext.set);
    }
    session::EventSink& events = keep->tap ? static_cast<session::EventSink&>(*keep->tap) : sink;
    ext.sink = &events;
    ext.slot = slot;
    SessionSpec spec{dir, slot, events, tools, mcp_tools};
    if (load) {
      spec.file = std::move(load->file);
      spec.loaded = std::move(load->loaded);
    }
    std::vector<std::string> mcp_warnings;
    auto sources = read_mcp_sources(app.options, app.agent_dir, dir, app.getenv,
                                    mcp::read_acp_servers(mcp_servers, mcp_warnings));
    for (const auto& w : mcp_warnings)
      spdlog::warn("acp: mcpServers: {}", w);
    if (auto* error = std::get_if<std::string>(&sources))
      return session::Error{session::ErrorKind::failed, *error};
    auto mcp_set =
        make_mcp_set(app.io.get_executor(), app.scheduler, std::move(std::get<McpSources>(sources)),
                     session_cwd, app.getenv, app.active_tools);
    // The extensions' tools after the MCP servers' (extensions.md section 4.5), behind the
    // connection's permission gate like them.
    if (ext.set) ext.tools = ext.set->tools(mcp_set.get(), app.active_tools);
    auto made = app.sessions.make(std::move(spec), *files);
    if (ext.set) {
      ext.session = made.get();
      keep->preflight = ext.set->preflight(nullptr);
      made->set_tool_preflight(keep->preflight.get());
      keep->run_hooks = ext.set->run_hooks(nullptr, ext.host.session);
      made->set_run_hooks(keep->run_hooks.get());
      made->set_slash_commands(ext.set.get());
      ext.set->start_all();
    }
    std::shared_ptr<session::ExtensionControl> control;
    if (ext.set) control = std::shared_ptr<session::ExtensionControl>(keep->ext, ext.set.get());
    session::DynamicTools* offered = ext.tools.get();
    return AcpSessionParts{std::move(keep), std::move(mcp_set), std::move(made), std::move(control),
                           offered};
  };
  // session/load and session/resume read their file on a thread of the session storage's.
  // GCC 12 takes the Error in this Result's variant for maybe uninitialized once inlined
  // (a false positive of -Wmaybe-uninitialized: the variant's index is checked first).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
  AcpSessionLoader loader = [&app](const std::string& session_cwd, const std::string& id,
                                   std::function<void(session::Result<AcpLoadedFile>)> done) {
    return app.sessions.load_by_id(
        app.sessions.files_for(fs::path(session_cwd)), id,
        [done = std::move(done)](SessionFactory::LoadedById read) {
          if (read) return done(AcpLoadedFile{std::move(read->first), std::move(read->second)});
          done(read.error());
        });
  };
#pragma GCC diagnostic pop
  return std::unique_ptr<FrontEnd>(std::make_unique<AcpConnection>(
      AcpOptions{app.options.no_session, app.options.acp_ask_permissions, REBOUND_VERSION},
      std::move(factory), std::move(loader),
      [&writer = app.writer](const protocol::Json& j) { writer.write_line(protocol::to_line(j)); },
      app.tools.registry, app.scheduler, &app.tools.files));
}

}  // namespace

const std::vector<Mode>& modes() {
  static const std::vector<Mode> all{
      {"rpc", start_rpc},
      // A connection has several sessions; one file cannot name them (acp.md section 2).
      {"acp", start_acp, "the editor opens sessions with session/new and session/load"},
  };
  return all;
}

std::vector<std::string> mode_names() {
  std::vector<std::string> names;
  for (const auto& m : modes())
    names.emplace_back(m.name);
  return names;
}

const Mode* find_mode(std::string_view name) {
  for (const auto& m : modes())
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace rebound::server
