#include "workspace/session_factory.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>

#include "config/prompt_discovery.h"
#include "session/session_id.h"
#include "workspace/export_setup.h"
#include "workspace/tool_setup.h"

namespace rebound::server {

namespace fs = std::filesystem;

std::shared_ptr<SessionFiles> SessionFactory::files_for(const fs::path& cwd) const {
  std::error_code ec;
  const workspace::ServiceFlags& o = deps_.options;
  return std::make_shared<SessionFiles>(
      deps_.agent_dir, cwd,
      config::SessionStorageOptions{
          deps_.agent_dir, fs::absolute(cwd, ec),
          o.session_dir ? std::optional(fs::absolute(*o.session_dir, ec)) : std::nullopt,
          o.no_session, &deps_.scheduler});
}

std::function<void()> SessionFactory::load_by_id(std::shared_ptr<SessionFiles> files,
                                                 const std::string& id,
                                                 std::function<void(LoadedById)> done) const {
  auto file = files->storage.find_session_file(id);
  if (!file) {
    done(session::Error{session::ErrorKind::not_found, "session " + id});
    return [] {};
  }
  std::weak_ptr<SessionFiles> weak = files;
  // `files` rides with the read: its storage (and the read's thread) lives until the answer.
  files->storage.load_async(*file, [files, path = *file, done = std::move(done)](
                                       session::Result<session::LoadedSession> read) {
    if (!read) return done(session::failure(read.error().message));
    auto& loaded = *read;
    for (const auto& w : loaded.warnings)
      spdlog::warn("{}: {}", path, w);
    done(std::pair{path, std::move(loaded)});
  });
  return [weak] {
    if (auto f = weak.lock()) f->storage.cancel_loads();
  };
}

std::unique_ptr<session::AgentSession> SessionFactory::make(SessionSpec spec,
                                                            SessionFiles& files) const {
  const workspace::ServiceFlags& o = deps_.options;
  std::string id = spec.loaded ? spec.loaded->header.id : session::new_session_id();
  const std::vector<std::string>& active =
      spec.active_tools ? *spec.active_tools : deps_.active_tools;
  const bool read_active = std::find(active.begin(), active.end(), "read") != active.end();
  auto prompt = [o = &o, active, agent_dir = deps_.agent_dir, cwd = spec.cwd, read_active,
                 guideline = spec.guideline.value_or(deps_.guideline),
                 tail = spec.prompt_tail](const std::string& base, const std::string& skills) {
    // The skills block needs the read tool (sessions.md section 10.3).
    return system_prompt_for(base, active, !o->no_context_files, agent_dir, cwd,
                             read_active ? skills : std::string(), guideline) +
           tail;
  };
  auto scan = [o = &o, agent_dir = deps_.agent_dir, cwd = spec.cwd](
                  const session::Settings& settings, std::vector<std::string>& warnings) {
    const char* home = std::getenv("HOME");
    auto found = config::discover_prompts(config::PromptPlaces{
        cwd, agent_dir, home && *home ? fs::path(home) : fs::path(), settings.prompts,
        settings.skills, o->no_prompt_templates, o->no_skills});
    warnings = std::move(found.warnings);
    return std::move(found.library);
  };
  return std::make_unique<session::AgentSession>(
      session::SessionOptions{deps_.providers.start_model, std::move(id), deps_.providers.has_key,
                              std::move(spec.file), std::move(spec.loaded),
                              deps_.providers.settings_choose, spec.slot},
      deps_.providers.models,
      session::SessionDeps{deps_.scheduler, spec.events, deps_.providers.router, deps_.credentials,
                           files.settings, files.storage, deps_.shell, spec.tools,
                           std::move(prompt), &deps_.jitter, spec.dynamic_tools, deps_.secrets,
                           std::move(scan), config::read_prompt_file, write_html_export});
}

}  // namespace rebound::server
