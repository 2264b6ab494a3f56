#pragma once
// Shell commands through the sandbox (policy.md section 8.2): a ShellSpawner::Spawn whose
// children are bubblewrap around the shell, with the seccomp program and bubblewrap's status
// descriptor handed over as 3 and 4 and every other descriptor closed. A command bubblewrap
// could not start ends with `Sandbox failed to start: <its last output line>` (section 8.4).

#include <boost/asio/any_io_executor.hpp>
#include <memory>

#include "sandbox/sandbox.h"
#include "tools/command_watch.h"

namespace rebound::sandbox {

tools::ShellSpawner::Spawn sandboxed_spawn(boost::asio::any_io_executor executor,
                                           std::shared_ptr<Sandbox> sandbox);

}  // namespace rebound::sandbox
