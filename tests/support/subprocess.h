#pragma once
// Runs a program (in tests: the real `rebound`) with piped stdin and stdout and stderr sent to a
// file, for end-to-end tests. Every read has a timeout, so a test fails instead of hanging.
// With capture_stdout, every stdout line read is also appended to
// $REBOUND_CAPTURE_DIR/<pid>.jsonl when that is set, so that a later test can validate all
// server output against the schemas. Single-threaded.

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rebound::testing {

using namespace std::chrono_literals;

struct SubprocessOptions {
  std::map<std::string, std::string> env;  // added to (or replacing in) the parent's environment
  std::vector<std::string> unset_env;      // removed from it
  std::optional<std::filesystem::path> cwd;
  bool close_stdin_at_start = false;                // start with fd 0 closed in the child
  std::optional<std::filesystem::path> stdin_file;  // read stdin from this file instead of a pipe
  bool capture_stdout = false;        // protocol output: append lines to $REBOUND_CAPTURE_DIR
  std::vector<std::string> launcher;  // run argv through this (e.g. setpriv as another user)
};

class Subprocess {
 public:
  Subprocess(std::vector<std::string> argv, SubprocessOptions options = {});
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  /// Our end of the child's stdout, for readers that bypass read_line() (benchmarks).
  int stdout_fd() const { return stdout_fd_; }
  /// Writes all of `bytes` to the child's stdin (false once the pipe is closed).
  bool write(std::string_view bytes);
  void close_stdin();
  /// Closes our end of the child's stdout (the child then gets EPIPE).
  void close_stdout();
  /// The next stdout line without its LF, or nullopt on timeout or end of output.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout = 5000ms);
  /// Lines until end of output (or the timeout for the whole read).
  std::vector<std::string> read_all_lines(std::chrono::milliseconds timeout = 5000ms);
  /// Whether wait() saw the child exit.
  bool waited() const { return status_.has_value(); }
  /// Waits for exit; the exit status (128 + signal for a signal), or nullopt on timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout = 5000ms);
  /// The child's user and system CPU seconds over its whole life, once wait() saw it exit
  /// (microsecond resolution, from wait4).
  std::optional<std::pair<double, double>> cpu_seconds() const { return cpu_; }
  void send_signal(int signo);
  /// What the child wrote to stderr so far.
  std::string stderr_text() const;

 private:
  void capture(const std::string& line);

  std::optional<std::pair<double, double>> cpu_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::filesystem::path stderr_path_;
  std::string buffer_;
  std::size_t scanned_ = 0;  // buffer_ holds no LF before this
  bool eof_ = false;
  std::optional<int> status_;
  bool capture_ = false;
};

}  // namespace rebound::testing
