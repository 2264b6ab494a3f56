// One hook run's verdict (extensions.md sections 3.5, 3.6, 3.10) and what the hooks of one
// PreToolUse occurrence decide together (3.7, 3.8), with the exact texts.

#include <doctest/doctest.h>

#include "extensions/hook_decisions.h"
#include "extensions/hook_output.h"

using rebound::protocol::Json;
namespace ext = rebound::extensions;
using ext::HookEvent;
using ext::HookRun;
using Kind = ext::HookVerdict::Kind;

namespace {

HookRun exited(int code, std::string out, std::string err = {}) {
  HookRun r;
  r.code = code;
  r.out = std::move(out);
  r.err = std::move(err);
  return r;
}

std::string failure(HookEvent e, const std::string& out) {
  const auto v = ext::read_hook_run(e, exited(0, out));
  CHECK(v.kind == Kind::failed);
  return v.failure;
}

}  // namespace

TEST_CASE("hook exit status: 0 success, 2 blocking, others and signals and timeouts fail") {
  auto v = ext::read_hook_run(HookEvent::user_prompt_submit, exited(0, "  some context\n"));
  CHECK(v.kind == Kind::success);
  CHECK(v.plain == "some context");
  CHECK(!v.json);
  v = ext::read_hook_run(HookEvent::pre_tool_use, exited(2, "{\"ignored\":1}", "no rm\n"));
  CHECK(v.kind == Kind::blocking);
  CHECK(v.stderr_text == "no rm");
  v = ext::read_hook_run(HookEvent::pre_tool_use,
                         exited(127, "", "/bin/sh: 1: nosuch: not found\n"));
  CHECK(v.failure == "Hook exited with code 127: /bin/sh: 1: nosuch: not found");
  CHECK(ext::read_hook_run(HookEvent::pre_tool_use, exited(1, "")).failure ==
        "Hook exited with code 1");
  // Only the first 500 bytes of stderr, cut between characters.
  v = ext::read_hook_run(HookEvent::stop, exited(3, "", std::string(499, 'x') + "\xc3\xa9tail"));
  CHECK(v.failure == "Hook exited with code 3: " + std::string(499, 'x'));
  HookRun r;
  r.end = HookRun::End::timed_out;
  r.timeout_ms = 30000;
  CHECK(ext::read_hook_run(HookEvent::pre_tool_use, r).failure == "Hook timed out after 30000 ms");
  r.end = HookRun::End::signalled;
  r.code = 11;
  CHECK(ext::read_hook_run(HookEvent::pre_tool_use, r).failure == "Hook was killed by signal 11");
  r.end = HookRun::End::not_started;
  r.start_error = "No such file or directory";
  CHECK(ext::read_hook_run(HookEvent::pre_tool_use, r).failure ==
        "Hook could not start: No such file or directory");
}

TEST_CASE("hook JSON output: read key by key, the first wrong key named") {
  auto v =
      ext::read_hook_run(HookEvent::pre_tool_use,
                         exited(0, R"( {"continue":false,"stopReason":"enough","systemMessage":"hi",
                    "hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny",
                    "permissionDecisionReason":"no","updatedInput":{"command":"ls"},
                    "additionalContext":"ctx"},"unknown":[1]})"));
  REQUIRE(v.json);
  CHECK(v.json->continue_run == false);
  CHECK(v.json->stop_reason == "enough");
  CHECK(v.json->system_message == "hi");
  CHECK(v.json->permission_decision == "deny");
  CHECK(v.json->permission_decision_reason == "no");
  CHECK(v.json->updated_input == Json{{"command", "ls"}});
  CHECK(v.json->additional_context == "ctx");

  const std::string bad = "Hook JSON output validation failed: ";
  CHECK(failure(HookEvent::pre_tool_use, R"({"continue":"no"})") ==
        bad + "continue must be a boolean");
  CHECK(failure(HookEvent::pre_tool_use, R"({"systemMessage":1,"continue":1})") ==
        bad + "continue must be a boolean");  // the order of section 3.6, not of the text
  CHECK(failure(HookEvent::stop, R"({"decision":"deny"})") ==
        bad + "decision must be one of approve, block");
  CHECK(failure(HookEvent::pre_tool_use, R"({"hookSpecificOutput":[]})") ==
        bad + "hookSpecificOutput must be an object");
  CHECK(failure(HookEvent::pre_tool_use, R"({"hookSpecificOutput":{"hookEventName":"Stop"}})") ==
        bad + "hookSpecificOutput.hookEventName must be \"PreToolUse\"");
  // Claude Code's "defer" is not one of Rebound's decisions.
  CHECK(
      failure(
          HookEvent::pre_tool_use,
          R"({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}})") ==
      bad + "hookSpecificOutput.permissionDecision must be one of allow, deny, ask");
  CHECK(
      failure(
          HookEvent::permission_request,
          R"({"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"message":"x"}}})") ==
      bad + "hookSpecificOutput.decision.behavior must be one of allow, deny");
  // Text starting with { that is not one JSON object.
  CHECK(failure(HookEvent::pre_tool_use, "{not json").rfind("Hook output is not valid JSON: ", 0) ==
        0);
  CHECK(failure(HookEvent::pre_tool_use, "{} {}").rfind("Hook output is not valid JSON: ", 0) == 0);
  // Keys an event does not use are not read: decision on Notification, continue on an observer.
  v = ext::read_hook_run(HookEvent::notification,
                         exited(0, R"({"decision":5,"continue":"x","systemMessage":"note"})"));
  REQUIRE(v.json);
  CHECK(v.json->system_message == "note");
  CHECK(!v.json->decision);
}

