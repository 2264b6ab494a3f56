#include "workspace/hook_setup.h"

#include <spdlog/spdlog.h>

#include "config/json_file.h"
#include "extensions/hook_calls.h"
#include "server/events/pi_encoder.h"

namespace rebound::server {

namespace fs = std::filesystem;
using protocol::Json;

namespace {

std::size_t count_handlers(const Json& hooks) {
  std::size_t n = 0;
  if (!hooks.is_object()) return 0;
  for (const auto& [event, groups] : hooks.items()) {
    if (!groups.is_array()) continue;
    for (const auto& g : groups)
      n += g.is_object() && g.contains("hooks") && g["hooks"].is_array() ? g["hooks"].size() : 0;
  }
  return n;
}

}  // namespace

HookSetup read_hook_setup(const workspace::ServiceFlags& options,
                          const config::SettingsPair& files) {
  const Json& global = files.global;
  const Json& project = files.project;
  const bool trusted = files.trusted;
  const std::string global_file = files.global_file.string();
  const std::string project_file = files.project_file.string();
  HookSetup out;
  std::vector<std::string> warnings;
  out.runner = extensions::read_runner_settings(
      config::settings_member(global, "extensionRunner"),
      trusted ? config::settings_member(project, "extensionRunner") : Json(), warnings);
  const Json project_hooks = config::settings_member(project, "hooks");
  out.config = extensions::read_hooks(
      {extensions::HookSettings(config::settings_member(global, "hooks"),
                                extensions::HookSource::user, global_file, true,
                                options.no_extensions),
       extensions::HookSettings(project_hooks, extensions::HookSource::project, project_file,
                                trusted, options.no_extensions)},
      out.runner.hook_timeout_ms);
  for (const auto& w : warnings)
    spdlog::warn("{}", w);
  for (const auto& w : out.config.warnings)
    spdlog::warn("{}", w);
  // One warning for both kinds (extensions.md section 1.1).
  const std::size_t untrusted = count_handlers(project_hooks);
  const Json project_extensions = config::settings_member(project, "extensions");
  const std::size_t extensions = project_extensions.is_object() ? project_extensions.size() : 0;
  if (!trusted && !options.no_extensions && untrusted + extensions > 0)
    spdlog::warn(
        "extensions: {} defines {} hooks and {} extensions; not run (project extensions need {})",
        project_file, untrusted, extensions, files.trust_hint());
  return out;
}

void HookObserver::on_event(const session::Event& event) {
  next_.on_event(event);
  if (std::holds_alternative<session::ev::AutoRetryStart>(event.body)) {
    run_hooks(extensions::HookEvent::auto_retry_start, event);
  } else if (std::holds_alternative<session::ev::AutoRetryEnd>(event.body)) {
    run_hooks(extensions::HookEvent::auto_retry_end, event);
  }
}

void HookObserver::run_hooks(extensions::HookEvent event, const session::Event& cause) {
  if (!session_ || !extensions::has_hooks(config_, event)) return;
  // The causing event's fields, in its order, after the common prefix (section 3.4).
  Json fields = pi_event_json(cause);
  fields.erase("type");
  extensions::run_observer_hooks(
      runner_, config_, event, {},
      extensions::HookSessionInfo{session_->session_id(), session_->session_file(), cwd_,
                                  session_->prompt_id()},
      fields, report_);
}

SessionHooks::SessionHooks(boost::asio::any_io_executor executor, session::Scheduler& scheduler,
                           std::shared_ptr<const HookSetup> setup, std::string cwd,
                           std::vector<std::string> env, session::EventSink& next,
                           extensions::HookReport report)
    : setup_(std::move(setup)),
      cwd_(std::move(cwd)),
      report_(std::move(report)),
      runner_(std::move(executor), scheduler,
              extensions::HookEnvironment(cwd_, std::move(env), std::string())),
      observer_(next, setup_->config, runner_, cwd_, report_),
      scheduler_(scheduler) {}

void SessionHooks::attach(session::AgentSession& session, std::string_view source) {
  observer_.set_session(&session);
  using extensions::HookEvent;
  const auto has = [this](HookEvent e) { return extensions::has_hooks(setup_->config, e); };
  auto info = [s = &session, cwd = cwd_, mode = permission_mode_] {
    extensions::HookSessionInfo i{s->session_id(), s->session_file(), cwd, s->prompt_id()};
    if (mode) i.permission_mode = mode();
    return i;
  };
  // The tool events' hooks, and Notification's permission_prompt (the policy gate's question).
  if (has(HookEvent::pre_tool_use) || has(HookEvent::permission_request) ||
      has(HookEvent::post_tool_use) || has(HookEvent::post_tool_use_failure) ||
      has(HookEvent::notification)) {
    preflight_ =
        std::make_unique<extensions::HookPreflight>(setup_->config, runner_, info, report_);
    session.set_tool_preflight(preflight_.get());
  }
  // With any hook configured: also what kills the running hooks at shutdown.
  if (setup_->config.handlers.empty()) return;
  run_hooks_ = std::make_unique<extensions::HookRunHooks>(setup_->config, runner_, scheduler_, info,
                                                          report_, setup_->runner);
  session.set_run_hooks(run_hooks_.get());
  // Before any command: the first LLM request waits for its texts (extensions.md 3.9).
  session.start_session_hooks(source);
}

}  // namespace rebound::server
