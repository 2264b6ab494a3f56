#pragma once
// What the `bash` command and the bash tool share (tools.md section 4.4): watching a started
// shell until it completes (it exited, and its output pipe closed or 100 ms passed), reading
// and dropping what its background processes write afterwards, keeping such finished commands
// until their pipe closes or kill_all() (shutdown), and the full-output file
// $TMPDIR/rebound-bash-<16 hex>.log. Event loop only.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "process/child_process.h"

namespace rebound::tools {

using process::ChildProcess;
using process::ChildSpec;

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
  static std::shared_ptr<CommandWatch> start(boost::asio::any_io_executor executor,
                                             std::unique_ptr<ChildProcess> child,
                                             std::shared_ptr<Lingering> lingering,
                                             Handlers handlers);
  CommandWatch(boost::asio::any_io_executor executor, std::unique_ptr<ChildProcess> child,
               std::shared_ptr<Lingering> lingering, Handlers handlers);

  /// SIGKILL to the whole group (whether the shell has exited or not).
  void kill();
  bool finished() const { return finished_; }
  /// The owner lets go: a finished command whose pipe is still open lingers; an unfinished one
  /// is killed and reaped without any further callback.
  void release();

 private:
  friend class Lingering;
  void begin();
  void maybe_finish();
  void leave_lingering();

  std::unique_ptr<ChildProcess> child_;
  boost::asio::steady_timer grace_;
  std::weak_ptr<Lingering> lingering_;
  Handlers handlers_;
  bool eof_ = false, exited_ = false, grace_over_ = false, finished_ = false;
  int status_ = 0;
};

/// The whole output of a command once it is cut: all bytes from the first, written as they come.
class OutputFile {
 public:
  ~OutputFile() { close(); }
  /// Creates the file and writes `so_far`; false (and a warning) when it cannot.
  bool open(std::string_view so_far);
  void write(std::string_view data);
  void close();
  bool is_open() const { return fd_ >= 0; }
  bool failed() const { return failed_; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  bool failed_ = false;
  std::string path_;
};

}  // namespace rebound::tools
