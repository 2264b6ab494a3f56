#pragma once
// Runs the `bash` command: `bash -c COMMAND` in the server's working directory, in a process
// group of its own, stdin from /dev/null, stdout and stderr merged into one pipe read on the
// event loop. The output is cut to its tail (session::OutputTail's limits); once over a limit
// the whole output also goes to a temporary file ($TMPDIR/rebound-bash-XXXXXX.log) named in the
// result. The exit is seen through a pidfd. The completion runs on the event loop when both
// the pipe is at its end and the process was reaped.

#include <boost/asio/any_io_executor.hpp>

#include "session/shell_runner.h"

namespace rebound::server {

class BashRunner : public session::ShellRunner {
 public:
  explicit BashRunner(boost::asio::any_io_executor executor) : executor_(std::move(executor)) {}
  std::unique_ptr<session::ShellJob> start(const std::string& command, Done done,
                                           std::string& error) override;

 private:
  boost::asio::any_io_executor executor_;
};

}  // namespace rebound::server
