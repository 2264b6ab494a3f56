#pragma once
// The production ShellSpawner::Spawn: shell commands as process::ChildProcess children on the
// server's io_context (a session and process group of their own, stdin /dev/null, stdout and
// stderr merged). The only place the tools reach the process runtime. Event loop only.

#include <boost/asio/any_io_executor.hpp>
#include <optional>
#include <string>
#include <vector>

#include "tools/command_watch.h"

namespace rebound::tools {

/// `env` ("NAME=value" entries) is the children's environment; none: the server's own.
ShellSpawner::Spawn child_process_spawn(boost::asio::any_io_executor executor,
                                        std::optional<std::vector<std::string>> env = {});

/// The environment shell commands get: `environ` without the providers' key variables and
/// without any variable whose value is one of `keys` (a key in use under another name).
std::vector<std::string> shell_environment(const char* const* environ,
                                           const std::vector<std::string>& key_variables,
                                           const std::vector<std::string>& keys);

}  // namespace rebound::tools
