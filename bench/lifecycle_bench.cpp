// Measures the server's lifecycle on the real binary: start-up to the first get_state answer,
// and closing stdin to process exit. Prints the median, min and max over N runs.
// usage: bench_lifecycle [runs (default 31)]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 31;
  std::vector<double> startup, shutdown;
  for (int i = 0; i < runs; ++i) {
    rebound::testing::TempDir dir;
    rebound::testing::SubprocessOptions o;
    o.env["HOME"] = dir.path().string();
    o.unset_env = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"};
    const auto t0 = Clock::now();
    Subprocess p(
        {REBOUND_BINARY, "--agent-dir", dir.path().string(), "--no-session", "--log-level", "warn"},
        o);
    p.write("{\"id\":1,\"type\":\"get_state\"}\n");
    if (!p.read_line()) {
      std::fprintf(stderr, "no answer: %s\n", p.stderr_text().c_str());
      return 1;
    }
    startup.push_back(ms_since(t0));
    const auto t1 = Clock::now();
    p.close_stdin();
    const auto status = p.wait();
    shutdown.push_back(ms_since(t1));
    if (status != 0) {
      std::fprintf(stderr, "exit status %d\n", status.value_or(-1));
      return 1;
    }
  }
  report("start-up to first get_state response", startup);
  report("stdin closed to process exit", shutdown);
  return 0;
}
