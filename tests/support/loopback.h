#pragma once
// Sockets for the test servers: they listen on 127.0.0.1 only, on an ephemeral port.

namespace rebound::testing {

/// A listening TCP socket on 127.0.0.1 with an ephemeral port (written to `port`); throws
/// std::runtime_error when it cannot listen.
int listen_on_loopback(int& port);

}  // namespace rebound::testing
