// ExtensionConnection on a manual clock with a fake process (extensions.md sections 4.2, 4.4,
// 4.7, 4.9): the initialize request and its answer's checks with their failure texts, the
// start-up timeout, the interceptor's answers and timeout (a dialog's wait not counted), the
// extension's requests and their errors, and a crash ending what is pending.

#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "extensions/extension_connection.h"
#include "protocol/json.h"
#include "tests/support/fake_peer_process.h"
#include "tests/support/manual_scheduler.h"

using namespace rebound;
using extensions::ExtensionConnection;
using extensions::ExtensionStatus;
using extensions::Interception;
using protocol::Json;

namespace {

// A client that keeps every dialog open until the test answers it.
struct Dialogs : session::DialogHost {
  std::vector<session::DialogRequest> asked;
  std::vector<std::function<void(session::DialogAnswer)>> answers;
  std::unique_ptr<session::Waiting> ask(const session::DialogRequest& request,
                                        std::function<void(session::DialogAnswer)> done) override {
    asked.push_back(request);
    answers.push_back(std::move(done));
    return std::make_unique<session::Waiting>();
  }
};

struct Fixture : testing::FakePeers {
  testing::ManualScheduler clock;
  Dialogs dialogs;
  std::vector<std::string> errors;  // "<name> <method>: <error>"
  extensions::ExtensionHost host;
  std::unique_ptr<ExtensionConnection> c;

  explicit Fixture(extensions::ExtensionConfig config = named("guard")) {
    host.dialogs = &dialogs;
    host.error = [this](const std::string& name, std::string_view method, const std::string& e) {
      errors.push_back(name + " " + std::string(method) + ": " + e);
    };
    host.state = [] { return Json{{"isStreaming", false}}; };
    host.session = [] { return Json{{"sessionId", "sid"}}; };
    ExtensionConnection::Options o;
    o.session_cwd = "/work";
    o.getenv = [](const std::string& name) -> std::optional<std::string> {
      if (name == "PATH") return std::string("/usr/bin");
      if (name == "OPENAI_API_KEY") return std::string("sk-secret");
      return std::nullopt;
    };
    o.version = "9.9.9";
    c = std::make_unique<ExtensionConnection>(clock, spawner(), std::move(config), o, host);
  }
  static extensions::ExtensionConfig named(const std::string& name) {
    extensions::ExtensionConfig config;
    config.name = name;
    config.command = "python3";
    config.args = {"guard.py"};
    config.env = {{"TOKEN", "t"}};
    config.timeout_ms = 500;
    return config;
  }
  void reply(const std::string& line) {
    last().handlers.out(line + "\n");
    clock.run_ready();
  }
  const Json& sent(std::size_t i) { return last().written.at(i); }
  void ready(const std::string& answer = R"({"protocolVersion":1,"interceptors":["tool_call"]})") {
    c->start();
    reply(R"({"jsonrpc":"2.0","id":1,"result":)" + answer + "}");
    REQUIRE(c->status() == ExtensionStatus::ready);
  }
};

}  // namespace

TEST_CASE("extension: initialize, its answer, initialized and session_start, then ready") {
  Fixture f;
  f.c->start();
  CHECK(f.c->status() == ExtensionStatus::starting);
  CHECK(f.last().spec.argv == std::vector<std::string>{"python3", "guard.py"});
  // The MCP servers' environment rule, REBOUND_PROJECT_DIR, then the entry's env: no key.
  CHECK(f.last().spec.env ==
        std::vector<std::string>{"PATH=/usr/bin", "REBOUND_PROJECT_DIR=/work", "TOKEN=t"});
  CHECK(
      f.sent(0).dump() ==
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"rebound","version":"9.9.9"},"name":"guard","mode":"rpc","ui":"rpc","cwd":"/work","session":{"sessionId":"sid"}}})");
  f.reply(
      R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"serverInfo":{"name":"g","version":"2"},"events":["agent_end"],"messageUpdates":"delta","interceptors":["tool_call","tool_result"],"tools":[{"name":"todo_add","parameters":{"properties":{}}},{"name":"bad name!"}],"commands":[{"name":"todos","description":"Show"}]}})");
  CHECK(f.c->status() == ExtensionStatus::ready);
  CHECK(f.sent(1).dump() == R"({"jsonrpc":"2.0","method":"initialized"})");
  CHECK(
      f.sent(2).dump() ==
      R"({"jsonrpc":"2.0","method":"session_start","params":{"reason":"startup","sessionId":"sid"}})");
  CHECK(f.c->wants("agent_end"));
  CHECK_FALSE(f.c->wants("agent_start"));
  CHECK(f.c->delta_updates());
  CHECK(f.c->intercepts());
  REQUIRE(f.c->tools().size() == 1);  // the bad name skipped
  CHECK(f.c->tools()[0].parameters.dump() == R"({"properties":{},"type":"object"})");
  CHECK(
      f.c->info().dump() ==
      R"({"name":"guard","status":"ready","source":"user","events":["agent_end"],"messageUpdates":"delta","interceptors":["tool_call"],"tools":["todo_add"],"commands":["todos"],"failOpen":false,"serverInfo":{"name":"g","version":"2"}})");
  // An event goes out in its byte form.
  f.c->forward(R"({"type":"agent_end","messages":[]})");
  f.clock.run_ready();  // events go out at the end of the loop's turn
  CHECK(f.sent(3).dump() ==
        R"({"jsonrpc":"2.0","method":"event","params":{"type":"agent_end","messages":[]}})");
}

