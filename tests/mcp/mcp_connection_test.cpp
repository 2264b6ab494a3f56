// McpConnection and McpManager on a manual clock with a fake process (mcp.md sections 3, 5, 7
// and 8): the handshake line by line, pagination and list_changed, the failure texts, the stop
// sequence's steps, calls with progress, timeout and abort, the manager's waits and names.

#include <doctest/doctest.h>
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "mcp/mcp_connection.h"
#include "mcp/mcp_manager.h"
#include "protocol/json.h"
#include "tests/support/fake_peer_process.h"
#include "tests/support/manual_scheduler.h"

using namespace rebound;
using mcp::McpConnection;
using mcp::Status;
using protocol::Json;

namespace {

struct Fixture : testing::FakePeers {
  testing::ManualScheduler clock;
  int changes = 0;

  McpConnection::Options options() {
    McpConnection::Options o;
    o.session_cwd = "/work";
    o.getenv = [](const std::string& name) -> std::optional<std::string> {
      if (name == "PATH") return std::string("/usr/bin");
      if (name == "OPENAI_API_KEY") return std::string("sk-secret");
      return std::nullopt;
    };
    o.version = "9.9.9";
    return o;
  }
  std::unique_ptr<McpConnection> connection(mcp::ServerConfig config) {
    return std::make_unique<McpConnection>(clock, spawner(), std::move(config), options(),
                                           [this] { ++changes; });
  }
  // The server writes one line.
  void reply(const std::string& line) {
    last().handlers.out(line + "\n");
    clock.run_ready();
  }
  const Json& sent(std::size_t i) { return last().written.at(i); }
};

mcp::ServerConfig config(std::string name = "srv") {
  mcp::ServerConfig c;
  c.name = std::move(name);
  c.command = "srv-bin";
  c.args = {"--stdio"};
  c.env = {{"LOG", "1"}};
  c.cwd = "tools";
  return c;
}

const char* kInitOk =
    R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"2"}}})";

// Handshake up to ready with the given tools (one page).
void ready(Fixture& f, McpConnection& c,
           const std::string& tools = R"([{"name":"t","inputSchema":{}}])") {
  c.start();
  f.reply(kInitOk);
  f.reply(R"({"jsonrpc":"2.0","id":2,"result":{"tools":)" + tools + "}}");
  REQUIRE(c.status() == Status::ready);
}

}  // namespace

TEST_CASE("the handshake line by line: initialize, initialized, paginated tools/list, then ready") {
  Fixture f;
  auto c = f.connection(config());
  c->start();
  CHECK(c->status() == Status::starting);
  // The process: command and args, cwd under the session's, only the allowed environment.
  CHECK(f.last().spec.argv == std::vector<std::string>{"srv-bin", "--stdio"});
  CHECK(f.last().spec.cwd == "/work/tools");
  CHECK(f.last().spec.env == std::vector<std::string>{"PATH=/usr/bin", "LOG=1"});
  CHECK(
      f.sent(0) ==
      Json::parse(
          R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"rebound","title":"Rebound","version":"9.9.9"}}})"));
  f.reply(kInitOk);
  CHECK(f.sent(1) == Json::parse(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  CHECK(f.sent(2) == Json::parse(R"({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}})"));
  // list_changed while the first listing runs: one more listing after it.
  f.reply(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  f.reply(
      R"({"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a","description":"A","inputSchema":{"properties":{}}}],"nextCursor":"p2"}})");
  CHECK(f.sent(3) ==
        Json::parse(R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"p2"}})"));
  f.reply(
      R"({"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"b","annotations":{"title":"B","readOnlyHint":true},"inputSchema":{"type":"object"}},{"name":"bad","inputSchema":{"type":"array"}},{"name":"task","execution":{"taskSupport":"required"},"inputSchema":{}}]}})");
  CHECK(c->status() == Status::ready);
  CHECK(c->unsettled());  // the re-list asked for during the first one
  REQUIRE(c->tools().size() == 2);
  CHECK(c->tools()[0].parameters == Json::parse(R"({"properties":{},"type":"object"})"));
  CHECK(c->tools()[1].description == "B");
  CHECK(c->tools()[1].read_only);
  CHECK(f.sent(4)["method"] == "tools/list");
  f.reply(R"({"jsonrpc":"2.0","id":4,"result":{"tools":[]}})");
  CHECK_FALSE(c->unsettled());
  CHECK(c->tools().empty());
  CHECK(*c->server_info() == Json::parse(R"({"name":"s","version":"2"})"));
  CHECK(f.changes > 0);
}

