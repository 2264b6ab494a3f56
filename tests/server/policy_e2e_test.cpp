// The permission policy through the real binary (policy.md sections 1 to 7): each row of the
// rule table of section 2.7 with nobody to ask, each mode, the denial texts, questions over the
// rpc wire (yes, no, always, the timeout, an abort), get_policy and set_permission_mode, the
// trust rule for a project's settings and invalid configurations (exit 2).

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/support/rebound_process.h"
#include "tests/support/scripted_tools.h"
#include "tests/support/temp_dir.h"

using namespace rebound;
using namespace rebound::testing;
using protocol::Json;

namespace {

struct Outcome {
  bool error = false;
  std::string text;
};

// Runs one batch of `calls` (bash commands as strings, or {"name","arguments"} objects) in a
// server with `flags` and returns each call's outcome by id (call_1, call_2, …).
std::map<std::string, Outcome> batch(const std::vector<Json>& calls, std::vector<std::string> flags,
                                     const std::string& settings = "{}",
                                     ReboundProcess::Files files = {}) {
  Json list = Json::array();
  for (const auto& c : calls)
    list.push_back(c.is_string() ? call("bash", {{"command", c}}) : c);
  files.emplace("secrets/a.txt", "top secret");
  files.emplace("src/a.txt", "alpha");
  files.emplace("top.txt", "top");
  flags.insert(flags.begin(), {"--permission-prompts", "none"});
  ReboundProcess r = tool_server(script_of(list), files, flags, settings);
  r.send(prompt());
  const auto events = r.read_until_type("agent_end", std::chrono::milliseconds(20000));
  std::map<std::string, Outcome> out;
  for (std::size_t i = 1; i <= calls.size(); ++i) {
    const std::string id = "call_" + std::to_string(i);
    const Json end = end_of(events, id);
    out[id] = Outcome{end["isError"].get<bool>(), text_of(end["result"])};
    if (end["isError"] == true) CHECK(end["result"]["details"] == Json::object());
  }
  return out;
}

const char* kApproval = "This command requires approval";
std::string one_part(const std::string& part) {
  return "This bash command contains multiple operations. The following part requires approval: " +
         part;
}
std::string bash_denied(const std::string& command) {
  return "Permission to use bash with command " + command + " has been denied.";
}
const char* kPathDenied = "File is in a directory that is denied by your permission settings.";

}  // namespace

TEST_CASE("rule table: allow Bash(echo:*)") {
  auto o =
      batch({"echo a", "echo", "echoX", "(touch z2)", "echo a && touch z1", "echo $(touch z2)",
             "echo `touch z2`", "echo a\ntouch z2", "select x in a; do echo $x; done", "echo 'abc"},
            {"--permission-mode", "default", "--allowed-tools", "Bash(echo:*)"});
  CHECK(o["call_1"].text == "a\n");
  CHECK_FALSE(o["call_2"].error);
  CHECK(o["call_3"].text == kApproval);
  CHECK(o["call_4"].text == kApproval);
  CHECK(o["call_5"].text == one_part("touch z1"));
  CHECK(o["call_6"].text == one_part("touch z2"));
  CHECK(o["call_7"].text == one_part("touch z2"));
  CHECK(o["call_8"].text == one_part("touch z2"));
  CHECK(o["call_9"].text == kApproval);
  CHECK(o["call_10"].text == kApproval);
}

TEST_CASE("rule table: allow Bash(cat:*) runs a here-document as one part") {
  auto o = batch({"cat > out.txt <<'EOF'\nhello\nEOF"},
                 {"--permission-mode", "default", "--allowed-tools", "Bash(cat:*)"});
  CHECK_FALSE(o["call_1"].error);
}

