#pragma once
// The extension fixture of the end-to-end tests (tests/extensions/fixtures/ext_fixture.py) as
// an --extension command, and reading what it logged.

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace rebound::testing {

inline const std::string kExtFixture =
    std::string(REBOUND_SOURCE_DIR) + "/tests/extensions/fixtures/ext_fixture.py";

/// The fixture in `mode`, with `env` (`NAME=value …`) before it, logging what it reads to `log`
/// (and, when the tests capture output, to $REBOUND_CAPTURE_DIR/ext/<capture_name>.jsonl for
/// the schema check of what Rebound writes to an extension).
inline std::string ext_fixture_command(const std::string& mode, const std::string& log,
                                       const std::string& env, const std::string& capture_name) {
  std::string capture;
  if (const char* dir = std::getenv("REBOUND_CAPTURE_DIR"); dir && *dir)
    capture = " EXT_CAPTURE=" + std::string(dir) + "/ext/" + capture_name + ".jsonl";
  return "EXT_MODE=" + mode + " EXT_LOG=" + log + capture + " " + env + " exec python3 " +
         kExtFixture;
}

/// The lines of `path` once one of them contains `needle` (a bound of 10 s, not a timing check:
/// the extension is another process).
inline std::vector<std::string> file_lines_when(const std::string& path,
                                                const std::string& needle) {
  using namespace std::chrono_literals;
  std::vector<std::string> lines;
  for (int i = 0; i < 500; ++i) {
    lines.clear();
    std::ifstream in(path);
    std::string line;
    bool found = false;
    while (std::getline(in, line)) {
      found = found || line.find(needle) != std::string::npos;
      lines.push_back(line);
    }
    if (found) break;
    std::this_thread::sleep_for(20ms);
  }
  return lines;
}

}  // namespace rebound::testing
