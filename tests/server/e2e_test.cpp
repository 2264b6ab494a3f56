// End-to-end tests of the real `rebound` binary over pipes (protocol.md section 1, runtime.md
// section 6).

#include <signal.h>

#include <doctest/doctest.h>

#include "protocol/json.h"
#include "tests/support/rebound_process.h"

using namespace rebound;
using namespace std::chrono_literals;
using protocol::Json;
using testing::ReboundProcess;

namespace {

std::string error_of(const Json& response) {
  return response.value("error", std::string());
}

}  // namespace

TEST_CASE("printf get_state | rebound prints exactly one valid get_state line and exits 0") {
  ReboundProcess r;
  r.send_raw("{\"id\":1,\"type\":\"get_state\"}\n");
  r.proc().close_stdin();
  const auto lines = r.proc().read_all_lines();
  REQUIRE(lines.size() == 1);
  const Json j = Json::parse(lines[0]);
  CHECK(j["id"] == 1);
  CHECK(j["type"] == "response");
  CHECK(j["command"] == "get_state");
  CHECK(j["success"] == true);
  CHECK(j["data"]["model"]["id"] == "echo");
  CHECK_FALSE(j["data"].contains("sessionFile"));
  CHECK(r.proc().wait() == 0);
  // The offline notice is on stderr, not stdout.
  CHECK(r.proc().stderr_text().find("echo") != std::string::npos);
}

TEST_CASE("bad input: each line gets exactly its error, the server stays up") {
  ReboundProcess r({"--no-session", "--max-line-bytes", "1000"});
  const std::string u2028 = "\xE2\x80\xA8";
  r.send_raw("this is garbage\n");
  r.send_raw("{\"type\":\"get_state\"\n");
  r.send_raw("null\n[]\n42\n\"x\"\n{}\n");
  r.send_raw("{\"id\":\"u1\",\"type\":\"no_such_command\"}\n");
  r.send_raw("{\"id\":\"v1\",\"type\":\"set_auto_retry\"}\n");
  r.send_raw("{\"id\":\"v2\",\"type\":\"set_auto_retry\",\"enabled\":\"yes\"}\n");
  r.send_raw("{\"id\":\"long\",\"type\":\"get_state\",\"pad\":\"" + std::string(5000, 'p') +
             "\"}\n");
  r.send_raw("{\"id\":\"\xC3\x28\",\"type\":\"get_state\"}\n");
  r.send_raw("{\"id\":\"crlf\",\"type\":\"set_auto_retry\",\"enabled\":true}\r\n");
  r.send_raw("\n");
  r.send_raw("{\"id\":\"line" + u2028 + "sep\",\"type\":\"set_steering_mode\",\"mode\":\"all\"}\n");
  r.send_raw("{\"id\":\"last\",\"type\":\"get_state\"}\n");

  auto expect_parse_error = [&](const std::string& reason_part) {
    const Json j = r.read_json();
    CAPTURE(j.dump());
    CHECK(j.size() == 4);
    CHECK_FALSE(j.contains("id"));
    CHECK(j["type"] == "response");
    CHECK(j["command"] == "parse");
    CHECK(j["success"] == false);
    CHECK(error_of(j).rfind("Failed to parse command: ", 0) == 0);
    CHECK(error_of(j).find(reason_part) != std::string::npos);
  };
  expect_parse_error("syntax error");             // garbage
  expect_parse_error("unexpected end of input");  // truncated JSON
  for (int i = 0; i < 4; ++i)
    expect_parse_error("expected a JSON object");     // null [] 42 "x"
  expect_parse_error("missing string field 'type'");  // {}
  CHECK(r.read_json() == Json::parse(R"({"id":"u1","type":"response","command":"no_such_command",
        "success":false,"error":"Unknown command: no_such_command"})"));
  CHECK(r.read_json() == Json::parse(R"({"id":"v1","type":"response","command":"set_auto_retry",
        "success":false,"error":"Invalid field 'enabled': expected boolean"})"));
  CHECK(r.read_json() == Json::parse(R"({"id":"v2","type":"response","command":"set_auto_retry",
        "success":false,"error":"Invalid field 'enabled': expected boolean"})"));
  expect_parse_error("line exceeds the limit of 1000 bytes");
  expect_parse_error("invalid UTF-8");
  CHECK(r.read_json() == Json::parse(R"({"id":"crlf","type":"response","command":"set_auto_retry",
        "success":true})"));
  // The U+2028 id comes back byte for byte, raw, and the line was not split at it.
  const auto raw = r.proc().read_line();
  REQUIRE(raw);
  CHECK(*raw == "{\"id\":\"line" + u2028 +
                    "sep\",\"type\":\"response\",\"command\":\"set_steering_mode\","
                    "\"success\":true}");
  const Json last = r.read_json();
  CHECK(last["id"] == "last");
  CHECK(last["success"] == true);
  CHECK(last["data"]["steeringMode"] == "all");

  r.proc().close_stdin();
  CHECK(r.proc().read_all_lines().empty());  // nothing more, and nothing that is not JSON
  CHECK(r.proc().wait() == 0);
}

