// Command hooks through the real binary (extensions.md sections 1.1, 3.3, 3.4, 3.5): the two
// retry hooks during a scripted 503 then success receive the common prefix and the events'
// fields in their order; a project's hooks run only when the user's settings trust projects;
// --no-extensions runs none; a failing hook is reported and the session goes on.

#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "tests/support/proc_status.h"
#include "tests/support/rebound_process.h"
#include "tests/support/scripted_tools.h"
#include "tests/support/temp_dir.h"

using namespace rebound;
using protocol::Json;
using testing::ReboundProcess;
using namespace std::chrono_literals;

namespace {

const char* kScript = R"j([{"error":"503 overloaded"},{"text":"Hello there."}])j";

// A settings file whose AutoRetryStart and AutoRetryEnd hooks append their stdin to `log`.
std::string retry_hooks(const std::string& log, const std::string& extra = "") {
  return R"j({"retry":{"baseDelayMs":10}, "hooks":{
    "AutoRetryStart":[{"hooks":[{"type":"command","command":"cat >> )j" +
         log + R"j("}]}],
    "AutoRetryEnd":[{"hooks":[{"type":"command","command":"cat >> )j" +
         log + R"j("}]}]})j" + extra + "}";
}

// A lowercase UUID v4 (a prompt_id).
bool is_uuid4(const Json& v) {
  if (!v.is_string()) return false;
  const std::string t = v.get<std::string>();
  if (t.size() != 36 || t[14] != '4') return false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? t[i] != '-' : !std::isxdigit(static_cast<unsigned char>(t[i])) || std::isupper(t[i]))
      return false;
  }
  return true;
}

// The pid a hook wrote to `file` (0 when there is none).
pid_t read_pid(const std::string& file) {
  std::ifstream in(file);
  pid_t pid = 0;
  in >> pid;
  return pid;
}

// The lines of `path` once it has `n` of them (hooks are observers: they may end after the
// events the test reads; a bound of 10 s, not a timing assertion). They are hooks' stdin: when
// the tests capture output they are kept for the schema check (tests/schema/validate_hooks.py).
std::vector<Json> lines_of(const std::filesystem::path& path, std::size_t n) {
  std::vector<Json> out;
  for (int i = 0; i < 500; ++i) {
    out.clear();
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
      out.push_back(Json::parse(line));
    if (out.size() >= n) break;
    std::this_thread::sleep_for(20ms);  // waiting for another process's output
  }
  if (const char* dir = std::getenv("REBOUND_CAPTURE_DIR"); dir && *dir) {
    static int file = 0;
    std::filesystem::create_directories(std::filesystem::path(dir) / "hooks");
    std::ofstream keep(std::filesystem::path(dir) / "hooks" /
                       (std::to_string(::getpid()) + "-" + std::to_string(++file) + ".jsonl"));
    for (const auto& j : out)
      keep << j.dump() << "\n";
  }
  return out;
}

// The text of `path` once it is `expected` (or what it is after 10 s).
std::string text_of_when(const std::filesystem::path& path, const std::string& expected) {
  std::string text;
  for (int i = 0; i < 500 && text != expected; ++i) {
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in), {});
    if (text != expected) std::this_thread::sleep_for(20ms);  // another process's output
  }
  return text;
}

// A prompt whose first attempt fails with a 503 and whose retry succeeds (auto_retry_end comes
// after the retry's agent_end).
void prompt_through_retry(ReboundProcess& r) {
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "hi"}});
  CHECK(r.read_until_type("auto_retry_end", 20000ms).back()["success"] == true);
}

}  // namespace

TEST_CASE("hooks: AutoRetryStart and AutoRetryEnd get the prefix and the events' fields") {
  testing::TempDir logs;  // outside the server's directory
  const std::string log = (logs.path() / "retry.log").string();
  ReboundProcess r({"--provider", "scripted", "--script", "@DIR@/script.json", "--session-dir",
                    "@DIR@/sessions"},
                   {}, {{"agent/settings.json", retry_hooks(log)}, {"script.json", kScript}});
  const Json state = r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"];
  prompt_through_retry(r);
  auto got = lines_of(log, 2);
  REQUIRE(got.size() == 2);
  // Observers: each runs on its own, so a loaded machine may write their lines either way round.
  if (got[0]["hook_event_name"] == "AutoRetryEnd") std::swap(got[0], got[1]);
  const std::string cwd = std::filesystem::canonical(r.dir().path()).string();
  // The prompt's id, the same in both (a continuation keeps it).
  REQUIRE(is_uuid4(got[0]["prompt_id"]));
  const std::string prompt_id = got[0]["prompt_id"];
  // Exactly the spec's keys in its order: prefix, then the event without its type.
  CHECK(got[0].dump() ==
        Json::parse(R"({"session_id":")" + state["sessionId"].get<std::string>() +
                    R"(","transcript_path":")" + state["sessionFile"].get<std::string>() +
                    R"(","cwd":")" + cwd + R"(","prompt_id":")" + prompt_id +
                    R"(","hook_event_name":"AutoRetryStart","attempt":1,"maxAttempts":3,)"
                    R"("delayMs":10,"errorMessage":"503 overloaded"})")
            .dump());
  CHECK(got[1].dump() ==
        Json::parse(R"({"session_id":")" + state["sessionId"].get<std::string>() +
                    R"(","transcript_path":")" + state["sessionFile"].get<std::string>() +
                    R"(","cwd":")" + cwd + R"(","prompt_id":")" + prompt_id +
                    R"(","hook_event_name":"AutoRetryEnd","success":true,"attempt":1})")
            .dump());
}

TEST_CASE("hooks: a project's run only when the user's settings trust projects") {
  for (const bool trusted : {false, true}) {
    CAPTURE(trusted);
    testing::TempDir logs;  // outside the server's directory
    const std::string log = (logs.path() / "project.log").string();
    const std::string project =
        R"j({"hooks":{"AutoRetryStart":[{"hooks":[{"type":"command","command":"echo ran >> )j" +
        log + R"j("}]}]}})j";
    // The project cannot opt itself in: its own trustProjectSettings is ignored.
    const std::string project_self_trusting =
        project.substr(0, project.size() - 1) + R"j(,"trustProjectSettings":true})j";
    ReboundProcess r({"--no-session", "--provider", "scripted", "--script", "@DIR@/script.json"},
                     {},
                     {{"agent/settings.json",
                       trusted ? R"j({"retry":{"baseDelayMs":10},"trustProjectSettings":true})j"
                               : R"j({"retry":{"baseDelayMs":10}})j"},
                      {".rebound/settings.json", project_self_trusting},
                      {"script.json", kScript}});
    prompt_through_retry(r);
    if (trusted) {
      CHECK(text_of_when(log, "ran\n") == "ran\n");
    } else {
      // The untrusted project is named on stderr, and its hook never ran.
      r.command(Json{{"id", "s"}, {"type", "get_state"}});
      CHECK(!std::filesystem::exists(log));
      CHECK(r.proc().stderr_text().find("defines 1 hooks and 0 extensions; not run") !=
            std::string::npos);
    }
  }
}