TEST_CASE("extension: the start-up failures and their texts") {
  struct Case {
    const char* answer;
    const char* error;
  };
  const Case cases[] = {
      {R"({"result":{"protocolVersion":2}})", "Unsupported protocol version: 2"},
      {R"({"result":{"protocolVersion":1,"events":"*"}})",
       "Initialization failed: invalid answer: events must be an array of strings"},
      {R"({"result":{"protocolVersion":1,"messageUpdates":"lean"}})",
       "Initialization failed: invalid answer: messageUpdates must be full or delta"},
      {R"({"error":{"code":-32603,"message":"no"}})",
       "Initialization failed: JSON-RPC error -32603: no"},
  };
  for (const auto& k : cases) {
    CAPTURE(k.answer);
    Fixture f;
    f.c->start();
    std::string line = k.answer;
    line.insert(1, R"("jsonrpc":"2.0","id":1,)");
    f.reply(line);
    CHECK(f.c->status() == ExtensionStatus::failed);
    CHECK(f.c->info()["error"] == k.error);
    CHECK(f.errors == std::vector<std::string>{std::string("guard initialize: ") + k.error});
    CHECK(f.last().stdin_closed);  // the stop sequence began
  }
  Fixture f;
  f.c->start();
  f.clock.advance(499);
  CHECK(f.c->starting());
  f.clock.advance(1);
  CHECK(f.c->info()["error"] == "Startup timed out after 500 ms");
  Fixture spawn;
  spawn.spawn_error = "No such file or directory";
  spawn.c->start();
  CHECK(spawn.c->info()["error"] == "Failed to start: No such file or directory");
}