TEST_CASE("start-up failures: spawn, protocol version, initialize error, timeout") {
  Fixture f;
  SUBCASE("spawn") {
    f.spawn_error = "No such file or directory";
    auto c = f.connection(config());
    c->start();
    CHECK(c->status() == Status::failed);
    CHECK(c->error() == "Failed to start: No such file or directory");
  }
  SUBCASE("version, then the stop sequence") {
    auto c = f.connection(config());
    c->start();
    f.reply(
        R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"1999-01-01","capabilities":{}}})");
    CHECK(c->error() == "Unsupported protocol version: 1999-01-01");
    CHECK(f.last().stdin_closed);
    f.clock.advance(999);
    CHECK(f.last().signals.empty());
    f.clock.advance(1);
    CHECK(f.last().signals == std::vector<int>{SIGTERM});
    CHECK_FALSE(f.last().destroyed);
    f.clock.advance(1000);
    CHECK(f.last().destroyed);  // SIGKILL to the group and reaped
  }
  SUBCASE("initialize answered with an error") {
    auto c = f.connection(config());
    c->start();
    f.reply(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"no"}})");
    CHECK(c->error() == "Initialization failed: MCP error -32603: no");
  }
  SUBCASE("no answer within startupTimeoutMs") {
    auto cfg = config();
    cfg.startup_timeout_ms = 500;
    auto c = f.connection(cfg);
    c->start();
    f.clock.advance(499);
    CHECK(c->status() == Status::starting);
    f.clock.advance(1);
    CHECK(c->error() == "Startup timed out after 500 ms");
  }
  SUBCASE("disabled and misconfigured entries never spawn") {
    auto off = config("off");
    off.disabled = true;
    auto c = f.connection(off);
    c->start();
    CHECK(c->status() == Status::disabled);
    auto bad = config("bad");
    bad.error = "Invalid configuration: args must be an array of strings";
    auto d = f.connection(bad);
    d->start();
    CHECK(d->error() == "Invalid configuration: args must be an array of strings");
    CHECK(f.processes.empty());
  }
}

TEST_CASE("calls: progress, the answer, a JSON-RPC error, an invalid result") {
  Fixture f;
  auto c = f.connection(config());
  ready(f, *c);
  std::vector<session::ToolResult> partials;
  std::vector<session::ToolResult> results;
  auto call = c->call(
      "t", Json::parse(R"({"x":1})"), [&](session::ToolResult p) { partials.push_back(p); },
      [&](session::ToolResult r) { results.push_back(r); });
  CHECK(
      f.sent(3) ==
      Json::parse(
          R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"t","arguments":{"x":1},"_meta":{"progressToken":3}}})"));
  f.reply(
      R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1,"total":4,"message":"one"}})");
  REQUIRE(partials.size() == 1);
  CHECK(partials[0].content.empty());
  CHECK(*partials[0].details == Json::parse(R"({"progress":1,"total":4,"message":"one"})"));
  f.reply(R"({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}})");
  REQUIRE(results.size() == 1);
  CHECK(results[0].content[0].text == "hi");
  CHECK(*results[0].details == Json::parse(R"({"server":"srv","tool":"t"})"));

  auto failing =
      c->call("t", Json::object(), {}, [&](session::ToolResult r) { results.push_back(r); });
  f.reply(R"({"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"bad args"}})");
  CHECK(results.at(1).content[0].text == "MCP error -32602: bad args");
  CHECK(results.at(1).is_error);
  auto invalid =
      c->call("t", Json::object(), {}, [&](session::ToolResult r) { results.push_back(r); });
  f.reply(R"({"jsonrpc":"2.0","id":5,"result":{"content":"nope"}})");
  CHECK(results.at(2).content[0].text.rfind("MCP server srv sent an invalid result: ", 0) == 0);
  auto not_object =
      c->call("t", Json::array(), {}, [&](session::ToolResult r) { results.push_back(r); });
  f.clock.run_ready();
  CHECK(results.at(3).content[0].text == "Invalid arguments: expected an object");
  CHECK(f.last().written.size() == 6);  // nothing sent for it
}

