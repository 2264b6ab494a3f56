// Extension processes through the real binary (extensions.md section 4, 6.1, 7): a subscribed
// extension receives every stdout event byte for byte (and all of them whatever the client's
// filter); its tool_call interceptor blocks and rewrites calls, and fails closed when it
// crashes, errs, answers nonsense or times out (unless failOpen); a UI confirm round trip in
// pi's shapes, with no response line for the answer; a dialog nobody answers resolves to its
// default; the trust rule; nothing left running after exit. The extension is
// tests/extensions/fixtures/ext_fixture.py.

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ext_fixture.h"
#include "tests/support/proc_status.h"
#include "tests/support/rebound_process.h"
#include "tests/support/scripted_tools.h"
#include "tests/support/temp_dir.h"

using namespace rebound;
using protocol::Json;
using testing::ReboundProcess;
using namespace std::chrono_literals;

namespace {

// The --extension command of the fixture in `mode`, logging what it reads to `log`.
std::string fixture(const std::string& mode, const std::string& log, const std::string& env = "") {
  return testing::ext_fixture_command(mode, log, env,
                                      std::filesystem::path(log).parent_path().filename().string() +
                                          "-" + std::filesystem::path(log).filename().string());
}

// A scripted server whose model calls bash `echo original`, with the fixture as --extension.
ReboundProcess with_fixture(const std::string& mode, const std::string& log,
                            const std::string& env = "", const std::string& settings = "{}") {
  return testing::tool_server(
      testing::script_of(Json::array({testing::call("bash", {{"command", "echo original"}})})), {},
      {"--extension", fixture(mode, log, env)}, settings);
}

// get_extensions once the fixture is up.
Json extensions_when_ready(ReboundProcess& r) {
  return r.command(Json{{"id", "x"}, {"type", "get_extensions"}, {"wait", true}})["data"];
}

std::vector<std::string> log_lines_when(const std::string& path, const std::string& needle) {
  return testing::file_lines_when(path, needle);
}

const Json& only_extension(const Json& data) {
  REQUIRE(data["extensions"].size() == 1);
  return data["extensions"][0];
}

}  // namespace

TEST_CASE("extensions: a subscribed extension receives every stdout event byte for byte") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "ext.log").string();
  ReboundProcess r = with_fixture("allow", log);
  const Json info = only_extension(extensions_when_ready(r));
  CHECK(info["status"] == "ready");
  CHECK(info["events"] == Json::array({"*"}));
  CHECK(info["interceptors"] == Json::array({"tool_call"}));
  r.send(testing::prompt());
  // Every event line as written on stdout (the prompt's response aside).
  std::vector<std::string> events;
  while (true) {
    auto line = r.proc().read_line(10000ms);
    REQUIRE(line.has_value());
    const Json parsed = Json::parse(*line);
    if (parsed["type"] == "response") continue;
    events.push_back(*line);
    if (parsed["type"] == "agent_end") break;
  }
  CHECK(events.size() > 10);
  const auto got = log_lines_when(log, R"({"type":"agent_end")");
  // The handshake, then the notifications; the tool_call request sits among them.
  REQUIRE(got.size() > 3);
  CHECK(Json::parse(got[0])["method"] == "initialize");
  CHECK(got[1] == R"({"jsonrpc":"2.0","method":"initialized"})");
  CHECK(Json::parse(got[2])["method"] == "session_start");
  std::vector<std::string> forwarded;
  bool tool_call_after_start = false;
  for (std::size_t i = 3; i < got.size(); ++i) {
    const std::string head = R"({"jsonrpc":"2.0","method":"event","params":)";
    if (got[i].rfind(head, 0) == 0) {
      forwarded.push_back(got[i].substr(head.size(), got[i].size() - head.size() - 1));
      CHECK(got[i].back() == '}');
    } else if (Json::parse(got[i])["method"] == "tool_call") {
      // Every event emitted before the request reached the extension before it (4.3).
      const bool after_start =
          !forwarded.empty() && forwarded.back().find("tool_execution_start") != std::string::npos;
      tool_call_after_start = after_start;
    }
  }
  CHECK(tool_call_after_start);
  CHECK(forwarded == events);
}