TEST_CASE("hooks: --no-extensions runs none, a failing hook is logged and the session goes on") {
  testing::TempDir logs;  // outside the server's directory
  const std::string log = (logs.path() / "none.log").string();
  {
    ReboundProcess r({"--no-session", "--no-extensions", "--provider", "scripted", "--script",
                      "@DIR@/script.json"},
                     {}, {{"agent/settings.json", retry_hooks(log)}, {"script.json", kScript}});
    prompt_through_retry(r);
    r.command(Json{{"id", "s"}, {"type", "get_state"}});
  }
  CHECK(!std::filesystem::exists(log));
  ReboundProcess r({"--no-session", "--provider", "scripted", "--script", "@DIR@/script.json",
                    "--log-level", "warn"},
                   {},
                   {{"agent/settings.json",
                     R"j({"retry":{"baseDelayMs":10},"hooks":{"AutoRetryStart":[{"hooks":[
                         {"type":"command","command":"echo broken >&2; exit 3"}]}]}})j"},
                    {"script.json", kScript}});
  prompt_through_retry(r);
  for (int i = 0; i < 250 && r.proc().stderr_text().find("Hook exited") == std::string::npos; ++i)
    std::this_thread::sleep_for(20ms);  // the observer's result comes after the events
  CHECK(r.proc().stderr_text().find("hook[AutoRetryStart] echo broken >&2; exit 3: Hook exited "
                                    "with code 3: broken") != std::string::npos);
  CHECK(r.command(Json{{"id", "s"}, {"type", "get_state"}})["success"] == true);
}

namespace {

// A scripted server whose settings hold `pre_tool_use` (the PreToolUse groups, JSON).
ReboundProcess guarded(const Json& calls, const std::string& pre_tool_use) {
  return testing::tool_server(testing::script_of(calls), {}, {},
                              R"j({"hooks":{"PreToolUse":)j" + pre_tool_use + "}}");
}

}  // namespace

TEST_CASE("PreToolUse: exit 2 refuses the call with the hook's text, the others run") {
  const std::string guard =
      R"j(grep -q 'rm -rf' && { echo "no rm -rf here" >&2; exit 2; }; exit 0)j";
  ReboundProcess r = guarded(Json::array({testing::call("bash", {{"command", "rm -rf work"}}),
                                          testing::call("bash", {{"command", "echo ok"}})}),
                             R"j([{"matcher":"Bash","hooks":[{"type":"command","command":)j" +
                                 Json(guard).dump() + "}]}]");
  r.send(testing::prompt());
  const auto events = r.read_until_type("agent_end", 20000ms);
  const Json refused = testing::end_of(events, "call_1");
  CHECK(refused["isError"] == true);
  CHECK(refused["result"].dump() ==
        Json{{"content", Json::array({Json{{"type", "text"},
                                           {"text", "PreToolUse:bash hook error: [" + guard +
                                                        "]: no rm -rf here"}}})},
             {"details", Json::object()}}
            .dump());
  CHECK(testing::text_of(testing::end_of(events, "call_2")["result"]) == "ok\n");
  CHECK(std::filesystem::exists(r.dir().path() / "work"));  // the guarded command never ran
  // The refused call ended before the next one started (one call after the other).
  std::vector<std::string> order;
  for (const auto& e : events) {
    const std::string type = e.value("type", "");
    if (type == "tool_execution_start" || type == "tool_execution_end")
      order.push_back(type.substr(15) + ":" + e["toolCallId"].get<std::string>());
  }
  CHECK(order ==
        std::vector<std::string>{"start:call_1", "end:call_1", "start:call_2", "end:call_2"});
}

TEST_CASE("PreToolUse: the stdin of the spec, a JSON deny, updatedInput replaces the input") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "stdin.log").string();
  const std::string hook = "cat >> " + log +
                           "; echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\","
                           "\"updatedInput\":{\"command\":\"echo replaced\"}}}'";
  const std::string deny =
      R"j(echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on Fridays"}}')j";
  ReboundProcess r =
      guarded(Json::array({testing::call("bash", {{"command", "echo original"}}),
                           testing::call("read", {{"path", "nothing.txt"}})}),
              R"j([{"matcher":"bash","hooks":[{"type":"command","command":)j" + Json(hook).dump() +
                  R"j(}]},{"matcher":"Read","hooks":[{"type":"command","command":)j" +
                  Json(deny).dump() + "}]}]");
  const Json state = r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"];
  r.send(testing::prompt());
  const auto events = r.read_until_type("agent_end", 20000ms);
  CHECK(testing::text_of(testing::end_of(events, "call_1")["result"]) == "replaced\n");
  CHECK(testing::text_of(testing::end_of(events, "call_2")["result"]) ==
        "PreToolUse:read hook error: not on Fridays");
  std::ifstream in(log);
  std::string line;
  REQUIRE(std::getline(in, line));
  const std::string cwd = std::filesystem::canonical(r.dir().path()).string();
  const Json parsed = Json::parse(line);
  REQUIRE(is_uuid4(parsed["prompt_id"]));
  CHECK(line == R"({"session_id":")" + state["sessionId"].get<std::string>() + R"(","cwd":")" +
                    cwd + R"(","prompt_id":")" + parsed["prompt_id"].get<std::string>() +
                    R"(","permission_mode":"bypassPermissions","hook_event_name":"PreToolUse",)"
                    R"("tool_name":"bash","tool_input":{"command":"echo original"},)"
                    R"("tool_use_id":"call_1"})");
}

TEST_CASE("PreToolUse: abort during a hung hook ends every call aborted and kills the hook") {
  testing::TempDir logs;
  const std::string pid_file = (logs.path() / "hook.pid").string();
  ReboundProcess r = guarded(Json::array({testing::call("bash", {{"command", "echo one"}}),
                                          testing::call("bash", {{"command", "echo two"}})}),
                             R"j([{"hooks":[{"type":"command","command":"echo $$ > )j" + pid_file +
                                 R"j(; exec sleep 30"}]}])j");
  r.send(testing::prompt());
  r.read_until_type("tool_execution_start", 10000ms);
  for (int i = 0; i < 250 && read_pid(pid_file) <= 0; ++i)
    std::this_thread::sleep_for(20ms);  // the hook's process writing its pid
  r.send(Json{{"id", "a"}, {"type", "abort"}});
  const auto events = r.read_until_type("agent_end", 5000ms);
  CHECK(testing::text_of(testing::end_of(events, "call_1")["result"]) == "Operation aborted");
  CHECK(testing::text_of(testing::end_of(events, "call_2")["result"]) == "Operation aborted");
  int starts = 0;
  for (const auto& e : events)
    starts += e.value("type", "") == "tool_execution_start";
  CHECK(starts == 1);  // call_2's start came with its end, after call_1's
  const pid_t pid = read_pid(pid_file);
  REQUIRE(pid > 0);
  CHECK(testing::process_ended(pid));
}

namespace {

// A scripted server whose settings hold `hooks` (the hooks object, JSON).
ReboundProcess hooked(const Json& calls, const std::string& hooks) {
  return testing::tool_server(testing::script_of(calls), {}, {}, R"j({"hooks":)j" + hooks + "}");
}

std::string group(const std::string& command, const std::string& matcher = "") {
  Json g = Json::object();
  if (!matcher.empty()) g["matcher"] = matcher;
  g["hooks"] = Json::array({Json{{"type", "command"}, {"command", command}}});
  return Json::array({g}).dump();
}

// The custom messages among `events` (their message_end), in order.
std::vector<Json> custom_messages(const std::vector<Json>& events) {
  std::vector<Json> out;
  for (const auto& e : events) {
    if (e.value("type", "") == "message_end" && e["message"]["role"] == "custom")
      out.push_back(e["message"]);
  }
  return out;
}

}  // namespace