TEST_CASE("rule table: allow Bash, deny Bash(rm:*)") {
  const std::vector<std::string> denied = {"rm -f x", "env rm -f x", "timeout 5 rm -f x",
                                           "bash -c 'rm -f x'", "X=1 rm -f x"};
  std::vector<Json> calls(denied.begin(), denied.end());
  for (const char* c : {"sudo rm x", "$CMD x", "ls | xargs rm"})
    calls.emplace_back(c);
  auto o = batch(calls, {"--permission-mode", "default", "--allowed-tools", "Bash",
                         "--disallowed-tools", "Bash(rm:*)"});
  for (std::size_t i = 0; i < denied.size(); ++i)
    CHECK(o["call_" + std::to_string(i + 1)].text == bash_denied(denied[i]));
  CHECK(o["call_6"].text == kApproval);
  CHECK(o["call_7"].text == kApproval);
  CHECK(o["call_8"].text == one_part("xargs rm"));
}

TEST_CASE("rule table: allow Bash, ask Bash(git push:*)") {
  auto o =
      batch({"git push", "true"},
            {"--permission-mode", "default", "--allowed-tools", "Bash", "--allowed-tools", "Read"},
            R"j({"permissions":{"ask":["Bash(git push:*)"]}})j");
  CHECK(o["call_1"].text ==
        "Rebound requested permissions to use bash, but you haven't granted it yet.");
  CHECK_FALSE(o["call_2"].error);
}

TEST_CASE("rule table: allow Bash(cat:*), deny Read(./secrets/**)") {
  auto o = batch({"cat work/secrets/a.txt", "cat work/sec*/a.txt", "cat < work/secrets/a.txt",
                  "cd work/secrets && cat a.txt", "cat work/src/a.txt"},
                 {"--permission-mode", "default", "--allowed-tools", "Bash(cat:*)",
                  "--disallowed-tools", "Read(./work/secrets/**)"});
  for (int i = 1; i <= 4; ++i) {
    CHECK(o["call_" + std::to_string(i)].error);
    CHECK(o["call_" + std::to_string(i)].text.rfind("Permission to use bash with command ", 0) ==
          0);
  }
  CHECK(o["call_5"].text == "alpha");
}

TEST_CASE("rule table: deny Read(./secrets/**) and the file tools, grep and ls leave it out") {
  auto o =
      batch({call("read", {{"path", "work/secrets/a.txt"}}), call("ls", {{"path", "work/secrets"}}),
             call("grep", {{"pattern", "top"}, {"path", "work"}}), call("ls", {{"path", "work"}}),
             call("find", {{"pattern", "**/*.txt"}, {"path", "work"}})},
            {"--disallowed-tools", "Read(./work/secrets/**)", "--tools",
             "read,bash,edit,write,grep,find,ls"});
  CHECK(o["call_1"].text == kPathDenied);
  CHECK(o["call_2"].text == kPathDenied);
  CHECK_FALSE(o["call_3"].error);
  CHECK(o["call_3"].text.find("top.txt") != std::string::npos);
  CHECK(o["call_3"].text.find("secrets") == std::string::npos);
  CHECK(o["call_4"].text.find("secrets") == std::string::npos);
  CHECK(o["call_4"].text.find("top.txt") != std::string::npos);
  CHECK(o["call_5"].text.find("secrets") == std::string::npos);
  CHECK(o["call_5"].text.find("src/a.txt") != std::string::npos);
}

TEST_CASE("rule table: allow Edit(src/**)") {
  TempDir probe;  // only for the path in the text
  auto o =
      batch({call("edit", {{"path", "work/src/a.txt"}, {"oldText", "alpha"}, {"newText", "beta"}}),
             call("write", {{"path", "work/src/new.txt"}, {"content", "n"}}),
             call("edit", {{"path", "work/top.txt"}, {"oldText", "top"}, {"newText", "x"}})},
            {"--permission-mode", "default", "--allowed-tools", "Edit(work/src/**)"});
  CHECK_FALSE(o["call_1"].error);
  CHECK_FALSE(o["call_2"].error);
  CHECK(o["call_3"].text.rfind("Rebound requested permissions to write to /", 0) == 0);
  CHECK(o["call_3"].text.find("/work/top.txt, but you haven't granted it yet.") !=
        std::string::npos);
}

