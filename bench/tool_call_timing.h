#pragma once
// Benchmarks of tool calls (bench_hooks, bench_policy): each call's time from its
// tool_execution_start line to its tool_execution_end line as a client reading the server's
// stdout sees them, until agent_end. A failed call or a missing one ends the benchmark.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "tests/support/subprocess.h"

namespace rebound::bench {

inline std::vector<double> tool_call_times(testing::Subprocess& p, int calls) {
  using Clock = std::chrono::steady_clock;
  std::map<std::string, Clock::time_point> started;
  std::vector<double> out;
  while (auto line = p.read_line(std::chrono::milliseconds(20000))) {
    const auto now = Clock::now();
    const protocol::Json j = protocol::Json::parse(*line);
    const std::string type = j.value("type", "");
    if (type == "tool_execution_start") started[j["toolCallId"]] = now;
    if (type == "tool_execution_end") {
      if (j["isError"] == true) {
        std::fprintf(stderr, "a call failed: %s\n", line->c_str());
        std::exit(1);
      }
      out.push_back(
          std::chrono::duration<double, std::milli>(now - started[j["toolCallId"]]).count());
    }
    if (type == "agent_end") break;
  }
  if (static_cast<int>(out.size()) != calls) {
    std::fprintf(stderr, "expected %d calls, saw %zu: %s\n", calls, out.size(),
                 p.stderr_text().c_str());
    std::exit(1);
  }
  return out;
}

}  // namespace rebound::bench
