#pragma once
// Runs the `bash` command: `bash -c COMMAND` in the server's working directory through a
// ShellSpawner (a session and process group of its own, stdin from /dev/null, stdout and
// stderr merged into one pipe). The output is cut to its tail (OutputTail's `bash` command
// view); once over a limit the whole output also goes to $TMPDIR/rebound-bash-<hex>.log, named
// in the result. Completion (tools.md section 4.4): when the shell has exited, output is read
// until the pipe closes or 100 ms have passed, whichever comes first; processes the command
// left in the background keep running, what they write later is read and discarded, and their
// groups are killed by kill_background() (abort_bash when nothing runs, and shutdown) or the
// destructor. Event loop only.

#include <memory>

#include "session/scheduler.h"
#include "session/shell_runner.h"
#include "tools/command_watch.h"

namespace rebound::tools {

class BashRunner : public session::ShellRunner {
 public:
  BashRunner(session::Scheduler& scheduler, ShellSpawner::Spawn spawn);
  std::unique_ptr<session::ShellJob> start(const std::string& command, Done done,
                                           std::string& error) override;
  void kill_background() override { spawner_.kill_background(); }

 private:
  ShellSpawner spawner_;
};

}  // namespace rebound::tools