TEST_CASE(
    "PostToolUse, PostToolUseFailure: their stdin, context after the results, in the request") {
  testing::TempDir logs;
  const std::string post_log = (logs.path() / "post.log").string();
  const std::string fail_log = (logs.path() / "fail.log").string();
  const std::string pre =
      R"j(echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"pre says hi"}}')j";
  const std::string post =
      "cat >> " + post_log +
      R"j(; echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"looked at it"}}')j";
  const std::string failed = "cat >> " + fail_log + "; echo 'it broke' >&2; exit 2";
  ReboundProcess r = hooked(Json::array({testing::call("bash", {{"command", "echo ok"}}),
                                         testing::call("bash", {{"command", "exit 3"}})}),
                            R"j({"PreToolUse":)j" + group(pre, "Bash") + R"j(,"PostToolUse":)j" +
                                group(post) + R"j(,"PostToolUseFailure":)j" + group(failed) + "}");
  const Json state = r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"];
  r.send(testing::prompt());
  const auto events = r.read_until_type("agent_end", 20000ms);
  const Json ok = testing::end_of(events, "call_1");
  const Json bad = testing::end_of(events, "call_2");
  CHECK(bad["isError"] == true);

  // The hooks' stdin: the prefix, then the call, its result or error, its duration.
  const auto post_in = lines_of(post_log, 1);
  const auto fail_in = lines_of(fail_log, 1);
  REQUIRE(post_in.size() == 1);
  REQUIRE(fail_in.size() == 1);
  const std::string cwd = std::filesystem::canonical(r.dir().path()).string();
  Json expected_post =
      Json::parse(R"({"session_id":")" + state["sessionId"].get<std::string>() + R"(","cwd":")" +
                  cwd + R"(","prompt_id":")" + post_in[0].value("prompt_id", "") +
                  R"(","permission_mode":"bypassPermissions","hook_event_name":"PostToolUse",)"
                  R"("tool_name":"bash","tool_input":{"command":"echo ok"}})");
  expected_post["tool_response"] = ok["result"];
  expected_post["tool_use_id"] = "call_1";
  REQUIRE(post_in[0].contains("duration_ms"));
  CHECK(is_uuid4(post_in[0]["prompt_id"]));
  CHECK(fail_in[0]["prompt_id"] == post_in[0]["prompt_id"]);
  CHECK(post_in[0]["duration_ms"].is_number_unsigned());
  expected_post["duration_ms"] = post_in[0]["duration_ms"];
  CHECK(post_in[0].dump() == expected_post.dump());
  CHECK(fail_in[0]["hook_event_name"] == "PostToolUseFailure");
  CHECK(fail_in[0]["tool_use_id"] == "call_2");
  CHECK(fail_in[0]["error"] == testing::text_of(bad["result"]));
  CHECK(fail_in[0]["is_interrupt"] == false);
  CHECK(!fail_in[0].contains("tool_response"));

  // After both results, per call in call order: PreToolUse texts, then PostToolUse* texts.
  std::vector<std::string> order;
  for (const auto& e : events) {
    const std::string type = e.value("type", "");
    if (type == "message_end" && e["message"]["role"] == "toolResult")
      order.push_back("result:" + e["message"]["toolCallId"].get<std::string>());
    if (type == "message_end" && e["message"]["role"] == "custom")
      order.push_back(e["message"]["content"].get<std::string>());
    if (type == "turn_end") order.push_back("turn_end");
  }
  const std::string blocking = "PostToolUseFailure:bash hook blocking error from command: \"" +
                               failed + "\": [" + failed + "]: it broke";
  CHECK(order == std::vector<std::string>{"result:call_1", "result:call_2",
                                          "PreToolUse:bash hook additional context: pre says hi",
                                          "PostToolUse:bash hook additional context: looked at it",
                                          "PreToolUse:bash hook additional context: pre says hi",
                                          blocking, "turn_end", "turn_end"});
  const auto customs = custom_messages(events);
  REQUIRE(customs.size() == 4);
  CHECK(
      customs[1].dump() ==
      Json{{"role", "custom"},
           {"customType", "hook"},
           {"content", "PostToolUse:bash hook additional context: looked at it"},
           {"display", true},
           {"details", {{"hookEvent", "PostToolUse"}, {"command", post}, {"toolCallId", "call_1"}}},
           {"timestamp", customs[1]["timestamp"]}}
          .dump());
  // turn_end's toolResults leave them out; the next request and get_messages have them.
  for (const auto& e : events) {
    if (e.value("type", "") == "turn_end" && e["toolResults"].size() > 0)
      CHECK(e["toolResults"].size() == 2);
  }
  const auto log = r.jsonl("script-log.jsonl");
  REQUIRE(log.size() == 2);
  const Json& sent = log[1]["messages"];
  REQUIRE(sent.size() == 8);  // user, assistant, 2 results, 4 hook texts
  CHECK(sent[7]["role"] == "custom");
  CHECK(sent[7]["content"] == blocking);
  const Json messages = r.command(Json{{"id", "m"}, {"type", "get_messages"}})["data"]["messages"];
  CHECK(messages.size() == 9);
  CHECK(r.command(Json{{"id", "g"}, {"type", "get_state"}})["data"]["messageCount"] == 9);
}

TEST_CASE("a failing tool hook is an extension_error event, the call goes on") {
  const std::string broken = "echo boom >&2; exit 5";
  ReboundProcess r =
      hooked(Json::array({testing::call("bash", {{"command", "echo ran"}})}),
             R"j({"PreToolUse":)j" + group(broken) + R"j(,"PostToolUse":)j" +
                 group(R"j(echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse"}}')j") + "}");
  r.send(testing::prompt());
  const auto events = r.read_until_type("agent_end", 20000ms);
  std::vector<Json> errors;
  for (const auto& e : events) {
    if (e.value("type", "") == "extension_error") errors.push_back(e);
  }
  REQUIRE(errors.size() == 2);
  CHECK(errors[0].dump() == Json{{"type", "extension_error"},
                                 {"extensionPath", "hook:" + broken},
                                 {"event", "PreToolUse"},
                                 {"error", "Hook exited with code 5: boom"}}
                                .dump());
  CHECK(errors[1]["event"] == "PostToolUse");
  CHECK(errors[1]["error"] ==
        "Hook JSON output validation failed: hookSpecificOutput.hookEventName must be "
        "\"PostToolUse\"");
  CHECK(testing::text_of(testing::end_of(events, "call_1")["result"]) == "ran\n");
  CHECK(custom_messages(events).empty());
}