TEST_CASE("timeout and abort: notifications/cancelled, the error texts, a late answer ignored") {
  Fixture f;
  auto cfg = config();
  cfg.tool_timeout_ms = 700;
  auto c = f.connection(cfg);
  ready(f, *c);
  std::vector<std::string> texts;
  auto done = [&](session::ToolResult r) { texts.push_back(r.content[0].text); };
  auto slow = c->call("t", Json::object(), {}, done);
  f.clock.advance(700);
  REQUIRE(texts.size() == 1);
  CHECK(texts[0] == "MCP tool call timed out after 700 ms");
  CHECK(
      f.last().written.back() ==
      Json::parse(
          R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"Timed out after 700 ms"}})"));
  f.reply(R"({"jsonrpc":"2.0","id":3,"result":{"content":[]}})");
  CHECK(texts.size() == 1);

  auto aborted = c->call("t", Json::object(), {}, done);
  aborted->cancel();
  CHECK(f.last().written.back()["params"] ==
        Json::parse(R"({"requestId":4,"reason":"Request was aborted"})"));
  CHECK(texts.size() == 1);  // never inside cancel()
  f.clock.run_ready();
  CHECK(texts.at(1) == "Operation aborted");
  f.reply(R"({"jsonrpc":"2.0","id":4,"result":{"content":[]}})");
  CHECK(texts.size() == 2);
}

TEST_CASE("an exit mid-call: the error with the last stderr line, the call ended, no restart") {
  Fixture f;
  auto c = f.connection(config());
  ready(f, *c);
  std::vector<std::string> texts;
  auto call = c->call("t", Json::object(), {},
                      [&](session::ToolResult r) { texts.push_back(r.content[0].text); });
  f.last().handlers.err("warming up\nrogue: crashing\n");
  f.last().alive = false;
  f.last().handlers.exit(3 << 8);  // exited with code 3
  f.clock.run_ready();
  CHECK(c->status() == Status::ready);  // stderr not read to its end yet: at most 100 ms
  f.clock.advance(100);
  CHECK(c->error() == "Exited with code 3: rogue: crashing");
  REQUIRE(texts.size() == 1);
  CHECK(texts[0] == "MCP server srv stopped during the call: Exited with code 3: rogue: crashing");
  CHECK(f.processes.size() == 1);
  f.clock.run_all();
  CHECK(f.processes.size() == 1);  // never restarted by itself
  auto later = c->call("t", Json::object(), {},
                       [&](session::ToolResult r) { texts.push_back(r.content[0].text); });
  f.clock.run_ready();
  CHECK(texts.at(1) == "MCP server srv is not available: Exited with code 3: rogue: crashing");
}

