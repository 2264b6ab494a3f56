#pragma once
// A child that speaks JSON-RPC over its stdio, as its peers see it (an MCP server, mcp.md; an
// extension process, extensions.md section 4): the process seam (the server's ChildProcess in
// production, a fake in unit tests), what it is started with, and the environment rule both
// share (mcp.md sections 1.3 and 9). No I/O here.

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rebound::peer {

/// A running child process as its connection sees it.
class PeerProcess {
 public:
  struct Handlers {
    std::function<void(std::string_view)> out;  // stdout bytes
    std::function<void()> out_end;
    std::function<void(std::string_view)> err;  // stderr bytes
    std::function<void()> err_end;
    std::function<void(int status)> exit;  // the wait status, once reaped
  };
  /// Destroying it kills the process group and reaps the child, with no further callback.
  virtual ~PeerProcess() = default;
  virtual void write(std::string data) = 0;
  virtual void close_stdin() = 0;
  virtual void signal_group(int signal) = 0;
  /// Whether any process of its group is still there.
  virtual bool group_alive() const = 0;
  /// Bytes written to it that it has not read yet.
  virtual std::size_t input_queued() const = 0;
};

struct SpawnSpec {
  std::vector<std::string> argv;
  std::string cwd;
  std::vector<std::string> env;  // NAME=value, nothing else
  bool sandboxed = false;        // in the OS sandbox (an MCP server, policy.md section 8.8)
};

/// Starts a process; nullptr and the system's reason in `error` when it cannot.
using Spawner = std::function<std::unique_ptr<PeerProcess>(
    const SpawnSpec& spec, PeerProcess::Handlers handlers, std::string& error)>;

/// Looks up an environment variable; none when unset.
using Getenv = std::function<std::optional<std::string>(const std::string& name)>;

/// `${VAR}` and `${VAR:-default}` replaced (mcp.md section 1.3); `missing` gets the first
/// variable that is unset without a default (the text is then unusable).
std::string expand_variables(std::string_view text, const Getenv& getenv,
                             std::optional<std::string>& missing);

/// What a child starts with (mcp.md section 9): the allowed variables of Rebound's environment
/// that are set, then `extra` over them (in order; a later value of a name replaces it).
std::vector<std::pair<std::string, std::string>> child_environment(
    const Getenv& getenv, const std::vector<std::pair<std::string, std::string>>& extra);

/// The wait status as a failure text: `Exited with code <n>` or `Killed by signal <n>`.
std::string exit_text(int status);

}  // namespace rebound::peer
