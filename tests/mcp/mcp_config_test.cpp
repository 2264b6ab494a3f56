// The MCP client's pure parts (mcp.md sections 1, 4.1 and 9): entries, expansion, merge,
// settings, offered names, the servers' environment.

#include <doctest/doctest.h>

#include <map>

#include "mcp/mcp_config.h"

using namespace rebound::mcp;

namespace {

Getenv env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::vector<ServerConfig> read(const char* json, const Getenv& getenv = env_of({})) {
  std::vector<std::string> warnings;
  return read_servers(Json::parse(json), getenv, warnings);
}

}  // namespace

TEST_CASE("mcp: ${VAR} and ${VAR:-default}, nothing else expanded") {
  std::optional<std::string> missing;
  const auto getenv = env_of({{"HOME", "/home/u"}, {"EMPTY", ""}});
  CHECK(expand_variables("${HOME}/notes $HOME ~ ${EMPTY:-dflt} ${NOPE:-x}", getenv, missing) ==
        "/home/u/notes $HOME ~ dflt x");
  CHECK_FALSE(missing);
  CHECK(expand_variables("a ${NOPE} b ${ALSO}", getenv, missing) == "a  b ");
  CHECK(missing == "NOPE");
  std::optional<std::string> unclosed;
  CHECK(expand_variables("${HOME", getenv, unclosed) == "${HOME");
}

TEST_CASE("mcp: server entries in key order with their fields, expanded") {
  const auto servers = read(
      R"j({"fs":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","${HOME}/notes"],
            "env":{"LOG_LEVEL":"warn","TOKEN":"${TOKEN:-none}"},"cwd":"tools","timeout":5,"excludeTools":["write_file"]},
          "old":{"command":"old-mcp-server","disabled":true},
          "remote":{"type":"http","url":"https://mcp.example.com/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}},
          "gem":{"httpUrl":"https://x"}})j",
      env_of({{"HOME", "/home/u"}}));
  REQUIRE(servers.size() == 4);
  CHECK(servers[0].name == "fs");
  CHECK(servers[0].command == "npx");
  CHECK(servers[0].args ==
        std::vector<std::string>{"-y", "@modelcontextprotocol/server-filesystem", "/home/u/notes"});
  CHECK(servers[0].env ==
        std::vector<std::pair<std::string, std::string>>{{"LOG_LEVEL", "warn"}, {"TOKEN", "none"}});
  CHECK(servers[0].cwd == "tools");
  CHECK(servers[0].tool_timeout_ms == 5);
  CHECK(servers[0].exclude_tools == std::vector<std::string>{"write_file"});
  CHECK_FALSE(servers[0].error);
  CHECK(servers[1].disabled);
  CHECK(servers[2].error == "Environment variable TOKEN is not set");
  CHECK(servers[3].transport == Transport::http);
  CHECK(servers[3].error == "Transport not supported: http");
}

TEST_CASE("mcp: malformed entries fail with the configuration error, the others stay") {
  const auto servers = read(
      R"j({"a":{"command":5},"b":{"command":"x","args":"y"},"c":{"command":"x","env":{"K":1}},
          "d":{"command":"x","disabled":"yes"},"e":{"command":"x","toolTimeoutMs":1.5},"f":{},
          "g":{"type":"websocket","command":"x"},"h":"not an object","":{"command":"x"},"ok":{"command":"x"}})j");
  std::vector<std::string> errors;
  for (const auto& s : servers)
    errors.push_back(s.name + ": " + s.error.value_or("-"));
  CHECK(errors ==
        std::vector<std::string>{"a: Invalid configuration: command must be a string",
                                 "b: Invalid configuration: args must be an array of strings",
                                 "c: Invalid configuration: env must be an object of strings",
                                 "d: Invalid configuration: disabled must be a boolean",
                                 "e: Invalid configuration: toolTimeoutMs must be an integer",
                                 "f: Invalid configuration: command or url is required",
                                 "g: Invalid configuration: type must be one of stdio, http, sse",
                                 "h: Invalid configuration: the entry must be an object", "ok: -"});
}

