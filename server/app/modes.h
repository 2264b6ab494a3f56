#pragma once
// The modes of the command line's --mode: each is a name and the function that builds its
// front end from what the application built. Adding a mode is one line in modes.cpp. Called
// once at start-up, on the event loop's thread.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "server/app/cli_options.h"
#include "server/io/front_end.h"
#include "server/io/stdio_transport.h"
#include "workspace/session_assembly.h"

namespace rebound::server {

/// What every mode builds on: the process's parts, made by run_server.
struct AppParts : WorkspaceParts {
  const CliOptions& options;
  StdoutWriter& writer;
};

/// A front end, or why the mode cannot start (the server exits 1 with it).
using ModeStart = session::Result<std::unique_ptr<FrontEnd>>;

struct Mode {
  std::string_view name;
  ModeStart (*start)(AppParts& app);
  /// Why --session FILE cannot be used with this mode; empty when it can.
  std::string_view no_session_file = {};
  /// Each session has its own policy and sandbox, from its own cwd (acp).
  bool session_policy = false;
  /// Chosen by other flags than --mode (print: -p), not listed among --mode's values.
  bool internal = false;
};

/// Every mode, the default first.
const std::vector<Mode>& modes();
/// Their names, for the command line's check and help.
std::vector<std::string> mode_names();
/// The mode of that name, or null.
const Mode* find_mode(std::string_view name);

}  // namespace rebound::server