TEST_CASE("continue:false from a tool hook ends the run after the batch") {
  const std::string stop = R"j(echo '{"continue":false,"stopReason":"enough for today"}')j";
  ReboundProcess r = hooked(Json::array({testing::call("bash", {{"command", "echo one"}}),
                                         testing::call("bash", {{"command", "echo two"}})}),
                            R"j({"PostToolUse":)j" + group(stop) + "}");
  r.send(testing::prompt());
  const auto events = r.read_until_type("agent_end", 20000ms);
  // Both calls ran; then turn_end and agent_end, no second request.
  CHECK(testing::text_of(testing::end_of(events, "call_1")["result"]) == "one\n");
  CHECK(testing::text_of(testing::end_of(events, "call_2")["result"]) == "two\n");
  std::vector<std::string> tail;
  for (const auto& e : events)
    tail.push_back(e.value("type", ""));
  REQUIRE(tail.size() >= 2);
  CHECK(tail[tail.size() - 2] == "turn_end");
  CHECK(tail.back() == "agent_end");
  CHECK(events.back()["willRetry"] == false);
  CHECK(r.jsonl("script-log.jsonl").size() == 1);
  CHECK(r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"]["isStreaming"] == false);
  // The user is told, once per hook run that said it: a warning notice.
  std::vector<Json> notices;
  for (const auto& e : events) {
    if (e.value("type", "") == "extension_ui_request") notices.push_back(e);
  }
  REQUIRE(notices.size() == 2);
  CHECK(notices[0]["method"] == "notify");
  CHECK(notices[0]["message"] == "Operation stopped by hook: enough for today");
  CHECK(notices[0]["notifyType"] == "warning");
  CHECK(notices[0]["id"].get<std::string>().size() == 36);
  CHECK(notices[0]["id"] != notices[1]["id"]);
}

TEST_CASE("systemMessage: a notify line for the client, which the event filter never hides") {
  const std::string says = R"j(echo '{"systemMessage":"checked by the guard"}')j";
  ReboundProcess r = hooked(Json::array({testing::call("bash", {{"command", "echo x"}})}),
                            R"j({"PreToolUse":)j" + group(says) + "}");
  CHECK(r.command(Json{{"id", "f"},
                       {"type", "set_event_filter"},
                       {"events", Json::array({"agent_end"})}})["success"] == true);
  r.send(testing::prompt());
  const auto lines = r.read_until_type("agent_end", 20000ms);
  std::vector<std::string> types;
  for (const auto& l : lines)
    types.push_back(l.value("type", ""));
  CHECK(types == std::vector<std::string>{"response", "extension_ui_request", "agent_end"});
  CHECK(lines[1].dump() == Json{{"type", "extension_ui_request"},
                                {"id", lines[1]["id"]},
                                {"method", "notify"},
                                {"message", "PreToolUse:bash says: checked by the guard"},
                                {"notifyType", "info"}}
                               .dump());
}

TEST_CASE("abort during a hung PostToolUse hook: the call ends with its result, no context") {
  testing::TempDir logs;
  const std::string pid_file = (logs.path() / "post.pid").string();
  ReboundProcess r = hooked(
      Json::array({testing::call("bash", {{"command", "echo done-already"}})}),
      R"j({"PreToolUse":)j" +
          group(
              R"j(echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"dropped"}}')j") +
          R"j(,"PostToolUse":)j" + group("echo $$ > " + pid_file + "; exec sleep 30") + "}");
  r.send(testing::prompt());
  for (int i = 0; i < 500 && read_pid(pid_file) <= 0; ++i)
    std::this_thread::sleep_for(20ms);  // the hook's process writing its pid
  REQUIRE(std::filesystem::exists(pid_file));
  r.send(Json{{"id", "a"}, {"type", "abort"}});
  const auto events = r.read_until_type("agent_end", 5000ms);
  CHECK(testing::text_of(testing::end_of(events, "call_1")["result"]) == "done-already\n");
  CHECK(custom_messages(events).empty());
  const pid_t pid = read_pid(pid_file);
  REQUIRE(pid > 0);
  CHECK(testing::process_ended(pid));
  // user, assistant, the result, the aborted assistant message: no hook text.
  const Json messages = r.command(Json{{"id", "m"}, {"type", "get_messages"}})["data"]["messages"];
  REQUIRE(messages.size() == 4);
  for (const auto& m : messages)
    CHECK(m["role"] != "custom");
}

namespace {

// A scripted server that answers every request with `text`, with `settings`.
ReboundProcess answering(const std::string& text, const std::string& settings) {
  return testing::tool_server(Json::array({Json{{"text", text}}}).dump(), {}, {}, settings);
}

std::vector<std::string> types_of(const std::vector<Json>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    std::string type = e.value("type", "");
    if (type == "message_end") type += ":" + e["message"]["role"].get<std::string>();
    if (type == "message_start" || type == "message_update") continue;
    out.push_back(type);
  }
  return out;
}

}  // namespace

TEST_CASE("Stop: exit 2 continues the run with its feedback, the guard ends the ninth block") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "stop.log").string();
  const std::string hook = "cat >> " + log + "; echo 'not finished' >&2; exit 2";
  ReboundProcess r = answering("all done", R"j({"hooks":{"Stop":)j" + group(hook) + "}}");
  r.send(testing::prompt());
  const auto events = r.read_until_type("agent_end", 30000ms);
  // One run: 9 requests (Claude Code's cap of 9 consecutive blocks), each followed by Stop.
  CHECK(r.jsonl("script-log.jsonl").size() == 9);
  const auto stdin_lines = lines_of(log, 9);
  REQUIRE(stdin_lines.size() == 9);
  CHECK(stdin_lines[0]["hook_event_name"] == "Stop");
  CHECK(stdin_lines[0]["permission_mode"] == "bypassPermissions");
  CHECK(stdin_lines[0]["stop_hook_active"] == false);
  CHECK(stdin_lines[0]["last_assistant_message"] == "all done");
  CHECK(stdin_lines[1]["stop_hook_active"] == true);
  CHECK(stdin_lines[8]["stop_hook_active"] == true);
  // turn_end, the feedback, the next turn; after the ninth Stop the error and agent_end.
  const auto types = types_of(events);
  int starts = 0, feedback = 0;
  for (const auto& t : types) {
    starts += t == "agent_start";
    feedback += t == "message_end:custom";
  }
  CHECK(starts == 1);
  CHECK(feedback == 8);
  const auto customs = custom_messages(events);
  REQUIRE(!customs.empty());
  CHECK(customs[0]["content"] == "Stop hook feedback:\n[" + hook + "]: not finished");
  CHECK(customs[0]["details"].dump() == Json{{"hookEvent", "Stop"}, {"command", hook}}.dump());
  REQUIRE(types.size() >= 4);
  CHECK(std::vector<std::string>(types.end() - 3, types.end()) ==
        std::vector<std::string>{"turn_end", "extension_error", "agent_end"});
  const Json& error = events[events.size() - 2];
  CHECK(error.dump() ==
        Json{{"type", "extension_error"},
             {"extensionPath", "hook:" + hook},
             {"event", "Stop"},
             {"error", "Stop hooks blocked the run from ending 9 times in a row; the run ends"}}
            .dump());
  // The first continued turn: turn_end, the feedback, turn_start.
  const auto first_turn_end = std::find(types.begin(), types.end(), "turn_end");
  REQUIRE(std::distance(first_turn_end, types.end()) > 2);
  CHECK(*(first_turn_end + 1) == "message_end:custom");
  CHECK(*(first_turn_end + 2) == "turn_start");
}

