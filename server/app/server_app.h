#pragma once
// The composition root: builds the real objects (event loop, stdio transport, settings files,
// session, dispatcher) from the command line, runs until shutdown and returns the exit status.
// Everything runs on one thread and one io_context.

#include "server/app/cli_options.h"

namespace rebound::server {

/// Runs the server; returns 0 after a normal shutdown, 1 when it cannot start.
int run_server(const CliOptions& options);

}  // namespace rebound::server
