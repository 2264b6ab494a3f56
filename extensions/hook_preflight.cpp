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

// What every event's hooks may do besides their decision, as far as the session acts on it:
// failures reported, warnings logged, continue:false returned.
bool apply_effects(const HookFailureReport& report, HookEvent event, const HookEffects& effects) {
  report_hook_failures(report, event, effects.failures);
  for (const auto& w : effects.warnings)
    spdlog::warn("{}", w);
  // Not carried yet (extensions.md section 6): notices to the client. Logged so that nothing is
  // silently lost.
  for (const auto& n : effects.notices)
    spdlog::info("{}", n);
  if (effects.stop)
    spdlog::warn("Operation stopped by hook{}",
                 effects.stop_reason ? ": " + *effects.stop_reason : std::string());
  return effects.stop;
}

// The custom messages of the notes (section 3.9): details hookEvent, command, toolCallId.
std::vector<session::ContextNote> context_notes(HookEvent event, const std::string& call_id,
                                                std::vector<HookNote> notes) {
  std::vector<session::ContextNote> out;
  for (auto& n : notes) {
    Json details = Json::object();
    details["hookEvent"] = event_name(event);
    details["command"] = n.command;
    details["toolCallId"] = call_id;
    out.emplace_back("hook", std::move(n.text), std::move(details));
  }
  return out;
}

}  // namespace

std::unique_ptr<session::Waiting> HookPreflight::check(
    const session::PreflightCall& call, std::function<void(session::PreflightVerdict)> done) {
  Json fields = Json::object();
  fields["tool_name"] = call.name;
  fields["tool_input"] = call.input;
  fields["tool_use_id"] = call.id;
  const auto id = start_awaited_hooks(
      runner_, config_, HookEvent::pre_tool_use, call.name, info_(), fields, report_,
      [report = report_, tool = call.name, call_id = call.id,
       done = std::move(done)](std::vector<HookResult> results) {
        PreToolUseOutcome o = decide_pre_tool_use(tool, results);
        session::PreflightVerdict verdict;
        verdict.stop_run = apply_effects(report, HookEvent::pre_tool_use, o.effects);
        verdict.context = context_notes(HookEvent::pre_tool_use, call_id, std::move(o.context));
        if (o.permission == PreToolUseOutcome::Permission::deny) {
          verdict.refused = session::ToolResult::error(o.result);
        } else if (o.updated_input) {
          verdict.input = *o.updated_input;
        }
        done(std::move(verdict));
      });
  if (!id) return nullptr;
  return std::make_unique<HookWait>(runner_, *id);
}

std::unique_ptr<session::Waiting> HookPreflight::after_call(
    const session::FinishedCall& call, std::function<void(session::AfterCallVerdict)> done) {
  const HookEvent event =
      call.result.is_error ? HookEvent::post_tool_use_failure : HookEvent::post_tool_use;
  if (!has_hooks(config_, event)) return nullptr;
  Json fields = Json::object();
  fields["tool_name"] = call.name;
  fields["tool_input"] = call.input;
  if (event == HookEvent::post_tool_use) {
    fields["tool_response"] = session::tool_result_json(call.result);
    fields["tool_use_id"] = call.id;
  } else {
    fields["tool_use_id"] = call.id;
    std::string error;
    for (const auto& b : call.result.content) {
      if (b.kind != protocol::ContentBlock::Kind::text) continue;
      error += (error.empty() ? "" : "\n") + b.text;
    }
    fields["error"] = std::move(error);
    fields["is_interrupt"] = false;  // an aborted call starts no hook
  }
  fields["duration_ms"] = call.duration_ms;
  const auto id = start_awaited_hooks(
      runner_, config_, event, call.name, info_(), fields, report_,
      [report = report_, event, tool = call.name, call_id = call.id,
       done = std::move(done)](std::vector<HookResult> results) {
        PostToolUseOutcome o = decide_post_tool_use(event, tool, results);
        session::AfterCallVerdict verdict;
        verdict.stop_run = apply_effects(report, event, o.effects);
        verdict.context = context_notes(event, call_id, std::move(o.context));
        done(std::move(verdict));
      });
  if (!id) return nullptr;
  return std::make_unique<HookWait>(runner_, *id);
}

}  // namespace rebound::extensions
