#pragma once
// Helpers for end-to-end tests of the real `rebound` binary: a fresh agent directory per test,
// the command line around it, and JSON reading of its stdout.

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace rebound::testing {

/// A server in its own temporary agent directory and HOME, with API keys removed from its
/// environment so the offline default applies.
class ReboundProcess {
 public:
  explicit ReboundProcess(std::vector<std::string> extra_args = {"--no-session"},
                          SubprocessOptions options = {})
      : proc_(argv(extra_args), with_defaults(std::move(options))) {}

  Subprocess& proc() { return proc_; }
  const TempDir& dir() const { return dir_; }

  void send(const protocol::Json& command) { proc_.write(command.dump() + "\n"); }
  void send_raw(const std::string& bytes) { proc_.write(bytes); }

  /// The next stdout line parsed as JSON; fails the test on timeout or non-JSON output.
  protocol::Json read_json(std::chrono::milliseconds timeout = 5000ms) {
    auto line = proc_.read_line(timeout);
    REQUIRE_MESSAGE(line.has_value(), "no output line; stderr: " << proc_.stderr_text());
    auto parsed = protocol::Json::parse(*line, nullptr, false);
    REQUIRE_MESSAGE(!parsed.is_discarded(), "stdout line is not JSON: " << *line);
    return parsed;
  }

 private:
  std::vector<std::string> argv(const std::vector<std::string>& extra) {
    std::vector<std::string> a{REBOUND_BINARY, "--agent-dir", (dir_.path() / "agent").string()};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  SubprocessOptions with_defaults(SubprocessOptions o) {
    o.env.emplace("HOME", dir_.path().string());
    o.env.emplace("REBOUND_AGENT_DIR", (dir_.path() / "agent").string());
    o.unset_env.push_back("OPENAI_API_KEY");
    o.unset_env.push_back("ANTHROPIC_API_KEY");
    if (!o.cwd) o.cwd = dir_.path();
    o.capture_stdout = true;
    return o;
  }

  TempDir dir_;  // declared first: it must exist before the process starts
  Subprocess proc_;
};

}  // namespace rebound::testing
