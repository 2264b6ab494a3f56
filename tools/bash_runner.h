#pragma once
// Runs the `bash` command: `bash -c COMMAND` in the server's working directory as a
// ChildProcess (a session and process group of its own, stdin from /dev/null, stdout and
// stderr merged into one pipe). The output is cut to its tail (session::OutputTail's limits);
// once over a limit the whole output also goes to $TMPDIR/rebound-bash-<hex>.log, named in the
// result. Completion (tools.md section 4.4): when the shell has exited, output is read until the
// pipe closes or 100 ms have passed, whichever comes first; processes the command left in the
// background keep running, what they write later is read and discarded, and their groups are
// killed by kill_background() (abort_bash when nothing runs, and shutdown) or the destructor.

#include <boost/asio/any_io_executor.hpp>
#include <memory>

#include "session/shell_runner.h"

namespace rebound::tools {

class Lingering;  // tools/command_watch.h

class BashRunner : public session::ShellRunner {
 public:
  explicit BashRunner(boost::asio::any_io_executor executor);
  ~BashRunner() override;
  std::unique_ptr<session::ShellJob> start(const std::string& command, Done done,
                                           std::string& error) override;
  void kill_background() override;

 private:
  boost::asio::any_io_executor executor_;
  std::shared_ptr<Lingering> lingering_;
};

}  // namespace rebound::tools
