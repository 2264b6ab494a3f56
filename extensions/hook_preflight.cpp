#include "extensions/hook_preflight.h"

#include <spdlog/spdlog.h>

#include "extensions/hook_decisions.h"

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

std::unique_ptr<session::Waiting> HookPreflight::check(
    const session::PreflightCall& call, std::function<void(session::PreflightVerdict)> done) {
  Json fields = Json::object();
  fields["tool_name"] = call.name;
  fields["tool_input"] = call.input;
  fields["tool_use_id"] = call.id;
  const std::uint64_t id = start_hooks(
      runner_, HookEvent::pre_tool_use, handlers_for(config_, HookEvent::pre_tool_use, call.name),
      info_(), fields, [tool = call.name, done = std::move(done)](std::vector<HookResult> results) {
        const PreToolUseOutcome o = decide_pre_tool_use(tool, results);
        log_hook_failures(HookEvent::pre_tool_use, o.effects.failures);
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