TEST_CASE("rule table: whole-tool denies remove tools from the request and the prompt") {
  ReboundProcess r = tool_server(
      script_of(Json::array({call("bash", {{"command", "true"}}), call("ls", Json::object())})), {},
      {"--disallowed-tools", "Bash", "--disallowed-tools", "LS,Glob", "--tools",
       "read,bash,edit,write,ls,find,grep"});
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  CHECK(text_of(end_of(events, "call_1")["result"]) == "Tool bash not found");
  CHECK(text_of(end_of(events, "call_2")["result"]) == "Tool ls not found");
  const auto log = r.jsonl("script-log.jsonl");
  REQUIRE(!log.empty());
  CHECK(log[0]["tools"] == Json::array({"read", "edit", "write", "grep"}));
  const Json tools = r.command(Json{{"id", "t"}, {"type", "get_tools"}})["data"]["tools"];
  for (const auto& t : tools)
    CHECK(t["name"] != "bash");
  const Json policy = r.command(Json{{"id", "g"}, {"type", "get_policy"}})["data"];
  CHECK(policy["removedTools"] == Json::array({"bash", "ls", "find"}));
}

TEST_CASE("modes: plan and dontAsk texts, acceptEdits, bypassPermissions") {
  auto plan = batch({call("edit", {{"path", "work/top.txt"}, {"oldText", "top"}, {"newText", "x"}}),
                     call("read", {{"path", "work/top.txt"}}), "true"},
                    {"--permission-mode", "plan", "--allowed-tools", "Edit"});
  CHECK(plan["call_1"].text.rfind("Cannot write to /", 0) == 0);
  CHECK(plan["call_1"].text.find("/work/top.txt while in plan mode.") != std::string::npos);
  CHECK(plan["call_2"].text == "top");
  CHECK(plan["call_3"].text == kApproval);
  auto dont = batch(
      {"true", call("read", {{"path", "/etc/hostname"}}), call("read", {{"path", "work/top.txt"}})},
      {"--permission-mode", "dontAsk"});
  CHECK(dont["call_1"].text ==
        "Permission to use bash has been denied because Rebound is running in don't ask mode. You "
        "may reach the goal with other tools that naturally fit the task, but do not try to get "
        "around this denial. If this permission is essential to the user's request, stop and "
        "explain what you were trying to do and why you need it.");
  CHECK(dont["call_2"].text.rfind("Permission to use read has been denied because", 0) == 0);
  CHECK(dont["call_3"].text == "top");
  auto accept = batch(
      {call("write", {{"path", "work/new.txt"}, {"content", "n"}}),
       call("write", {{"path", "/tmp/rebound-policy-outside.txt"}, {"content", "n"}}), "true"},
      {"--permission-mode", "acceptEdits"});
  CHECK_FALSE(accept["call_1"].error);
  CHECK(accept["call_2"].text ==
        "Rebound requested permissions to write to /tmp/rebound-policy-outside.txt, but you "
        "haven't granted it yet.");
  CHECK(accept["call_3"].text == kApproval);
  auto bypass =
      batch({"true", call("write", {{"path", "/tmp/rebound-policy-bypass.txt"}, {"content", "n"}})},
            {"--permission-mode", "bypassPermissions", "--disallowed-tools", "Bash(rm:*)"});
  CHECK_FALSE(bypass["call_1"].error);
  CHECK_FALSE(bypass["call_2"].error);
  std::remove("/tmp/rebound-policy-bypass.txt");
}

TEST_CASE("nothing configured: every call runs as before, and get_policy says so") {
  auto o = batch({"echo $((1+1)) && true",
                  call("write", {{"path", "/tmp/rebound-policy-none.txt"}, {"content", "x"}})},
                 {});
  CHECK(o["call_1"].text == "2\n");
  CHECK_FALSE(o["call_2"].error);
  std::remove("/tmp/rebound-policy-none.txt");
  ReboundProcess r({"--no-session"});
  const Json p = r.command(Json{{"id", "g"}, {"type", "get_policy"}})["data"];
  CHECK(p["mode"] == "bypassPermissions");
  CHECK(p["modeSource"] == "default");
  CHECK(p["prompts"] == "client");
  CHECK(p["rules"] == Json::array());
  CHECK(p["sandbox"]["status"] == "off");
  std::vector<std::string> keys;
  for (const auto& [k, v] : p.items())
    keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"mode", "modeSource", "prompts", "askTimeoutMs",
                                         "workingDirectories", "rules", "removedTools", "sandbox",
                                         "sources"});
}