TEST_CASE("Stop: additionalContext continues once, a passing hook ends it, continue:false wins") {
  testing::TempDir logs;
  const std::string mark = (logs.path() / "mark").string();
  const std::string once =
      "[ -e " + mark + " ] && exit 0; touch " + mark +
      R"j(; echo '{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"check the tests"}}')j";
  ReboundProcess r =
      answering("ok", R"j({"extensionRunner":{"stopHookBlockLimit":3},"hooks":{"Stop":)j" +
                          group(once) + "}}");
  r.send(testing::prompt());
  auto events = r.read_until_type("agent_end", 20000ms);
  CHECK(r.jsonl("script-log.jsonl").size() == 2);
  auto customs = custom_messages(events);
  REQUIRE(customs.size() == 1);
  CHECK(customs[0]["content"] == "Stop hook additional context: check the tests");
  // The continued request saw the text as the conversation's last message.
  const Json sent = r.jsonl("script-log.jsonl")[1]["messages"];
  CHECK(sent.back()["role"] == "custom");

  // A block together with another hook's continue:false: the run ends.
  ReboundProcess s = answering(
      "ok", R"j({"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo more >&2; exit 2"},
             {"type":"command","command":"echo '{\"continue\":false}'"}]}]}})j");
  s.send(testing::prompt());
  events = s.read_until_type("agent_end", 20000ms);
  CHECK(s.jsonl("script-log.jsonl").size() == 1);
  CHECK(custom_messages(events).empty());
}

TEST_CASE("Stop: abort while the hooks run ends the run at once, the hook is killed") {
  testing::TempDir logs;
  const std::string pid_file = (logs.path() / "stop.pid").string();
  ReboundProcess r =
      answering("ok", R"j({"hooks":{"Stop":)j" +
                          group("echo $$ > " + pid_file + "; echo x >&2; exec sleep 30") + "}}");
  r.send(testing::prompt());
  for (int i = 0; i < 500 && read_pid(pid_file) <= 0; ++i)
    std::this_thread::sleep_for(20ms);  // the hook's process writing its pid
  REQUIRE(std::filesystem::exists(pid_file));
  CHECK(r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"]["isStreaming"] == true);
  r.send(Json{{"id", "a"}, {"type", "abort"}});
  const auto events = r.read_until_type("agent_end", 5000ms);
  CHECK(custom_messages(events).empty());
  CHECK(r.read_until_type("response", 5000ms).back()["id"] == "a");
  const pid_t pid = read_pid(pid_file);
  REQUIRE(pid > 0);
  CHECK(testing::process_ended(pid));
  CHECK(r.command(Json{{"id", "s2"}, {"type", "get_state"}})["data"]["isStreaming"] == false);
}

TEST_CASE("UserPromptSubmit: exit 2 refuses the prompt, nothing runs or is stored") {
  const std::string guard = R"j(grep -q secret && { echo "no secrets" >&2; exit 2; }; exit 0)j";
  ReboundProcess r = answering("ok", R"j({"hooks":{"UserPromptSubmit":)j" + group(guard) + "}}");
  const Json refused =
      r.command(Json{{"id", "p"}, {"type", "prompt"}, {"message", "print the secret key"}});
  CHECK(refused["success"] == false);
  CHECK(refused["error"] ==
        "UserPromptSubmit operation blocked by hook:\n[" + guard + "]: no secrets");
  const Json state = r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"];
  CHECK(state["messageCount"] == 0);
  CHECK(state["isStreaming"] == false);
  CHECK(r.jsonl("script-log.jsonl").empty());  // no LLM request
  // A prompt the hook lets through runs as usual.
  r.send(Json{{"id", "q"}, {"type", "prompt"}, {"message", "hello"}});
  const auto events = r.read_until_type("agent_end", 20000ms);
  CHECK(events.front()["type"] == "response");
  CHECK(events.front()["success"] == true);
  CHECK(r.jsonl("script-log.jsonl").size() == 1);
}

TEST_CASE("UserPromptSubmit: its stdin, texts after the user message, the answer after the hooks") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "prompt.log").string();
  const std::string json_hook =
      "cat >> " + log +
      R"j(; echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"branch is main"}}')j";
  const std::string plain = "echo 'it is Tuesday'";
  ReboundProcess r =
      answering("ok", R"j({"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":)j" +
                          Json(json_hook).dump() + R"j(},{"type":"command","command":)j" +
                          Json(plain).dump() + "}]}]}}");
  const Json state = r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"];
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "/greet bob"}});
  const auto events = r.read_until_type("agent_end", 20000ms);
  const auto types = types_of(events);
  REQUIRE(types.size() >= 6);
  CHECK(std::vector<std::string>(types.begin(), types.begin() + 6) ==
        std::vector<std::string>{"response", "agent_start", "turn_start", "message_end:user",
                                 "message_end:custom", "message_end:custom"});
  const auto customs = custom_messages(events);
  REQUIRE(customs.size() == 2);
  CHECK(customs[0]["content"] == "UserPromptSubmit hook additional context: branch is main");
  CHECK(customs[0]["details"].dump() ==
        Json{{"hookEvent", "UserPromptSubmit"}, {"command", json_hook}}.dump());
  CHECK(customs[1]["content"] == "UserPromptSubmit hook success: it is Tuesday");
  const auto in = lines_of(log, 1);
  REQUIRE(in.size() == 1);
  CHECK(is_uuid4(in[0]["prompt_id"]));
  const std::string cwd = std::filesystem::canonical(r.dir().path()).string();
  CHECK(
      in[0].dump() ==
      Json::parse(R"({"session_id":")" + state["sessionId"].get<std::string>() + R"(","cwd":")" +
                  cwd + R"(","prompt_id":")" + in[0].value("prompt_id", "") +
                  R"(","permission_mode":"bypassPermissions","hook_event_name":"UserPromptSubmit",)"
                  R"("prompt":"/greet bob"})")
          .dump());
  // The model got them after the user message.
  const Json sent = r.jsonl("script-log.jsonl")[0]["messages"];
  REQUIRE(sent.size() == 3);
  CHECK(sent[1]["role"] == "custom");
}

