#include "extensions/hook_decisions.h"

namespace rebound::extensions {

using protocol::Json;

HookEffects hook_effects(HookEvent event, std::string_view tool,
                         const std::vector<HookResult>& results) {
  HookEffects e;
  const std::string who =
      std::string(event_name(event)) + (tool.empty() ? "" : ":" + std::string(tool));
  for (const auto& r : results) {
    const HookVerdict& v = r.verdict;
    if (v.kind == HookVerdict::Kind::failed) {
      e.failures.emplace_back(r.handler->command, v.failure);
      continue;
    }
    if (!v.json) continue;
    if (v.json->system_message) e.notices.push_back(who + " says: " + *v.json->system_message);
    // An observer's (an async handler's too) continue is never read.
    if (is_awaited(event) && !r.handler->async && v.json->continue_run == false) {
      e.stop = true;
      if (!e.stop_reason && v.json->stop_reason && !v.json->stop_reason->empty())
        e.stop_reason = v.json->stop_reason;
    }
  }
  return e;
}

PreToolUseOutcome decide_pre_tool_use(std::string_view tool,
                                      const std::vector<HookResult>& results) {
  using Permission = PreToolUseOutcome::Permission;
  PreToolUseOutcome o;
  o.effects = hook_effects(HookEvent::pre_tool_use, tool, results);
  const std::string prefix = "PreToolUse:" + std::string(tool) + " hook ";
  std::vector<std::string> blocks;
  bool ask = false, allow = false;
  for (const auto& r : results) {
    const HookVerdict& v = r.verdict;
    if (v.kind == HookVerdict::Kind::blocking) {
      blocks.push_back(prefix + "error: [" + r.handler->command + "]: " + v.stderr_text);
      continue;
    }
    if (v.kind != HookVerdict::Kind::success || !v.json) continue;
    const HookJson& j = *v.json;
    const std::string decision = j.permission_decision.value_or(
        j.decision == "block" ? "deny" : (j.decision == "approve" ? "allow" : ""));
    if (decision == "deny") {
      const auto& why = j.permission_decision ? j.permission_decision_reason : j.reason;
      blocks.push_back(prefix + "error: " + why.value_or(""));
    } else if (decision == "ask") {
      if (!ask && j.permission_decision_reason) o.reason = *j.permission_decision_reason;
      ask = true;
    } else if (decision == "allow") {
      allow = true;
    }
    if (j.updated_input) {
      if (!o.updated_input) {
        o.updated_input = j.updated_input;
      } else {
        o.effects.warnings.push_back("hook[PreToolUse] " + r.handler->command +
                                     ": updatedInput ignored (an earlier hook's applies)");
      }
    }
    if (j.additional_context)
      o.context.emplace_back(r.handler->command,
                             prefix + "additional context: " + *j.additional_context);
  }
  if (!blocks.empty()) {
    o.permission = Permission::deny;
    for (std::size_t i = 0; i < blocks.size(); ++i)
      o.result += (i ? "\n" : "") + blocks[i];
  } else if (ask) {
    o.permission = Permission::ask;
  } else if (allow) {
    o.permission = Permission::allow;
  }
  return o;
}

PermissionRequestOutcome decide_permission_request(std::string_view tool,
                                                   const std::vector<HookResult>& results) {
  using Behavior = PermissionRequestOutcome::Behavior;
  PermissionRequestOutcome o;
  o.effects = hook_effects(HookEvent::permission_request, tool, results);
  const std::string prefix = "PermissionRequest:" + std::string(tool) + " hook ";
  std::vector<std::string> refusals;
  for (const auto& r : results) {
    const HookVerdict& v = r.verdict;
    if (v.kind == HookVerdict::Kind::blocking) {
      refusals.push_back(prefix + "error: [" + r.handler->command + "]: " + v.stderr_text);
      continue;
    }
    if (v.kind != HookVerdict::Kind::success || !v.json || !v.json->behavior) continue;
    if (*v.json->behavior == "deny") {
      refusals.push_back(v.json->message.value_or("Permission denied by PermissionRequest hook"));
      o.interrupt = o.interrupt || v.json->interrupt.value_or(false);
    } else if (o.behavior == Behavior::none) {
      o.behavior = Behavior::allow;
      o.updated_input = v.json->permission_updated_input;
    }
  }
  if (!refusals.empty()) {
    o.behavior = Behavior::deny;
    o.updated_input.reset();
    for (std::size_t i = 0; i < refusals.size(); ++i)
      o.text += (i ? "\n" : "") + refusals[i];
  }
  return o;
}

PostToolUseOutcome decide_post_tool_use(HookEvent event, std::string_view tool,
                                        const std::vector<HookResult>& results) {
  PostToolUseOutcome o;
  o.effects = hook_effects(event, tool, results);
  const std::string prefix = std::string(event_name(event)) + ":" + std::string(tool) + " hook ";
  for (const auto& r : results) {
    const HookVerdict& v = r.verdict;
    const std::string& command = r.handler->command;
    const std::string blocking = prefix + "blocking error from command: \"" + command + "\": ";
    if (v.kind == HookVerdict::Kind::blocking) {
      o.context.emplace_back(command, blocking + "[" + command + "]: " + v.stderr_text);
      continue;
    }
    if (v.kind != HookVerdict::Kind::success || !v.json) continue;
    if (v.json->decision == "block")
      o.context.emplace_back(command, blocking + v.json->reason.value_or(""));
    if (v.json->additional_context)
      o.context.emplace_back(command,
                             prefix + "additional context: " + *v.json->additional_context);
  }
  return o;
}

StopOutcome decide_stop(const std::vector<HookResult>& results) {
  StopOutcome o;
  o.effects = hook_effects(HookEvent::stop, {}, results);
  for (const auto& r : results) {
    const HookVerdict& v = r.verdict;
    const std::string& command = r.handler->command;
    const std::size_t before = o.context.size();
    if (v.kind == HookVerdict::Kind::blocking) {
      o.context.emplace_back(command, "Stop hook feedback:\n[" + command + "]: " + v.stderr_text);
    } else if (v.kind == HookVerdict::Kind::success && v.json) {
      if (v.json->decision == "block")
        o.context.emplace_back(command, "Stop hook feedback:\n" + v.json->reason.value_or(""));
      if (v.json->additional_context)
        o.context.emplace_back(command,
                               "Stop hook additional context: " + *v.json->additional_context);
    }
    if (o.context.size() > before && o.first_blocking.empty()) o.first_blocking = command;
  }
  // continue:false only keeps the run from being continued (the run was ending anyway).
  o.continue_run = !o.context.empty() && !o.effects.stop;
  return o;
}

PromptOutcome decide_user_prompt_submit(const std::vector<HookResult>& results) {
  PromptOutcome o;
  o.effects = hook_effects(HookEvent::user_prompt_submit, {}, results);
  const std::string blocked = "UserPromptSubmit operation blocked by hook:\n";
  std::vector<std::string> refusals;
  for (const auto& r : results) {
    const HookVerdict& v = r.verdict;
    const std::string& command = r.handler->command;
    if (v.kind == HookVerdict::Kind::blocking) {
      refusals.push_back(blocked + "[" + command + "]: " + v.stderr_text);
      continue;
    }
    if (v.kind != HookVerdict::Kind::success) continue;
    if (!v.json) {
      if (!v.plain.empty())
        o.context.emplace_back(command, "UserPromptSubmit hook success: " + v.plain);
      continue;
    }
    if (v.json->continue_run == false) {
      const auto& why = v.json->stop_reason;
      refusals.push_back("Operation stopped by hook" +
                         (why && !why->empty() ? ": " + *why : std::string()));
    } else if (v.json->decision == "block") {
      refusals.push_back(blocked + v.json->reason.value_or(""));
    }
    if (v.json->additional_context)
      o.context.emplace_back(
          command, "UserPromptSubmit hook additional context: " + *v.json->additional_context);
  }
  if (!refusals.empty()) {
    std::string text;
    for (std::size_t i = 0; i < refusals.size(); ++i)
      text += (i ? "\n" : "") + refusals[i];
    o.refused = std::move(text);
    o.context.clear();
  }
  return o;
}

SessionStartOutcome decide_session_start(std::string_view source,
                                         const std::vector<HookResult>& results) {
  SessionStartOutcome o;
  o.effects = hook_effects(HookEvent::session_start, {}, results);
  o.effects.stop = false;  // ignored from SessionStart (section 3.7)
  for (const auto& r : results) {
    const HookVerdict& v = r.verdict;
    if (v.kind == HookVerdict::Kind::blocking) {
      o.effects.warnings.push_back("hook[SessionStart] " + r.handler->command +
                                   ": exit 2 has no effect here: " + v.stderr_text);
      continue;
    }
    if (v.kind != HookVerdict::Kind::success) continue;
    if (!v.json) {
      if (!v.plain.empty())
        o.texts.push_back("SessionStart:" + std::string(source) + " hook success: " + v.plain);
    } else if (v.json->additional_context) {
      o.texts.push_back("SessionStart hook additional context: " + *v.json->additional_context);
    }
  }
  return o;
}

PreCompactOutcome decide_pre_compact(const std::vector<HookResult>& results) {
  PreCompactOutcome o;
  o.effects = hook_effects(HookEvent::pre_compact, {}, results);
  o.effects.stop = false;  // ignored from PreCompact (section 3.7)
  const std::string blocked = "Compaction blocked by PreCompact hook: ";
  std::vector<std::string> refusals;
  for (const auto& r : results) {
    const HookVerdict& v = r.verdict;
    if (v.kind == HookVerdict::Kind::blocking) {
      refusals.push_back(blocked + "[" + r.handler->command + "]: " + v.stderr_text);
    } else if (v.kind == HookVerdict::Kind::success && v.json && v.json->decision == "block") {
      refusals.push_back(blocked + v.json->reason.value_or(""));
    } else if (v.kind == HookVerdict::Kind::success && !v.json && !v.plain.empty()) {
      o.instructions.push_back(v.plain);
    }
  }
  if (!refusals.empty()) {
    std::string text;
    for (std::size_t i = 0; i < refusals.size(); ++i)
      text += (i ? "\n" : "") + refusals[i];
    o.refused = std::move(text);
  }
  return o;
}

}  // namespace rebound::extensions
