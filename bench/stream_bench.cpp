// The 20,000-delta stream of issue 8: a local OpenAI-compatible server (the tests' fake, on
// 127.0.0.1) streams N one-character deltas; a client reading the real binary's stdout measures
// the time from writing the prompt to reading agent_end, the events and bytes it read, and the
// server's peak resident memory (VmHWM) just after agent_end. Prints the median over R runs.
// usage: bench_stream [deltas (default 20000)] [runs (default 5)]

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "tests/support/fake_llm_server.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

using Clock = std::chrono::steady_clock;
using rebound::testing::FakeLlmServer;
using rebound::testing::FakeResponse;
using rebound::testing::Subprocess;

namespace {

long peak_rss_kib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (in >> key) {
    if (key == "VmHWM:") {
      long kib = 0;
      in >> kib;
      return kib;
    }
    std::getline(in, key);
  }
  return -1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int deltas = argc > 1 ? std::atoi(argv[1]) : 20000;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
  FakeResponse r;
  for (int i = 0; i < deltas; ++i) {
    r.chunks.push_back(FakeLlmServer::sse(R"({"choices":[{"index":0,"delta":{"content":")" +
                                          std::string(1, static_cast<char>('a' + i % 26)) +
                                          R"("},"finish_reason":null}]})"));
  }
  r.chunks.push_back(FakeLlmServer::sse(
      R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":20000}})"));
  r.chunks.push_back(FakeLlmServer::sse("[DONE]"));
  std::vector<double> seconds, rss_mib, idle_rss_mib, mbytes, events_per_s;
  for (int run = 0; run < runs; ++run) {
    FakeLlmServer server({r});
    rebound::testing::TempDir dir;
    rebound::testing::SubprocessOptions o;
    o.env["HOME"] = dir.path().string();
    Subprocess p(
        {REBOUND_BINARY, "--agent-dir", dir.path().string(), "--no-session", "--provider", "openai",
         "--base-url", server.base_url() + "/v1", "--api-key", "sk-bench", "--log-level", "warn"},
        o);
    p.write("{\"id\":0,\"type\":\"get_state\"}\n");
    if (!p.read_line()) {
      std::fprintf(stderr, "no answer: %s\n", p.stderr_text().c_str());
      return 1;
    }
    idle_rss_mib.push_back(peak_rss_kib(p.pid()) / 1024.0);
    const auto t0 = Clock::now();
    p.write("{\"id\":1,\"type\":\"prompt\",\"message\":\"stream please\"}\n");
    // A lean reader (1 MiB reads, memchr for line ends), so the figure is the server's.
    std::size_t bytes = 0, events = 0;
    std::vector<char> buf(1 << 20);
    std::string line_start;  // the first bytes of the line being read
    bool line_begins = true, done = false;
    while (!done) {
      const ssize_t n = ::read(p.stdout_fd(), buf.data(), buf.size());
      if (n <= 0) {
        std::fprintf(stderr, "stream ended early: %s\n", p.stderr_text().c_str());
        return 1;
      }
      bytes += static_cast<std::size_t>(n);
      const char* at = buf.data();
      const char* end = buf.data() + n;
      while (at < end) {
        const char* lf = static_cast<const char*>(std::memchr(at, '\n', end - at));
        if (line_begins) line_start.clear();
        line_start.append(at,
                          std::min<std::size_t>((lf ? lf : end) - at,
                                                20 - std::min<std::size_t>(20, line_start.size())));
        line_begins = lf != nullptr;
        if (!lf) break;
        ++events;
        if (line_start.rfind("{\"type\":\"agent_end", 0) == 0) done = true;
        at = lf + 1;
      }
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    rss_mib.push_back(peak_rss_kib(p.pid()) / 1024.0);
    seconds.push_back(s);
    mbytes.push_back(bytes / 1e6);
    events_per_s.push_back(events / s);
    std::printf("run %d: %.3f s, %zu lines, %.1f MB, %.0f events/s, peak RSS %.1f MiB\n", run + 1,
                s, events, bytes / 1e6, events / s, rss_mib.back());
    p.close_stdin();
    p.wait(std::chrono::seconds(10));
  }
  std::printf(
      "median of %d runs, %d deltas: %.3f s request to agent_end, %.0f events/s, %.1f MB "
      "of stdout, peak RSS %.1f MiB (idle %.1f MiB)\n",
      runs, deltas, median(seconds), median(events_per_s), median(mbytes), median(rss_mib),
      median(idle_rss_mib));
  return 0;
}