TEST_CASE("UserPromptSubmit: busy while the hooks run, abort drops the message") {
  testing::TempDir logs;
  const std::string pid_file = (logs.path() / "hook.pid").string();
  ReboundProcess r = answering("ok", R"j({"hooks":{"UserPromptSubmit":)j" +
                                         group("echo $$ > " + pid_file + "; exec sleep 30") + "}}");
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "first"}});
  for (int i = 0; i < 500 && read_pid(pid_file) <= 0; ++i)
    std::this_thread::sleep_for(20ms);  // the hook's process writing its pid
  REQUIRE(std::filesystem::exists(pid_file));
  CHECK(r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"]["isStreaming"] == true);
  const Json busy = r.command(Json{{"id", "p2"}, {"type", "prompt"}, {"message", "second"}});
  CHECK(busy["success"] == false);
  CHECK(busy["error"].get<std::string>().rfind("Agent is already processing.", 0) == 0);
  r.send(Json{{"id", "a"}, {"type", "abort"}});
  const auto lines = r.read_until_type("response", 5000ms);
  CHECK(lines.back()["id"] == "p");
  CHECK(lines.back()["success"] == false);
  CHECK(lines.back()["error"] == "Operation aborted");
  CHECK(r.read_until_type("response", 5000ms).back()["id"] == "a");
  const pid_t pid = read_pid(pid_file);
  REQUIRE(pid > 0);
  CHECK(testing::process_ended(pid));
  const Json state = r.command(Json{{"id", "s2"}, {"type", "get_state"}})["data"];
  CHECK(state["isStreaming"] == false);
  CHECK(state["messageCount"] == 0);
}

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(REBOUND_SOURCE_DIR) + "/tests/extensions/claude_code_hooks/" + name);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("hook scripts written for Claude Code run unchanged") {
  // Commands as a Claude Code settings file names them: by $CLAUDE_PROJECT_DIR, matcher "Bash".
  const std::string guard = R"(python3 "$CLAUDE_PROJECT_DIR"/.claude/hooks/bash_guard.py)";
  const std::string context = R"(python3 "$CLAUDE_PROJECT_DIR"/.claude/hooks/prompt_context.py)";
  const std::string stop = R"(python3 "$CLAUDE_PROJECT_DIR"/.claude/hooks/stop_once.py)";
  const std::string log = R"(sh "$CLAUDE_PROJECT_DIR"/.claude/hooks/post_log.sh)";
  Json hooks{{"PreToolUse", Json::parse(group(guard, "Bash"))},
             {"UserPromptSubmit", Json::parse(group(context))},
             {"Stop", Json::parse(group(stop))},
             {"PostToolUse", Json::parse(group(log, "Bash|Write"))}};
  const Json calls = Json::array({testing::call("bash", {{"command", "git push --force origin"}}),
                                  testing::call("bash", {{"command", "echo fine"}})});
  ReboundProcess r({"--no-session", "--provider", "scripted", "--script", "@DIR@/script.json",
                    "--script-log", "@DIR@/script-log.jsonl"},
                   {},
                   {{"agent/settings.json", Json{{"hooks", hooks}}.dump()},
                    {"script.json", testing::script_of(calls)},
                    {".claude/hooks/bash_guard.py", fixture("bash_guard.py")},
                    {".claude/hooks/prompt_context.py", fixture("prompt_context.py")},
                    {".claude/hooks/stop_once.py", fixture("stop_once.py")},
                    {".claude/hooks/post_log.sh", fixture("post_log.sh")}});
  const std::string cwd = std::filesystem::canonical(r.dir().path()).string();

  const Json blocked =
      r.command(Json{{"id", "b"}, {"type", "prompt"}, {"message", "my password is hunter2"}});
  CHECK(blocked["success"] == false);
  CHECK(blocked["error"] ==
        "UserPromptSubmit operation blocked by hook:\nPrompts must not contain passwords");

  r.send(testing::prompt());
  const auto events = r.read_until_type("agent_end", 30000ms);
  CHECK(testing::text_of(testing::end_of(events, "call_1")["result"]) ==
        "PreToolUse:bash hook error: [" + guard +
            "]: Force pushes are not allowed: git push --force origin");
  CHECK(testing::text_of(testing::end_of(events, "call_2")["result"]) == "fine\n");
  std::vector<std::string> texts;
  for (const auto& m : custom_messages(events))
    texts.push_back(m["content"]);
  CHECK(texts ==
        std::vector<std::string>{"UserPromptSubmit hook success: Project directory: " + cwd,
                                 "Stop hook feedback:\nRun the tests before you stop."});
  // Three requests: the calls, the answer, the turn the Stop hook asked for (and not a fourth:
  // stop_hook_active let the second Stop pass).
  CHECK(r.jsonl("script-log.jsonl").size() == 3);
  // The logger saw the call that ran, not the refused one.
  const auto logged = lines_of(r.dir().path() / "tool-calls.log", 1);
  REQUIRE(logged.size() == 1);
  CHECK(logged[0]["tool_use_id"] == "call_2");
  CHECK(logged[0]["tool_input"]["command"] == "echo fine");
}

TEST_CASE("the JSON-RPC envelope: extension_error and extension_ui_request are notifications") {
  const std::string hooks = R"j({"PreToolUse":)j" + group("echo oops >&2; exit 4") +
                            R"j(,"PostToolUse":)j" +
                            group(R"j(echo '{"systemMessage":"post ran"}')j") + "}";
  ReboundProcess r = testing::tool_server(
      testing::script_of(Json::array({testing::call("bash", {{"command", "echo x"}})})), {},
      {"--envelope", "jsonrpc"}, R"j({"hooks":)j" + hooks + "}");
  r.send(
      Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "prompt"}, {"params", {{"message", "go"}}}});
  const auto got =
      r.read_until([](const Json& l) { return l.value("method", "") == "agent_end"; }, 20000ms);
  Json error, notice;
  for (const auto& l : got) {
    if (l.value("method", "") == "extension_error") error = l;
    if (l.value("method", "") == "extension_ui_request") notice = l;
  }
  CHECK(error.dump() == Json{{"jsonrpc", "2.0"},
                             {"method", "extension_error"},
                             {"params",
                              {{"type", "extension_error"},
                               {"extensionPath", "hook:echo oops >&2; exit 4"},
                               {"event", "PreToolUse"},
                               {"error", "Hook exited with code 4: oops"}}}}
                            .dump());
  REQUIRE(notice.is_object());
  CHECK(notice["params"]["type"] == "extension_ui_request");
  CHECK(notice["params"]["message"] == "PostToolUse:bash says: post ran");
}

TEST_CASE("SessionStart: its texts end the system prompt, the first request waits for them") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "session.log").string();
  // A slow hook: the prompt is sent at once, its request must still carry the text.
  const std::string slow = "cat >> " + log + "; sleep 0.3; echo 'the build is green'";
  const std::string json_hook =
      R"j(echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"use tabs"}}')j";
  const std::string end = "cat >> " + log;
  ReboundProcess r =
      answering("ok", R"j({"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":)j" +
                          Json(slow).dump() + R"j(},{"type":"command","command":)j" +
                          Json(json_hook).dump() + R"j(}]}],"SessionEnd":)j" + group(end) + "}}");
  r.send(testing::prompt());
  r.read_until_type("agent_end", 20000ms);
  auto requests = r.jsonl("script-log.jsonl");
  REQUIRE(requests.size() == 1);
  const auto ends_with = [](const std::string& text, const std::string& tail) {
    return text.size() > tail.size() &&
           text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
  };
  CHECK(ends_with(requests[0]["systemPrompt"],
                  "\n\nSessionStart:startup hook success: the build is green"
                  "\n\nSessionStart hook additional context: use tabs"));
  // new_session: the old session's SessionEnd (clear), the new one's SessionStart (clear).
  CHECK(r.command(Json{{"id", "n"}, {"type", "new_session"}})["success"] == true);
  const auto lines = lines_of(log, 3);
  REQUIRE(lines.size() == 3);
  // The observer and the new session's hook run at once: their lines come in either order.
  std::vector<Json> in{lines[0]};
  for (const char* event : {"SessionEnd", "SessionStart"}) {
    for (std::size_t i = 1; i < lines.size(); ++i) {
      if (lines[i]["hook_event_name"] == event) in.push_back(lines[i]);
    }
  }
  REQUIRE(in.size() == 3);
  CHECK(in[0]["hook_event_name"] == "SessionStart");
  CHECK(in[0]["source"] == "startup");
  CHECK(in[0]["model"] == "script");
  CHECK(!in[0].contains("prompt_id"));  // none yet at start-up
  CHECK(!in[2].contains("prompt_id"));  // none after a session change
  CHECK(!in[0].contains("permission_mode"));
  CHECK(in[1]["reason"] == "clear");
  CHECK(in[1]["session_id"] == in[0]["session_id"]);
  CHECK(in[2]["source"] == "clear");
  CHECK(in[2]["session_id"] != in[0]["session_id"]);
  r.send(testing::prompt("p2"));
  r.read_until_type("agent_end", 20000ms);
  requests = r.jsonl("script-log.jsonl");
  REQUIRE(requests.size() == 2);
  const std::string again = requests[1]["systemPrompt"];
  CHECK(ends_with(again,
                  "\n\nSessionStart:clear hook success: the build is green"
                  "\n\nSessionStart hook additional context: use tabs"));
  CHECK(again.find("startup hook success") == std::string::npos);  // rebuilt, not appended
}

