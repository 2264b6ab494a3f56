// Where MCP servers come from (mcp.md section 1), end to end on the real binary: the settings
// files, .mcp.json only when the global settings enable it, --mcp-config files in order,
// --no-mcp, replacement by name in the first entry's position, variable expansion, unusable
// --mcp-config files (exit 1), the two commands' errors. The servers here are disabled or
// cannot start, so only their status shows; the reference servers run in
// tests/node/mcp_servers.test.mjs.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/support/rebound_process.h"

using namespace rebound;
using namespace std::chrono_literals;
using protocol::Json;
using testing::ReboundProcess;

namespace {

// The servers' names and statuses (with the error when failed), in order.
std::vector<std::string> servers_of(ReboundProcess& r) {
  const Json answer = r.command(Json{{"id", "m"}, {"type", "get_mcp_servers"}, {"wait", true}});
  REQUIRE_MESSAGE(answer["success"] == true, answer.dump());
  std::vector<std::string> out;
  for (const auto& s : answer["data"]["servers"]) {
    std::string line = s["name"].get<std::string>() + " " + s["status"].get<std::string>();
    if (s.contains("error")) line += ": " + s["error"].get<std::string>();
    out.push_back(line);
  }
  return out;
}

const char* kMissing = "Failed to start: No such file or directory";

}  // namespace

TEST_CASE("MCP sources: global, project, --mcp-config in order, replaced by name in place") {
  ReboundProcess r(
      {"--no-session", "--mcp-config", "@DIR@/one.json", "--mcp-config", "@DIR@/two.json"}, {},
      {{"agent/settings.json",
        R"({"trustProjectSettings":true,"mcpServers":{"a":{"command":"/nonexistent/a"},"b":{"command":"/nonexistent/b"}}})"},
       {".rebound/settings.json",
        R"({"mcpServers":{"c":{"command":"/nonexistent/c"},"a":{"command":"x","disabled":true}},"mcp":{"projectMcpJson":true}})"},
       {".mcp.json", R"({"mcpServers":{"dot":{"command":"/nonexistent/dot"}}})"},
       {"one.json",
        R"({"other":1,"mcpServers":{"d":{"command":"/nonexistent/d","unknownKey":true},"b":{"url":"https://example.invalid/mcp"}}})"},
       {"two.json",
        R"({"mcpServers":{"e":{"command":"${REBOUND_TEST_UNSET_VAR}"},"f":{"command":"/nonexistent/${REBOUND_TEST_UNSET_VAR:-f}","args":"no"}}})"}});
  // a: replaced by the project's disabled entry, in a's place; b: replaced by an http entry;
  // the project cannot opt .mcp.json in; f's args have the wrong type.
  CHECK(servers_of(r) == std::vector<std::string>{
                             "a disabled", "b failed: Transport not supported: http",
                             std::string("c failed: ") + kMissing,
                             std::string("d failed: ") + kMissing,
                             "e failed: Environment variable REBOUND_TEST_UNSET_VAR is not set",
                             "f failed: Invalid configuration: args must be an array of strings"});
  // The commands' errors.
  CHECK(r.command(Json{{"id", "x"}, {"type", "restart_mcp_server"}, {"name", "zz"}})["error"] ==
        "MCP server not found: zz");
  CHECK(r.command(Json{{"id", "y"}, {"type", "restart_mcp_server"}, {"name", "a"}})["error"] ==
        "MCP server a is disabled");
  CHECK(r.command(Json{{"id", "z"}, {"type", "restart_mcp_server"}})["error"] ==
        "Invalid field 'name': expected string");
  // No MCP tool is offered by failed servers; get_tools has the built-in ones only.
  const Json tools = r.command(Json{{"id", "t"}, {"type", "get_tools"}})["data"]["tools"];
  CHECK(tools.size() == 4);
  r.proc().close_stdin();
  CHECK(r.proc().wait() == 0);
}

TEST_CASE("MCP sources: a project's servers start only when the user's settings trust it") {
  // The project's own trustProjectSettings is ignored: a cloned repository cannot opt in.
  ReboundProcess r(
      {"--no-session"}, {},
      {{"agent/settings.json", R"({"mcpServers":{"a":{"command":"/nonexistent/a"}}})"},
       {".rebound/settings.json",
        R"({"trustProjectSettings":true,"mcpServers":{"c":{"command":"/nonexistent/c"}}})"}});
  CHECK(servers_of(r) == std::vector<std::string>{std::string("a failed: ") + kMissing});
  CHECK(r.proc().stderr_text().find(
            "defines 1 MCP servers; not started (project servers need \"trustProjectSettings\": "
            "true in") != std::string::npos);
}

TEST_CASE("MCP sources: .mcp.json with the global opt-in, --no-mcp keeps only --mcp-config") {
  ReboundProcess::Files files{
      {"agent/settings.json",
       R"({"mcp":{"projectMcpJson":true},"mcpServers":{"g":{"command":"/nonexistent/g"}}})"},
      {".mcp.json", R"({"mcpServers":{"dot":{"command":"/nonexistent/dot"}}})"},
      {"one.json", R"({"mcpServers":{"cli":{"command":"/nonexistent/cli"}}})"}};
  {
    ReboundProcess r({"--no-session"}, {}, files);
    CHECK(servers_of(r) == std::vector<std::string>{std::string("g failed: ") + kMissing,
                                                    std::string("dot failed: ") + kMissing});
  }
  ReboundProcess r({"--no-session", "--no-mcp", "--mcp-config", "@DIR@/one.json"}, {}, files);
  CHECK(servers_of(r) == std::vector<std::string>{std::string("cli failed: ") + kMissing});
}

TEST_CASE("an unusable --mcp-config file stops the server at start-up with exit 1") {
  for (const auto& [content, reason] : std::vector<std::pair<std::string, std::string>>{
           {"", "no such file"},
           {"{not json", "not JSON"},
           {R"({"servers":{}})", "no mcpServers object"}}) {
    ReboundProcess::Files files;
    if (!content.empty()) files["bad.json"] = content;
    ReboundProcess r({"--no-session", "--mcp-config", "@DIR@/bad.json"}, {}, files);
    CHECK(r.proc().wait() == 1);
    CHECK(r.proc().read_line(100ms) == std::nullopt);  // nothing on stdout
    CHECK(r.proc().stderr_text().find(reason) != std::string::npos);
  }
  // acp mode too.
  ReboundProcess acp({"--mode", "acp", "--no-session", "--mcp-config", "@DIR@/missing.json"});
  CHECK(acp.proc().wait() == 1);
}

TEST_CASE("without MCP servers: get_mcp_servers is empty, and no event appears") {
  ReboundProcess r({"--no-session"});
  const Json answer = r.command(Json{{"id", "m"}, {"type", "get_mcp_servers"}});
  CHECK(answer["data"] == Json::parse(R"({"servers":[]})"));
  CHECK(r.command(Json{{"id", "bad"}, {"type", "get_mcp_servers"}, {"wait", "yes"}})["error"] ==
        "Invalid field 'wait': expected boolean");
}
