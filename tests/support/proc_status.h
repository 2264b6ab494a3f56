#pragma once
// A number from /proc/PID/status in KiB (VmRSS:, VmHWM: …), for tests and benchmarks that watch
// a child's memory. -1 when the process or the key is gone. proc_status_word() for the others
// (SigIgn: …).

#include <fstream>
#include <string>

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

}  // namespace rebound::testing
