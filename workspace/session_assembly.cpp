#include "workspace/session_assembly.h"

#include <spdlog/spdlog.h>

#include "extensions/hook_preflight.h"
#include "extensions/hook_run_hooks.h"
#include "mcp/mcp_manager.h"
#include "session/session_id.h"
#include "workspace/extension_setup.h"

namespace rebound::server {

namespace fs = std::filesystem;

// A session's extension processes (rpc: the connection's; acp: one ACP session's): their set,
// what they ask of the session (its state, abort and messages), and where their events and
// failures go.
struct SessionExtensions {
  extensions::ExtensionHost host;
  std::shared_ptr<extensions::ExtensionSet> set;
  session::AgentSession* session = nullptr;
  session::EventSink* sink = nullptr;  // the tap in front of the connection's output
  session::SessionSlot slot = 0;
  std::unique_ptr<session::DynamicTools> tools;       // the MCP servers' and the extensions' tools
  std::unique_ptr<session::ToolPreflight> preflight;  // the interceptors, then the hooks'
  std::unique_ptr<session::RunHooks> run_hooks;       // the hooks', and session changes told
  std::shared_ptr<const HookSetup> hook_setup;
};

namespace {

// The services as one handle: started extensions first, stopped all at once.
class ServiceSet : public session::SessionServices {
 public:
  ServiceSet(std::unique_ptr<session::McpControl> mcp,
             std::shared_ptr<session::ExtensionControl> extensions,
             std::shared_ptr<session::PolicyControl> policy)
      : policy_(std::move(policy)), mcp_(std::move(mcp)), extensions_(std::move(extensions)) {}

  session::McpControl* mcp() override { return mcp_.get(); }
  session::ExtensionControl* extensions() override { return extensions_.get(); }
  session::PolicyControl* policy() override { return policy_.get(); }
  void start() override {
    if (extensions_) extensions_->start_all();
    if (mcp_) mcp_->start_all();
  }
  void stop(const std::string& reason, std::function<void()> gone) override {
    auto left = std::make_shared<int>((mcp_ ? 1 : 0) + (extensions_ ? 1 : 0));
    if (*left == 0) {
      if (gone) gone();
      return;
    }
    auto one_gone = [left, gone = std::move(gone)] {
      if (--*left == 0 && gone) gone();
    };
    // MCP servers stop after the protocol work of the front end, all at once (mcp.md section
    // 3.4); the extensions are told why (extensions.md sections 4.9, 9).
    if (extensions_) extensions_->stop_all(reason, one_gone);
    if (mcp_) mcp_->stop_all(one_gone);
  }
  bool running() const override {
    return (mcp_ && mcp_->any_running()) || (extensions_ && extensions_->any_running());
  }

