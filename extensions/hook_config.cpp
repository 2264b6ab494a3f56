#include "extensions/hook_config.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "protocol/name_table.h"
#include "tools/regex.h"

namespace rebound::extensions {

using protocol::Json;

namespace {

// Each event's name and traits (section 3.4): awaited, has a subject, reads `decision`/`reason`,
// reads `hookSpecificOutput` (section 3.6), carries `permission_mode` (section 3.3).
struct EventTraits {
  HookEvent event;
  std::string_view name;
  bool awaited, subject, decision, specific, permission_mode;
};
constexpr EventTraits kEvents[] = {
    {HookEvent::session_start, "SessionStart", true, true, false, true, false},
    {HookEvent::user_prompt_submit, "UserPromptSubmit", true, false, true, true, true},
    {HookEvent::pre_tool_use, "PreToolUse", true, true, true, true, true},
    {HookEvent::permission_request, "PermissionRequest", true, true, false, true, true},
    {HookEvent::post_tool_use, "PostToolUse", true, true, true, true, true},
    {HookEvent::post_tool_use_failure, "PostToolUseFailure", true, true, true, true, true},
    {HookEvent::stop, "Stop", true, false, true, true, true},
    {HookEvent::stop_failure, "StopFailure", false, true, false, false, false},
    {HookEvent::pre_compact, "PreCompact", true, true, true, false, false},
    {HookEvent::session_end, "SessionEnd", false, true, false, false, false},
    {HookEvent::notification, "Notification", false, true, false, false, false},
    {HookEvent::auto_retry_start, "AutoRetryStart", false, false, false, false, false},
    {HookEvent::auto_retry_end, "AutoRetryEnd", false, false, false, false, false},
};

const EventTraits& traits(HookEvent event) {
  for (const auto& t : kEvents) {
    if (t.event == event) return t;
  }
  return kEvents[0];  // every enumerator is listed
}

constexpr protocol::Named<HookSource> kSources[] = {{HookSource::user, "user"},
                                                    {HookSource::project, "project"}};
constexpr protocol::Named<HookStatus> kStatuses[] = {{HookStatus::active, "active"},
                                                     {HookStatus::invalid, "invalid"},
                                                     {HookStatus::untrusted, "untrusted"},
                                                     {HookStatus::disabled, "disabled"}};

constexpr std::string_view kAliases[][2] = {{"bash", "Bash"},   {"read", "Read"}, {"edit", "Edit"},
                                            {"write", "Write"}, {"grep", "Grep"}, {"find", "Glob"},
                                            {"ls", "LS"}};

bool is_list_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '|' || c == ',';
}

// The first problem of one handler object, in section 1.2's order, or "".
std::string handler_problem(const Json& h) {
  if (!h.is_object() || h.value("type", Json()) != "command")
    return "Invalid hook: type must be \"command\"";
  const Json& command = h.value("command", Json());
  if (!command.is_string() || command.get<std::string>().empty())
    return "Invalid hook: command must be a non-empty string";
  if (const auto t = h.find("timeout"); t != h.end() && (!t->is_number() || t->get<double>() <= 0))
    return "Invalid hook: timeout must be a positive number";
  if (const auto a = h.find("async"); a != h.end() && !a->is_boolean())
    return "Invalid hook: async must be a boolean";
  return {};
}

// The handlers of one matcher group of `event` (as written).
void read_group(const std::string& event, const Json& group, const HookSettings& source,
                std::int64_t default_timeout_ms, std::vector<HookHandler>& out) {
  HookHandler base;
  base.event = event;
  base.known = event_named(event);
  base.source = source.source;
  base.timeout_ms = default_timeout_ms;
  std::string group_error;
  if (!group.is_object() || !group.contains("hooks") || !group["hooks"].is_array()) {
    group_error = "Invalid hook: hooks must be an array";
  } else if (const auto m = group.find("matcher"); m != group.end() && !m->is_null()) {
    if (!m->is_string()) {
      group_error = "Invalid matcher: matcher must be a string";
    } else {
      base.matcher = m->get<std::string>();
      auto compiled = HookMatcher::compile(*base.matcher);
      if (compiled)
        base.match = std::move(*compiled);
      else
        group_error = compiled.error().message;
    }
  }
  const auto status_of = [&](const std::string& error) {
    if (source.disabled) return HookStatus::disabled;
    if (!source.trusted) return HookStatus::untrusted;
    return error.empty() ? HookStatus::active : HookStatus::invalid;
  };
  if (!group_error.empty() && !(group.is_object() && group.contains("hooks") &&
                                group["hooks"].is_array() && !group["hooks"].empty())) {
    // No handler to list the problem with: the group itself is listed once.
    HookHandler h = base;
    h.status = status_of(group_error);
    if (h.status == HookStatus::invalid) h.error = group_error;
    out.push_back(std::move(h));
    return;
  }
  for (const Json& entry : group["hooks"]) {
    HookHandler h = base;
    std::string error = group_error.empty() ? handler_problem(entry) : group_error;
    if (entry.is_object()) {
      if (const auto c = entry.find("command"); c != entry.end() && c->is_string())
        h.command = c->get<std::string>();
      if (const auto t = entry.find("timeout");
          t != entry.end() && t->is_number() && t->get<double>() > 0)
        h.timeout_ms = std::max<std::int64_t>(1, std::llround(t->get<double>() * 1000));
      if (const auto a = entry.find("async"); a != entry.end() && a->is_boolean())
        h.async = a->get<bool>();
    }
    h.status = status_of(error);
    if (h.status == HookStatus::invalid) h.error = std::move(error);
    out.push_back(std::move(h));
  }
}

bool matches_subject(const HookHandler& h, HookEvent event, std::string_view subject) {
  if (!has_subject(event) || !h.match) return true;
  if (h.match->matches(subject)) return true;
  if (!is_tool_event(event)) return false;
  const std::string_view alias = claude_tool_alias(subject);
  return !alias.empty() && h.match->matches(alias);
}

}  // namespace

