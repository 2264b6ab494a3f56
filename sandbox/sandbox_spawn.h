#pragma once
// Shell commands through the sandbox (policy.md section 8.2): a ShellSpawner::Spawn whose
// children are bubblewrap around the shell, with the seccomp program and bubblewrap's status
// descriptor handed over as 3 and 4 and every other descriptor closed. A command bubblewrap
// could not start ends with `Sandbox failed to start: <its last output line>` (section 8.4).

#include <boost/asio/any_io_executor.hpp>
#include <map>
#include <memory>
#include <string>

#include "sandbox/sandbox.h"
#include "tools/command_watch.h"

namespace rebound::sandbox {

tools::ShellSpawner::Spawn sandboxed_spawn(boost::asio::any_io_executor executor,
                                           std::shared_ptr<Sandbox> sandbox);

/// acp mode's sandboxes (policy.md section 8.10, acp.md section 2): each session has its own
/// policy, and with the sandbox on, one for its workspace, shared with the other sessions working
/// there. A shell command goes to the sandbox of the directory it runs in; a directory no session
/// registered gets none and the command is refused (fail closed). Event loop only.
class WorkspaceSandboxes : public std::enable_shared_from_this<WorkspaceSandboxes> {
 public:
  WorkspaceSandboxes(boost::asio::any_io_executor executor, tools::ShellSpawner::Spawn plain)
      : executor_(std::move(executor)), plain_(std::move(plain)) {}

  /// The sandbox a live session already made for `workspace`, or null.
  std::shared_ptr<Sandbox> find(const std::string& workspace) const;
  /// A session working in `workspace` runs its commands in `box` (null: unsandboxed) for as
  /// long as the returned handle lives. A sandboxed registration wins over a bare one.
  std::shared_ptr<void> attach(const std::string& workspace, std::shared_ptr<Sandbox> box);
  /// The spawner of every session's shell commands.
  tools::ShellSpawner::Spawn spawn();

 private:
  struct Entry {
    std::shared_ptr<Sandbox> box;
    int sandboxed = 0, bare = 0;
  };
  boost::asio::any_io_executor executor_;
  tools::ShellSpawner::Spawn plain_;
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace rebound::sandbox
