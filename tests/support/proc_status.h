#pragma once
// A number from /proc/PID/status in KiB (VmRSS:, VmHWM: …), for tests and benchmarks that watch
// a child's memory. -1 when the process or the key is gone.

#include <fstream>
#include <string>

namespace rebound::testing {

inline long proc_status_kib(int pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string word;
  while (in >> word) {
    if (word == key) {
      long kib = 0;
      in >> kib;
      return kib;
    }
    std::getline(in, word);
  }
  return -1;
}

}  // namespace rebound::testing
