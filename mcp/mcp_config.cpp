#include "mcp/mcp_config.h"

#include <algorithm>

#include <cstdio>
#include "protocol/json_access.h"

namespace rebound::mcp {

namespace {

using protocol::is_string_array;
using protocol::is_string_object;

// The first key of `entry` whose value has the wrong type, with the kind it must be.
std::optional<std::string> type_problem(const Json& entry) {
  struct Rule {
    const char* key;
    bool (*ok)(const Json&);
    const char* kind;
  };
  static const Rule rules[] = {
      {"type", [](const Json& v) { return v.is_string(); }, "a string"},
      {"command", [](const Json& v) { return v.is_string(); }, "a string"},
      {"args", is_string_array, "an array of strings"},
      {"env", is_string_object, "an object of strings"},
      {"cwd", [](const Json& v) { return v.is_string(); }, "a string"},
      {"url", [](const Json& v) { return v.is_string(); }, "a string"},
      {"httpUrl", [](const Json& v) { return v.is_string(); }, "a string"},
      {"headers", is_string_object, "an object of strings"},
      {"disabled", [](const Json& v) { return v.is_boolean(); }, "a boolean"},
      {"startupTimeoutMs", [](const Json& v) { return v.is_number_integer(); }, "an integer"},
      {"toolTimeoutMs", [](const Json& v) { return v.is_number_integer(); }, "an integer"},
      {"timeout", [](const Json& v) { return v.is_number_integer(); }, "an integer"},
      {"includeTools", is_string_array, "an array of strings"},
      {"excludeTools", is_string_array, "an array of strings"},
      {"sandbox", [](const Json& v) { return v.is_boolean(); }, "a boolean"},
  };
  for (const Rule& rule : rules) {
    const auto it = entry.find(rule.key);
    if (it != entry.end() && !rule.ok(*it))
      return "Invalid configuration: " + std::string(rule.key) + " must be " + rule.kind;
  }
  return std::nullopt;
}

std::vector<std::string> strings(const Json& array) {
  std::vector<std::string> out;
  for (const auto& v : array)
    out.push_back(v.get<std::string>());
  return out;
}

std::vector<std::pair<std::string, std::string>> pairs(const Json& object) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : object.items())
    out.emplace_back(key, value.get<std::string>());
  return out;
}

// The transport named by `type`, or by which keys are given.
std::optional<Transport> transport_of(const Json& entry, std::optional<std::string>& error) {
  if (const auto it = entry.find("type"); it != entry.end()) {
    const std::string type = it->get<std::string>();
    if (type == "stdio") return Transport::stdio;
    if (type == "http") return Transport::http;
    if (type == "sse") return Transport::sse;
    error = "Invalid configuration: type must be one of stdio, http, sse";
    return std::nullopt;
  }
  if (entry.contains("command")) return Transport::stdio;
  if (entry.contains("url") || entry.contains("httpUrl")) return Transport::http;
  error = "Invalid configuration: command or url is required";
  return std::nullopt;
}

const char* transport_name(Transport t) {
  return t == Transport::http ? "http" : t == Transport::sse ? "sse" : "stdio";
}

}  // namespace

std::vector<ServerConfig> read_servers(const Json& mcp_servers, const Getenv& getenv,
                                       std::vector<std::string>& warnings) {
  std::vector<ServerConfig> out;
  if (!mcp_servers.is_object()) {
    if (!mcp_servers.is_null()) warnings.push_back("mcpServers must be an object; ignored");
    return out;
  }
  for (const auto& [name, entry] : mcp_servers.items()) {
    if (name.empty()) {
      warnings.push_back("an MCP server entry with an empty name is ignored");
      continue;
    }
    ServerConfig server;
    server.name = name;
    if (!entry.is_object()) {
      server.error = "Invalid configuration: the entry must be an object";
      out.push_back(std::move(server));
      continue;
    }
    server.error = type_problem(entry);
    std::optional<Transport> transport;
    if (!server.error) transport = transport_of(entry, server.error);
    if (server.error) {
      out.push_back(std::move(server));
      continue;
    }
    server.transport = *transport;
    std::optional<std::string> missing;
    auto expand = [&](const std::string& s) { return expand_variables(s, getenv, missing); };
    if (const auto it = entry.find("command"); it != entry.end())
      server.command = expand(it->get<std::string>());
    if (const auto it = entry.find("args"); it != entry.end()) {
      for (const auto& a : strings(*it))
        server.args.push_back(expand(a));
    }
    if (const auto it = entry.find("env"); it != entry.end()) {
      for (auto& [key, value] : pairs(*it))
        server.env.emplace_back(key, expand(value));
    }
    if (const auto it = entry.find("cwd"); it != entry.end())
      server.cwd = expand(it->get<std::string>());
    if (const auto it = entry.find("url"); it != entry.end()) {
      server.url = expand(it->get<std::string>());
    } else if (const auto http = entry.find("httpUrl"); http != entry.end()) {
      server.url = expand(http->get<std::string>());
    }
    if (const auto it = entry.find("headers"); it != entry.end()) {
      for (auto& [key, value] : pairs(*it))
        server.headers.emplace_back(key, expand(value));
    }
    server.disabled = entry.value("disabled", false);
    if (const auto it = entry.find("startupTimeoutMs"); it != entry.end())
      server.startup_timeout_ms = it->get<std::int64_t>();
    if (const auto it = entry.find("toolTimeoutMs"); it != entry.end()) {
      server.tool_timeout_ms = it->get<std::int64_t>();
    } else if (const auto gemini = entry.find("timeout"); gemini != entry.end()) {
      server.tool_timeout_ms = gemini->get<std::int64_t>();
    }
    if (const auto it = entry.find("includeTools"); it != entry.end())
      server.include_tools = strings(*it);
    if (const auto it = entry.find("excludeTools"); it != entry.end())
      server.exclude_tools = strings(*it);
    if (const auto it = entry.find("sandbox"); it != entry.end()) server.sandbox = it->get<bool>();
    if (missing) {
      server.error = "Environment variable " + *missing + " is not set";
    } else if (server.transport != Transport::stdio) {
      server.error = std::string("Transport not supported: ") + transport_name(server.transport);
    } else if (server.command.empty()) {
      server.error = "Invalid configuration: command or url is required";
    }
    out.push_back(std::move(server));
  }
  return out;
}

