#pragma once
// A number from /proc/PID/status in KiB (VmRSS:, VmHWM: …), for tests and benchmarks that watch
// a child's memory. -1 when the process or the key is gone. proc_status_word() for the others
// (SigIgn: …). process_ended() for a process that is not ours to reap.

#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace rebound::testing {

/// The first word after `key` in /proc/PID/status ("" when the process or the key is gone).
inline std::string proc_status_word(int pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string word;
  while (in >> word) {
    if (word == key) {
      in >> word;
      return word;
    }
    std::getline(in, word);
  }
  return {};
}

inline long proc_status_kib(int pid, const std::string& key) {
  const std::string kib = proc_status_word(pid, key);
  return kib.empty() ? -1 : std::stol(kib);
}

/// True once `pid` is gone or a zombie (State: Z): a killed orphan stays a zombie until whoever
/// adopted it (init or a subreaper above the tests) reaps it, which some containers' init does
/// late or never. Polls every 20 ms for up to `within` (watching another process, not a sleep
/// standing in for an event of ours).
inline bool process_ended(int pid, std::chrono::milliseconds within = std::chrono::seconds(5)) {
  const auto until = std::chrono::steady_clock::now() + within;
  for (;;) {
    if (::kill(pid, 0) != 0 || proc_status_word(pid, "State:") == "Z") return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace rebound::testing
