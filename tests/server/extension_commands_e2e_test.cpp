// Extensions' slash commands through the real binary (extensions.md sections 4.6, 5.1, 7.5): a
// prompt naming one runs it instead of reaching the model, also during a run; its failures
// (an error answer, no answer, a crash) in their texts; steer and follow_up naming one are
// refused with pi's text; a prompt sent while the extension starts waits for it; a name a later
// extension declares too stays the first one's; get_commands lists them; a command may ask the
// user and send messages meanwhile. The extension is tests/extensions/fixtures/ext_fixture.py.

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ext_fixture.h"
#include "tests/support/rebound_process.h"
#include "tests/support/scripted_tools.h"
#include "tests/support/temp_dir.h"

using namespace rebound;
using protocol::Json;
using testing::ReboundProcess;
using namespace std::chrono_literals;

namespace {

const std::string kCommands =
    R"({"protocolVersion":1,"events":["*"],"interceptors":["tool_call"],"commands":[)"
    R"({"name":"todos","description":"Show the to-do list"},{"name":"fail"},{"name":"hang"},)"
    R"({"name":"crashcmd"},{"name":"ask"},{"name":"say"}]})";

// The fixture as an --extension command: `mode` for its tool_call, declaring `init`, logging
// what it reads to `log`.
std::string fixture(const std::string& mode, const std::string& log,
                    const std::string& init = kCommands, const std::string& env = "") {
  return testing::ext_fixture_command(mode, log, "EXT_INIT='" + init + "' " + env,
                                      "cmd-" + std::filesystem::path(log).filename().string());
}

ReboundProcess with_commands(const std::string& mode, const std::string& log,
                             const std::string& settings = "{}", const std::string& env = "") {
  return testing::tool_server(
      testing::script_of(Json::array({testing::call("bash", {{"command", "echo original"}})})), {},
      {"--extension", fixture(mode, log, kCommands, env)}, settings);
}

void wait_ready(ReboundProcess& r) {
  const Json data = r.command(Json{{"id", "w"}, {"type", "get_extensions"}, {"wait", true}});
  REQUIRE(data["data"]["extensions"][0]["status"] == "ready");
}

Json prompt_of(const std::string& id, const std::string& text) {
  return Json{{"id", id}, {"type", "prompt"}, {"message", text}};
}

// The messages of `path` once one of them contains `needle`.
std::vector<Json> log_when(const std::string& path, const std::string& needle) {
  std::vector<Json> out;
  for (const auto& line : testing::file_lines_when(path, needle))
    out.push_back(Json::parse(line));
  return out;
}

std::vector<Json> with_method(const std::vector<Json>& messages, const std::string& method) {
  std::vector<Json> out;
  for (const auto& m : messages)
    if (m.value("method", "") == method) out.push_back(m);
  return out;
}

// The lines up to the response to `id`, checking that no run started meanwhile.
Json response_without_run(ReboundProcess& r, const Json& command) {
  r.send(command);
  const auto lines = r.read_until_response(command["id"]);
  for (const auto& l : lines)
    CHECK_MESSAGE(l["type"] != "agent_start", "a run started: " << l.dump());
  return lines.back();
}

}  // namespace

TEST_CASE("extension commands: a prompt naming one runs it instead of reaching the model") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "run.log").string();
  ReboundProcess r = with_commands("allow", log);
  wait_ready(r);
  const Json ok = response_without_run(r, prompt_of("c1", "/todos add milk  now"));
  CHECK(ok == Json::parse(R"({"id":"c1","type":"response","command":"prompt","success":true})"));
  CHECK(response_without_run(r, prompt_of("c2", "/todos"))["success"] == true);
  const auto runs = with_method(log_when(log, R"("args":"")"), "commands/run");
  REQUIRE(runs.size() == 2);
  // The rest after one space, byte for byte; "" for none (section 4.6).
  CHECK(runs[0]["params"] == Json::parse(R"({"name":"todos","args":"add milk  now"})"));
  CHECK(runs[1]["params"] == Json::parse(R"({"name":"todos","args":""})"));
  // Nothing reached the session: no message, no LLM request.
  CHECK(r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"]["messageCount"] == 0);
  CHECK(r.dir().read("script-log.jsonl").empty());
  // A name no extension has, or a prefix of one, reaches the model as typed.
  r.send(prompt_of("m", "/todo list"));
  const auto run = r.read_until_type("agent_end");
  CHECK(run.back()["messages"][0]["content"][0]["text"] == "/todo list");
}