TEST_CASE("extensions: the client's event filter does not change what an extension gets") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "ext.log").string();
  ReboundProcess r = with_fixture("allow", log);
  extensions_when_ready(r);
  CHECK(r.command(Json{
            {"id", "f"}, {"type", "set_event_filter"}, {"events", {"agent_end"}}})["success"] ==
        true);
  r.send(testing::prompt());
  const auto seen = r.read_until_type("agent_end", 10000ms);
  for (const auto& e : seen)
    CHECK((e["type"] == "response" || e["type"] == "agent_end"));
  const auto got = log_lines_when(log, R"({"type":"agent_end")");
  std::size_t updates = 0, tool_ends = 0;
  for (const auto& line : got) {
    updates += line.find(R"("params":{"type":"message_update")") != std::string::npos;
    tool_ends += line.find(R"("params":{"type":"tool_execution_end")") != std::string::npos;
  }
  CHECK(updates > 0);
  CHECK(tool_ends == 1);
}

TEST_CASE("extensions: tool_call blocks a call with its reason, or rewrites its input") {
  testing::TempDir logs;
  {
    ReboundProcess r = with_fixture("block", (logs.path() / "b.log").string());
    extensions_when_ready(r);
    r.send(testing::prompt());
    const Json end = testing::end_of(r.read_until_type("agent_end", 10000ms), "call_1");
    CHECK(end["isError"] == true);
    CHECK(end["result"].dump() ==
          R"({"content":[{"type":"text","text":"blocked by fixture: bash"}],"details":{}})");
  }
  {
    ReboundProcess r = with_fixture("modify", (logs.path() / "m.log").string());
    extensions_when_ready(r);
    r.send(testing::prompt());
    const Json end = testing::end_of(r.read_until_type("agent_end", 10000ms), "call_1");
    CHECK(end["isError"] == false);
    CHECK(testing::text_of(end["result"]) == "modified\n");
  }
}

TEST_CASE("extensions: a rewritten input is validated before the next interceptor sees it") {
  testing::TempDir logs;
  const std::string second = (logs.path() / "second.log").string();
  ReboundProcess r = testing::tool_server(
      testing::script_of(Json::array({testing::call("bash", {{"command", "echo original"}})})), {},
      {"--extension", fixture("badmodify", (logs.path() / "first.log").string()), "--extension",
       fixture("allow", second)});
  r.command(Json{{"id", "w"}, {"type", "get_extensions"}, {"wait", true}});
  r.send(testing::prompt());
  const auto events = r.read_until_type("agent_end", 10000ms);
  const Json end = testing::end_of(events, "call_1");
  CHECK(end["isError"] == true);
  CHECK(testing::text_of(end["result"]).rfind("Validation failed for tool \"bash\":\n", 0) == 0);
  CHECK(testing::text_of(end["result"]).find("Received arguments:\n{\n  \"cmd\": \"ls\"\n}") !=
        std::string::npos);
  // The second interceptor was never asked about the invalid input.
  for (const auto& line : log_lines_when(second, R"({"type":"agent_end")"))
    CHECK(line.find(R"("method":"tool_call")") == std::string::npos);
}