std::vector<ServerConfig> read_acp_servers(const Json& entries,
                                           std::vector<std::string>& warnings) {
  std::vector<ServerConfig> out;
  if (!entries.is_array()) return out;
  for (const auto& entry : entries) {
    ServerConfig server;
    const auto name = entry.is_object() ? entry.find("name") : entry.end();
    if (!entry.is_object() || name == entry.end() || !name->is_string() ||
        name->get<std::string>().empty()) {
      warnings.push_back("an mcpServers entry of the client without a name is ignored");
      continue;
    }
    server.name = name->get<std::string>();
    const std::string type =
        entry.contains("type") && entry["type"].is_string() ? entry["type"].get<std::string>() : "";
    if (type == "http" || type == "sse") {
      server.transport = type == "http" ? Transport::http : Transport::sse;
      server.error = "Transport not supported: " + type;
      out.push_back(std::move(server));
      continue;
    }
    const auto command = entry.find("command");
    if (command == entry.end() || !command->is_string() || command->get<std::string>().empty()) {
      server.error = "Invalid configuration: command or url is required";
      out.push_back(std::move(server));
      continue;
    }
    server.command = command->get<std::string>();
    if (const auto args = entry.find("args"); args != entry.end()) {
      if (!is_string_array(*args)) {
        server.error = "Invalid configuration: args must be an array of strings";
      } else {
        server.args = strings(*args);
      }
    }
    if (const auto env = entry.find("env"); env != entry.end() && !server.error) {
      bool ok = env->is_array();
      for (const auto& variable : ok ? *env : Json::array()) {
        if (!variable.is_object() || !variable.contains("name") || !variable["name"].is_string() ||
            !variable.contains("value") || !variable["value"].is_string()) {
          ok = false;
          break;
        }
        server.env.emplace_back(variable["name"].get<std::string>(),
                                variable["value"].get<std::string>());
      }
      if (!ok) server.error = "Invalid configuration: env must be an array of {name, value}";
    }
    out.push_back(std::move(server));
  }
  return out;
}

void merge_servers(std::vector<ServerConfig>& into, std::vector<ServerConfig> source) {
  for (auto& server : source) {
    const auto same = std::find_if(into.begin(), into.end(),
                                   [&](const ServerConfig& s) { return s.name == server.name; });
    if (same != into.end()) {
      *same = std::move(server);
    } else {
      into.push_back(std::move(server));
    }
  }
}

void apply_server_limit(std::vector<ServerConfig>& servers) {
  for (std::size_t i = kMaxServers; i < servers.size(); ++i)
    servers[i].error = "Too many MCP servers (limit 32)";
}

McpSettings read_mcp_settings(const Json& merged_settings, const Json& global_settings) {
  McpSettings out;
  const auto positive = [](const Json& mcp, const char* key, std::int64_t fallback) {
    const auto it = mcp.find(key);
    return it != mcp.end() && it->is_number_integer() && it->get<std::int64_t>() > 0
               ? it->get<std::int64_t>()
               : fallback;
  };
  if (merged_settings.is_object()) {
    if (const auto mcp = merged_settings.find("mcp");
        mcp != merged_settings.end() && mcp->is_object()) {
      out.startup_timeout_ms = positive(*mcp, "startupTimeoutMs", out.startup_timeout_ms);
      out.tool_timeout_ms = positive(*mcp, "toolTimeoutMs", out.tool_timeout_ms);
    }
  }
  if (global_settings.is_object()) {
    if (const auto mcp = global_settings.find("mcp");
        mcp != global_settings.end() && mcp->is_object()) {
      const auto opt_in = mcp->find("projectMcpJson");
      out.project_mcp_json = opt_in != mcp->end() && opt_in->is_boolean() && opt_in->get<bool>();
    }
  }
  return out;
}

std::uint32_t fnv1a32(std::string_view bytes) {
  std::uint32_t hash = 2166136261u;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619u;
  }
  return hash;
}

namespace {

// Every character outside [A-Za-z0-9_-] becomes one `_` (a multi-byte character too).
std::string sanitize(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if ((u & 0xC0) == 0x80) continue;  // the rest of a character already replaced
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    out += ok ? c : '_';
  }
  return out;
}

}  // namespace

bool ToolNamer::is_taken(const std::string& name) const {
  return taken_.count(name) > 0;
}

std::optional<std::string> ToolNamer::name(const std::string& server, const std::string& tool) {
  std::string offered = "mcp__" + sanitize(server) + "__" + sanitize(tool);
  if (offered.size() > 64 || is_taken(offered)) {
    char hash[9];
    std::snprintf(hash, sizeof hash, "%08x", fnv1a32(server + "/" + tool));
    offered = offered.substr(0, 55) + "_" + hash;
    if (is_taken(offered)) return std::nullopt;
  }
  taken_.insert(offered);
  return offered;
}

}  // namespace rebound::mcp
