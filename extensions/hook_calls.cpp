#include "extensions/hook_calls.h"

#include <spdlog/spdlog.h>

#include "protocol/json_line.h"

namespace rebound::extensions {

using protocol::Json;

Json hook_input_prefix(const HookSessionInfo& info, HookEvent event) {
  Json j = Json::object();
  j["session_id"] = info.session_id;
  if (info.transcript_path) j["transcript_path"] = *info.transcript_path;
  j["cwd"] = info.cwd;
  // No permission policy yet (policy.md): the mode is the one of nothing configured.
  if (carries_permission_mode(event)) j["permission_mode"] = "bypassPermissions";
  j["hook_event_name"] = event_name(event);
  return j;
}

std::uint64_t start_hooks(HookRunner& runner, HookEvent event,
                          std::vector<const HookHandler*> handlers, const HookSessionInfo& info,
                          const Json& fields, std::function<void(std::vector<HookResult>)> done) {
  Json input = hook_input_prefix(info, event);
  for (const auto& [key, value] : fields.items())
    input[key] = value;
  std::string line = protocol::to_line(input);
  line.pop_back();  // the runner writes the LF
  runner.set_session_id(info.session_id);
  const auto started = handlers;  // the run's argument; `handlers` moves into its answer
  return runner.run(
      event, started, line,
      [event, handlers = std::move(handlers), done = std::move(done)](std::vector<HookRun> runs) {
        std::vector<HookResult> results;
        for (std::size_t i = 0; i < runs.size() && i < handlers.size(); ++i)
          results.emplace_back(*handlers[i], read_hook_run(event, runs[i]));
        done(std::move(results));
      });
}

void log_hook_failures(HookEvent event,
                       const std::vector<std::pair<std::string, std::string>>& failures) {
  for (const auto& [command, failure] : failures)
    spdlog::warn("hook[{}] {}: {}", event_name(event), command, failure);
}

void run_observer_hooks(HookRunner& runner, const HookConfig& config, HookEvent event,
                        const HookSessionInfo& info, const Json& fields) {
  auto handlers = handlers_for(config, event);
  if (handlers.empty()) return;
  start_hooks(runner, event, std::move(handlers), info, fields,
              [event](std::vector<HookResult> results) {
                log_hook_failures(event, hook_effects(event, {}, results).failures);
              });
}

}  // namespace rebound::extensions