TEST_CASE("extensions: a crashed interceptor fails closed, is reported and stays down") {
  testing::TempDir logs;
  ReboundProcess r = with_fixture("crash", (logs.path() / "c.log").string());
  extensions_when_ready(r);
  r.send(testing::prompt());
  const auto events = r.read_until_type("agent_end", 10000ms);
  const std::string error = "Exited with code 3: fixture: out of memory";
  bool reported = false;
  for (const auto& e : events)
    if (e["type"] == "extension_error")
      reported = e.dump() == Json{{"type", "extension_error"},
                                  {"extensionPath", "cli-1"},
                                  {"event", "tool_call"},
                                  {"error", error}}
                                 .dump();
  CHECK(reported);
  const Json end = testing::end_of(events, "call_1");
  CHECK(end["isError"] == true);
  CHECK(testing::text_of(end["result"]) == "Extension cli-1 failed, blocking execution: " + error);
  const Json info = only_extension(extensions_when_ready(r));
  CHECK(info["status"] == "failed");
  CHECK(info["error"] == error);
  // The session goes on; the guard that is down blocks the next call too (4.4).
  r.send(testing::prompt("p2"));
  CHECK(r.command(Json{{"id", "s"}, {"type", "get_state"}})["success"] == true);
}

TEST_CASE("extensions: an error answer, an answer of another shape and no answer fail closed") {
  testing::TempDir logs;
  struct Case {
    const char* mode;
    std::string reason;
  };
  const Case cases[] = {{"error", "JSON-RPC error -32000: guard broke"},
                        {"bad", "invalid answer: action must be allow, block or modify"},
                        {"hang", "no answer within 2000 ms"}};
  for (const auto& c : cases) {
    CAPTURE(c.mode);
    const std::string log = (logs.path() / (std::string(c.mode) + ".log")).string();
    // Configured in settings, so that it can have its own timeout (which also bounds the
    // handshake: a loaded machine may take a second to start Python).
    const std::string settings = R"({"extensions":{"guard":{"command":"/bin/sh","args":["-c",)" +
                                 Json(fixture(c.mode, log)).dump() + R"(],"timeoutMs":2000}}})";
    ReboundProcess r = testing::tool_server(
        testing::script_of(Json::array({testing::call("bash", {{"command", "echo original"}})})),
        {}, {}, settings);
    extensions_when_ready(r);
    r.send(testing::prompt());
    const auto events = r.read_until_type("agent_end", 10000ms);
    bool reported = false;
    for (const auto& e : events)
      reported = reported || (e["type"] == "extension_error" && e["extensionPath"] == "guard" &&
                              e["event"] == "tool_call" && e["error"] == c.reason);
    CHECK(reported);
    CHECK(testing::text_of(testing::end_of(events, "call_1")["result"]) ==
          "Extension guard failed, blocking execution: " + c.reason);
    if (std::string(c.mode) == "hang") {
      // The request that is no longer awaited is cancelled (4.8).
      const auto got = log_lines_when(log, R"("method":"cancelled")");
      bool cancelled = false;
      for (const auto& line : got)
        if (line.find(R"("method":"cancelled")") != std::string::npos)
          cancelled = Json::parse(line)["params"]["reason"] == "Timed out after 2000 ms";
      CHECK(cancelled);
    }
  }
}

TEST_CASE("extensions: failOpen lets the call go on when the interceptor crashes") {
  testing::TempDir logs;
  const std::string settings = R"({"extensions":{"guard":{"command":"/bin/sh","args":["-c",)" +
                               Json(fixture("crash", (logs.path() / "c.log").string())).dump() +
                               R"(],"failOpen":true}}})";
  ReboundProcess r = testing::tool_server(
      testing::script_of(Json::array({testing::call("bash", {{"command", "echo original"}})})), {},
      {}, settings);
  CHECK(only_extension(extensions_when_ready(r))["failOpen"] == true);
  r.send(testing::prompt());
  const Json end = testing::end_of(r.read_until_type("agent_end", 10000ms), "call_1");
  CHECK(end["isError"] == false);
  CHECK(testing::text_of(end["result"]) == "original\n");
}