std::string_view event_name(HookEvent event) {
  return traits(event).name;
}

std::optional<HookEvent> event_named(std::string_view name) {
  for (const auto& t : kEvents) {
    if (t.name == name) return t.event;
  }
  return std::nullopt;
}

bool is_tool_event(HookEvent e) {
  return e == HookEvent::pre_tool_use || e == HookEvent::permission_request ||
         e == HookEvent::post_tool_use || e == HookEvent::post_tool_use_failure;
}

bool is_awaited(HookEvent event) {
  return traits(event).awaited;
}

bool has_subject(HookEvent event) {
  return traits(event).subject;
}

bool reads_decision(HookEvent event) {
  return traits(event).decision;
}

bool reads_specific_output(HookEvent event) {
  return traits(event).specific;
}

bool carries_permission_mode(HookEvent event) {
  return traits(event).permission_mode;
}

std::string_view claude_tool_alias(std::string_view tool) {
  for (const auto& pair : kAliases) {
    if (pair[0] == tool) return pair[1];
  }
  return {};
}

std::string_view source_name(HookSource source) {
  return protocol::name_of(source, kSources);
}

std::string_view status_name(HookStatus status) {
  return protocol::name_of(status, kStatuses);
}

session::Result<std::shared_ptr<const HookMatcher>> HookMatcher::compile(const std::string& text) {
  auto m = std::make_shared<HookMatcher>();
  if (text.empty() || text == "*") {
    m->all_ = true;
    return std::shared_ptr<const HookMatcher>(std::move(m));
  }
  if (std::all_of(text.begin(), text.end(), is_list_char)) {
    std::string item;
    for (char c : text + "|") {
      if (c == '|' || c == ',') {
        if (!item.empty()) m->names_.push_back(item);
        item.clear();
      } else {
        item += c;
      }
    }
    return std::shared_ptr<const HookMatcher>(std::move(m));
  }
  tools::Regex::Options options;
  options.multiline = false;
  // Checked alone first, so that the text is the expression's own (and a stray parenthesis
  // cannot close the anchoring group).
  auto alone = tools::Regex::compile(text, options);
  if (!alone) return session::failure("Invalid matcher: " + alone.error().message);
  auto anchored = tools::Regex::compile("\\A(?:" + text + ")\\z", options);
  if (!anchored) return session::failure("Invalid matcher: " + anchored.error().message);
  m->regex_ = std::move(*anchored);
  return std::shared_ptr<const HookMatcher>(std::move(m));
}

