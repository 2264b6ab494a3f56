#include "extensions/hook_output.h"

#include <initializer_list>
#include <string_view>

#include "protocol/json_line.h"

namespace rebound::extensions {

using protocol::Json;

namespace {

constexpr std::size_t kStderrShown = 500;

// `text` cut to at most `n` bytes, between UTF-8 characters.
std::string head_bytes(const std::string& text, std::size_t n) {
  if (text.size() <= n) return text;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80)
    --n;
  return text.substr(0, n);
}

// Reads the keys of section 3.6 in their order; the first wrong one names the failure.
class Reader {
 public:
  Reader(const Json& object, HookJson& out) : object_(object), out_(out) {}
  std::string problem;

  const Json* find(const Json& in, const char* key) {
    const auto it = in.find(key);
    return it == in.end() ? nullptr : &*it;
  }
  bool fail(const std::string& key, const std::string& kind) {
    if (problem.empty()) problem = key + " must be " + kind;
    return false;
  }
  bool boolean(const Json& in, const std::string& path, const char* key, std::optional<bool>& to) {
    const Json* v = find(in, key);
    if (!v) return true;
    if (!v->is_boolean()) return fail(path + key, "a boolean");
    to = v->get<bool>();
    return true;
  }
  bool string(const Json& in, const std::string& path, const char* key,
              std::optional<std::string>& to) {
    const Json* v = find(in, key);
    if (!v) return true;
    if (!v->is_string()) return fail(path + key, "a string");
    to = v->get<std::string>();
    return true;
  }
  bool one_of(const Json& in, const std::string& path, const char* key,
              std::initializer_list<std::string_view> values, std::optional<std::string>& to,
              bool required = false) {
    const Json* v = find(in, key);
    std::string kind = "one of ";
    bool first = true;
    for (auto value : values) {
      if (!first) kind += ", ";
      kind += value;
      first = false;
    }
    if (!v) return !required || fail(path + key, kind);
    if (v->is_string()) {
      for (auto value : values) {
        if (v->get<std::string>() == value) {
          to = v->get<std::string>();
          return true;
        }
      }
    }
    return fail(path + key, kind);
  }
  bool object(const Json& in, const std::string& path, const char* key, std::optional<Json>& to) {
    const Json* v = find(in, key);
    if (!v) return true;
    if (!v->is_object()) return fail(path + key, "an object");
    to = *v;
    return true;
  }

  bool read(HookEvent event) {
    std::optional<bool> ignored_flag;
    if (is_awaited(event)) {
      if (!boolean(object_, "", "continue", out_.continue_run)) return false;
      if (!string(object_, "", "stopReason", out_.stop_reason)) return false;
    }
    if (!boolean(object_, "", "suppressOutput", ignored_flag)) return false;
    if (!string(object_, "", "systemMessage", out_.system_message)) return false;
    if (reads_decision(event)) {
      if (!one_of(object_, "", "decision", {"approve", "block"}, out_.decision)) return false;
      if (!string(object_, "", "reason", out_.reason)) return false;
    }
    if (!reads_specific_output(event)) return true;
    std::optional<Json> specific;
    if (!object(object_, "", "hookSpecificOutput", specific)) return false;
    if (!specific) return true;
    const std::string path = "hookSpecificOutput.";
    const Json* name = find(*specific, "hookEventName");
    if (!name || !name->is_string() || name->get<std::string>() != event_name(event))
      return fail(path + "hookEventName", "\"" + std::string(event_name(event)) + "\"");
    if (event == HookEvent::pre_tool_use) {
      if (!one_of(*specific, path, "permissionDecision", {"allow", "deny", "ask"},
                  out_.permission_decision))
        return false;
      if (!string(*specific, path, "permissionDecisionReason", out_.permission_decision_reason))
        return false;
      if (!object(*specific, path, "updatedInput", out_.updated_input)) return false;
    }
    if (event == HookEvent::permission_request) {
      std::optional<Json> decision;
      if (!object(*specific, path, "decision", decision)) return false;
      if (decision) {
        const std::string at = path + "decision.";
        if (!one_of(*decision, at, "behavior", {"allow", "deny"}, out_.behavior, true))
          return false;
        if (!object(*decision, at, "updatedInput", out_.permission_updated_input)) return false;
        if (!string(*decision, at, "message", out_.message)) return false;
        if (!boolean(*decision, at, "interrupt", out_.interrupt)) return false;
      }
      return true;
    }
    return string(*specific, path, "additionalContext", out_.additional_context);
  }

 private:
  const Json& object_;
  HookJson& out_;
};

}  // namespace

std::string trimmed(const std::string& text) {
  const char* ws = " \t\r\n\f\v";
  const std::size_t a = text.find_first_not_of(ws);
  if (a == std::string::npos) return {};
  const std::size_t b = text.find_last_not_of(ws);
  return text.substr(a, b - a + 1);
}

HookVerdict read_hook_run(HookEvent event, const HookRun& run) {
  HookVerdict v;
  v.stderr_text = trimmed(run.err);
  const auto failed = [&](std::string text) {
    v.kind = HookVerdict::Kind::failed;
    v.failure = std::move(text);
    return v;
  };
  switch (run.end) {
    case HookRun::End::timed_out:
      return failed("Hook timed out after " + std::to_string(run.timeout_ms) + " ms");
    case HookRun::End::not_started:
      return failed("Hook could not start: " + run.start_error);
    case HookRun::End::signalled:
      return failed("Hook was killed by signal " + std::to_string(run.code));
    case HookRun::End::exited:
      break;
  }
  if (run.code == 2) {
    v.kind = HookVerdict::Kind::blocking;
    return v;
  }
  if (run.code != 0) {
    std::string text = "Hook exited with code " + std::to_string(run.code);
    if (!v.stderr_text.empty()) text += ": " + head_bytes(v.stderr_text, kStderrShown);
    return failed(std::move(text));
  }
  const std::string out = trimmed(run.out);
  if (out.empty() || out.front() != '{') {
    v.plain = out;
    return v;
  }
  protocol::JsonLine parsed = protocol::parse_json_line(out);
  if (!parsed.value) return failed("Hook output is not valid JSON: " + parsed.error);
  if (!parsed.value->is_object()) return failed("Hook output is not valid JSON: not an object");
  HookJson json;
  Reader reader(*parsed.value, json);
  if (!reader.read(event)) return failed("Hook JSON output validation failed: " + reader.problem);
  v.json = std::move(json);
  return v;
}

}  // namespace rebound::extensions