namespace {

// A server in default mode whose one batch asks about `calls`; the questions are answered by
// `answer` (a value, or null to leave it open) in order.
struct Asked {
  std::vector<Json> questions;
  std::vector<Json> events;
};

Asked ask_through(ReboundProcess& r, const std::vector<Json>& answers) {
  Asked out;
  r.send(prompt());
  std::size_t next = 0;
  for (;;) {
    Json line = r.read_json(std::chrono::milliseconds(10000));
    out.events.push_back(line);
    if (line["type"] == "agent_end") break;
    if (line["type"] != "extension_ui_request") continue;
    out.questions.push_back(line);
    if (next < answers.size() && !answers[next].is_null()) {
      Json response = answers[next];
      response["type"] = "extension_ui_response";
      response["id"] = line["id"];
      r.send(response);
    }
    ++next;
  }
  return out;
}

}  // namespace

TEST_CASE("asking over the rpc wire: pi's select dialog, yes, no, always, cancel, confirm") {
  ReboundProcess r =
      tool_server(script_of(Json::array({call("bash", {{"command", "echo one"}}),
                                         call("bash", {{"command", "echo two"}}),
                                         call("write", {{"path", "work/w.txt"}, {"content", "w"}}),
                                         call("write", {{"path", "work/v.txt"}, {"content", "v"}}),
                                         call("read", {{"path", "/etc/hostname"}}),
                                         call("read", {{"path", "/etc/os-release"}})})),
                  {}, {"--permission-mode", "default"});
  const Asked a = ask_through(
      r, {Json{{"value", "Allow"}}, Json{{"value", "Deny"}}, Json{{"value", "Always allow"}},
          Json{{"cancelled", true}}, Json{{"confirmed", true}}});
  // The second write is not asked: "Always allow" granted write for the session.
  REQUIRE(a.questions.size() == 5);
  const Json& q = a.questions[0];
  std::vector<std::string> keys;
  for (const auto& [k, v] : q.items())
    keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"type", "id", "method", "title", "options", "timeout",
                                         "permission"});
  CHECK(q["method"] == "select");
  CHECK(q["title"] == "Allow bash: echo one?");
  CHECK(q["options"] == Json::array({"Allow", "Always allow", "Deny"}));
  CHECK(q["timeout"] == 60000);
  CHECK(q["permission"] == Json{{"toolCallId", "call_1"},
                                {"toolName", "bash"},
                                {"args", {{"command", "echo one"}}},
                                {"reason", "mode default"}});
  CHECK(a.questions[2]["title"] == "Allow write: work/w.txt?");
  CHECK(text_of(end_of(a.events, "call_1")["result"]) == "one\n");
  CHECK(text_of(end_of(a.events, "call_2")["result"]) == "Permission denied by the user");
  CHECK(end_of(a.events, "call_3")["isError"] == false);
  CHECK(end_of(a.events, "call_4")["isError"] == false);
  CHECK(text_of(end_of(a.events, "call_5")["result"]) == "Permission denied by the user");
  CHECK(end_of(a.events, "call_6")["isError"] == false);
  const Json policy = r.command(Json{{"id", "g"}, {"type", "get_policy"}})["data"];
  CHECK(policy["rules"].back() ==
        Json{{"behavior", "allow"}, {"rule", "write"}, {"tool", "write"}, {"source", "session"}});
}

TEST_CASE("asking over the rpc wire: no answer within askTimeoutMs is a denial") {
  ReboundProcess r = tool_server(script_of(Json::array({call("bash", {{"command", "true"}})})), {},
                                 {"--permission-mode", "default"},
                                 R"j({"permissions":{"askTimeoutMs":300,"ask":["Bash(true)"]}})j");
  const Asked a = ask_through(r, {Json()});
  REQUIRE(a.questions.size() == 1);
  CHECK(a.questions[0]["timeout"] == 300);
  // An ask rule: no "Always allow".
  CHECK(a.questions[0]["options"] == Json::array({"Allow", "Deny"}));
  CHECK(a.questions[0]["permission"]["reason"] == "rule Bash(true) (global)");
  CHECK(text_of(end_of(a.events, "call_1")["result"]) ==
        "Permission denied: no answer within 300 ms");
  // A late answer is ignored.
  r.send(Json{{"type", "extension_ui_response"}, {"id", a.questions[0]["id"]}, {"value", "Allow"}});
  CHECK(r.command(Json{{"id", "s"}, {"type", "get_state"}})["success"] == true);
}

