#pragma once
// Runs `bash -c` for the `bash` command (protocol.md section 2) behind an interface, so the
// session never spawns processes itself. The server's implementation is server::BashRunner;
// tests use a fake. Completions arrive on the session's event loop.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace rebound::session {

struct ShellResult {
  std::string output;                     // stdout and stderr merged; the tail when truncated
  std::optional<std::int64_t> exit_code;  // none when the process was killed
  bool cancelled = false;                 // abort_bash (or shutdown) killed it
  bool truncated = false;
  std::optional<std::string> full_output_path;  // the whole output, when truncated
};

/// A running command. cancel() kills it (its whole process group); the completion still
/// arrives, with `cancelled` set. Destroying the job kills it too, without a completion.
class ShellJob {
 public:
  virtual ~ShellJob() = default;
  virtual void cancel() = 0;
};

class ShellRunner {
 public:
  virtual ~ShellRunner() = default;
  using Done = std::function<void(ShellResult)>;
  /// Starts `bash -c command` in the working directory; nullptr and `error` when it cannot.
  virtual std::unique_ptr<ShellJob> start(const std::string& command, Done done,
                                          std::string& error) = 0;
  /// Kills the process groups that finished commands left running in the background.
  virtual void kill_background() {}
};

}  // namespace rebound::session
