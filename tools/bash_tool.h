#pragma once
// The bash tool (tools.md section 4.4): `<shell> -c <command>` in the session cwd through a
// ShellSpawner (own session and process group, stdin /dev/null, stdout and stderr on one
// pipe), progress as tool_execution_update at most every 100 ms, the tail of the output with
// its notices, the full output in $TMPDIR/rebound-bash-<hex>.log once it is cut, timeout and
// abort killing the whole group; every wait on the Scheduler's clock. Processes a command
// leaves in the background keep running (the group is not killed when the shell exits by
// itself); those still holding the output pipe end at kill_background() (shutdown), the rest
// when the server, their subreaper, exits. Event loop only.

#include <memory>
#include <optional>
#include <string>

#include "protocol/json.h"
#include "session/scheduler.h"
#include "session/tool.h"
#include "tools/command_watch.h"

namespace rebound::tools {

struct BashToolOptions {
  std::optional<std::string> shell_path;      // settings shellPath
  std::optional<std::string> command_prefix;  // settings shellCommandPrefix
};

class BashTool : public session::Tool {
 public:
  BashTool(session::Scheduler& scheduler, ShellSpawner::Spawn spawn, BashToolOptions options);
  ~BashTool() override;
  const session::ToolDefinition& definition() const override;
  std::unique_ptr<session::ToolCall> start(const protocol::Json& args,
                                           const session::ToolContext& context, Progress progress,
                                           Done done) override;
  /// A spool file's output as a result shows it: the tail truncation and its notice naming
  /// the file (kept then).
  std::optional<SpooledOutput> spooled_output(const std::string& spool_file) const override;
  /// Kills the process groups that finished commands left running.
  void kill_background();

 private:
  BashToolOptions options_;
  ShellSpawner spawner_;
};

}  // namespace rebound::tools