TEST_CASE("PreToolUse: deny over ask over allow, texts joined in configuration order") {
  ext::HookHandler a, b, c;
  a.command = "guard.sh";
  b.command = "policy.py";
  c.command = "asker";
  const auto json = [](const char* text) {
    return ext::read_hook_run(HookEvent::pre_tool_use, exited(0, text));
  };
  std::vector<ext::HookResult> results{
      {a, ext::read_hook_run(HookEvent::pre_tool_use, exited(2, "", "rm is not allowed\n"))},
      {b, json(R"({"decision":"block","reason":"legacy says no","systemMessage":"checked"})")},
      {c, json(R"({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask",
                  "updatedInput":{"command":"ls"},"additionalContext":"be careful"}})")}};
  auto o = ext::decide_pre_tool_use("bash", results);
  CHECK(o.permission == ext::PreToolUseOutcome::Permission::deny);
  CHECK(o.result ==
        "PreToolUse:bash hook error: [guard.sh]: rm is not allowed\n"
        "PreToolUse:bash hook error: legacy says no");
  CHECK(o.updated_input == Json{{"command", "ls"}});
  REQUIRE(o.context.size() == 1);
  CHECK(o.context[0].command == "asker");
  CHECK(o.context[0].text == "PreToolUse:bash hook additional context: be careful");
  CHECK(o.effects.notices == std::vector<std::string>{"PreToolUse:bash says: checked"});

  // ask over allow; the first updatedInput wins, the other is logged.
  results = {
      {a, json(R"({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow",
                         "updatedInput":{"command":"one"}}})")},
      {b, json(R"({"decision":"approve"})")},
      {c, json(R"({"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask",
                         "updatedInput":{"command":"two"}}})")}};
  o = ext::decide_pre_tool_use("bash", results);
  CHECK(o.permission == ext::PreToolUseOutcome::Permission::ask);
  CHECK(o.updated_input == Json{{"command", "one"}});
  CHECK(o.effects.warnings.size() == 1);
  results.pop_back();
  CHECK(ext::decide_pre_tool_use("bash", results).permission ==
        ext::PreToolUseOutcome::Permission::allow);

  // A failed hook has no verdict: no decision, one failure for extension_error.
  results = {{a, ext::read_hook_run(HookEvent::pre_tool_use, exited(1, "", "boom"))},
             {b, json(R"({"continue":false,"stopReason":""})")},
             {c, json(R"({"continue":false,"stopReason":"done for today"})")}};
  o = ext::decide_pre_tool_use("bash", results);
  CHECK(o.permission == ext::PreToolUseOutcome::Permission::none);
  REQUIRE(o.effects.failures.size() == 1);
  CHECK(o.effects.failures[0] ==
        std::pair<std::string, std::string>{"guard.sh", "Hook exited with code 1: boom"});
  CHECK(o.effects.stop);
  CHECK(o.effects.stop_reason == "done for today");
}

TEST_CASE("PostToolUse: blocking texts and additional context per hook, in configuration order") {
  ext::HookHandler a, b, c;
  a.command = "lint.sh";
  b.command = "post.py";
  c.command = "quiet";
  const auto json = [](HookEvent e, const char* text) {
    return ext::read_hook_run(e, exited(0, text));
  };
  const HookEvent post = HookEvent::post_tool_use;
  std::vector<ext::HookResult> results{
      {a, ext::read_hook_run(post, exited(2, "ignored", "lint failed\n"))},
      {b, json(post, R"({"decision":"block","reason":"tests fail","hookSpecificOutput":
                  {"hookEventName":"PostToolUse","additionalContext":"see log"},"continue":false,
                  "stopReason":"enough"})")},
      {c, json(post, "plain text is not context for PostToolUse")}};
  const auto o = ext::decide_post_tool_use(post, "edit", results);
  REQUIRE(o.context.size() == 3);
  CHECK(o.context[0].text ==
        "PostToolUse:edit hook blocking error from command: \"lint.sh\": [lint.sh]: lint failed");
  CHECK(o.context[0].command == "lint.sh");
  CHECK(o.context[1].text ==
        "PostToolUse:edit hook blocking error from command: \"post.py\": tests fail");
  CHECK(o.context[2].text == "PostToolUse:edit hook additional context: see log");
  CHECK(o.context[2].command == "post.py");
  CHECK(o.effects.stop);
  CHECK(o.effects.stop_reason == "enough");
  // PostToolUseFailure names itself; a hookEventName of the other event fails the hook.
  const HookEvent failure = HookEvent::post_tool_use_failure;
  results = {{a, json(failure, R"({"hookSpecificOutput":{"hookEventName":"PostToolUseFailure",
                                   "additionalContext":"retry with sudo?"}})")},
             {b, json(failure, R"({"hookSpecificOutput":{"hookEventName":"PostToolUse"}})")}};
  const auto f = ext::decide_post_tool_use(failure, "bash", results);
  REQUIRE(f.context.size() == 1);
  CHECK(f.context[0].text == "PostToolUseFailure:bash hook additional context: retry with sudo?");
  REQUIRE(f.effects.failures.size() == 1);
  CHECK(f.effects.failures[0].second ==
        "Hook JSON output validation failed: hookSpecificOutput.hookEventName must be "
        "\"PostToolUseFailure\"");
}

