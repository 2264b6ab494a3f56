#include "server/app/modes.h"

#include "protocol/json_line.h"
#include "server/acp/acp_connection.h"
#include "server/oneshot/oneshot_front_end.h"
#include "server/pi/rpc_front_end.h"

namespace rebound::server {

namespace {

// rpc: the process's session on the pi dialect.
ModeStart start_rpc(AppParts& app) {
  auto made = process_session(app, "rpc");
  if (!made) return made.error();
  auto front = std::make_unique<RpcFrontEnd>(
      RpcFrontEndDeps{app.writer, app.options.envelope, app.scheduler, std::move(made->make),
                      std::move(made->services), std::move(made->command_seen)});
  made->set_dialogs(&front->dialogs());
  return std::unique_ptr<FrontEnd>(std::move(front));
}

// print: one run of the process's session (oneshot.md), nobody to ask. Its limits stand in
// front of every preflight and run hook; with --json-schema the structured_output tool and its
// prompt paragraph join (sections 10, 11).
ModeStart start_print(AppParts& app) {
  auto limits = std::make_shared<OneShotLimits>(app.scheduler);
  const CliOptions& o = app.options;
  SessionWrap wrap;
  wrap.preflight = [limits](session::ToolPreflight* inner) { return limits->preflight(inner); };
  wrap.run_hooks = [limits](session::RunHooks* inner) { return limits->run_hooks(inner); };
  if (o.json_schema) {
    wrap.tools = [limits, schema = o.json_schema->schema()](session::DynamicTools* inner) {
      return limits->tools(inner, schema);
    };
    wrap.prompt_tail = kStructuredPromptTail;
  }
  auto made = process_session(app, "print", std::move(wrap));
  if (!made) return made.error();
  OneShotSettings settings;
  settings.format = o.output_format;
  settings.prompt = o.prompt;
  settings.timeout_ms = o.timeout_ms;
  settings.timeout_text = o.timeout_text;
  settings.max_turns = o.max_turns;
  settings.max_budget_usd = o.max_budget_usd;
  settings.max_budget_text = o.max_budget_text;
  settings.schema_retries = o.json_schema_retries;
  settings.schema = o.json_schema;
  settings.heartbeat_ms = o.heartbeat_ms;
  settings.max_input_bytes = o.max_line_bytes;
  return std::unique_ptr<FrontEnd>(std::make_unique<OneShotFrontEnd>(
      OneShotDeps{app.writer, app.scheduler, std::move(made->make), std::move(made->services),
                  limits, std::move(made->waits), std::move(settings)}));
}

// acp: sessions as the editor opens them, each in its own cwd (workspace/session_assembly.h).
ModeStart start_acp(AppParts& app) {
  AcpSessionFactory factory =
      [&app](const std::string& cwd, session::SessionSlot slot, session::EventSink& sink,
             session::ToolRegistry& tools, std::optional<AcpLoadedFile> load,
             const protocol::Json& mcp_servers, session::DynamicTools* mcp_tools,
             session::DialogHost* dialogs) -> session::Result<AcpSessionParts> {
    OpenRequest request{cwd, slot, sink, tools, std::nullopt, mcp_servers, mcp_tools, dialogs};
    if (load) request.load.emplace(std::move(load->file), std::move(load->loaded));
    auto opened = open_session(app, std::move(request));
    if (!opened) return opened.error();
    std::shared_ptr<session::PolicyControl> policy;
    if (opened->services->policy()) policy = {opened->services, opened->services->policy()};
    return AcpSessionParts{std::move(opened->keep), std::move(opened->services),
                           std::move(opened->session), opened->offered, std::move(policy)};
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
      AcpOptions{app.options.no_session, REBOUND_VERSION}, std::move(factory), std::move(loader),
      [&writer = app.writer](const protocol::Json& j) { writer.write_line(protocol::to_line(j)); },
      app.tools.registry, app.scheduler, &app.tools.files));
}

}  // namespace

const std::vector<Mode>& modes() {
  static const std::vector<Mode> all{
      {"rpc", start_rpc},
      // A connection has several sessions; one file cannot name them (acp.md section 2).
      {"acp", start_acp, "the editor opens sessions with session/new and session/load", true},
      // -p / --print / --mode json (oneshot.md); not a --mode name of its own.
      {"print", start_print, {}, false, true},
  };
  return all;
}

std::vector<std::string> mode_names() {
  std::vector<std::string> names;
  for (const auto& m : modes())
    if (!m.internal) names.emplace_back(m.name);
  names.emplace_back("json");  // pi's spelling of -p --output-format stream-json
  return names;
}

const Mode* find_mode(std::string_view name) {
  for (const auto& m : modes())
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace rebound::server
