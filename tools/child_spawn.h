#pragma once
// The production ShellSpawner::Spawn: shell commands as process::ChildProcess children on the
// server's io_context (a session and process group of their own, stdin /dev/null, stdout and
// stderr merged). The only place the tools reach the process runtime. Event loop only.

#include <boost/asio/any_io_executor.hpp>

#include "tools/command_watch.h"

namespace rebound::tools {

ShellSpawner::Spawn child_process_spawn(boost::asio::any_io_executor executor);

}  // namespace rebound::tools