TEST_CASE("asking over the rpc wire: an abort closes the question, the call ends aborted") {
  ReboundProcess r = tool_server(script_of(Json::array({call("bash", {{"command", "true"}}),
                                                        call("bash", {{"command", "false"}})})),
                                 {}, {"--permission-mode", "default"});
  r.send(prompt());
  r.read_until_type("extension_ui_request");
  r.send(Json{{"id", "a"}, {"type", "abort"}});
  const auto events = r.read_until_type("agent_end");
  CHECK(text_of(end_of(events, "call_1")["result"]) == "Operation aborted");
  CHECK(text_of(end_of(events, "call_2")["result"]) == "Operation aborted");
}

TEST_CASE("set_permission_mode: from the next call on, an unknown mode is an invalid field") {
  ReboundProcess r = tool_server(script_of(Json::array({call("bash", {{"command", "echo x"}})})),
                                 {}, {"--permission-prompts", "none"});
  const Json bad = r.command(Json{{"id", "m0"}, {"type", "set_permission_mode"}, {"mode", "auto"}});
  CHECK(bad["success"] == false);
  CHECK(bad["error"] ==
        "Invalid field 'mode': expected one of default, acceptEdits, plan, dontAsk, "
        "bypassPermissions");
  const Json ok =
      r.command(Json{{"id", "m1"}, {"type", "set_permission_mode"}, {"mode", "dontAsk"}});
  CHECK(ok["data"] == Json{{"mode", "dontAsk"}});
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  CHECK(text_of(end_of(events, "call_1")["result"])
            .rfind("Permission to use bash has been denied because", 0) == 0);
  const Json p = r.command(Json{{"id", "g"}, {"type", "get_policy"}})["data"];
  CHECK(p["mode"] == "dontAsk");
  CHECK(p["modeSource"] == "session");
}

TEST_CASE(
    "trust: an untrusted project's allow rules and looser mode are skipped, its denies count") {
  const std::string project =
      R"j({"permissions":{"allow":["Bash"],"deny":["Bash(rm:*)"],"defaultMode":"bypassPermissions","additionalDirectories":["/opt"]}})j";
  ReboundProcess::Files files{
      {"agent/settings.json", R"j({"permissions":{"defaultMode":"default"}})j"},
      {".rebound/settings.json", project},
      {"script.json", script_of(Json::array({call("bash", {{"command", "echo hi"}}),
                                             call("bash", {{"command", "rm -f nothing"}})}))}};
  ReboundProcess r(scripted_args({"--no-session", "--permission-prompts", "none"}), {}, files);
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  CHECK(text_of(end_of(events, "call_1")["result"]) == kApproval);
  CHECK(text_of(end_of(events, "call_2")["result"]) == bash_denied("rm -f nothing"));
  const Json p = r.command(Json{{"id", "g"}, {"type", "get_policy"}})["data"];
  CHECK(p["mode"] == "default");
  CHECK(p["modeSource"] == "global");
  CHECK(p["workingDirectories"].size() == 1);
  r.proc().close_stdin();
  r.proc().wait();
  const std::string err = r.proc().stderr_text();
  CHECK(err.find(".rebound/settings.json: permissions.allow, permissions.additionalDirectories, "
                 "permissions.defaultMode bypassPermissions ignored: the project is not trusted "
                 "(set \"trustProjectSettings\": true in ") != std::string::npos);

  files["agent/settings.json"] =
      R"j({"trustProjectSettings":true,"permissions":{"defaultMode":"default"}})j";
  ReboundProcess t(scripted_args({"--no-session", "--permission-prompts", "none"}), {}, files);
  t.send(prompt());
  const auto trusted = t.read_until_type("agent_end");
  CHECK(text_of(end_of(trusted, "call_1")["result"]) == "hi\n");
  CHECK(text_of(end_of(trusted, "call_2")["result"]) == bash_denied("rm -f nothing"));
  const Json tp = t.command(Json{{"id", "g"}, {"type", "get_policy"}})["data"];
  CHECK(tp["mode"] == "bypassPermissions");
  CHECK(tp["modeSource"] == "project");
  CHECK(tp["workingDirectories"].size() == 2);
}

