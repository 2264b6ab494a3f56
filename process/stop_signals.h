#pragma once
// SIGTERM, SIGINT and SIGHUP for the whole life of the process (protocol.md section 1: each is a
// shutdown request, exit status 0). The handlers are installed as the first thing main() does
// and never removed, so no such signal (at start-up, in a storm, while the event loop winds
// down or static objects are destroyed) can end the process by its default action. The handler
// only writes the signal's number into a pipe; the event loop reads it (StopSignalWatch).

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>

namespace rebound::process {

/// Installs the handlers; a signal that comes before open_stop_signal_pipe() is kept until then.
/// Async-signal-safe handler; call once, first in main().
void install_stop_signal_handlers();

/// Creates the pipe (close-on-exec, non-blocking; call after fds 0-2 are in place) and puts a
/// signal that already came into it.
void open_stop_signal_pipe();

/// Reads the pipe on the event loop and calls `on_signal(signo)` for each signal, in order.
/// Destroying it stops the calls; the handlers stay.
class StopSignalWatch {
 public:
  StopSignalWatch(boost::asio::any_io_executor executor, std::function<void(int signo)> on_signal);
  ~StopSignalWatch();
  StopSignalWatch(const StopSignalWatch&) = delete;
  StopSignalWatch& operator=(const StopSignalWatch&) = delete;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace rebound::process
