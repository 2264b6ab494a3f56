#include "extensions/hook_preflight.h"

#include <spdlog/spdlog.h>

#include "extensions/hook_decisions.h"
#include "protocol/json_line.h"

namespace rebound::extensions {

using protocol::Json;

namespace {

// A check's hooks, killed when the session drops the wait (an abort).
class HookWait : public session::Waiting {
 public:
  HookWait(HookRunner& runner, std::uint64_t id) : runner_(runner), id_(id) {}
  ~HookWait() override { runner_.cancel(id_); }

 private:
  HookRunner& runner_;
  std::uint64_t id_;
};

}  // namespace

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

std::unique_ptr<session::Waiting> HookPreflight::check(
    const session::PreflightCall& call, std::function<void(session::PreflightVerdict)> done) {
  const auto handlers = handlers_for(config_, HookEvent::pre_tool_use, call.name);
  const HookSessionInfo info = info_();
  Json input = hook_input_prefix(info, HookEvent::pre_tool_use);
  input["tool_name"] = call.name;
  input["tool_input"] = call.input;
  input["tool_use_id"] = call.id;
  std::string line = protocol::to_line(input);
  line.pop_back();  // the runner writes the LF
  runner_.set_session_id(info.session_id);
  const std::uint64_t id = runner_.run(
      HookEvent::pre_tool_use, handlers, line,
      [handlers, tool = call.name, done = std::move(done)](std::vector<HookRun> runs) {
        std::vector<HookResult> results;
        for (std::size_t i = 0; i < runs.size() && i < handlers.size(); ++i)
          results.emplace_back(*handlers[i], read_hook_run(HookEvent::pre_tool_use, runs[i]));
        const PreToolUseOutcome o = decide_pre_tool_use(tool, results);
        for (const auto& [command, failure] : o.effects.failures)
          spdlog::warn("hook[PreToolUse] {}: {}", command, failure);
        for (const auto& w : o.effects.warnings)
          spdlog::warn("{}", w);
        // Not carried yet (the next steps of extensions.md): notices to the client, context
        // messages for the model, continue:false. Logged so that nothing is silently lost.
        for (const auto& n : o.effects.notices)
          spdlog::info("{}", n);
        for (const auto& c : o.context)
          spdlog::info("hook context not yet given to the model: {}", c);
        if (o.effects.stop)
          spdlog::warn("hook[PreToolUse]: continue:false is not acted on yet ({})",
                       o.effects.stop_reason.value_or(""));
        session::PreflightVerdict verdict;
        if (o.permission == PreToolUseOutcome::Permission::deny) {
          verdict.refused = session::ToolResult::error(o.result);
        } else if (o.updated_input) {
          verdict.input = *o.updated_input;
        }
        done(std::move(verdict));
      });
  return std::make_unique<HookWait>(runner_, id);
}

}  // namespace rebound::extensions
