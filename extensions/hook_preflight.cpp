#include "extensions/hook_preflight.h"

#include "extensions/hook_decisions.h"

namespace rebound::extensions {

using protocol::Json;

namespace {

// A call as PreToolUse and PermissionRequest hooks read it on stdin (section 3.4).
Json call_fields(const session::PreflightCall& call) {
  Json fields = Json::object();
  fields["tool_name"] = call.name;
  fields["tool_input"] = call.input;
  fields["tool_use_id"] = call.id;
  if (!call.mcp_server.empty()) fields["mcp_server"] = Json{{"name", call.mcp_server}};
  if (!call.extension.empty()) fields["extension"] = Json{{"name", call.extension}};
  return fields;
}

}  // namespace

std::unique_ptr<session::Waiting> HookPreflight::check(
    const session::PreflightCall& call, std::function<void(session::PreflightVerdict)> done) {
  const Json fields = call_fields(call);
  const auto id = start_awaited_hooks(
      runner_, config_, HookEvent::pre_tool_use, call.name, info_(), fields, report_,
      [report = report_, tool = call.name, call_id = call.id,
       done = std::move(done)](std::vector<HookResult> results) {
        PreToolUseOutcome o = decide_pre_tool_use(tool, results);
        session::PreflightVerdict verdict;
        verdict.stop_run = apply_hook_effects(report, HookEvent::pre_tool_use, o.effects);
        verdict.context = context_notes(HookEvent::pre_tool_use, std::move(o.context), call_id);
        if (o.permission == PreToolUseOutcome::Permission::deny) {
          verdict.refused = session::ToolResult::error(o.result);
        } else if (o.updated_input) {
          verdict.input = *o.updated_input;
        }
        // An allow or ask counts as a matching rule of the permission policy (policy.md 4.3).
        if (o.permission == PreToolUseOutcome::Permission::allow)
          verdict.hook_permission = session::HookPermission::allow;
        if (o.permission == PreToolUseOutcome::Permission::ask) {
          verdict.hook_permission = session::HookPermission::ask;
          verdict.hook_reason = o.reason;
        }
        done(std::move(verdict));
      });
  if (!id) return nullptr;
  return hook_wait(runner_, *id);
}

std::unique_ptr<session::Waiting> HookPreflight::permission_request(
    const session::PreflightCall& call, std::function<void(session::PermissionHookVerdict)> done) {
  if (!has_hooks(config_, HookEvent::permission_request)) return nullptr;
  const Json fields = call_fields(call);
  const auto id = start_awaited_hooks(
      runner_, config_, HookEvent::permission_request, call.name, info_(), fields, report_,
      [report = report_, tool = call.name,
       done = std::move(done)](std::vector<HookResult> results) {
        PermissionRequestOutcome o = decide_permission_request(tool, results);
        session::PermissionHookVerdict verdict;
        verdict.stop_run = apply_hook_effects(report, HookEvent::permission_request, o.effects);
        switch (o.behavior) {
          case PermissionRequestOutcome::Behavior::none:
            break;
          case PermissionRequestOutcome::Behavior::allow:
            verdict.kind = session::PermissionHookVerdict::Kind::allow;
            verdict.input = std::move(o.updated_input);
            break;
          case PermissionRequestOutcome::Behavior::deny:
            verdict.kind = session::PermissionHookVerdict::Kind::deny;
            verdict.text = std::move(o.text);
            if (o.interrupt && !verdict.stop_run) verdict.stop_run = verdict.text;
            break;
        }
        done(std::move(verdict));
      });
  if (!id) return nullptr;
  return hook_wait(runner_, *id);
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
  if (!call.mcp_server.empty()) fields["mcp_server"] = Json{{"name", call.mcp_server}};
  if (!call.extension.empty()) fields["extension"] = Json{{"name", call.extension}};
  const auto id =
      start_awaited_hooks(runner_, config_, event, call.name, info_(), fields, report_,
                          [report = report_, event, tool = call.name, call_id = call.id,
                           done = std::move(done)](std::vector<HookResult> results) {
                            PostToolUseOutcome o = decide_post_tool_use(event, tool, results);
                            session::AfterCallVerdict verdict;
                            verdict.stop_run = apply_hook_effects(report, event, o.effects);
                            verdict.context = context_notes(event, std::move(o.context), call_id);
                            done(std::move(verdict));
                          });
  if (!id) return nullptr;
  return hook_wait(runner_, *id);
}

void HookPreflight::question_put(const std::string& tool_name) {
  if (!has_hooks(config_, HookEvent::notification)) return;
  Json fields = Json::object();
  fields["message"] = "Rebound needs your permission to use " + tool_name;
  fields["notification_type"] = "permission_prompt";
  run_observer_hooks(runner_, config_, HookEvent::notification, "permission_prompt", info_(),
                     fields, report_);
}

}  // namespace rebound::extensions