TEST_CASE("invalid configurations stop the server with exit status 2 and the reason") {
  struct Case {
    std::vector<std::string> flags;
    std::string settings;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--allowed-tools", "Bash(echo:*"},
       "{}",
       "Invalid permission rule 'Bash(echo:*' (--allowed-tools): unbalanced parentheses"},
      {{"--allowed-tools", "NoSuchTool"},
       "{}",
       "Invalid permission rule 'NoSuchTool' (--allowed-tools): unknown tool NoSuchTool"},
      {{},
       R"j({"permissions":{"deny":["Read","Bash(make && make test)"]}})j",
       "Invalid permission rule 'Bash(make && make test)' (permissions.deny[1] in "
       "@DIR@/agent/settings.json): bash specifiers match one simple command; write one rule per "
       "command"},
      {{"--disallowed-tools", "Read(../x)"},
       "{}",
       "Invalid permission rule 'Read(../x)' (--disallowed-tools): use //absolute paths for places "
       "outside the workspace"},
      {{"--permission-mode", "auto"},
       "{}",
       "Invalid permission mode 'auto' (--permission-mode): expected one of default, acceptEdits, "
       "plan, dontAsk, bypassPermissions"},
      {{},
       R"j({"permissions":{"defaultMode":"manual"}})j",
       "Invalid permission mode 'manual' (permissions.defaultMode in @DIR@/agent/settings.json): "
       "expected one of default, acceptEdits, plan, dontAsk, bypassPermissions"},
      {{},
       R"j({"permissions":{"allow":"Bash"}})j",
       "Invalid settings @DIR@/agent/settings.json: permissions.allow must be an array of strings"},
      {{},
       R"j({"permissions":{"alow":[]}})j",
       "Invalid settings @DIR@/agent/settings.json: unknown key permissions.alow"},
      {{},
       R"j({"permissions":[]})j",
       "Invalid settings @DIR@/agent/settings.json: permissions must be an object"},
      {{},
       R"j({"sandbox":{"enabled":"yes"}})j",
       "Invalid settings @DIR@/agent/settings.json: sandbox.enabled must be a boolean"},
      {{},
       R"j({"permissions":{"askTimeoutMs":0}})j",
       "Invalid settings @DIR@/agent/settings.json: permissions.askTimeoutMs must be a positive "
       "integer"},
      {{},
       "{\"permissions\": {,}",
       "Invalid settings @DIR@/agent/settings.json: invalid JSON at line 1, column"},
      {{"--acp-permissions", "ask", "--permission-mode", "default"},
       "{}",
       "--acp-permissions cannot be used with --permission-mode"},
  };
  for (const auto& c : cases) {
    INFO(c.message);
    std::vector<std::string> args{"--no-session"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    ReboundProcess r(args, {}, {{"agent/settings.json", c.settings}});
    r.expect_any_exit();
    r.proc().close_stdin();
    CHECK(r.proc().wait() == 2);
    std::string expected = c.message;
    if (const auto at = expected.find("@DIR@"); at != std::string::npos)
      expected.replace(at, 5, r.dir().path().string());
    CHECK(r.proc().stderr_text().find(expected) != std::string::npos);
    CHECK(r.proc().read_line(std::chrono::milliseconds(100)) == std::nullopt);
  }
}

TEST_CASE("a PreToolUse hook's allow and ask count as rules, hooks see the mode") {
  ReboundProcess r = tool_server(
      script_of(Json::array(
          {call("bash", {{"command", "echo hooked"}}), call("bash", {{"command", "true"}})})),
      {}, {"--permission-mode", "default", "--permission-prompts", "none"},
      R"j({"hooks":{"PreToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"input=$(cat); echo \"$input\" >> $HOME/hook.log; case \"$input\" in *hooked*) echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}';; *) echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"the hook wants a person\"}}';; esac"}]}]}})j");
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  CHECK(text_of(end_of(events, "call_1")["result"]) == "hooked\n");
  CHECK(text_of(end_of(events, "call_2")["result"]) == "the hook wants a person");
  const auto lines = parse_jsonl(r.dir().read("hook.log"));
  REQUIRE(lines.size() == 2);
  CHECK(lines[0]["permission_mode"] == "default");
}