TEST_CASE("mcp: a later entry replaces an earlier one whole, in its position, the limit of 32") {
  std::vector<ServerConfig> all;
  merge_servers(all, read(R"j({"a":{"command":"a1","args":["x"]},"b":{"command":"b1"}})j"));
  merge_servers(all, read(R"j({"c":{"command":"c2"},"a":{"command":"a2"}})j"));
  REQUIRE(all.size() == 3);
  CHECK(all[0].name == "a");
  CHECK(all[0].command == "a2");
  CHECK(all[0].args.empty());  // not deep-merged
  CHECK(all[2].name == "c");
  std::vector<ServerConfig> many(34);
  apply_server_limit(many);
  CHECK_FALSE(many[31].error);
  CHECK(many[32].error == "Too many MCP servers (limit 32)");
  CHECK(many[33].error == "Too many MCP servers (limit 32)");
}

TEST_CASE("mcp: ACP entries are literal, env as name/value pairs, http and sse fail") {
  std::vector<std::string> warnings;
  const auto servers = read_acp_servers(
      Json::parse(
          R"j([{"name":"fs","command":"npx","args":["${HOME}"],"env":[{"name":"A","value":"1"}]},
                      {"type":"http","name":"web","url":"https://x","headers":[]},
                      {"name":"broken","args":[]},{"name":"","command":"x"}])j"),
      warnings);
  REQUIRE(servers.size() == 3);
  CHECK(servers[0].args == std::vector<std::string>{"${HOME}"});
  CHECK(servers[0].env == std::vector<std::pair<std::string, std::string>>{{"A", "1"}});
  CHECK(servers[1].error == "Transport not supported: http");
  CHECK(servers[2].error == "Invalid configuration: command or url is required");
  CHECK(warnings.size() == 1);
}

TEST_CASE("mcp: settings with their defaults, projectMcpJson only from the global file") {
  const auto defaults = read_mcp_settings(Json::object(), Json::object());
  CHECK(defaults.startup_timeout_ms == 30000);
  CHECK(defaults.tool_timeout_ms == 600000);
  CHECK_FALSE(defaults.project_mcp_json);
  const auto set = read_mcp_settings(
      Json::parse(R"j({"mcp":{"startupTimeoutMs":500,"toolTimeoutMs":-1,"projectMcpJson":true}})j"),
      Json::parse(R"j({"mcp":{"projectMcpJson":false}})j"));
  CHECK(set.startup_timeout_ms == 500);
  CHECK(set.tool_timeout_ms == 600000);
  CHECK_FALSE(set.project_mcp_json);
  CHECK(read_mcp_settings(Json::object(), Json::parse(R"j({"mcp":{"projectMcpJson":true}})j"))
            .project_mcp_json);
}

TEST_CASE("mcp: offered names, sanitised, hashed when too long or taken (section 4.1)") {
  CHECK(fnv1a32("") == 0x811c9dc5u);
  CHECK(fnv1a32("a") == 0xe40c292cu);
  ToolNamer namer({"read", "bash"});
  CHECK(namer.name("my srv", "odd.tool name") == "mcp__my_srv__odd_tool_name");
  CHECK(namer.name("caf\xc3\xa9", "t") == "mcp__caf___t");
  // Taken: the second gets the hashed form of its own unsanitised names.
  const auto again = namer.name("my.srv", "odd tool.name");
  char hash[9];
  std::snprintf(hash, sizeof hash, "%08x", fnv1a32("my.srv/odd tool.name"));
  CHECK(again == std::string("mcp__my_srv__odd_tool_name").substr(0, 55) + "_" + hash);
  const std::string tool(80, 't');
  const auto longer = namer.name("s", tool);
  REQUIRE(longer);
  CHECK(longer->size() == 64);
  CHECK(longer->substr(0, 55) == ("mcp__s__" + tool).substr(0, 55));
  // The same pair again: even the hashed form is taken, so the tool is skipped.
  CHECK_FALSE(namer.name("s", tool));
}

TEST_CASE("mcp: a server's environment holds only the passed variables, then its own") {
  const auto env = server_environment(env_of({{"HOME", "/h"},
                                              {"PATH", "/bin"},
                                              {"OPENAI_API_KEY", "sk-secret"},
                                              {"REBOUND_AGENT_DIR", "/a"},
                                              {"HTTPS_PROXY", "http://p"},
                                              {"TZ", "UTC"}}),
                                      {{"PATH", "/opt/bin"}, {"LOG", "1"}});
  CHECK(env == std::vector<std::pair<std::string, std::string>>{
                   {"HOME", "/h"}, {"PATH", "/opt/bin"}, {"TZ", "UTC"}, {"LOG", "1"}});
}