 private:
  std::shared_ptr<session::PolicyControl> policy_;
  std::unique_ptr<session::McpControl> mcp_;  // destroyed after the extensions
  std::shared_ptr<session::ExtensionControl> extensions_;
};

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

// What a session's failed hooks and notices become: an extension_error and a `notify`
// extension_ui_request of the session once `written` says so (section 3.10, 6.1); get_extensions'
// `lastError` either way.
extensions::HookReport hook_report(std::shared_ptr<SessionExtensions> ext,
                                   std::shared_ptr<bool> written) {
  extensions::HookReport report;
  report.failure = [ext, written](const std::string& path, std::string_view event,
                                  const std::string& error) {
    if (ext->set) ext->set->hook_failed(path.substr(path.find(':') + 1), error);
    if (*written && ext->sink)
      ext->sink->on_event(
          session::Event{ext->slot, session::ev::ExtensionError{path, event, error}});
  };
  report.notice = [ext, written](std::string_view type, const std::string& message) {
    if (ext->sink) write_notice(*ext->sink, ext->slot, *written, type, message);
  };
  return report;
}

// The interceptors first, then the hooks (extensions.md section 2); session changes are told to
// the extensions (section 8); their slash commands (section 4.6).
void wire_extensions(SessionExtensions& ext, session::AgentSession& made, const SessionHooks* hooks,
                     session::ToolPreflight* after_interceptors) {
  ext.preflight = ext.set->preflight(after_interceptors);
  made.set_tool_preflight(ext.preflight.get());
  ext.run_hooks = ext.set->run_hooks(hooks ? hooks->run_hooks() : nullptr, ext.host.session);
  made.set_run_hooks(ext.run_hooks.get());
  made.set_slash_commands(ext.set.get());
}

// The extensions of a session working in `cwd` (rpc: the process's; acp: one ACP session's),
// not started yet; none configured: no set. Their failures and notices are events of the
// session once `written` says so (rpc: the first command was read; acp: never, they are logged).
std::shared_ptr<SessionExtensions> make_extensions(WorkspaceParts& app, const fs::path& cwd,
                                                   const config::SettingsPair& settings,
                                                   const std::string& mode,
                                                   std::shared_ptr<bool> written,
                                                   std::shared_ptr<const HookSetup> hooks,
                                                   std::shared_ptr<session::WaitBoard> waits = {}) {
  auto configs = read_extension_configs(app.flags, settings, app.getenv);
  auto ext = std::make_shared<SessionExtensions>();
  // Hooks alone still get a set: get_extensions lists them, with a failed one's lastError
  // (issue 50: `"hooks":[]` when no extension process was configured).
  if (configs.empty() && (!hooks || hooks->config.handlers.empty())) return ext;
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
  options.settings = hooks->runner;
  options.version = REBOUND_VERSION;
  options.mode = mode;
  options.ui = mode == "print" ? "none" : mode;  // nobody answers a one-shot run's dialogs
  options.waits = std::move(waits);
  e->set = std::make_shared<extensions::ExtensionSet>(
      app.scheduler, child_process_spawner(app.io.get_executor()), std::move(configs), options,
      e->host, &hooks->config);
  e->hook_setup = std::move(hooks);  // listed by get_extensions
  return ext;
}
// The front end's handle on the extensions, which keeps the whole wiring (the set's host)
// alive; none configured: null.
std::shared_ptr<session::ExtensionControl> extension_control(
    const std::shared_ptr<SessionExtensions>& ext) {
  if (!ext->set) return nullptr;
  return std::shared_ptr<session::ExtensionControl>(ext, ext->set.get());
}

// What an ACP session depends on besides its MCP servers: its files, its hooks and its
// extensions.
struct AcpKeep {
  ~AcpKeep() {
    // The extensions outlive it while they stop: from here on they reach no session.
    if (ext) {
      ext->session = nullptr;
      ext->sink = nullptr;
    }
    // SessionEnd hooks still running (session/close) keep the hooks until they end (bounded by
    // sessionEndTimeoutMs); then they go, from a fresh stack.
    if (hooks && hooks->running() > 0) {
      auto retired = hooks;
      retired->when_idle([retired]() mutable { retired.reset(); });
    }
  }
  std::shared_ptr<SessionFiles> files;
  std::shared_ptr<SessionExtensions> ext;
  std::shared_ptr<ExtensionEventTap> tap;
  std::shared_ptr<SessionHooks> hooks;
  // Its permission policy (policy.md: the session's own project file), the tools it leaves
  // offered, its preflight, and its workspace's sandbox registration.
  std::shared_ptr<PolicyWiring> policy;
  std::unique_ptr<session::ToolRegistry> tools;
  std::unique_ptr<session::DynamicTools> dynamic_tools;
  std::unique_ptr<session::ToolPreflight> preflight;
  std::shared_ptr<void> sandbox;
};

// What a session's policy leaves it (acp): its tools and what the system prompt says.
struct AcpPolicyParts {
  session::ToolRegistry* tools;
  session::DynamicTools* dynamic_tools;
  std::optional<std::vector<std::string>> active_tools;
  std::optional<std::string> guideline;
};

// acp: the policy of a session working in `cwd`, read from that cwd's project file; an invalid
// one fails the session's opening (policy.md section 1.4). The tools a whole-tool deny removes
// are left out of what it is offered, its sandbox (shared by the sessions of that workspace) is
// registered, and the system prompt's lines follow.
session::Result<AcpPolicyParts> wire_acp_policy(WorkspaceParts& app, AcpKeep& keep,
                                                const std::string& cwd, bool extensions,
                                                session::DialogHost* dialogs,
                                                session::ToolRegistry& tools,
                                                session::DynamicTools* dynamic_tools) {
  auto read = read_policy_setup(app.flags, app.agent_dir, cwd, extensions);
  if (!read) return read.error();
  const PolicySetup& setup = *read;
  keep.policy = std::make_shared<PolicyWiring>(setup, app.scheduler);
  PolicyWiring& policy = *keep.policy;
  AcpPolicyParts parts{&tools, dynamic_tools, std::nullopt, std::nullopt};
  // No time limit in acp: the editor's user decides; a cancel refuses (policy.md section 6.2).
  policy.gate().set_dialogs(dialogs);
  policy.gate().set_abort_text("Permission denied by the user");
  std::shared_ptr<sandbox::Sandbox> box;
  if (setup.sandbox.enabled) {
    box = app.sandboxes->find(cwd);
    if (!box) box = make_sandbox(setup, app.shell_env, app.key_variables, app.getenv);
    policy.set_sandbox(box);
    parts.guideline = sandbox_guideline(box->config().network);
  }
  keep.sandbox = app.sandboxes->attach(cwd, box);
  std::vector<std::string> names;
  for (const auto& d : tools.definitions())
    names.push_back(d.name);
  const std::vector<std::string> kept = policy.keep_offered(names);
  if (kept.size() != names.size()) {
    // The gate's tools, held by reference: the connection keeps them longer than the session.
    keep.tools = std::make_unique<session::ToolRegistry>();
    for (const auto& name : kept)
      keep.tools->add(
          std::shared_ptr<session::Tool>(std::shared_ptr<session::Tool>(), tools.find(name)));
    parts.tools = keep.tools.get();
    std::vector<std::string> active;
    for (const auto& name : app.active_tools)
      if (std::find(kept.begin(), kept.end(), name) != kept.end()) active.push_back(name);
    parts.active_tools = std::move(active);
  }
  if (dynamic_tools) {
    keep.dynamic_tools = policy.filter(dynamic_tools);
    parts.dynamic_tools = keep.dynamic_tools.get();
  }
  return parts;
}
}  // namespace

void ProcessSession::set_dialogs(session::DialogHost* dialogs) {
  if (extensions) extensions->host.dialogs = dialogs;
  if (policy) policy->gate().set_dialogs(dialogs);
}

session::Result<ProcessSession> process_session(WorkspaceParts& app, const std::string& mode,
                                                SessionWrap wrap) {
  const workspace::ServiceFlags& o = app.flags;
  auto files = app.sessions.files_for(app.cwd);
  std::optional<session::LoadedSession> resume;
  std::optional<std::string> session_file;
  std::error_code ec;
  if (o.session_file) session_file = fs::absolute(*o.session_file, ec).string();
  // --resume PATH must name a session that loads; --continue takes the cwd's latest, or starts
  // a new one (oneshot.md section 14).
  if (o.resume) {
    session_file = fs::absolute(*o.resume, ec).string();
    if (!fs::exists(*session_file, ec))
      return session::Error{session::ErrorKind::failed, "--resume: no such file: " + *session_file};
  }
  if (o.continue_session) {
    std::string folder;
    session_file = files->storage.most_recent_session(folder);
    if (!session_file)
      std::fputs(
          ("rebound: no session to continue in " + folder + "; starting a new one\n").c_str(),
          stderr);
  }
  if (session_file) {
    if (fs::exists(*session_file, ec) && fs::file_size(*session_file, ec) > 0) {
      auto loaded = files->storage.load_restored(*session_file);
      if (!loaded) {
        const std::string& error = loaded.error().message;
        return session::failure(o.resume ? "--resume: " + error : error);
      }
      resume = std::move(*loaded);
      for (const auto& w : resume->warnings)
        spdlog::warn("{}: {}", *session_file, w);
    }
  }
  auto mcp =
      make_mcp_set(app.io.get_executor(), app.scheduler, std::move(app.mcp_sources),
                   app.cwd.string(), app.getenv, app.active_tools, app.policy->mcp_sandboxing());
  // What a run waits for, marked for one-shot's heartbeat (oneshot.md section 9).
  auto waits = mode == "print" ? std::make_shared<session::WaitBoard>() : nullptr;
  if (mcp) mcp->set_wait_board(waits);
  // The MCP servers' and the extensions' tools, less what a whole-tool deny removes.
  std::shared_ptr<session::DynamicTools> allowed_tools;
  session::DynamicTools* dynamic_tools = mcp.get();
  auto command_seen = std::make_shared<bool>(false);
  auto hook_setup = std::make_shared<const HookSetup>(app.hooks);
  auto ext = make_extensions(app, app.cwd, app.settings, mode, command_seen, hook_setup, waits);
  if (ext->set) {
    ext->tools = ext->set->tools(dynamic_tools, app.active_tools);
    dynamic_tools = ext->tools.get();
  }
  std::shared_ptr<PolicyWiring> policy = app.policy;
  if (dynamic_tools) {
    allowed_tools = policy->filter(dynamic_tools);
    dynamic_tools = allowed_tools.get();
  }
  // Not subject to the policy: it has no effect outside the run (section 11.1).
  std::shared_ptr<session::DynamicTools> structured_tools;
  if (wrap.tools) {
    structured_tools = wrap.tools(dynamic_tools);
    dynamic_tools = structured_tools.get();
  }
  std::shared_ptr<session::RunHooks> outer_run_hooks;
  std::shared_ptr<session::ToolPreflight> policy_preflight, outer_preflight;
  std::shared_ptr<ExtensionEventTap> tap;
  std::shared_ptr<SessionHooks> hooks;
  auto make_session = [&app, files, dynamic_tools, allowed_tools, command_seen, ext, tap, hooks,
                       hook_setup, policy, policy_preflight, outer_preflight, waits,
                       structured_tools, outer_run_hooks, wrap = std::move(wrap),
                       file = std::move(session_file), resume = std::move(resume)](
                          session::SessionSlot slot, session::EventSink& client) mutable {
    // With extensions, every event also goes to those that subscribed (extensions.md 4.3).
    if (ext->set) tap = std::make_shared<ExtensionEventTap>(client, *ext->set);
    session::EventSink& events = tap ? static_cast<session::EventSink&>(*tap) : client;
    ext->sink = &events;
    ext->slot = slot;
    // The files, the hooks and the extensions stay with this function object, which the front
    // end keeps until after its session is gone. The hooks' observer sits between the session
    // and the extensions' tap; their failures and notices are not written before the first
    // command (a start-up hook's are logged).
    hooks = std::make_shared<SessionHooks>(app.io.get_executor(), app.scheduler, hook_setup,
                                           app.cwd.string(), app.shell_env, events,
                                           hook_report(ext, command_seen));
    hooks->set_wait_board(waits);
    const bool resumed = resume.has_value();
    SessionSpec spec{
        app.cwd,          slot, hooks->events(), app.tools.registry, dynamic_tools, std::move(file),
        std::move(resume)};
    spec.prompt_tail = wrap.prompt_tail;
    auto made = app.sessions.make(std::move(spec), *files);
    ext->session = made.get();
    // --name: as a first set_session_name, without its event (sessions.md section 5).
    if (app.flags.session_name) (void)made->set_session_name(*app.flags.session_name, false);
    hooks->set_permission_mode([policy] { return policy->mode(); });
    hooks->attach(*made, resumed ? "resume" : "startup");
    // The policy judges after the interceptors and the PreToolUse hooks (policy.md section 4).
    policy_preflight = policy->gate().preflight(hooks->preflight(), hooks->permission_hooks());
    made->set_tool_preflight(policy_preflight.get());
    made->set_walk_filter([policy] { return policy->walk_filter(); });
    made->set_file_opener([policy] { return policy->file_opener(); });
    if (ext->set) wire_extensions(*ext, *made, hooks.get(), policy_preflight.get());
    if (wrap.preflight) {
      outer_preflight = wrap.preflight(ext->set ? ext->preflight.get() : policy_preflight.get());
      made->set_tool_preflight(outer_preflight.get());
    }
    if (wrap.run_hooks) {
      outer_run_hooks = wrap.run_hooks(made->run_hooks());
      made->set_run_hooks(outer_run_hooks.get());
    }
    return made;
  };
  auto services = std::make_shared<ServiceSet>(std::move(mcp), extension_control(ext), policy);
  return ProcessSession{std::move(make_session), std::move(services), std::move(command_seen),
                        std::move(waits),        std::move(ext),      std::move(policy)};
}

// acp: sessions as the editor opens them, each in its own cwd with its own MCP servers
// (sources 1 to 4 for that cwd, then the request's), hooks and extensions (from that cwd's
// settings: extensions.md section 9).
session::Result<OpenedSession> open_session(WorkspaceParts& app, OpenRequest request) {
  const std::string& session_cwd = request.cwd;
  session::DialogHost* dialogs = request.dialogs;
  session::EventSink& sink = request.sink;
  const session::SessionSlot slot = request.slot;
  auto& load = request.load;
  const fs::path dir(session_cwd);
  auto keep = std::make_shared<AcpKeep>();
  keep->files = app.sessions.files_for(dir);
  auto& files = keep->files;
  // The session's settings files and their trust rule, read once for all its set-ups.
  const config::SettingsPair settings = config::read_settings_pair(app.agent_dir, dir);
  auto hook_setup = std::make_shared<const HookSetup>(read_hook_setup(app.flags, settings));
  // Failures and notices of its hooks and extensions are events of the session, which the
  // connection shows as notices or logs.
  auto written = std::make_shared<bool>(true);
  keep->ext = make_extensions(app, dir, settings, "acp", written, hook_setup);
  SessionExtensions& ext = *keep->ext;
  if (ext.set) {
    ext.host.dialogs = dialogs;
    keep->tap = std::make_shared<ExtensionEventTap>(sink, *ext.set);
  }
  session::EventSink& tapped = keep->tap ? static_cast<session::EventSink&>(*keep->tap) : sink;
  ext.sink = &tapped;
  ext.slot = slot;
  keep->hooks =
      std::make_shared<SessionHooks>(app.io.get_executor(), app.scheduler, hook_setup, session_cwd,
                                     app.shell_env, tapped, hook_report(keep->ext, written));
  session::EventSink& events = keep->hooks->events();
  const bool resumed = load.has_value();
  auto policed = wire_acp_policy(app, *keep, session_cwd, ext.set != nullptr, dialogs,
                                 request.tools, request.mcp_tools);
  if (!policed) return policed.error();
  SessionSpec spec{dir, slot, events, *policed->tools, policed->dynamic_tools};
  spec.active_tools = std::move(policed->active_tools);
  spec.guideline = std::move(policed->guideline);
  if (load) {
    spec.file = std::move(load->first);
    spec.loaded = std::move(load->second);
  }
  std::vector<std::string> mcp_warnings;
  auto sources = read_mcp_sources(app.flags, settings, dir, app.getenv,
                                  mcp::read_acp_servers(request.mcp_servers, mcp_warnings));
  for (const auto& w : mcp_warnings)
    spdlog::warn("acp: mcpServers: {}", w);
  if (!sources) return sources.error();
  auto mcp_set =
      make_mcp_set(app.io.get_executor(), app.scheduler, std::move(*sources), session_cwd,
                   app.getenv, app.active_tools, keep->policy->mcp_sandboxing());
  // The extensions' tools after the MCP servers' (extensions.md section 4.5), behind the
  // connection's permission gate like them.
  if (ext.set) ext.tools = ext.set->tools(mcp_set.get(), app.active_tools);
  auto made = app.sessions.make(std::move(spec), *files);
  ext.session = made.get();
  PolicyWiring* policy = keep->policy.get();  // kept until after the session
  keep->hooks->set_permission_mode([policy] { return policy->mode(); });
  keep->hooks->attach(*made, resumed ? "resume" : "startup");
  // The policy judges after the interceptors and the PreToolUse hooks (policy.md section 4).
  keep->preflight =
      policy->gate().preflight(keep->hooks->preflight(), keep->hooks->permission_hooks());
  made->set_tool_preflight(keep->preflight.get());
  made->set_walk_filter([policy] { return policy->walk_filter(); });
  made->set_file_opener([policy] { return policy->file_opener(); });
  if (ext.set) wire_extensions(ext, *made, keep->hooks.get(), keep->preflight.get());
  session::DynamicTools* offered = ext.tools.get();
  auto services =
      std::make_shared<ServiceSet>(std::move(mcp_set), extension_control(keep->ext), keep->policy);
  return OpenedSession{std::move(keep), std::move(services), std::move(made), offered};
}

}  // namespace rebound::server
