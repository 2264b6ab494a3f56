#pragma once
// One child process on the event loop: argv, working directory, environment, standard streams
// as asked (stdin /dev/null or a pipe kept open for writing; stdout and stderr merged into one
// pipe, separate pipes, or /dev/null), a session and process group of its own (setsid), the
// group killed as a whole, the exit seen through a pidfd (a short poll without one). Used by the
// bash runner; ready for the bash tool and MCP servers. Destroying it kills the group, closes
// the pipes and reaps the child without any further callback. Event loop only.

#include <sys/types.h>

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rebound::process {

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH
  std::optional<std::string> cwd;
  std::optional<std::vector<std::string>> env;  // "NAME=value"; none: the server's own
  enum class Input { null, pipe } input = Input::null;
  enum class Output { merged, separate, null } output = Output::merged;
  /// Descriptors the child gets as 3, 4, … in this order (the caller keeps and closes its
  /// own); every other descriptor above 2 is closed in the child.
  std::vector<int> pass_fds;
};

class ChildProcess {
 public:
  using Data = std::function<void(std::string_view)>;
  using Eof = std::function<void()>;
  /// Exit: the wait status as waitpid reports it.
  using Exit = std::function<void(int status)>;

  /// Starts the child; nullptr and `error` (the system's reason, e.g. "No such file or
  /// directory") when it cannot.
  static std::unique_ptr<ChildProcess> spawn(boost::asio::any_io_executor executor,
                                             const ChildSpec& spec, std::string& error);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const;
  /// Whether some ChildProcess still waits for `pid` (not reaped yet): others' orphans are not.
  static bool is_watched(pid_t pid);
  /// For a child started without a ChildProcess (the sandbox check's, on a thread of its own):
  /// runs `start` (which returns the new pid, or -1) so that the orphan reaper never takes the
  /// child before its own waitpid does; unwatch_pid() once it was reaped.
  static pid_t watched_start(const std::function<pid_t()>& start);
  static void unwatch_pid(pid_t pid);
  /// The group outlives this object: once the child was reaped, the destructor no longer kills
  /// its process group (a completed command's background processes keep running; the server
  /// ends them at exit).
  void keep_group();
  /// Reads stdout (merged: both streams) until its end; `eof` once, after the last data.
  void read_stdout(Data data, Eof eof);
  /// Reads stderr (Output::separate only).
  void read_stderr(Data data, Eof eof);
  /// Writes to stdin (Input::pipe), queued in order; dropped once stdin is closed.
  void write_stdin(std::string data);
  /// Bytes given to write_stdin() that the child has not taken yet.
  std::size_t stdin_queued() const;
  /// Closes stdin once what was queued is written (the child then reads its end).
  void close_stdin();
  /// `exit` runs once when the child has exited and was reaped.
  void wait_exit(Exit exit);
  bool exited() const;
  /// Sends `signal` to the whole process group; true when any process of it was there.
  bool kill_group(int signal);
  /// Whether any process of the group is alive (the child itself or what it left behind).
  bool group_alive() const;
  /// Stops reading and closes the output pipes (pending reads end without their eof).
  void close_output();

  struct State;

 private:
  explicit ChildProcess(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

}  // namespace rebound::process