bool HookMatcher::matches(std::string_view subject) const {
  if (all_) return true;
  if (regex_) {
    tools::Matcher matcher(regex_);  // matching is rare and subjects are short names
    return matcher.matches(subject);
  }
  return std::find(names_.begin(), names_.end(), subject) != names_.end();
}

HookConfig read_hooks(const std::vector<HookSettings>& sources, std::int64_t default_timeout_ms) {
  HookConfig config;
  std::set<std::string> reported;
  for (const auto& source : sources) {
    if (source.hooks.is_null()) continue;
    if (!source.hooks.is_object()) {
      config.warnings.push_back("hooks: the hooks of " + source.path +
                                " are not an object; ignored");
      continue;
    }
    for (const auto& [event, groups] : source.hooks.items()) {
      if (!event_named(event) && reported.insert(event).second)
        config.warnings.push_back("hooks: " + source.path + " names the event " + event +
                                  ", which Rebound does not have; its hooks never run");
      if (!groups.is_array()) {
        read_group(event, Json(), source, default_timeout_ms, config.handlers);
        continue;
      }
      for (const Json& group : groups)
        read_group(event, group, source, default_timeout_ms, config.handlers);
    }
  }
  return config;
}

std::vector<const HookHandler*> handlers_for(const HookConfig& config, HookEvent event,
                                             std::string_view subject) {
  std::vector<const HookHandler*> out;
  std::set<std::string_view> commands;
  for (const auto& h : config.handlers) {
    if (h.status != HookStatus::active || h.known != event) continue;
    if (!matches_subject(h, event, subject)) continue;
    if (!commands.insert(h.command).second) continue;
    out.push_back(&h);
  }
  return out;
}

bool has_hooks(const HookConfig& config, HookEvent event) {
  return std::any_of(config.handlers.begin(), config.handlers.end(), [&](const HookHandler& h) {
    return h.status == HookStatus::active && h.known == event;
  });
}

RunnerSettings read_runner_settings(const Json& global, const Json& project,
                                    std::vector<std::string>& warnings) {
  Json merged = global.is_object() ? global : Json::object();
  if (project.is_object()) merged.merge_patch(project);
  RunnerSettings s;
  struct Key {
    const char* name;
    std::int64_t RunnerSettings::*field;
    std::int64_t min;
  };
  static constexpr Key kKeys[] = {
      {"hookTimeoutMs", &RunnerSettings::hook_timeout_ms, 1},
      {"interceptorTimeoutMs", &RunnerSettings::interceptor_timeout_ms, 1},
      {"toolTimeoutMs", &RunnerSettings::tool_timeout_ms, 1},
      {"dialogTimeoutMs", &RunnerSettings::dialog_timeout_ms, 1},
      {"stopHookBlockLimit", &RunnerSettings::stop_hook_block_limit, 0},
      {"sessionEndTimeoutMs", &RunnerSettings::session_end_timeout_ms, 1},
      {"idleNotificationMs", &RunnerSettings::idle_notification_ms, 1},
  };
  for (const auto& key : kKeys) {
    const auto it = merged.find(key.name);
    if (it == merged.end()) continue;
    if (it->is_number_integer() && it->get<std::int64_t>() >= key.min) {
      s.*key.field = it->get<std::int64_t>();
      continue;
    }
    warnings.push_back("extensionRunner." + std::string(key.name) + " must be an integer >= " +
                       std::to_string(key.min) + "; using " + std::to_string(s.*key.field));
  }
  return s;
}

}  // namespace rebound::extensions