TEST_CASE("extension commands: an error answer, no answer and a crash fail the prompt") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "fail.log").string();
  ReboundProcess r = with_commands("allow", log, R"({"extensionRunner":{"toolTimeoutMs":300}})");
  wait_ready(r);
  CHECK(
      response_without_run(r, prompt_of("f", "/fail now")) ==
      Json::parse(R"({"id":"f","type":"response","command":"prompt","success":false,)"
                  R"("error":"Extension command /fail failed: JSON-RPC error -32000: no todos"})"));
  CHECK(response_without_run(r, prompt_of("h", "/hang"))["error"] ==
        "Extension command /hang failed: no answer within 300 ms");
  // The extension is told its request no longer waits (section 4.8).
  const auto cancelled = with_method(log_when(log, "cancelled"), "cancelled");
  REQUIRE(cancelled.size() == 1);
  CHECK(cancelled[0]["params"]["reason"] == "Timed out after 300 ms");
  // A crash: the prompt fails with the exit text, one extension_error names the request.
  r.send(prompt_of("x", "/crashcmd"));
  const auto lines = r.read_until_response("x");
  CHECK(lines.back()["error"] ==
        "Extension command /crashcmd failed: Exited with code 5: fixture: command broke");
  bool reported = false;
  for (const auto& l : lines)
    if (l["type"] == "extension_error") {
      reported = true;
      CHECK(l == Json::parse(R"({"type":"extension_error","extensionPath":"cli-1",)"
                             R"("event":"commands/run",)"
                             R"("error":"Exited with code 5: fixture: command broke"})"));
    }
  CHECK(reported);
  // Its commands are not run any more: /todos reaches the model (section 4.9).
  CHECK(r.command(Json{{"id", "g"}, {"type", "get_commands"}})["data"] ==
        Json::parse(R"({"commands":[]})"));
  r.send(prompt_of("m", "/todos"));
  CHECK(r.read_until_type("agent_end").back()["messages"][0]["content"][0]["text"] == "/todos");
}

TEST_CASE(
    "extension commands: they run during a run, and steer and follow_up naming one are refused") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "busy.log").string();
  // The interceptor asks the user about the call: the run waits on the dialog meanwhile.
  ReboundProcess r = with_commands("confirm", log);
  wait_ready(r);
  r.send(prompt_of("p", "use the tools"));
  const Json dialog = r.read_until_type("extension_ui_request").back();
  CHECK(r.command(Json{{"id", "s"}, {"type", "get_state"}})["data"]["isStreaming"] == true);
  // No streamingBehavior, no busy error: the command is not a message (section 4.6).
  CHECK(r.command(prompt_of("c", "/todos"))["success"] == true);
  for (const std::string kind : {"steer", "follow_up"}) {
    CAPTURE(kind);
    const Json refused = r.command(Json{{"id", "q"}, {"type", kind}, {"message", "/todos later"}});
    CHECK(refused == Json{{"id", "q"},
                          {"type", "response"},
                          {"command", kind},
                          {"success", false},
                          {"error",
                           "Extension command \"/todos\" cannot be queued. Use prompt or execute "
                           "the command when not streaming."}});
  }
  // A prompt that names none still gets the busy error.
  CHECK(r.command(prompt_of("b", "/nothing"))["success"] == false);
  r.send(Json{{"type", "extension_ui_response"}, {"id", dialog["id"]}, {"confirmed", true}});
  const auto run = r.read_until_type("agent_end");
  CHECK(testing::text_of(testing::end_of(run, "call_1")["result"]) == "original\n");
  CHECK(with_method(log_when(log, "commands/run"), "commands/run").size() == 1);
}