TEST_CASE("the manager: offered names with the hash, the room left, waiting for start-up") {
  Fixture f;
  std::vector<mcp::ServerConfig> servers{config("one"), config("two")};
  mcp::McpManager m(f.clock, f.spawner(), servers, f.options(), {"read"});
  std::vector<Json> updates;
  m.on_update([&](const Json& u) { updates.push_back(u); });
  m.start_all();
  CHECK(f.processes.empty());  // one spawn per loop turn
  CHECK(m.servers_json()["servers"][0]["status"] == "starting");
  f.clock.run_ready();
  REQUIRE(f.processes.size() == 2);
  int settled = 0;
  auto wait = m.when_settled([&] { ++settled; });
  REQUIRE(wait);
  const std::string long_tool(70, 'x');
  for (std::size_t i = 0; i < 2; ++i) {
    auto& p = *f.processes[i];
    p.handlers.out(std::string(kInitOk) + "\n");
    f.clock.run_ready();
    p.handlers.out(
        R"({"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a.b","inputSchema":{}},{"name":")" +
        long_tool + R"(","inputSchema":{}}]}})" + "\n");
    f.clock.run_ready();
    CHECK(settled == (i == 0 ? 0 : 1));
  }
  const auto offered = m.offered(3);
  REQUIRE(offered.size() == 3);  // the room the built-in tools left
  CHECK(offered[0]->definition().name == "mcp__one__a_b");
  char hash[9];
  std::snprintf(hash, sizeof hash, "%08x", mcp::fnv1a32("one/" + long_tool));
  CHECK(offered[1]->definition().name == ("mcp__one__" + long_tool).substr(0, 55) + "_" + hash);
  CHECK(offered[1]->definition().external);
  CHECK(offered[2]->definition().name == "mcp__two__a_b");
  CHECK(m.offered(10).size() == 4);
  const Json list = m.servers_json();
  CHECK(list["servers"][1]["status"] == "ready");
  CHECK(list["servers"][1]["tools"].size() == 2);
  REQUIRE_FALSE(updates.empty());
  CHECK(updates.back()["status"] == "ready");
  CHECK_FALSE(updates.back().contains("serverInfo"));
  // Stopping all: stdin closed, SIGTERM after 1 s, SIGKILL after 2 s, then gone.
  bool gone = false;
  m.stop_all([&] { gone = true; });
  f.clock.advance(2000);
  f.clock.run_ready();
  CHECK(gone);
  CHECK(f.processes[0]->signals == std::vector<int>{SIGTERM});
  CHECK(f.processes[1]->destroyed);
}

TEST_CASE("a call while the server stops is refused, and a restart leaves no call behind") {
  Fixture f;
  auto c = f.connection(config());
  ready(f, *c);
  std::vector<std::string> texts;
  auto done = [&](session::ToolResult r) { texts.push_back(r.content[0].text); };
  auto pending = c->call("t", Json::object(), {}, done);
  bool gone = false;
  c->stop([&] { gone = true; });
  // The pending call was cancelled like an abort; the server was told.
  CHECK(f.last().written.back()["method"] == "notifications/cancelled");
  auto during = c->call("t", Json::object(), {}, done);
  f.clock.run_ready();
  REQUIRE(texts.size() == 2);
  CHECK(texts[0] == "Operation aborted");
  CHECK(texts[1] == "MCP server srv is not available: stopping");
  f.last().alive = false;
  f.last().handlers.err_end();
  f.last().handlers.exit(0);
  f.clock.run_ready();
  CHECK(gone);
  CHECK(c->status() == Status::ready);  // a stop on request is not a failure
  c->start();
  CHECK(f.processes.size() == 2);
  CHECK(c->status() == Status::starting);
}

TEST_CASE(
    "a server whose process exits but leaves its group behind: the group gets the stop sequence") {
  Fixture f;
  auto c = f.connection(config());
  ready(f, *c);
  f.last().handlers.err_end();
  f.last().handlers.exit(1 << 8);  // exited with code 1; `alive` stays: a child it left runs on
  f.clock.run_ready();
  CHECK(c->error() == "Exited with code 1");
  CHECK(f.last().signals.empty());
  f.clock.advance(1000);
  CHECK(f.last().signals == std::vector<int>{SIGTERM});
  f.clock.advance(1000);
  CHECK(f.last().destroyed);  // SIGKILL to the group, reaped
}