TEST_CASE("PermissionRequest hooks answer before the client: allow, updatedInput, deny, none") {
  // The hook logs its stdin and decides by the command: allow, allow with a new input, deny
  // with a message, or no decision (the question then goes to the client, who says Deny).
  const std::string hook =
      "input=$(cat); echo \"$input\" >> $HOME/permission.log; "
      "case \"$input\" in "
      "*'echo allowed'*) echo "
      "'{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{"
      "\"behavior\":\"allow\"}}}';; "
      "*'echo rewrite'*) echo "
      "'{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{"
      "\"behavior\":\"allow\",\"updatedInput\":{\"command\":\"echo rewritten\"}}}}';; "
      "*'echo denied'*) echo "
      "'{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{"
      "\"behavior\":\"deny\",\"message\":\"nope from hook\"}}}';; "
      "esac";
  Json settings{
      {"hooks",
       {{"PermissionRequest",
         Json::array(
             {Json{{"matcher", "bash"},
                   {"hooks", Json::array({Json{{"type", "command"}, {"command", hook}}})}}})}}}};
  ReboundProcess r = tool_server(
      script_of(Json::array(
          {call("bash", {{"command", "echo allowed"}}), call("bash", {{"command", "echo rewrite"}}),
           call("bash", {{"command", "echo denied"}}), call("bash", {{"command", "echo asked"}})})),
      {}, {"--permission-mode", "default"}, settings.dump());
  const Asked a = ask_through(r, {Json{{"value", "Deny"}}});
  REQUIRE(a.questions.size() == 1);
  CHECK(a.questions[0]["title"] == "Allow bash: echo asked?");
  CHECK(text_of(end_of(a.events, "call_1")["result"]) == "allowed\n");
  CHECK(text_of(end_of(a.events, "call_2")["result"]) == "rewritten\n");
  CHECK(text_of(end_of(a.events, "call_3")["result"]) == "nope from hook");
  CHECK(text_of(end_of(a.events, "call_4")["result"]) == "Permission denied by the user");
  const auto lines = parse_jsonl(r.dir().read("permission.log"));
  REQUIRE(lines.size() == 4);
  CHECK(lines[0]["hook_event_name"] == "PermissionRequest");
  CHECK(lines[0]["permission_mode"] == "default");
  CHECK(lines[0]["tool_name"] == "bash");
  CHECK(lines[0]["tool_input"] == Json{{"command", "echo allowed"}});
  CHECK(lines[0]["tool_use_id"] == "call_1");
}

TEST_CASE("PermissionRequest hooks do not run in dontAsk mode or for a rule's denial") {
  const std::string hook = "cat >> $HOME/permission.log; echo '{}'";
  Json settings{
      {"hooks",
       {{"PermissionRequest",
         Json::array(
             {Json{{"hooks", Json::array({Json{{"type", "command"}, {"command", hook}}})}}})}}}};
  ReboundProcess r = tool_server(
      script_of(Json::array(
          {call("bash", {{"command", "true"}}), call("bash", {{"command", "rm -f x"}})})),
      {}, {"--permission-mode", "dontAsk", "--disallowed-tools", "Bash(rm:*)"}, settings.dump());
  r.send(prompt());
  const auto events = r.read_until_type("agent_end");
  CHECK(text_of(end_of(events, "call_1")["result"])
            .rfind("Permission to use bash has been denied because", 0) == 0);
  CHECK(text_of(end_of(events, "call_2")["result"]) == bash_denied("rm -f x"));
  CHECK(r.dir().read("permission.log").empty());
}
