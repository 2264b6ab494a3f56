#pragma once
// Helpers for end-to-end tests of the real `rebound` binary: a fresh agent directory per test
// (files laid out before the start), the command line around it ("@DIR@" in an argument stands
// for the temporary directory), and JSON reading of its stdout with timeouts.

#include <doctest/doctest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/json.h"
#include "tests/support/jsonl.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace rebound::testing {

/// A server in its own temporary agent directory (<dir>/agent) and HOME, with API keys removed
/// from its environment so the offline default applies.
class ReboundProcess {
 public:
  using Files = std::map<std::string, std::string>;  // relative path → content

  explicit ReboundProcess(std::vector<std::string> extra_args = {"--no-session"},
                          SubprocessOptions options = {}, Files files = {})
      : files_written_(write_files(files)),
        proc_(argv(extra_args), with_defaults(std::move(options), is_acp(extra_args))) {}

  /// A server the test did not wait for itself must end well: its stdin closed, it exits with
  /// status 0 (an ASan build's leak report would make it 1). `expect_any_exit()` opts out.
  ~ReboundProcess() {
    if (proc_.waited() || any_exit_) return;
    proc_.close_stdin();
    const auto status = proc_.wait(5000ms);
    CHECK_MESSAGE(status == 0, "the server did not exit with 0 at the end of the test: "
                                   << (status ? std::to_string(*status) : "still running")
                                   << "; stderr tail: " << tail(proc_.stderr_text()));
  }
  ReboundProcess(ReboundProcess&&) = delete;
  void expect_any_exit() { any_exit_ = true; }

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

  /// Reads lines up to and including the first one for which `stop` holds.
  std::vector<protocol::Json> read_until(const std::function<bool(const protocol::Json&)>& stop,
                                         std::chrono::milliseconds timeout = 10000ms) {
    std::vector<protocol::Json> out;
    while (true) {
      out.push_back(read_json(timeout));
      if (stop(out.back())) return out;
    }
  }
  std::vector<protocol::Json> read_until_type(const std::string& type,
                                              std::chrono::milliseconds timeout = 10000ms) {
    return read_until([&](const protocol::Json& j) { return j["type"] == type; }, timeout);
  }
  std::vector<protocol::Json> read_until_response(const protocol::Json& id,
                                                  std::chrono::milliseconds timeout = 10000ms) {
    return read_until(
        [&](const protocol::Json& j) {
          return j["type"] == "response" && j.value("id", protocol::Json()) == id;
        },
        timeout);
  }

  /// Sends a command with an `id` and returns its response (the lines before it are dropped).
  protocol::Json command(const protocol::Json& c) {
    send(c);
    return read_until_response(c["id"]).back();
  }

  /// The lines of a JSONL file inside the temporary directory (e.g. the script log).
  std::vector<protocol::Json> jsonl(const std::string& name) const {
    return parse_jsonl(dir_.read(name));
  }

 private:
  bool write_files(const Files& files) {
    for (const auto& [name, content] : files)
      dir_.write(name, content);
    return true;
  }

  std::string with_dir(std::string text) const {
    for (auto pos = text.find("@DIR@"); pos != std::string::npos; pos = text.find("@DIR@"))
      text.replace(pos, 5, dir_.path().string());
    return text;
  }

  std::vector<std::string> argv(const std::vector<std::string>& extra) {
    // REBOUND_TEST_BINARY runs the tests against another build (e.g. to show a fix's test
    // failing on the binary before it).
    const char* other = std::getenv("REBOUND_TEST_BINARY");
    std::vector<std::string> a{other && *other ? other : REBOUND_BINARY, "--agent-dir",
                               (dir_.path() / "agent").string()};
    for (std::string arg : extra) {
      for (auto pos = arg.find("@DIR@"); pos != std::string::npos; pos = arg.find("@DIR@")) {
        arg.replace(pos, 5, dir_.path().string());
      }
      a.push_back(std::move(arg));
    }
    return a;
  }

  // acp mode's lines are not rpc output; tests/node/acp_sdk.test.mjs captures them for their
  // own schema check.
  // One-shot runs' lines (the header, heartbeats, the result) are not rpc output either.
  static bool is_acp(const std::vector<std::string>& args) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (args[i] == "-p" || args[i] == "--print") return true;
      if (i + 1 < args.size() && args[i] == "--mode" &&
          (args[i + 1] == "acp" || args[i + 1] == "json"))
        return true;
    }
    return false;
  }

  SubprocessOptions with_defaults(SubprocessOptions o, bool acp) {
    // "@DIR@" in an environment value or the working directory is the temporary directory.
    for (auto& [name, value] : o.env)
      value = with_dir(value);
    if (o.cwd) o.cwd = with_dir(o.cwd->string());
    if (o.stdin_file) o.stdin_file = with_dir(o.stdin_file->string());
    o.env.emplace("HOME", dir_.path().string());
    o.env.emplace("REBOUND_AGENT_DIR", (dir_.path() / "agent").string());
    o.unset_env.push_back("OPENAI_API_KEY");
    o.unset_env.push_back("ANTHROPIC_API_KEY");
    if (!o.cwd) o.cwd = dir_.path();
    o.capture_stdout = !acp;
    return o;
  }

  static std::string tail(const std::string& text) {
    return text.size() > 2000 ? text.substr(text.size() - 2000) : text;
  }

  TempDir dir_;  // declared first: it must exist before the process starts
  bool files_written_;
  Subprocess proc_;
  bool any_exit_ = false;
};

/// The lines of `type` among `events`, in order.
inline std::vector<protocol::Json> of_type(const std::vector<protocol::Json>& events,
                                           const std::string& type) {
  std::vector<protocol::Json> out;
  for (const auto& e : events)
    if (e["type"] == type) out.push_back(e);
  return out;
}

/// A scripted server: settings.json and script.json written first, the script log at
/// <dir>/script-log.jsonl.
inline ReboundProcess scripted(const std::string& script, const std::string& settings = "{}",
                               ReboundProcess::Files extra_files = {}) {
  extra_files["agent/settings.json"] = settings;
  extra_files["script.json"] = script;
  return ReboundProcess({"--no-session", "--provider", "scripted", "--script", "@DIR@/script.json",
                         "--script-log", "@DIR@/script-log.jsonl"},
                        {}, std::move(extra_files));
}

}  // namespace rebound::testing
