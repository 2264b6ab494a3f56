// What one command hook and one extension's tool_call interceptor cost a tool call
// (extensions.md section 11): the same 100 `read` calls of a small file, one per LLM request,
// without either, with one PreToolUse hook running `true`, and with one extension
// (bench/ext_gate.py, Python) whose interceptor allows every call at once; each call's time from
// its tool_execution_start line to its tool_execution_end line as a client reading stdout sees
// them. The targets (differences of the medians): the hook adds at most 3 ms, the interceptor's
// round trip at most 0.3 ms.
// usage: bench_hooks [calls (default 100)] [runs (default 3)]

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "bench/tool_call_timing.h"
#include "protocol/json.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

using Clock = std::chrono::steady_clock;
using rebound::protocol::Json;
using rebound::testing::Subprocess;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The per-call times of one run of `calls` reads, with `settings`.
std::vector<double> run_calls(int calls, const std::string& settings) {
  rebound::testing::TempDir dir;
  dir.write("agent/settings.json", settings);
  dir.write("small.txt", "one line\n");
  Json script = Json::array();
  for (int i = 0; i < calls; ++i) {
    script.push_back(Json{
        {"toolCalls",
         Json::array({Json{{"name", "read"},
                           {"arguments", {{"path", (dir.path() / "small.txt").string()}}}}})}});
  }
  script.push_back(Json{{"text", "done"}});
  dir.write("script.json", script.dump());
  rebound::testing::SubprocessOptions o;
  o.env["HOME"] = dir.path().string();
  Subprocess p(
      {REBOUND_BINARY, "--agent-dir", (dir.path() / "agent").string(), "--no-session", "--provider",
       "scripted", "--script", (dir.path() / "script.json").string(), "--log-level", "warn"},
      o);
  p.write(R"({"id":"p","type":"prompt","message":"read it"})"
          "\n");
  return rebound::bench::tool_call_times(p, calls);
}

}  // namespace

int main(int argc, char** argv) {
  const int calls = argc > 1 ? std::atoi(argv[1]) : 100;
  const int runs = argc > 2 ? std::atoi(argv[2]) : 3;
  const std::string hook =
      R"({"hooks":{"PreToolUse":[{"matcher":"Read","hooks":[{"type":"command","command":"true"}]}]}})";
  const std::string gate = R"({"extensions":{"gate":{"command":"python3","args":[")" +
                           std::string(REBOUND_SOURCE_DIR) + R"(/bench/ext_gate.py","gate"]}}})";
  for (int run = 1; run <= runs; ++run) {
    const double without = median(run_calls(calls, "{}"));
    const double with = median(run_calls(calls, hook));
    const double intercepted = median(run_calls(calls, gate));
    std::printf(
        "PreToolUse hook `true` on read, run %d: median start→end %.3f ms without, %.3f ms with: "
        "+%.3f ms (n=%d each, target <= 3 ms)\n",
        run, without, with, with - without, calls);
    std::printf(
        "tool_call interceptor (Python, allows at once) on read, run %d: median start→end %.3f "
        "ms without, %.3f ms with: +%.3f ms (n=%d each, target <= 0.3 ms)\n",
        run, without, intercepted, intercepted - without, calls);
  }
  return 0;
}
