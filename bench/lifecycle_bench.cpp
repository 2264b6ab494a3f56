// Measures the server's lifecycle on the real binary: start-up to the first get_state answer,
// and closing stdin to process exit. Prints the median, min and max over N runs. Then the same
// with two MCP servers configured (mcp.md: they start in the background, so the first answer
// must not wait for them): npm server-filesystem and server-everything when tests/node has
// them installed, else the tests' own small server twice; also the time until both are ready
// (get_mcp_servers with wait) and the shutdown that stops them.
// usage: bench_lifecycle [runs (default 31)]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

using Clock = std::chrono::steady_clock;
using rebound::testing::Subprocess;

namespace {

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

void report(const char* what, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::printf("%-40s median %8.3f ms   min %8.3f ms   max %8.3f ms   (n=%zu)\n", what,
              v[v.size() / 2], v.front(), v.back(), v.size());
}

}  // namespace

// Two MCP servers in an --mcp-config file.
std::string two_servers(const std::filesystem::path& dir, std::string& which) {
  const std::string src = REBOUND_SOURCE_DIR;
  const std::string modules = src + "/tests/node/node_modules/@modelcontextprotocol/";
  std::string config;
  if (std::filesystem::exists(modules + "server-everything/dist/index.js")) {
    which = "server-filesystem + server-everything";
    config = R"({"mcpServers":{"fs":{"command":"node","args":[")" + modules +
             R"(server-filesystem/dist/index.js",")" + dir.string() +
             R"("]},"everything":{"command":"node","args":[")" + modules +
             R"(server-everything/dist/index.js","stdio"]}}})";
  } else {
    which = "mcp_rogue_server.mjs twice";
    const std::string rogue = src + "/tests/node/mcp_rogue_server.mjs";
    config = R"({"mcpServers":{"a":{"command":"node","args":[")" + rogue +
             R"("]},"b":{"command":"node","args":[")" + rogue + R"("]}}})";
  }
  const auto file = dir / "mcp.json";
  std::ofstream(file) << config;
  return file.string();
}

// Runs the server `runs` times; with `mcp` two servers are configured and, between the first
// answer and the shutdown, the time until both are ready is measured too.
int measure(int runs, bool mcp) {
  std::vector<double> startup, ready, shutdown;
  std::string which;
  for (int i = 0; i < runs; ++i) {
    rebound::testing::TempDir dir;
    rebound::testing::SubprocessOptions o;
    o.env["HOME"] = dir.path().string();
    o.unset_env = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"};
    std::vector<std::string> argv{REBOUND_BINARY, "--agent-dir", dir.path().string(),
                                  "--no-session", "--log-level", "warn"};
    if (mcp) {
      argv.push_back("--mcp-config");
      argv.push_back(two_servers(dir.path(), which));
    }
    const auto t0 = Clock::now();
    Subprocess p(argv, o);
    p.write("{\"id\":1,\"type\":\"get_state\"}\n");
    if (!p.read_line()) {
      std::fprintf(stderr, "no answer: %s\n", p.stderr_text().c_str());
      return 1;
    }
    startup.push_back(ms_since(t0));
    if (mcp) {
      p.write("{\"id\":2,\"type\":\"get_mcp_servers\",\"wait\":true}\n");
      // Status events may come first; the answer is the line with id 2.
      std::optional<std::string> line;
      while ((line = p.read_line()) && line->find("\"id\":2") == std::string::npos) {
      }
      if (!line || line->find("\"failed\"") != std::string::npos) {
        std::fprintf(stderr, "servers not ready: %s %s\n", line.value_or("").c_str(),
                     p.stderr_text().c_str());
        return 1;
      }
      ready.push_back(ms_since(t0));
    }
    const auto t1 = Clock::now();
    p.close_stdin();
    const auto status = p.wait();
    shutdown.push_back(ms_since(t1));
    if (status != 0) {
      std::fprintf(stderr, "exit status %d\n", status.value_or(-1));
      return 1;
    }
  }
  if (mcp) std::printf("with two MCP servers (%s):\n", which.c_str());
  report("start-up to first get_state response", startup);
  if (mcp) report("start-up to both servers ready", ready);
  report(mcp ? "stdin closed to exit (servers stopped)" : "stdin closed to process exit", shutdown);
  return 0;
}

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 31;
  if (int failed = measure(runs, false)) return failed;
  return measure(runs, true);
}
