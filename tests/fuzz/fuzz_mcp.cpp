// What an MCP server writes (mcp.md sections 2, 3, 5, 6): any bytes on its stdout, split into
// the parts of the input (NUL-separated), reach one McpConnection during its handshake, its
// listings and two calls in flight, then the process exits. The connection never crashes,
// every call ends exactly once, and nothing is left pending.

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "fuzz_loop.h"
#include "mcp/mcp_connection.h"
#include "session/scheduler.h"
#include "split_input.h"

using namespace rebound;

namespace {}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  spdlog::set_level(spdlog::level::off);  // what the connection logs is not under test here
  fuzz::Loop loop;
  mcp::ServerProcess::Handlers handlers;
  fuzz::Process* process = nullptr;
  mcp::Spawner spawner = [&](const mcp::SpawnSpec&, mcp::ServerProcess::Handlers h,
                             std::string&) -> std::unique_ptr<mcp::ServerProcess> {
    handlers = std::move(h);
    auto p = std::make_unique<fuzz::Process>();
    process = p.get();
    return p;
  };
  mcp::ServerConfig config;
  config.name = "fuzz";
  config.command = "server";
  mcp::McpConnection::Options options;
  options.session_cwd = "/";
  options.getenv = [](const std::string&) { return std::nullopt; };
  options.version = "0";
  int changes = 0;
  mcp::McpConnection connection(loop, spawner, config, options, [&] { ++changes; });
  connection.start();
  int ended = 0;
  std::vector<std::unique_ptr<session::ToolCall>> calls;
  const auto parts = fuzz::split_at_nul(data, size, 64);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (!process) break;
    handlers.out(parts[i]);
    loop.run();
    if (i == parts.size() / 2) {
      // Two calls of whatever the server listed (or of a name it never listed).
      const std::string tool =
          connection.tools().empty() ? std::string("t") : connection.tools().front().name;
      for (int k = 0; k < 2; ++k) {
        calls.push_back(connection.call(
            tool, protocol::Json::object(), [](session::ToolResult) {},
            [&ended](session::ToolResult r) {
              if (r.content.empty()) std::abort();
              ++ended;
            }));
      }
      loop.run();
    }
  }
  if (process) {
    handlers.out_end();
    handlers.err_end();
    process->alive = false;
    handlers.exit(0);
  }
  loop.run();
  loop.expire_all();
  // Both calls ended exactly once (an answer, an error, the timeout or the exit), and the exit
  // left the server failed.
  if (!calls.empty() && ended != 2) std::abort();
  if (connection.status() != mcp::Status::failed) std::abort();
  return 0;
}