TEST_CASE("extensions: a UI confirm round trip over the rpc wire in pi's shapes") {
  testing::TempDir logs;
  for (const bool yes : {true, false}) {
    CAPTURE(yes);
    ReboundProcess r = with_fixture("confirm", (logs.path() / "u.log").string());
    extensions_when_ready(r);
    r.send(testing::prompt());
    const Json request = r.read_until_type("extension_ui_request", 10000ms).back();
    // pi's line: type, id, method, then the request's params; the effective timeout.
    REQUIRE(request["id"].is_string());
    CHECK(request.dump() == Json{{"type", "extension_ui_request"},
                                 {"id", request["id"]},
                                 {"method", "confirm"},
                                 {"title", "Allow bash?"},
                                 {"message", R"({"command": "echo original"})"},
                                 {"timeout", 30000}}
                                .dump());
    r.send(Json{{"type", "extension_ui_response"}, {"id", request["id"]}, {"confirmed", yes}});
    // No response line for the answer: the next response is get_state's.
    r.send(Json{{"id", "s"}, {"type", "get_state"}});
    const auto lines = r.read_until_type("agent_end", 10000ms);
    for (const auto& l : lines)
      if (l["type"] == "response") CHECK(l["command"] != "extension_ui_response");
    const Json end = testing::end_of(lines, "call_1");
    CHECK(testing::text_of(end["result"]) == (yes ? "original\n" : "the user said no"));
  }
}

TEST_CASE("extensions: an unanswered dialog resolves to its default, a bad answer is refused") {
  testing::TempDir logs;
  ReboundProcess r =
      with_fixture("confirm", (logs.path() / "u.log").string(), "EXT_DIALOG_TIMEOUT=200");
  extensions_when_ready(r);
  // Its `id` is the dialog's: without one (or of another kind) it is a bad command.
  r.send(Json{{"type", "extension_ui_response"}, {"confirmed", true}});
  const Json bad = r.read_json();
  CHECK(bad["success"] == false);
  CHECK(bad["error"] == "Invalid field 'id': expected string");
  const Json wrong =
      r.command(Json{{"id", "d"}, {"type", "extension_ui_response"}, {"confirmed", "yes"}});
  CHECK(wrong["error"] == "Invalid field 'confirmed': expected boolean");
  r.send(testing::prompt());
  const auto lines = r.read_until_type("agent_end", 10000ms);
  bool asked = false;
  for (const auto& l : lines)
    asked = asked || (l["type"] == "extension_ui_request" && l["timeout"] == 200);
  CHECK(asked);
  // {"confirmed":false} at the timeout: the fixture blocks.
  CHECK(testing::text_of(testing::end_of(lines, "call_1")["result"]) == "the user said no");
}

TEST_CASE("extensions: a project's extensions run only when the user's settings trust it") {
  for (const bool trusted : {false, true}) {
    CAPTURE(trusted);
    testing::TempDir logs;
    const std::string log = (logs.path() / "p.log").string();
    const std::string project = R"({"extensions":{"proj":{"command":"/bin/sh","args":["-c",)" +
                                Json(fixture("allow", log)).dump() + "]}}}";
    ReboundProcess r(
        {"--no-session", "--provider", "scripted"}, {},
        {{"agent/settings.json", trusted ? R"({"trustProjectSettings":true})" : std::string("{}")},
         {".rebound/settings.json", project}});
    const Json info = only_extension(extensions_when_ready(r));
    CHECK(info["name"] == "proj");
    CHECK(info["source"] == "project");
    CHECK(info["status"] == (trusted ? "ready" : "untrusted"));
    // An untrusted one never started: it read nothing, and one warning names the file.
    CHECK(std::filesystem::exists(log) == trusted);
    if (!trusted)
      CHECK(r.proc().stderr_text().find("defines 0 hooks and 1 extensions; not run") !=
            std::string::npos);
  }
}

TEST_CASE("extensions: a call during restart_extension waits for the guard instead of failing") {
  testing::TempDir logs;
  // Its stop takes a while (SIGTERM ignored: SIGKILL after 2 s); the call comes meanwhile.
  ReboundProcess r = with_fixture("allow", (logs.path() / "r.log").string(), "EXT_LINGER=30");
  extensions_when_ready(r);
  r.send(Json{{"id", "re"}, {"type", "restart_extension"}, {"name", "cli-1"}});
  r.send(testing::prompt());
  bool restarted = false;
  const auto lines = r.read_until(
      [&](const Json& l) {
        if (l["type"] == "response" && l["id"] == "re") {
          restarted = true;
          CHECK(l["data"]["status"] == "ready");
        }
        return l["type"] == "agent_end";
      },
      20000ms);
  CHECK(restarted);
  CHECK(testing::text_of(testing::end_of(lines, "call_1")["result"]) == "original\n");
}