TEST_CASE("StopFailure: once the session gives up on a failed run, with its error class") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "failure.log").string();
  ReboundProcess r = testing::tool_server(
      R"j([{"error":"401 invalid api key"},{"error":"503 overloaded"},{"error":"503 overloaded"}])j",
      {}, {},
      R"j({"retry":{"maxRetries":1,"baseDelayMs":10},"hooks":{"StopFailure":)j" +
          group("cat >> " + log) + "}}");
  r.send(testing::prompt());
  r.read_until_type("agent_end", 20000ms);
  auto in = lines_of(log, 1);
  REQUIRE(in.size() == 1);
  CHECK(in[0]["hook_event_name"] == "StopFailure");
  CHECK(in[0]["error"] == "authentication_failed");
  CHECK(in[0]["last_assistant_message"] == "401 invalid api key");
  // A retried failure: only once the chain gives up, after its auto_retry_end.
  r.send(testing::prompt("p2"));
  const auto events = r.read_until_type("auto_retry_end", 20000ms);
  CHECK(events.back()["success"] == false);
  in = lines_of(log, 2);
  REQUIRE(in.size() == 2);
  CHECK(in[1]["error"] == "overloaded");
  CHECK(in[1]["last_assistant_message"] == "503 overloaded");
  CHECK(in[1].dump().find("permission_mode") == std::string::npos);
}

TEST_CASE("a start-up hook's failure is logged, never written before the first command") {
  ReboundProcess r =
      answering("ok", R"j({"hooks":{"SessionStart":)j" + group("echo early >&2; exit 7") + "}}");
  for (int i = 0;
       i < 500 && r.proc().stderr_text().find("Hook exited with code 7") == std::string::npos; ++i)
    std::this_thread::sleep_for(20ms);  // the hook's run, logged by the server
  CHECK(r.proc().stderr_text().find("hook[SessionStart] echo early >&2; exit 7: Hook exited with "
                                    "code 7: early") != std::string::npos);
  r.send(Json{{"id", "s"}, {"type", "get_state"}});
  const auto lines = r.read_until_type("response", 5000ms);
  REQUIRE(lines.size() == 1);  // nothing before the answer
  CHECK(lines[0]["id"] == "s");
}

TEST_CASE("PreCompact: plain stdout joins the instructions, exit 2 refuses the compaction") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "compact.log").string();
  const std::string add = "cat >> " + log + "; echo 'mention the open bug'";
  const std::string script =
      R"j([{"text":"first answer"},{"text":"THE SUMMARY"},{"text":"second"},)j"
      R"j({"error":"prompt is too long"},{"text":"never"}])j";
  ReboundProcess r = testing::tool_server(
      script, {}, {},
      R"j({"compaction":{"enabled":true,"keepRecentTokens":1},"hooks":{"PreCompact":[
            {"matcher":"manual","hooks":[{"type":"command","command":)j" +
          Json(add).dump() + R"j(}]},{"matcher":"auto","hooks":[{"type":"command",
            "command":"echo 'not now' >&2; exit 2"}]}]}})j");
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "one"}});
  r.read_until_type("agent_end", 20000ms);
  const Json compacted =
      r.command(Json{{"id", "c"}, {"type", "compact"}, {"customInstructions", "keep the names"}});
  CHECK(compacted["success"] == true);
  const auto in = lines_of(log, 1);
  REQUIRE(in.size() == 1);
  CHECK(in[0]["hook_event_name"] == "PreCompact");
  CHECK(in[0]["trigger"] == "manual");
  CHECK(in[0]["custom_instructions"] == "keep the names");
  const auto requests = r.jsonl("script-log.jsonl");
  REQUIRE(requests.size() == 2);
  const std::string asked = requests[1]["messages"][0]["content"][0]["text"];
  CHECK(asked.find("Additional instructions: keep the names\n\nmention the open bug") !=
        std::string::npos);

  // An overflow's compaction: the auto hook refuses it, the recovery fails with its text.
  r.send(Json{{"id", "p2"}, {"type", "prompt"}, {"message", "two"}});
  r.read_until_type("agent_end", 20000ms);
  r.send(Json{{"id", "p3"}, {"type", "prompt"}, {"message", "three"}});
  const auto events = r.read_until_type("auto_compaction_end", 20000ms);
  CHECK(events.back()["willRetry"] == false);
  CHECK(events.back()["errorMessage"] ==
        "Context overflow recovery failed: Compaction blocked by PreCompact hook: [echo 'not now' "
        ">&2; exit 2]: not now");
  CHECK(r.jsonl("script-log.jsonl").size() == 4);  // no summary request was sent
}

TEST_CASE("shutdown: running hooks are killed, SessionEnd runs bounded, nothing is left") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "end.log").string();
  const std::string hung_pid = (logs.path() / "hung.pid").string();
  const std::string slow_pid = (logs.path() / "slow.pid").string();
  // An observer that never ends (AutoRetryStart), and a SessionEnd hook that would sleep past
  // the 1000 ms bound of sessionEndTimeoutMs.
  ReboundProcess r = testing::tool_server(
      R"j([{"error":"503 overloaded"},{"text":"ok"}])j", {}, {},
      R"j({"retry":{"baseDelayMs":10},"extensionRunner":{"sessionEndTimeoutMs":1000},"hooks":{
          "AutoRetryStart":)j" +
          group("echo $$ > " + hung_pid + "; exec sleep 30") + R"j(,"SessionEnd":[{"hooks":[
          {"type":"command","command":)j" +
          Json("cat >> " + log).dump() + R"j(},{"type":"command","command":)j" +
          Json("echo $$ > " + slow_pid + "; exec sleep 30").dump() + "}]}]}}");
  r.send(testing::prompt());
  r.read_until_type("auto_retry_end", 20000ms);
  for (int i = 0; i < 500 && !std::filesystem::exists(hung_pid); ++i)
    std::this_thread::sleep_for(20ms);  // the observer's process writing its pid
  REQUIRE(std::filesystem::exists(hung_pid));
  r.proc().close_stdin();
  CHECK(r.proc().wait(15000ms) == 0);  // a bound against a hang, not a timing check
  const auto in = lines_of(log, 1);
  REQUIRE(in.size() == 1);
  CHECK(in[0]["hook_event_name"] == "SessionEnd");
  CHECK(in[0]["reason"] == "other");
  for (const auto& file : {hung_pid, slow_pid}) {
    CAPTURE(file);
    const pid_t pid = read_pid(file);
    REQUIRE(pid > 0);
    CHECK(testing::process_ended(pid));
  }
  CHECK(r.proc().stderr_text().find("hook[SessionEnd] echo $$ > " + slow_pid +
                                    "; exec sleep 30: Hook timed out after 1000 ms") !=
        std::string::npos);
}

