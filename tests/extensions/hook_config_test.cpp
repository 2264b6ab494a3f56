// Command hooks' configuration (extensions.md sections 1.1, 1.2, 1.4, 3.2): sources in
// configuration order, the trust rule, every invalid-handler text, matchers as lists and as
// ECMAScript expressions, Claude Code's tool aliases, identical commands once.

#include <doctest/doctest.h>

#include "extensions/hook_config.h"

using rebound::protocol::Json;
namespace ext = rebound::extensions;
using ext::HookEvent;
using ext::HookSource;
using ext::HookStatus;

namespace {

ext::HookSettings user(const char* hooks) {
  return {Json::parse(hooks), HookSource::user, "/u/settings.json", true, false};
}
ext::HookSettings project(const char* hooks, bool trusted) {
  return {Json::parse(hooks), HookSource::project, "/p/.rebound/settings.json", trusted, false};
}

std::vector<std::string> commands(const std::vector<const ext::HookHandler*>& hs) {
  std::vector<std::string> out;
  for (const auto* h : hs)
    out.push_back(h->command);
  return out;
}

}  // namespace

TEST_CASE("hooks: every source's handlers in configuration order, the project's only if trusted") {
  const char* mine =
      R"({"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"g1","timeout":30}]}],
          "Stop":[{"hooks":[{"type":"command","command":"s1"}]}]})";
  const char* theirs =
      R"({"PreToolUse":[{"hooks":[{"type":"command","command":"p1","async":true}]}]})";
  auto config = ext::read_hooks({user(mine), project(theirs, true)}, 60000);
  REQUIRE(config.handlers.size() == 3);
  CHECK(config.handlers[0].command == "g1");
  CHECK(config.handlers[0].timeout_ms == 30000);
  CHECK(config.handlers[0].matcher == "Bash");
  CHECK(config.handlers[1].command == "s1");
  CHECK(config.handlers[1].timeout_ms == 60000);  // hookTimeoutMs
  CHECK(!config.handlers[1].matcher);
  CHECK(config.handlers[2].source == HookSource::project);
  CHECK(config.handlers[2].async);
  CHECK(commands(ext::handlers_for(config, HookEvent::pre_tool_use, "bash")) ==
        std::vector<std::string>{"g1", "p1"});
  // Untrusted: listed, never run.
  config = ext::read_hooks({user(mine), project(theirs, false)}, 60000);
  CHECK(config.handlers[2].status == HookStatus::untrusted);
  CHECK(commands(ext::handlers_for(config, HookEvent::pre_tool_use, "bash")) ==
        std::vector<std::string>{"g1"});
  // --no-extensions.
  ext::HookSettings off = user(mine);
  off.disabled = true;
  config = ext::read_hooks({off}, 60000);
  CHECK(config.handlers[0].status == HookStatus::disabled);
  CHECK(ext::handlers_for(config, HookEvent::pre_tool_use, "bash").empty());
}

TEST_CASE("hooks: a malformed group or handler is invalid with its text and never runs") {
  const auto config = ext::read_hooks({user(R"({"PreToolUse":[
        {"hooks":"nope"},
        {"hooks":[{"type":"prompt","prompt":"x"},{"type":"command","command":""},
                  {"type":"command","command":"t","timeout":0},
                  {"type":"command","command":"a","async":"yes"},
                  {"type":"command","command":"ok"}]},
        {"matcher":"(unclosed","hooks":[{"type":"command","command":"m"}]}],
        "PostCompact":[{"hooks":[{"type":"command","command":"later"}]}]})")},
                                      60000);
  REQUIRE(config.handlers.size() == 8);
  const std::vector<std::string> errors{
      "Invalid hook: hooks must be an array",
      "Invalid hook: type must be \"command\"",
      "Invalid hook: command must be a non-empty string",
      "Invalid hook: timeout must be a positive number",
      "Invalid hook: async must be a boolean",
      "",
  };
  for (std::size_t i = 0; i < errors.size(); ++i) {
    CHECK(config.handlers[i].error == errors[i]);
    CHECK(config.handlers[i].status ==
          (errors[i].empty() ? HookStatus::active : HookStatus::invalid));
  }
  CHECK(config.handlers[6].status == HookStatus::invalid);
  CHECK(config.handlers[6].error.rfind("Invalid matcher: ", 0) == 0);
  // An unknown event is kept, never fires, and is reported once.
  CHECK(config.handlers[7].event == "PostCompact");
  CHECK(!config.handlers[7].known);
  REQUIRE(config.warnings.size() == 1);
  CHECK(config.warnings[0].find("PostCompact") != std::string::npos);
  CHECK(commands(ext::handlers_for(config, HookEvent::pre_tool_use, "bash")) ==
        std::vector<std::string>{"ok"});
  // A hooks value that is not an object.
  CHECK(ext::read_hooks({user("[1]")}, 1).warnings.size() == 1);
}