TEST_CASE("extensions: nothing is left running after exit, a guard ignoring SIGTERM included") {
  testing::TempDir logs;
  const std::string pidfile = (logs.path() / "ext.pid").string();
  const std::string stubborn = (logs.path() / "stubborn.pid").string();
  pid_t fixture_pid = 0, stubborn_pid = 0;
  {
    ReboundProcess r = testing::tool_server(
        R"([{"text":"hi"}])", {},
        {"--extension",
         fixture("allow", (logs.path() / "a.log").string(), "EXT_PIDFILE=" + pidfile),
         "--extension", "trap '' TERM; echo $$ > " + stubborn + "; while :; do sleep 1; done"});
    // The stubborn one never answers its handshake: it stays `starting`.
    const Json data = r.command(Json{{"id", "x"}, {"type", "get_extensions"}})["data"];
    REQUIRE(data["extensions"].size() == 2);
    const auto written = [](const std::string& f) {  // made by `>` first, the pid after
      std::error_code ec;
      return std::filesystem::file_size(f, ec) > 0 && !ec;
    };
    for (int i = 0; i < 500 && !(written(stubborn) && written(pidfile)); ++i)
      std::this_thread::sleep_for(20ms);  // the other processes write them
    std::ifstream(pidfile) >> fixture_pid;
    std::ifstream(stubborn) >> stubborn_pid;
    REQUIRE(fixture_pid > 0);
    REQUIRE(stubborn_pid > 0);
    r.proc().close_stdin();
    CHECK(r.proc().wait(15000ms) == 0);
  }
  CHECK(testing::process_ended(fixture_pid));
  CHECK(testing::process_ended(stubborn_pid));
}

TEST_CASE("extensions: the documented ten-line extension logs the retries of a 503 then success") {
  std::ifstream in(std::string(REBOUND_SOURCE_DIR) + "/examples/log_retries.py");
  const std::string source((std::istreambuf_iterator<char>(in)), {});
  REQUIRE(std::count(source.begin(), source.end(), '\n') == 10);
  // docs/extensions.md shows exactly this file.
  std::ifstream readme_in(std::string(REBOUND_SOURCE_DIR) + "/docs/extensions.md");
  const std::string readme((std::istreambuf_iterator<char>(readme_in)), {});
  CHECK(readme.find(source) != std::string::npos);
  ReboundProcess r({"--no-session", "--provider", "scripted", "--script", "@DIR@/script.json",
                    "--extension", "python3 @DIR@/log_retries.py"},
                   {},
                   {{"agent/settings.json", R"({"retry":{"baseDelayMs":10}})"},
                    {"script.json", R"([{"error":"503 overloaded"},{"text":"Hello there."}])"},
                    {"log_retries.py", source}});
  extensions_when_ready(r);
  r.send(Json{{"id", "p"}, {"type", "prompt"}, {"message", "hi"}});
  const auto events = r.read_until_type("auto_retry_end", 20000ms);
  std::vector<std::string> expected;
  for (const auto& e : events)
    if (e["type"] == "auto_retry_start" || e["type"] == "auto_retry_end")
      expected.push_back(e.dump());
  REQUIRE(expected.size() == 2);
  const auto got = log_lines_when((r.dir().path() / "retries.log").string(), "auto_retry_end");
  std::vector<std::string> logged;
  for (const auto& line : got)
    logged.push_back(Json::parse(line).dump());
  CHECK(logged == expected);
}

