// Measures switch_session of a large session file on the real binary: the file's size, the
// time to the switch's response, how soon a get_state sent right after it answers, the server's
// peak resident memory (VmHWM) and its resident memory once the session is held (VmRSS), each
// against the file's size. runtime.md section 4's version 3 format, a linear conversation.
// usage: bench_load [messages (default 1000000)] [text bytes per message (default 200)]
//                   [server binary (default this build's)]

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "tests/support/proc_status.h"
#include "tests/support/session_text.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using rebound::testing::proc_status_kib;
using rebound::testing::Subprocess;

namespace {

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// The next line that carries `"id":"<id>"`; nullopt when the output ends first.
std::optional<std::string> response(Subprocess& p, const std::string& id) {
  const std::string key = "\"id\":\"" + id + "\"";
  while (auto line = p.read_line(600000ms)) {
    if (line->find(key) != std::string::npos) return line;
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  const int messages = argc > 1 ? std::atoi(argv[1]) : 1000000;
  const std::size_t text = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 200;
  rebound::testing::TempDir dir;
  const auto file = dir.path() / "big.jsonl";
  {
    std::ofstream out(file, std::ios::binary);
    out << rebound::testing::linear_session_file("big-1", messages, text);
  }
  const double file_mb = static_cast<double>(std::filesystem::file_size(file)) / 1e6;

  rebound::testing::SubprocessOptions o;
  o.env["HOME"] = dir.path().string();
  o.unset_env = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"};
  const std::string binary = argc > 3 ? argv[3] : REBOUND_BINARY;
  Subprocess p({binary, "--agent-dir", dir.path().string(), "--session-dir",
                (dir.path() / "sessions").string(), "--log-level", "warn"},
               o);
  p.write("{\"id\":\"st0\",\"type\":\"get_state\"}\n");
  if (!response(p, "st0"))
    return std::fprintf(stderr, "no answer: %s\n", p.stderr_text().c_str()), 1;
  const double idle_mb = static_cast<double>(proc_status_kib(p.pid(), "VmRSS:")) / 1024;

  const auto t0 = Clock::now();
  p.write("{\"id\":\"sw\",\"type\":\"switch_session\",\"sessionPath\":\"" + file.string() +
          "\"}\n{\"id\":\"st\",\"type\":\"get_state\"}\n");
  const auto state = response(p, "st");
  const double state_ms = ms_since(t0);
  const auto switched = response(p, "sw");
  const double switch_ms = ms_since(t0);
  if (!state || !switched || switched->find("\"success\":true") == std::string::npos)
    return std::fprintf(stderr, "switch failed: %s\n", switched.value_or("").c_str()), 1;
  p.write("{\"id\":\"st2\",\"type\":\"get_state\"}\n");
  const auto after = response(p, "st2");
  if (!after || after->find("\"messageCount\":" + std::to_string(messages)) == std::string::npos)
    return std::fprintf(stderr, "wrong state: %s\n", after.value_or("").c_str()), 1;
  const double peak_mb = static_cast<double>(proc_status_kib(p.pid(), "VmHWM:")) / 1024;
  const double held_mb = static_cast<double>(proc_status_kib(p.pid(), "VmRSS:")) / 1024;
  p.close_stdin();
  p.wait(60000ms);

  std::printf("file %.1f MB, %d messages of %zu text bytes\n", file_mb, messages, text);
  std::printf("get_state during the load answered after %.1f ms\n", state_ms);
  std::printf("switch_session answered after %.0f ms\n", switch_ms);
  std::printf("resident: idle %.1f MiB, peak %.1f MiB (%.2fx the file), held %.1f MiB (%.2fx)\n",
              idle_mb, peak_mb, peak_mb * 1.048576 / file_mb, held_mb,
              held_mb * 1.048576 / file_mb);
  return 0;
}
