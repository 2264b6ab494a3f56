#pragma once
// The MCP client's pure parts (mcp.md): server entries from their sources (section 1), variable
// expansion (1.3), the merge of sources (1.1), the `mcp` settings, the names tools are offered
// under (4.1) and the environment a server starts with (9). No I/O: the caller reads the files
// and the environment and hands them in.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "peer/peer_process.h"
#include "protocol/json.h"

namespace rebound::mcp {

using protocol::Json;

enum class Transport { stdio, http, sse };

/// One configured server. `error` set: it is never started and shows as `failed` with it
/// (`disabled` entries show as `disabled`).
struct ServerConfig {
  std::string name;
  Transport transport = Transport::stdio;
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // in the entry's order
  std::optional<std::string> cwd;                        // relative to the session cwd
  std::optional<std::string> url;
  std::vector<std::pair<std::string, std::string>> headers;
  bool disabled = false;
  std::optional<std::int64_t> startup_timeout_ms;
  std::optional<std::int64_t> tool_timeout_ms;
  std::optional<std::vector<std::string>> include_tools;
  std::vector<std::string> exclude_tools;
  std::optional<std::string> error;
  /// Whether it runs in the OS sandbox (policy.md section 8.8): the entry's `sandbox`, then
  /// (make_mcp_set) sandbox.mcpServers.
  std::optional<bool> sandbox;
};

using peer::expand_variables;  // section 1.3
using peer::Getenv;

/// The entries of one file's `mcpServers` object (sources 1 to 4), in key order, expanded. An
/// entry that is not usable comes back with its `error`; an empty name is left out (reported in
/// `warnings`).
std::vector<ServerConfig> read_servers(const Json& mcp_servers, const Getenv& getenv,
                                       std::vector<std::string>& warnings);

/// ACP `mcpServers` entries (source 5, section 8): taken literally; `env` is a list of
/// {name, value}.
std::vector<ServerConfig> read_acp_servers(const Json& entries, std::vector<std::string>& warnings);

/// Appends `source` to `into` in order: an entry replaces an earlier one of the same name as a
/// whole, in that entry's position (section 1.1).
void merge_servers(std::vector<ServerConfig>& into, std::vector<ServerConfig> source);

/// Servers past the 32nd become `failed` with `Too many MCP servers (limit 32)`.
inline constexpr std::size_t kMaxServers = 32;
void apply_server_limit(std::vector<ServerConfig>& servers);

/// The `mcp` settings (section 1.2); `projectMcpJson` only from the global file.
struct McpSettings {
  std::int64_t startup_timeout_ms = 30000;
  std::int64_t tool_timeout_ms = 600000;
  bool project_mcp_json = false;
};
McpSettings read_mcp_settings(const Json& merged_settings, const Json& global_settings);

/// FNV-1a, 32 bits, over the bytes.
std::uint32_t fnv1a32(std::string_view bytes);

/// The offered names of section 4.1: `mcp__<server>__<tool>` sanitised, shortened with a hash
/// when too long or taken. Names handed out are remembered as taken.
class ToolNamer {
 public:
  /// `taken`: the built-in tools' names.
  explicit ToolNamer(const std::vector<std::string>& taken) : taken_(taken.begin(), taken.end()) {}
  /// The name, or none when even the hashed form is taken (the tool is skipped).
  std::optional<std::string> name(const std::string& server, const std::string& tool);

 private:
  bool is_taken(const std::string& name) const;
  std::unordered_set<std::string> taken_;
};

/// What a server starts with (section 9): the allowed variables of Rebound's environment that
/// are set, then the entry's `env` over them.
inline std::vector<std::pair<std::string, std::string>> server_environment(
    const Getenv& getenv, const std::vector<std::pair<std::string, std::string>>& entry_env) {
  return peer::child_environment(getenv, entry_env);
}

}  // namespace rebound::mcp