TEST_CASE("extensions: new_session is told as session_shutdown, then session_start") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "s.log").string();
  ReboundProcess r = with_fixture("allow", log);
  extensions_when_ready(r);
  const std::string old_id =
      r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"]["sessionId"];
  CHECK(r.command(Json{{"id", "n"}, {"type", "new_session"}})["success"] == true);
  const std::string new_id =
      r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"]["sessionId"];
  REQUIRE(old_id != new_id);
  const auto got = log_lines_when(log, R"("method":"session_start","params":{"reason":"new")");
  std::vector<Json> told;
  for (const auto& line : got) {
    const Json j = Json::parse(line);
    if (j["method"] == "session_start" || j["method"] == "session_shutdown") told.push_back(j);
  }
  REQUIRE(told.size() == 3);  // the handshake's, then the change
  CHECK(told[0]["params"] == Json{{"reason", "startup"}, {"sessionId", old_id}});
  CHECK(told[1]["params"] == Json{{"reason", "new"}, {"sessionId", old_id}});
  CHECK(told[1]["method"] == "session_shutdown");
  CHECK(told[2]["params"] == Json{{"reason", "new"}, {"sessionId", new_id}});
}

TEST_CASE("extensions: the JSON-RPC envelope carries the commands, the dialog and its answer") {
  testing::TempDir logs;
  ReboundProcess r = with_fixture("confirm", (logs.path() / "j.log").string());
  r.send(
      Json::parse(R"({"jsonrpc":"2.0","id":1,"method":"get_extensions","params":{"wait":true}})"));
  const Json listed = r.read_json();
  CHECK(listed["id"] == 1);
  CHECK(listed["result"]["extensions"][0]["status"] == "ready");
  CHECK(listed["result"]["hooks"] == Json::array());
  r.send(Json::parse(
      R"({"jsonrpc":"2.0","id":2,"method":"restart_extension","params":{"name":"nope"}})"));
  const Json missing = r.read_json();
  CHECK(missing["error"]["code"] == -32000);
  CHECK(missing["error"]["message"] == "Extension not found: nope");
  r.send(Json::parse(R"({"jsonrpc":"2.0","id":3,"method":"prompt","params":{"message":"go"}})"));
  // The dialog is a notification whose method is its type and whose params are the pi line.
  const Json note = r.read_until([](const Json& j) {
                       return j.value("method", "") == "extension_ui_request";
                     }).back();
  CHECK(note["params"]["type"] == "extension_ui_request");
  CHECK(note["params"]["method"] == "confirm");
  // As a JSON-RPC request the answer gets `"result":null` (JSON-RPC's rule wins).
  r.send(Json{{"jsonrpc", "2.0"},
              {"id", 4},
              {"method", "extension_ui_response"},
              {"params", {{"id", note["params"]["id"]}, {"confirmed", true}}}});
  const auto lines =
      r.read_until([](const Json& j) { return j.value("method", "") == "agent_end"; });
  bool answered = false;
  for (const auto& l : lines)
    if (l.contains("id") && l["id"] == 4)
      answered = l.dump() == R"({"jsonrpc":"2.0","id":4,"result":null})";
  CHECK(answered);
  for (const auto& l : lines)
    if (l.value("method", "") == "tool_execution_end")
      CHECK(testing::text_of(l["params"]["result"]) == "original\n");
}