TEST_CASE("a restart that stop_all overtakes is answered and starts nothing") {
  Fixture f;
  std::vector<mcp::ServerConfig> servers{config("one")};
  mcp::McpManager m(f.clock, f.spawner(), servers, f.options(), {});
  m.start_all();
  f.clock.run_ready();
  f.reply(kInitOk);
  f.reply(R"({"jsonrpc":"2.0","id":2,"result":{"tools":[]}})");
  std::vector<Json> answers;
  REQUIRE_FALSE(m.restart("one", [&](Json s) { answers.push_back(std::move(s)); }));
  bool gone = false;
  m.stop_all([&] { gone = true; });
  f.last().alive = false;
  f.last().handlers.err_end();
  f.last().handlers.exit(0);
  f.clock.run_all();
  CHECK(gone);
  REQUIRE(answers.size() == 1);  // exactly one answer
  CHECK(answers[0]["name"] == "one");
  CHECK(f.processes.size() == 1);  // no new process after the shutdown's stop
}

TEST_CASE("the manager: a server that never answers initialize is failed at the wait's deadline") {
  Fixture f;
  std::vector<mcp::ServerConfig> servers{config("mute")};
  mcp::McpManager m(f.clock, f.spawner(), servers, f.options(), {});
  m.start_all();
  // The wait begins before the spawn (get_mcp_servers {wait:true} at start-up): its deadline
  // comes before the server's own startup timer.
  std::string status, error;
  auto wait = m.when_settled([&] {
    status = m.servers_json()["servers"][0]["status"];
    error = m.servers_json()["servers"][0].value("error", "");
  });
  REQUIRE(wait);
  f.clock.run_ready();
  REQUIRE(f.processes.size() == 1);
  const std::int64_t timeout = f.options().settings.startup_timeout_ms;
  f.clock.advance(timeout);
  CHECK(status == "failed");  // was "starting", failed a moment later
  CHECK(error == "Startup timed out after " + std::to_string(timeout) + " ms");
}

TEST_CASE("the manager: 60,000 tools are named once, not again for every request") {
  Fixture f;
  std::vector<mcp::ServerConfig> servers{config("big")};
  mcp::McpManager m(f.clock, f.spawner(), servers, f.options(), {"read"});
  m.start_all();
  f.clock.run_ready();
  Json tools = Json::array();
  for (int i = 0; i < 60000; ++i)
    tools.push_back(Json{{"name", "t" + std::to_string(i)}, {"inputSchema", Json::object()}});
  auto& p = f.last();
  p.handlers.out(std::string(kInitOk) + "\n");
  f.clock.run_ready();
  const auto started = std::chrono::steady_clock::now();
  p.handlers.out(Json{{"jsonrpc", "2.0"}, {"id", 2}, {"result", Json{{"tools", tools}}}}.dump() +
                 "\n");
  f.clock.run_ready();
  const auto first = m.offered(128);
  const auto second = m.offered(128);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  MESSAGE("60,000 tools listed, named and offered twice in " << took.count() << " ms");
  REQUIRE(first.size() == 128);
  CHECK(first.front()->definition().name == "mcp__big__t0");
  // The same tool objects: nothing was named again (before, each request renamed all 60,000).
  CHECK(first.front().get() == second.front().get());
  CHECK(m.servers_json()["servers"][0]["tools"].size() == 60000);
}

TEST_CASE("a server that floods pings and never reads its stdin is failed, memory bounded") {
  Fixture f;
  McpConnection::Options options = f.options();
  options.max_queued_input = 4096;
  McpConnection c(f.clock, f.spawner(), config(), options, [] {});
  ready(f, c);
  f.last().reads = false;  // from now on it leaves what we write unread
  std::string flood;
  for (int i = 0; i < 1000; ++i)
    flood += R"({"jsonrpc":"2.0","id":)" + std::to_string(1000 + i) + R"(,"method":"ping"})" + "\n";
  f.last().handlers.out(flood);
  f.clock.run_ready();
  CHECK(c.status() == Status::failed);
  CHECK(c.error() == "The server does not read its input (more than 4096 bytes waiting)");
  // Answers stop at the limit: about 4 KB of them, not 1,000 (before: every one was queued).
  CHECK(f.last().unread < 4096 + 200);
}