TEST_CASE("UserPromptSubmit: any refusal refuses, texts joined, continue:false refuses too") {
  ext::HookHandler a, b, c;
  a.command = "guard";
  b.command = "legacy";
  c.command = "ctx";
  const HookEvent e = HookEvent::user_prompt_submit;
  const auto json = [e](const char* text) { return ext::read_hook_run(e, exited(0, text)); };
  std::vector<ext::HookResult> results{{a, ext::read_hook_run(e, exited(2, "", "no\n"))},
                                       {b, json(R"({"decision":"block","reason":"not today"})")},
                                       {c, json(R"({"continue":false,"stopReason":"maintenance",
                  "hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"x"}})")}};
  auto o = ext::decide_user_prompt_submit(results);
  REQUIRE(o.refused);
  CHECK(*o.refused ==
        "UserPromptSubmit operation blocked by hook:\n[guard]: no\n"
        "UserPromptSubmit operation blocked by hook:\nnot today\n"
        "Operation stopped by hook: maintenance");
  CHECK(o.context.empty());  // a refused message has no context
  results = {{a, json(R"({"continue":false})")}};
  CHECK(ext::decide_user_prompt_submit(results).refused == "Operation stopped by hook");
  results = {{a, ext::read_hook_run(e, exited(0, "  plain words \n"))},
             {b, ext::read_hook_run(e, exited(0, ""))}};
  o = ext::decide_user_prompt_submit(results);
  CHECK(!o.refused);
  REQUIRE(o.context.size() == 1);
  CHECK(o.context[0].text == "UserPromptSubmit hook success: plain words");
}

TEST_CASE("Stop: any block or additionalContext continues, continue:false lets the run end") {
  ext::HookHandler a, b;
  a.command = "check";
  b.command = "more";
  const HookEvent e = HookEvent::stop;
  const auto json = [e](const char* text) { return ext::read_hook_run(e, exited(0, text)); };
  std::vector<ext::HookResult> results{
      {a, json(R"({"decision":"block","reason":"tests fail"})")},
      {b, json(R"({"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"lint"}})")}};
  auto o = ext::decide_stop(results);
  CHECK(o.continue_run);
  CHECK(o.first_blocking == "check");
  REQUIRE(o.context.size() == 2);
  CHECK(o.context[0].text == "Stop hook feedback:\ntests fail");
  CHECK(o.context[1].text == "Stop hook additional context: lint");
  results.emplace_back(b, json(R"({"continue":false})"));
  CHECK(!ext::decide_stop(results).continue_run);
  results = {{a, json("{}")}, {b, ext::read_hook_run(e, exited(0, "plain is ignored"))}};
  CHECK(!ext::decide_stop(results).continue_run);
}

TEST_CASE(
    "SessionStart: plain stdout and additionalContext in order, exit 2 and continue ignored") {
  ext::HookHandler a, b, c;
  a.command = "ctx";
  b.command = "blocker";
  c.command = "json";
  const HookEvent e = HookEvent::session_start;
  std::vector<ext::HookResult> results{
      {a, ext::read_hook_run(e, exited(0, "branch main\n"))},
      {b, ext::read_hook_run(e, exited(2, "", "ignored\n"))},
      {c,
       ext::read_hook_run(e, exited(0, R"({"continue":false,"hookSpecificOutput":{"hookEventName":
                 "SessionStart","additionalContext":"tabs"}})"))}};
  const auto o = ext::decide_session_start("resume", results);
  CHECK(o.texts == std::vector<std::string>{"SessionStart:resume hook success: branch main",
                                            "SessionStart hook additional context: tabs"});
  CHECK(!o.effects.stop);
  REQUIRE(o.effects.warnings.size() == 1);
  CHECK(o.effects.warnings[0] == "hook[SessionStart] blocker: exit 2 has no effect here: ignored");
}