TEST_CASE("Notification: permission_prompt when the policy's question is put to the client") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "notify.log").string();
  // Two calls asked about; the hook's matcher also takes the notification type.
  ReboundProcess r = testing::tool_server(
      testing::script_of(
          Json::array({testing::call("bash", {{"command", "echo one"}}),
                       testing::call("write", {{"path", "w.txt"}, {"content", "w"}})})),
      {}, {"--permission-mode", "default"},
      R"j({"hooks":{"Notification":)j" + group("cat >> " + log, "permission_prompt") + "}}");
  r.send(testing::prompt());
  int asked = 0;
  for (;;) {
    const Json line = r.read_json(10000ms);
    if (line["type"] == "agent_end") break;
    if (line["type"] != "extension_ui_request") continue;
    ++asked;
    r.send(Json{{"type", "extension_ui_response"}, {"id", line["id"]}, {"value", "Allow"}});
  }
  CHECK(asked == 2);
  const auto in = lines_of(log, 2);
  REQUIRE(in.size() == 2);
  // Two observer processes: either may write first.
  std::set<std::string> messages;
  for (const auto& n : in) {
    CHECK(n["hook_event_name"] == "Notification");
    CHECK(n["notification_type"] == "permission_prompt");
    messages.insert(n["message"].get<std::string>());
  }
  CHECK(messages == std::set<std::string>{"Rebound needs your permission to use bash",
                                          "Rebound needs your permission to use write"});
}

TEST_CASE("Notification: no permission_prompt when nobody is asked (--permission-prompts none)") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "notify.log").string();
  ReboundProcess r = testing::tool_server(
      testing::script_of(Json::array({testing::call("bash", {{"command", "echo one"}})})), {},
      {"--permission-mode", "default", "--permission-prompts", "none"},
      R"j({"hooks":{"Notification":)j" + group("cat >> " + log) + "}}");
  r.send(testing::prompt());
  const auto events = r.read_until_type("agent_end", 20000ms);
  CHECK(testing::text_of(testing::end_of(events, "call_1")["result"]) ==
        "This command requires approval");
  CHECK(testing::of_type(events, "extension_ui_request").empty());
  // A run without a question writes nothing to the log (an idle_prompt comes after 60 s).
  r.command(Json{{"id", "s"}, {"type", "get_state"}});
  CHECK(!std::filesystem::exists(log));
}

TEST_CASE("Notification: idle_prompt once the session has been idle for idleNotificationMs") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "idle.log").string();
  ReboundProcess r = answering(
      "ok", R"j({"extensionRunner":{"idleNotificationMs":100},"hooks":{"Notification":)j" +
                group("cat >> " + log, "idle_prompt") + "}}");
  r.send(testing::prompt());
  r.read_until_type("agent_end", 20000ms);
  auto in = lines_of(log, 1);
  REQUIRE(in.size() == 1);
  CHECK(in[0]["hook_event_name"] == "Notification");
  CHECK(in[0]["message"] == "Rebound is waiting for your input");
  CHECK(in[0]["notification_type"] == "idle_prompt");
  CHECK(!in[0].contains("permission_mode"));
  // A new idle period after the next run: one more.
  r.send(testing::prompt("p2"));
  r.read_until_type("agent_end", 20000ms);
  in = lines_of(log, 2);
  CHECK(in.size() == 2);
}

TEST_CASE("UserPromptSubmit: the hook sees the text as typed, the model its template's expansion") {
  // extensions.md section 3.4 (issue 50: the hook got the expansion).
  testing::TempDir logs;
  const std::string log = (logs.path() / "prompt.log").string();
  const std::string settings = R"j({"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command",)j"
                               R"j("command":)j" +
                               Json("cat >> " + log).dump() + "}]}]}}";
  ReboundProcess r(testing::scripted_args({"--no-session"}), {},
                   {{"agent/settings.json", settings},
                    {"agent/prompts/greet.md", "Hello $1, welcome."},
                    {"script.json", Json::array({Json{{"text", "ok"}}}).dump()}});
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "/greet bob"}});
  r.read_until_type("agent_end", 20000ms);
  const auto in = lines_of(log, 1);
  REQUIRE(in.size() == 1);
  CHECK(in[0]["prompt"] == "/greet bob");
  const Json sent = r.jsonl("script-log.jsonl")[0]["messages"];
  CHECK(sent[0]["content"][0]["text"] == "Hello bob, welcome.");
}

TEST_CASE("hooks on 40 consecutive tool calls: the loop never waits on a hook (issue 50)") {
  // Hooks that read their stdin, ones that exit without reading it, ones that leave a child
  // behind, ones killed by their timeout, on every call of a 40-step batch; two rounds. A
  // blocking wait on any of them would hang the server (it did about one run in three).
  Json steps = Json::array();
  for (int i = 0; i < 40; ++i)
    steps.push_back(Json{{"toolCalls", Json::array({testing::call(
                                           "bash", {{"command", "echo " + std::to_string(i)}})})}});
  steps.push_back(Json{{"text", "done"}});
  const std::string hooks = R"j({"hooks":{
    "PreToolUse":[{"matcher":"bash","hooks":[
      {"type":"command","command":"cat > /dev/null; exit 0"},
      {"type":"command","command":"exit 0"},
      {"type":"command","command":"(sleep 30 &); exit 0"}]}],
    "PostToolUse":[{"matcher":"bash","hooks":[
      {"type":"command","command":"exec sleep 30","timeout":0.05},
      {"type":"command","command":"head -c 1 > /dev/null; exit 0"}]}]}})j";
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    ReboundProcess r = testing::tool_server(steps.dump(), {}, {}, hooks);
    r.send(testing::prompt());
    const auto events = r.read_until_type("agent_end", 60000ms);
    for (int i = 0; i < 40; ++i)
      CHECK(testing::text_of(testing::end_of(events, "call_" + std::to_string(i + 1))["result"]) ==
            std::to_string(i) + "\n");
    // The loop still answers at once.
    CHECK(r.command(Json{{"id", "s"}, {"type", "get_state"}})["success"] == true);
  }
}

TEST_CASE("get_extensions lists hooks and a timed-out hook's lastError without extensions") {
  ReboundProcess r = testing::tool_server(
      testing::script_of(Json::array({testing::call("bash", {{"command", "echo ran"}})})), {}, {},
      R"j({"hooks":{"PreToolUse":[{"matcher":"bash","hooks":[
           {"type":"command","command":"exec sleep 5","timeout":0.2}]}]}})j");
  const Json before = r.command(Json{{"id", "e"}, {"type", "get_extensions"}})["data"];
  REQUIRE(before["hooks"].size() == 1);
  CHECK(before["hooks"][0]["command"] == "exec sleep 5");
  CHECK(before["hooks"][0]["timeoutMs"] == 200);
  CHECK_FALSE(before["hooks"][0].contains("lastError"));
  r.send(testing::prompt());
  const auto events = r.read_until_type("agent_end", 20000ms);
  CHECK(testing::text_of(testing::end_of(events, "call_1")["result"]) == "ran\n");
  const Json after = r.command(Json{{"id", "e2"}, {"type", "get_extensions"}})["data"];
  CHECK(after["extensions"] == Json::array());
  REQUIRE(after["hooks"].size() == 1);
  CHECK(after["hooks"][0]["lastError"] == "Hook timed out after 200 ms");
}
