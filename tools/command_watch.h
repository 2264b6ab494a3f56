#pragma once
// What the `bash` command and the bash tool share (tools.md section 4.4): starting a shell as a
// watched child of its own process group; watching it until it completes (it exited, and its
// output pipe closed or 100 ms passed, on the Scheduler's clock); reading and dropping what its
// background processes write afterwards, keeping such finished commands until their pipe closes
// or kill_background() (shutdown); and the full-output file $TMPDIR/rebound-bash-<16 hex>.log.
// The process sits behind WatchedProcess, so unit tests drive a watch on the manual clock with
// a fake one. Event loop only.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "session/scheduler.h"

namespace rebound::tools {

/// The child a watch looks after (production: process::ChildProcess, tools/shell_spawner.cpp).
class WatchedProcess {
 public:
  virtual ~WatchedProcess() = default;  // kills what is left of the group and reaps the child
  /// Output (stdout and stderr merged) until its end; `eof` once, after the last data.
  virtual void read_output(std::function<void(std::string_view)> data,
                           std::function<void()> eof) = 0;
  /// `exited` runs once with the wait status when the shell has exited.
  virtual void wait_exit(std::function<void(int status)> exited) = 0;
  virtual void kill_group(int signal) = 0;
  /// Stops reading and closes the output pipe.
  virtual void close_output() = 0;
  /// The shell exited by itself: what it left in its group is not killed with this object
  /// (tools.md section 4.4; the server ends it at exit).
  virtual void keep_group() = 0;
  /// Once it has exited: why the command never ran (a sandbox that failed to start), if so.
  virtual std::optional<std::string> failure() const { return std::nullopt; }
};

class CommandWatch;

/// Finished commands whose background processes still hold the output pipe.
class Lingering {
 public:
  ~Lingering() { kill_all(); }
  void kill_all();

 private:
  friend class CommandWatch;
  std::set<std::shared_ptr<CommandWatch>> watches_;
};

class CommandWatch : public std::enable_shared_from_this<CommandWatch> {
 public:
  struct Handlers {
    std::function<void(std::string_view)> output;  // until completion
    std::function<void(int status)> complete;      // once; the wait status
  };
  static std::shared_ptr<CommandWatch> start(session::Scheduler& scheduler,
                                             std::unique_ptr<WatchedProcess> child,
                                             std::shared_ptr<Lingering> lingering,
                                             Handlers handlers);
  CommandWatch(session::Scheduler& scheduler, std::unique_ptr<WatchedProcess> child,
               std::shared_ptr<Lingering> lingering, Handlers handlers);

  /// SIGKILL to the whole group (whether the shell has exited or not).
  void kill();
  bool finished() const { return finished_; }
  /// Why the command never ran (WatchedProcess::failure), once it has exited.
  std::optional<std::string> failure() const { return child_ ? child_->failure() : std::nullopt; }
  /// The owner lets go: a finished command whose pipe is still open lingers; an unfinished one
  /// is killed and reaped without any further callback.
  void release();

 private:
  friend class Lingering;
  void begin();
  void maybe_finish();
  void leave_lingering();

  std::unique_ptr<WatchedProcess> child_;
  std::unique_ptr<session::Timer> grace_;
  std::weak_ptr<Lingering> lingering_;
  Handlers handlers_;
  bool eof_ = false, exited_ = false, grace_over_ = false, finished_ = false;
  int status_ = 0;
};

/// Handlers that forward a watch's output and completion to `target`'s take() and complete()
/// while it lives (the target owns the watch: the watch holds it weakly, no cycle).
template <typename T>
CommandWatch::Handlers forward_to(const std::shared_ptr<T>& target) {
  std::weak_ptr<T> weak = target;
  return {[weak](std::string_view data) {
            if (auto t = weak.lock()) t->take(data);
          },
          [weak](int status) {
            if (auto t = weak.lock()) t->complete(status);
          }};
}

/// Starts `<shell> -c <command>` children for the `bash` command and the bash tool, each
/// watched until it completes; what finished commands leave running lingers until
/// kill_background() or the spawner's destruction.
class ShellSpawner {
 public:
  /// Makes the child of `argv` in `cwd` ("" for the server's own): its own session and process
  /// group, stdin /dev/null, stdout and stderr on one pipe; nullptr and `error` when it cannot.
  using Spawn = std::function<std::unique_ptr<WatchedProcess>(
      const std::vector<std::string>& argv, const std::string& cwd, std::string& error)>;

  ShellSpawner(session::Scheduler& scheduler, Spawn spawn);
  ~ShellSpawner();
  ShellSpawner(const ShellSpawner&) = delete;
  ShellSpawner& operator=(const ShellSpawner&) = delete;

  /// The watch of a new child, or nullptr and `error`.
  std::shared_ptr<CommandWatch> start(const std::vector<std::string>& argv, const std::string& cwd,
                                      CommandWatch::Handlers handlers, std::string& error);
  void kill_background() { lingering_->kill_all(); }
  session::Scheduler& scheduler() { return scheduler_; }

 private:
  session::Scheduler& scheduler_;
  Spawn spawn_;
  std::shared_ptr<Lingering> lingering_ = std::make_shared<Lingering>();
};

/// Whether (device, inode) is a full-output file this process created: the only files of that
/// name outside the roots that the sandboxed file tools may read (issue 50: another process's
/// output, or a file merely named like one, is not). Thread-safe.
bool is_own_output_file(unsigned long device, unsigned long inode);

/// The whole output of a command: all bytes from the first, written as they come. Either a
/// $TMPDIR/rebound-bash-<hex>.log made once the output is cut (open()), or the call's spool
/// file beside the session file made when it starts (open_spool(), runtime.md section 8),
/// which stops growing at session::kSpoolMaxBytes.
class OutputFile {
 public:
  ~OutputFile() { close(); }
  /// Creates the file and writes `so_far`; false (and a warning) when it cannot.
  bool open(std::string_view so_far);
  /// Creates `path` (0600; its folder `dir` 0700 when missing), replacing what a call of the
  /// same id left; false (and a warning) when it cannot, failed() stays false then.
  bool open_spool(const std::string& dir, const std::string& path);
  void write(std::string_view data);
  void close();
  bool is_open() const { return fd_ >= 0; }
  bool failed() const { return failed_; }
  /// A spool file that reached its limit: later bytes were not written.
  bool cut() const { return cut_; }
  const std::string& path() const { return path_; }

 private:
  void remember();  // one of this process's own output files
  int fd_ = -1;
  bool failed_ = false, cut_ = false;
  std::uint64_t written_ = 0, limit_ = 0;  // limit_ 0: none
  std::string path_;
};

}  // namespace rebound::tools
