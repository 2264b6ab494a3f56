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
  if (info.prompt_id) j["prompt_id"] = *info.prompt_id;
  if (carries_permission_mode(event)) j["permission_mode"] = info.permission_mode;
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

void report_hook_failures(const HookReport& report, HookEvent event,
                          const std::vector<std::pair<std::string, std::string>>& failures) {
  for (const auto& [command, failure] : failures) {
    spdlog::warn("hook[{}] {}: {}", event_name(event), command, failure);
    if (report.failure) report.failure("hook:" + command, event_name(event), failure);
  }
}

namespace {

void start_observers(HookRunner& runner, HookEvent event, std::vector<const HookHandler*> handlers,
                     const HookSessionInfo& info, const Json& fields, const HookReport& report) {
  if (handlers.empty()) return;
  start_hooks(runner, event, std::move(handlers), info, fields,
              [event, report](std::vector<HookResult> results) {
                // An observer's only effect is its systemMessage (section 3.7).
                apply_hook_effects(report, event, hook_effects(event, {}, results));
              });
}

}  // namespace

std::optional<std::uint64_t> start_awaited_hooks(
    HookRunner& runner, const HookConfig& config, HookEvent event, std::string_view subject,
    const HookSessionInfo& info, const Json& fields, const HookReport& report,
    std::function<void(std::vector<HookResult>)> done) {
  std::vector<const HookHandler*> awaited, observers;
  for (const HookHandler* h : handlers_for(config, event, subject))
    (h->async ? observers : awaited).push_back(h);
  start_observers(runner, event, std::move(observers), info, fields, report);
  if (awaited.empty()) return std::nullopt;
  return start_hooks(runner, event, std::move(awaited), info, fields, std::move(done));
}

void run_observer_hooks(HookRunner& runner, const HookConfig& config, HookEvent event,
                        std::string_view subject, const HookSessionInfo& info, const Json& fields,
                        const HookReport& report) {
  start_observers(runner, event, handlers_for(config, event, subject), info, fields, report);
}

namespace {

class HookWait : public session::Waiting {
 public:
  HookWait(HookRunner& runner, std::uint64_t id) : runner_(runner), id_(id) {}
  ~HookWait() override { runner_.cancel(id_); }

 private:
  HookRunner& runner_;
  std::uint64_t id_;
};

}  // namespace

std::unique_ptr<session::Waiting> hook_wait(HookRunner& runner, std::uint64_t id) {
  return std::make_unique<HookWait>(runner, id);
}

std::optional<std::string> apply_hook_effects(const HookReport& report, HookEvent event,
                                              const HookEffects& effects) {
  report_hook_failures(report, event, effects.failures);
  for (const auto& w : effects.warnings)
    spdlog::warn("{}", w);
  const auto notify = [&report](std::string_view type, const std::string& text) {
    spdlog::info("hook notice ({}): {}", type, text);
    if (report.notice) report.notice(type, text);
  };
  for (const auto& n : effects.notices)
    notify("info", n);
  // Only a tool event's continue:false stops a run; UserPromptSubmit's is its refusal, Stop's
  // lets a run end that was ending, SessionStart's and PreCompact's are ignored.
  if (!effects.stop || !is_tool_event(event)) return std::nullopt;
  std::string text = "Operation stopped by hook" +
                     (effects.stop_reason ? ": " + *effects.stop_reason : std::string());
  notify("warning", text);
  return text;
}

std::vector<session::ContextNote> context_notes(HookEvent event, std::vector<HookNote> notes,
                                                const std::string& call_id) {
  std::vector<session::ContextNote> out;
  for (auto& n : notes) {
    Json details = Json::object();
    details["hookEvent"] = event_name(event);
    details["command"] = n.command;
    if (!call_id.empty()) details["toolCallId"] = call_id;
    out.emplace_back("hook", std::move(n.text), std::move(details));
  }
  return out;
}

}  // namespace rebound::extensions