TEST_CASE("the server writes nothing before the first command") {
  ReboundProcess r;
  CHECK_FALSE(r.proc().read_line(150ms));
  r.send(Json{{"type", "get_state"}});
  CHECK(r.read_json()["command"] == "get_state");
}

TEST_CASE("a final line without LF is processed") {
  ReboundProcess r;
  r.send_raw("{\"id\":\"tail\",\"type\":\"get_state\"}");
  r.proc().close_stdin();
  const auto lines = r.proc().read_all_lines();
  REQUIRE(lines.size() == 1);
  CHECK(Json::parse(lines[0])["id"] == "tail");
  CHECK(r.proc().wait() == 0);
}

TEST_CASE("the default line limit is 64 MiB: a 1 MiB command is accepted") {
  ReboundProcess r;
  r.send_raw("{\"id\":\"big\",\"type\":\"get_state\",\"pad\":\"" + std::string(1 << 20, 'b') +
             "\"}\n");
  const Json j = r.read_json();
  CHECK(j["id"] == "big");
  CHECK(j["success"] == true);
}

TEST_CASE("end of stdin stops the server with status 0") {
  ReboundProcess r;
  r.send(Json{{"id", 1}, {"type", "get_state"}});
  r.read_json();
  r.proc().close_stdin();
  // A generous bound that only catches a hang; the latency is measured in bench/.
  CHECK(r.proc().wait(5000ms) == 0);
}

TEST_CASE("SIGTERM, SIGINT and SIGHUP stop the server with status 0") {
  for (int signo : {SIGTERM, SIGINT, SIGHUP}) {
    CAPTURE(signo);
    ReboundProcess r;
    r.send(Json{{"id", 1}, {"type", "get_state"}});
    r.read_json();  // running and past start-up
    r.proc().send_signal(signo);
    CHECK(r.proc().wait(5000ms) == 0);
  }
}

TEST_CASE("a closed stdout (EPIPE) stops the server cleanly with status 0") {
  ReboundProcess r;
  r.send(Json{{"id", 1}, {"type", "get_state"}});
  r.read_json();
  r.proc().close_stdout();
  for (int i = 0; i < 50; ++i)
    r.send(Json{{"id", i}, {"type", "get_state"}});
  CHECK(r.proc().wait(5000ms) == 0);
  CHECK(r.proc().stderr_text().find("Sanitizer") == std::string::npos);
}

TEST_CASE("started with fd 0 closed, the server sees end of input and exits 0") {
  testing::SubprocessOptions o;
  o.close_stdin_at_start = true;
  ReboundProcess r({"--no-session"}, o);
  CHECK(r.proc().read_all_lines().empty());
  CHECK(r.proc().wait(5000ms) == 0);
}