TEST_CASE("extensions: an extension's tools are offered after the built-in ones and called") {
  testing::TempDir logs;
  // Its tool hooks' stdin names the extension (extensions.md section 3.4).
  const std::string seen = (logs.path() / "hook-stdin.jsonl").string();
  const std::string record = "cat >> " + seen + "; echo >> " + seen;
  const std::string settings =
      Json{{"hooks",
            {{"PreToolUse",
              Json::array({Json{
                  {"matcher", "todo_add"},
                  {"hooks", Json::array({Json{{"type", "command"}, {"command", record}}})}}})},
             {"PostToolUse",
              Json::array({Json{
                  {"matcher", "todo_add"},
                  {"hooks", Json::array({Json{{"type", "command"}, {"command", record}}})}}})}}}}
          .dump();
  const std::string init =
      R"({"protocolVersion":1,"tools":[{"name":"todo_add","description":"Add a to-do item","parameters":{"type":"object","required":["text"],"properties":{"text":{"type":"string"}}}},{"name":"todo_crash"},{"name":"read"}]})";
  ReboundProcess r = testing::tool_server(
      Json::array(
          {Json{{"toolCalls", Json::array({testing::call("todo_add", {{"text", "ship it"}})})}},
           Json{{"toolCalls", Json::array({testing::call("todo_crash", Json::object())})}},
           Json{{"text", "done"}},
           Json{{"toolCalls", Json::array({testing::call("todo_add", {{"text", "many"}})})}},
           Json{{"text", "done"}}})
          .dump(),
      {},
      {"--extension",
       fixture("allow", (logs.path() / "t.log").string(), "EXT_INIT='" + init + "'")},
      settings);
  const Json info = only_extension(extensions_when_ready(r));
  CHECK(info["tools"] == Json::array({"todo_add", "todo_crash", "read"}));
  // Offered after the built-in tools; `read` is taken and skipped.
  std::vector<std::string> names;
  const Json tools = r.command(Json{{"id", "t"}, {"type", "get_tools"}});
  for (const auto& t : tools["data"]["tools"])
    names.push_back(t["name"]);
  REQUIRE(names.size() >= 2);
  CHECK(names[names.size() - 2] == "todo_add");
  CHECK(names.back() == "todo_crash");
  CHECK(std::count(names.begin(), names.end(), "read") == 1);
  r.send(testing::prompt());
  const auto events = r.read_until_type("agent_end", 10000ms);
  bool partial = false;
  for (const auto& e : events)
    partial = partial || (e["type"] == "tool_execution_update" && e["toolCallId"] == "call_1" &&
                          testing::text_of(e["partialResult"]) == "adding");
  CHECK(partial);
  const Json added = testing::end_of(events, "call_1");
  CHECK(added["isError"] == false);
  CHECK(added["result"].dump() ==
        R"({"content":[{"type":"text","text":"added: ship it"}],"details":{"count":1}})");
  const Json crashed = testing::end_of(events, "call_2");
  CHECK(crashed["isError"] == true);
  CHECK(testing::text_of(crashed["result"]) ==
        "Extension cli-1 stopped during the call: Exited with code 4: fixture: tool broke");
  const auto stdin_lines = log_lines_when(seen, "PostToolUse");
  REQUIRE(stdin_lines.size() >= 2);
  for (const auto& line : stdin_lines) {
    if (line.empty()) continue;
    const Json input = Json::parse(line);
    CHECK(input["tool_name"] == "todo_add");
    CHECK(input["extension"] == Json{{"name", "cli-1"}});
    CHECK(!input.contains("mcp_server"));
  }
  // Its texts are truncated as an MCP tool's (mcp.md section 6): 2000 of 3000 lines kept.
  r.command(Json{{"id", "x"}, {"type", "restart_extension"}, {"name", "cli-1"}});
  r.send(testing::prompt("p2"));
  const auto again = r.read_until_type("agent_end", 10000ms);
  Json many;
  for (const auto& e : again)
    if (e["type"] == "tool_execution_end") many = e;
  REQUIRE(many.is_object());
  const std::string text = testing::text_of(many["result"]);
  CHECK(text.rfind("added: item 1\nitem 2\n", 0) == 0);
  CHECK(text.find("item 2001") == std::string::npos);
  const std::string tail = "item 2000\n\n[Showing lines 1-2000 of 3000.]";
  REQUIRE(text.size() > tail.size());
  CHECK(text.substr(text.size() - tail.size()) == tail);
  CHECK(many["result"]["details"]["count"] == 1);
  CHECK(many["result"]["details"]["truncation"]["truncatedBy"] == "lines");
  CHECK(many["result"]["details"]["truncation"]["totalLines"] == 3000);
}