TEST_CASE("extension: tool_call answers, the timeout with cancelled, a dialog's wait not counted") {
  Fixture f;
  f.ready();
  std::vector<Interception> got;
  auto ask = [&] {
    return f.c->intercept("call_1", "bash", Json{{"command", "ls"}},
                          [&](Interception i) { got.push_back(std::move(i)); });
  };
  auto w1 = ask();
  CHECK(
      f.sent(3).dump() ==
      R"({"jsonrpc":"2.0","id":2,"method":"tool_call","params":{"toolCallId":"call_1","toolName":"bash","input":{"command":"ls"}}})");
  f.reply(R"({"jsonrpc":"2.0","id":2,"result":{"action":"modify","input":{"command":"pwd"}}})");
  REQUIRE(got.size() == 1);
  CHECK(got[0].kind == Interception::Kind::modify);
  CHECK(got[0].input.dump() == R"({"command":"pwd"})");
  // No answer: failed after timeoutMs, the request cancelled, one error.
  auto w2 = ask();
  f.clock.advance(500);
  REQUIRE(got.size() == 2);
  CHECK(got[1].kind == Interception::Kind::failed);
  CHECK(got[1].reason == "no answer within 500 ms");
  CHECK(
      f.last().written.back().dump() ==
      R"({"jsonrpc":"2.0","method":"cancelled","params":{"id":3,"reason":"Timed out after 500 ms"}})");
  CHECK(f.errors == std::vector<std::string>{"guard tool_call: no answer within 500 ms"});
  // While its dialog is open the interceptor's clock stops.
  auto w3 = ask();
  f.reply(R"({"jsonrpc":"2.0","id":"d","method":"ui/confirm","params":{"title":"ok?"}})");
  REQUIRE(f.dialogs.asked.size() == 1);
  CHECK(f.dialogs.asked[0].method == "confirm");
  CHECK(f.dialogs.asked[0].fields.dump() == R"({"title":"ok?","timeout":60000})");
  f.clock.advance(5000);
  CHECK(got.size() == 2);
  f.dialogs.answers[0](session::DialogAnswer{std::nullopt, true, false});
  f.clock.run_ready();
  CHECK(f.last().written.back().dump() ==
        R"({"jsonrpc":"2.0","id":"d","result":{"confirmed":true}})");
  f.reply(R"({"jsonrpc":"2.0","id":4,"result":null})");
  REQUIRE(got.size() == 3);
  CHECK(got[2].kind == Interception::Kind::allow);
  // Let go of (an abort): cancelled, and nothing is reported.
  auto w4 = ask();
  w4.reset();
  CHECK(
      f.last().written.back().dump() ==
      R"({"jsonrpc":"2.0","method":"cancelled","params":{"id":5,"reason":"Request was aborted"}})");
  f.clock.advance(1000);
  CHECK(got.size() == 3);
  // The clock resumes where it stopped: 300 ms before the dialog leave 200 ms after it.
  auto w5 = ask();
  f.clock.advance(300);
  f.reply(R"({"jsonrpc":"2.0","id":"e","method":"ui/confirm","params":{"title":"sure?"}})");
  REQUIRE(f.dialogs.asked.size() == 2);
  f.clock.advance(5000);
  f.dialogs.answers[1](session::DialogAnswer{std::nullopt, false, false});
  f.clock.run_ready();
  f.clock.advance(199);
  CHECK(got.size() == 3);
  f.clock.advance(1);
  REQUIRE(got.size() == 4);
  CHECK(got[3].reason == "no answer within 500 ms");
}

TEST_CASE("extension: its requests, their errors, and a crash ending what is pending") {
  Fixture f;
  f.ready();
  f.reply(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  CHECK(f.last().written.back().dump() == R"({"jsonrpc":"2.0","id":1,"result":{}})");
  f.reply(R"({"jsonrpc":"2.0","id":2,"method":"session/get_state"})");
  CHECK(f.last().written.back().dump() ==
        R"({"jsonrpc":"2.0","id":2,"result":{"isStreaming":false}})");
  f.reply(R"({"jsonrpc":"2.0","id":3,"method":"ui/setStatus"})");
  CHECK(f.last().written.back()["error"].dump() ==
        R"({"code":-32601,"message":"Method not found: ui/setStatus"})");
  f.reply(R"({"jsonrpc":"2.0","id":4,"method":"ui/select","params":{"title":"t","options":[1]}})");
  CHECK(f.last().written.back()["error"].dump() ==
        R"({"code":-32602,"message":"Invalid params: options: expected array of strings"})");
  // A select's answer that is not an option is the default.
  f.reply(
      R"({"jsonrpc":"2.0","id":5,"method":"ui/select","params":{"title":"t","options":["a","b"],"timeout":10}})");
  CHECK(f.dialogs.asked.back().timeout_ms == 10);
  f.dialogs.answers.back()(session::DialogAnswer{"c", std::nullopt, false});
  CHECK(f.last().written.back().dump() == R"({"jsonrpc":"2.0","id":5,"result":{"value":null}})");
  // A pending interception ends at once with the crash's text; only the crash is reported.
  std::vector<Interception> got;
  auto w = f.c->intercept("call_1", "bash", Json::object(),
                          [&](Interception i) { got.push_back(std::move(i)); });
  f.last().handlers.err("guard: out of memory\n");
  f.last().handlers.err_end();
  f.last().alive = false;
  f.last().handlers.exit(3 << 8);
  f.clock.run_ready();
  REQUIRE(got.size() == 1);
  CHECK(got[0].reason == "Exited with code 3: guard: out of memory");
  CHECK(f.errors ==
        std::vector<std::string>{"guard tool_call: Exited with code 3: guard: out of memory"});
  // Down, it blocks every later call (it declared tool_call).
  auto w2 = f.c->intercept("call_2", "bash", Json::object(),
                           [&](Interception i) { got.push_back(std::move(i)); });
  f.clock.run_ready();
  REQUIRE(got.size() == 2);
  CHECK(got[1].kind == Interception::Kind::failed);
}