TEST_CASE("extension commands: a command asks the user and sends a message meanwhile") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "ask.log").string();
  ReboundProcess r = with_commands("allow", log);
  wait_ready(r);
  for (const bool yes : {true, false}) {
    CAPTURE(yes);
    r.send(prompt_of("a", "/ask deploy"));
    const Json dialog = r.read_until_type("extension_ui_request").back();
    CHECK(dialog["method"] == "confirm");
    CHECK(dialog["title"] == "Run deploy?");
    r.send(Json{{"type", "extension_ui_response"}, {"id", dialog["id"]}, {"confirmed", yes}});
    const Json answer = r.read_until_response("a").back();
    CHECK(answer["success"] == yes);
    if (!yes)
      CHECK(answer["error"] ==
            "Extension command /ask failed: JSON-RPC error -32000: not confirmed");
  }
  // session/send_user_message from the command starts a run with its text.
  r.send(prompt_of("s", "/say hello"));
  bool answered = false;
  const auto lines = r.read_until([&](const Json& l) {
    if (l["type"] == "response" && l["id"] == "s") {
      answered = true;
      CHECK(l["success"] == true);
    }
    return answered && l["type"] == "agent_end";
  });
  bool started = false;
  for (const auto& l : lines)
    if (l["type"] == "message_start" && l["message"]["role"] == "user") {
      started = true;
      CHECK(l["message"]["content"][0]["text"] == "said: hello");
    }
  CHECK(started);
}

TEST_CASE("extension commands: a prompt sent while the extension starts waits for it") {
  testing::TempDir logs;
  const std::string log = (logs.path() / "slow.log").string();
  ReboundProcess r = with_commands("allow", log, "{}", "EXT_START_DELAY=0.5");
  // The first command: the extension is still starting.
  const Json ok = response_without_run(r, prompt_of("c", "/todos first"));
  CHECK(ok["success"] == true);
  const auto runs = with_method(log_when(log, "commands/run"), "commands/run");
  REQUIRE(runs.size() == 1);
  CHECK(runs[0]["params"]["args"] == "first");
}

TEST_CASE(
    "extension commands: get_commands lists them, and a name taken earlier stays the first's") {
  testing::TempDir logs;
  const std::string first = (logs.path() / "first.log").string();
  const std::string second = (logs.path() / "second.log").string();
  const std::string other =
      R"({"protocolVersion":1,"commands":[{"name":"todos","description":"Theirs"},{"name":"ship"}]})";
  ReboundProcess r = testing::tool_server(
      testing::script_of(Json::array()), {},
      {"--extension",
       fixture(
           "allow", first,
           R"({"protocolVersion":1,"commands":[{"name":"todos","description":"Show the to-do list"}]})"),
       "--extension", fixture("allow", second, other)});
  r.command(Json{{"id", "w"}, {"type", "get_extensions"}, {"wait", true}});
  const Json data = r.command(Json{{"id", "g"}, {"type", "get_commands"}})["data"];
  const std::string cwd = std::filesystem::canonical(r.dir().path()).string();
  const auto entry = [&](const std::string& name, const std::string& description,
                         const std::string& path) {
    return Json{{"name", name},
                {"description", description},
                {"source", "extension"},
                {"sourceInfo",
                 {{"path", path},
                  {"source", "cli"},
                  {"scope", "temporary"},
                  {"origin", "top-level"},
                  {"baseDir", cwd}}}};
  };
  REQUIRE(data["commands"].size() == 2);
  CHECK(
      data["commands"][0].dump() ==
      entry(
          "todos", "Show the to-do list",
          fixture(
              "allow", first,
              R"({"protocolVersion":1,"commands":[{"name":"todos","description":"Show the to-do list"}]})"))
          .dump());
  CHECK(data["commands"][1].dump() == entry("ship", "", fixture("allow", second, other)).dump());
  CHECK(r.command(prompt_of("t", "/todos"))["success"] == true);
  CHECK(r.command(prompt_of("s", "/ship it"))["success"] == true);
  CHECK(with_method(log_when(first, "commands/run"), "commands/run").size() == 1);
  const auto theirs = with_method(log_when(second, R"("ship")"), "commands/run");
  REQUIRE(theirs.size() == 1);
  CHECK(theirs[0]["params"]["name"] == "ship");
}

TEST_CASE("extension commands: get_commands with no extension, and over the JSON-RPC envelope") {
  ReboundProcess r = testing::tool_server(testing::script_of(Json::array()));
  CHECK(r.command(Json{{"id", "g"}, {"type", "get_commands"}})["data"] ==
        Json::parse(R"({"commands":[]})"));
  r.send(Json::parse(R"({"jsonrpc":"2.0","id":7,"method":"get_commands"})"));
  CHECK(r.read_json() == Json::parse(R"({"jsonrpc":"2.0","id":7,"result":{"commands":[]}})"));
}