TEST_CASE("hook matchers: lists, expressions over the whole subject, Claude Code's aliases") {
  std::string error;
  const auto m = [&](const char* text) -> std::shared_ptr<const ext::HookMatcher> {
    auto compiled = ext::HookMatcher::compile(text);
    if (compiled) return *compiled;
    error = compiled.error().message;
    return nullptr;
  };
  CHECK(m("")->matches("anything"));
  CHECK(m("*")->matches("anything"));
  CHECK(m("Bash")->matches("Bash"));
  CHECK(!m("Bas")->matches("Bash"));  // Claude Code h03: a list item is the whole name
  CHECK(m("Read|Write")->matches("Write"));
  CHECK(m("Edit,Write")->matches("Edit"));
  CHECK(!m("Read Write")->matches("Read"));  // an expression that matches nothing here
  CHECK(m("B.*")->matches("Bash"));
  CHECK(!m("B.*")->matches("xBash"));
  CHECK(m("mcp__fs__.*")->matches("mcp__fs__read_file"));
  CHECK(!m("bash")->matches("Bash"));  // case-sensitive
  CHECK(m("(") == nullptr);
  CHECK(error.rfind("Invalid matcher: ", 0) == 0);
  // What the fuzzer found std::regex overflowing on (undefined behaviour in libstdc++): a
  // reference number past any integer. PCRE2's JavaScript mode reads it as an escape.
  const auto big = m("a\\4444444444444444444");
  REQUIRE(big != nullptr);
  CHECK(!big->matches("Bash"));
  // A stray parenthesis cannot escape the whole-subject anchoring.
  CHECK(m("x)|(.*") == nullptr);
  CHECK(m("\\u0042ash")->matches("Bash"));  // JavaScript escapes

  const auto config = ext::read_hooks(
      {user(R"({"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"alias"}]},
                              {"matcher":"bash","hooks":[{"type":"command","command":"own"}]},
                              {"matcher":"BASH","hooks":[{"type":"command","command":"never"}]},
                              {"matcher":"Glob","hooks":[{"type":"command","command":"find"}]},
                              {"matcher":"mcp__.*","hooks":[{"type":"command","command":"mcp"}]}],
                "Stop":[{"matcher":"nothing","hooks":[{"type":"command","command":"stop"}]}]})")},
      1000);
  CHECK(commands(ext::handlers_for(config, HookEvent::pre_tool_use, "bash")) ==
        std::vector<std::string>{"alias", "own"});
  CHECK(commands(ext::handlers_for(config, HookEvent::pre_tool_use, "find")) ==
        std::vector<std::string>{"find"});
  CHECK(commands(ext::handlers_for(config, HookEvent::pre_tool_use, "mcp__fs__read")) ==
        std::vector<std::string>{"mcp"});
  // Stop has no subject: its matchers are ignored.
  CHECK(commands(ext::handlers_for(config, HookEvent::stop)) == std::vector<std::string>{"stop"});
}

TEST_CASE("hooks: identical commands run once per occurrence, at the first one's position") {
  const auto config = ext::read_hooks(
      {user(R"({"PreToolUse":[{"hooks":[{"type":"command","command":"a"},
                                         {"type":"command","command":"b"}]},
                              {"matcher":"bash","hooks":[{"type":"command","command":"a"},
                                                         {"type":"command","command":"c"}]}]})"),
       project(R"({"PreToolUse":[{"hooks":[{"type":"command","command":"b"}]}]})", true)},
      1000);
  CHECK(commands(ext::handlers_for(config, HookEvent::pre_tool_use, "bash")) ==
        std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("extensionRunner: defaults, a trusted project's keys over the user's, bad values") {
  std::vector<std::string> warnings;
  auto s = ext::read_runner_settings(Json(), Json(), warnings);
  CHECK(s.hook_timeout_ms == 60000);
  CHECK(s.interceptor_timeout_ms == 10000);
  CHECK(s.tool_timeout_ms == 600000);
  CHECK(s.dialog_timeout_ms == 60000);
  CHECK(s.stop_hook_block_limit == 8);
  CHECK(s.session_end_timeout_ms == 1500);
  CHECK(s.idle_notification_ms == 60000);
  CHECK(warnings.empty());
  s = ext::read_runner_settings(Json{{"hookTimeoutMs", 5000}, {"stopHookBlockLimit", 0}},
                                Json{{"hookTimeoutMs", 7000}}, warnings);
  CHECK(s.hook_timeout_ms == 7000);
  CHECK(s.stop_hook_block_limit == 0);
  s = ext::read_runner_settings(Json{{"hookTimeoutMs", 0}, {"dialogTimeoutMs", "1"}}, Json(),
                                warnings);
  CHECK(s.hook_timeout_ms == 60000);
  CHECK(s.dialog_timeout_ms == 60000);
  CHECK(warnings == std::vector<std::string>{
                        "extensionRunner.hookTimeoutMs must be an integer >= 1; using 60000",
                        "extensionRunner.dialogTimeoutMs must be an integer >= 1; using 60000"});
}

TEST_CASE("hook events: names, awaited or observer") {
  CHECK(ext::event_name(HookEvent::auto_retry_start) == "AutoRetryStart");
  CHECK(ext::event_named("PostToolUseFailure") == HookEvent::post_tool_use_failure);
  CHECK(!ext::event_named("SubagentStop"));
  CHECK(ext::is_awaited(HookEvent::pre_tool_use));
  CHECK(!ext::is_awaited(HookEvent::auto_retry_end));
  CHECK(!ext::is_awaited(HookEvent::stop_failure));
  CHECK(ext::claude_tool_alias("find") == "Glob");
  CHECK(ext::claude_tool_alias("todo").empty());
}
