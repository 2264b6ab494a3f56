#pragma once
// The sandbox of policy.md section 8 for one workspace: checked once in the background right
// after start (section 8.10: platform, bubblewrap and its version, the seccomp program, a trial
// sandbox, the workspace rules), then the bubblewrap command line, environment and descriptors
// of each sandboxed command. Fails closed: when the check failed, every launch is refused with
// `Sandbox unavailable: <reason>`. Thread-safe (the check runs on its own thread).

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sandbox/denied_files.h"
#include "sandbox/sandbox_config.h"
#include "session/error.h"

namespace rebound::sandbox {

/// What section 8.10's check found.
struct SandboxCheck {
  std::string problem;  // empty: active
  std::string bwrap;    // its real path, once found
  std::string version;  // e.g. 0.8.0, once read
  std::string bpf;      // the seccomp program
};

/// One sandboxed command's start: the argv (bwrap first), its environment, and the descriptors
/// it gets as 3 (the seccomp program), 4 (bubblewrap's status) and 5 (bubblewrap's mount
/// options, NUL-separated: `--args 5`, so no number of them makes the command line too long),
/// owned by the caller.
struct Launch {
  std::vector<std::string> argv;
  std::vector<std::string> env;
  int seccomp_fd = -1;
  int status_write = -1;
  int args_fd = -1;
  int status_read = -1;  // the caller's end of the status pipe
};

class Sandbox {
 public:
  /// `env` is the environment of unsandboxed commands (no provider key); the sandbox's is
  /// derived from it (section 8.6).
  Sandbox(SandboxConfig config, std::vector<std::string> env);
  ~Sandbox();

  /// Starts the check on a thread of its own (once).
  void start_check();
  /// The check's result, waiting for it when it still runs.
  const SandboxCheck& checked();
  /// Whether the check is done (without waiting).
  bool check_done() const;

  /// The start of `command` (the shell's argv) in `cwd`, or the text of the refusal.
  session::Result<Launch> launch(const std::vector<std::string>& command, const std::string& cwd);
  /// A stdio MCP server's start (section 8.8): `argv[0]` resolved on `path` (Rebound's PATH)
  /// when it has no `/`; the command, the working directory and every existing absolute path
  /// among the arguments must lie in the view (else `Sandbox: <path> is not visible inside the
  /// sandbox; add it to sandbox.readOnlyPaths`); `env` with TMPDIR=/tmp is its environment.
  session::Result<Launch> launch_server(std::vector<std::string> argv, const std::string& cwd,
                                        std::vector<std::string> env, const std::string& path);
  const SandboxConfig& config() const { return config_; }
  /// The files `sandbox.denyRead` holds, by identity (policy.md 2.4.1, amendment A18).
  std::shared_ptr<const DeniedFiles> denied_files() const { return denied_; }

 private:
  SandboxCheck run_check() const;
  session::Result<Launch> build(const SandboxCheck& c, const std::string& workspace,
                                const std::vector<std::string>& command,
                                const std::string& cwd) const;
  SandboxConfig config_;
  std::string workspace_;  // the workspace's real path
  std::vector<std::string> env_;
  std::shared_ptr<DeniedFiles> denied_;
  std::shared_future<SandboxCheck> check_;
  bool started_ = false;
};

/// The environment inside (section 8.6): `env` without secret-looking names, REBOUND_* and
/// `key_variables`, then TMPDIR=/tmp, REBOUND_SANDBOX=1 and `extra`.
std::vector<std::string> sandbox_environment(
    const std::vector<std::string>& env, const std::vector<std::string>& key_variables,
    const std::vector<std::pair<std::string, std::string>>& extra);

/// Closes the caller's descriptors of a launch that was not used (or once the child has them).
void close_launch_fds(Launch& launch, bool keep_status_read);

}  // namespace rebound::sandbox