TEST_CASE("stdin may be a regular file") {
  testing::TempDir input;
  const auto file = input.write("in.jsonl",
                                "{\"id\":1,\"type\":\"get_state\"}\n"
                                "{\"id\":2,\"type\":\"abort_retry\"}\n");
  testing::SubprocessOptions o;
  o.stdin_file = file;
  ReboundProcess r({"--no-session"}, o);
  const auto lines = r.proc().read_all_lines();
  REQUIRE(lines.size() == 2);
  CHECK(Json::parse(lines[1]) ==
        Json::parse(R"({"id":2,"type":"response","command":"abort_retry","success":true})"));
  CHECK(r.proc().wait() == 0);
}

TEST_CASE("set_auto_retry and set_auto_compaction persist to the agent's settings.json") {
  ReboundProcess r;
  r.send(Json{{"id", 1}, {"type", "set_auto_retry"}, {"enabled", false}});
  r.send(Json{{"id", 2}, {"type", "set_auto_compaction"}, {"enabled", false}});
  r.send(Json{{"id", 3}, {"type", "get_state"}});
  CHECK(r.read_json()["success"] == true);
  CHECK(r.read_json()["success"] == true);
  CHECK(r.read_json()["data"]["autoCompactionEnabled"] == false);
  const Json settings = Json::parse(r.dir().read("agent/settings.json"));
  CHECK(settings == Json::parse(R"({"retry":{"enabled":false},"compaction":{"enabled":false}})"));
}

TEST_CASE("a malformed settings file is reported on stderr, defaults used, file kept") {
  testing::TempDir agent;
  agent.write("settings.json", "{broken");
  testing::SubprocessOptions o;
  o.env["HOME"] = agent.path().string();
  o.unset_env = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"};
  o.cwd = agent.path();
  o.capture_stdout = true;
  testing::Subprocess p({REBOUND_BINARY, "--agent-dir", agent.path().string(), "--no-session"}, o);
  p.write("{\"type\":\"set_auto_retry\",\"enabled\":false}\n{\"type\":\"get_state\"}\n");
  p.close_stdin();
  const auto lines = p.read_all_lines();
  REQUIRE(lines.size() == 2);
  CHECK(Json::parse(lines[1])["data"]["autoCompactionEnabled"] == true);
  CHECK(p.wait() == 0);
  CHECK(p.stderr_text().find("malformed") != std::string::npos);
  CHECK(agent.read("settings.json") == "{broken");
}

TEST_CASE("command line: --version, --help, bad flags, unavailable provider") {
  {
    testing::Subprocess p({REBOUND_BINARY, "--version"});
    const auto lines = p.read_all_lines();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].rfind("rebound ", 0) == 0);
    CHECK(p.wait() == 0);
  }
  {
    testing::Subprocess p({REBOUND_BINARY, "--help"});
    CHECK(p.read_all_lines().size() > 5);
    CHECK(p.wait() == 0);
  }
  {
    testing::Subprocess p({REBOUND_BINARY, "--no-such-flag"});
    CHECK(p.read_all_lines().empty());
    CHECK(p.wait() == 2);
    CHECK(p.stderr_text().find("--no-such-flag") != std::string::npos);
  }
  {
    ReboundProcess r({"--no-session", "--provider", "nowhere"});
    CHECK(r.proc().read_all_lines().empty());
    CHECK(r.proc().wait() == 1);
    CHECK(r.proc().stderr_text().find("nowhere") != std::string::npos);
  }
}

TEST_CASE("a lone surrogate escape in an id comes back escaped, byte for byte") {
  ReboundProcess r;
  r.send_raw("{\"id\":\"a\\uD800b\",\"type\":\"abort_retry\"}\n");
  const auto line = r.proc().read_line();
  REQUIRE(line);
  CHECK(*line ==
        "{\"id\":\"a\\ud800b\",\"type\":\"response\",\"command\":\"abort_retry\","
        "\"success\":true}");
}
