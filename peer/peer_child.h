#pragma once
// One JSON-RPC peer's child process and its life, shared by MCP servers and extension
// processes: spawned through a Spawner, stdout cut into lines (one over the limit fails it,
// `Message too large`), stderr logged line by line as `<log name> <line>` (cut at 4096 bytes)
// with the last non-empty line kept for the error, the exit turned into its failure text
// (`Exited with code 3: <last stderr line>`, waiting at most 100 ms for the rest of stderr),
// input the child leaves unread bounded, and the stop sequence (stdin closed, 1000 ms, SIGTERM
// to the group, 1000 ms, SIGKILL, reaped). What the messages mean is the owner's. Time from
// the session's Scheduler; event loop only.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "peer/peer_process.h"
#include "protocol/line_reader.h"
#include "session/scheduler.h"

namespace rebound::peer {

inline constexpr std::size_t kMaxMessageBytes = 64u << 20;
inline constexpr std::int64_t kStopStepMs = 1000;
inline constexpr std::int64_t kStderrGraceMs = 100;

class PeerChild {
 public:
  struct Options {
    std::string log_name;  // "mcp[fs]", "ext[guard]": the prefix of its stderr lines in the log
    std::size_t max_line = kMaxMessageBytes;
    /// A child that leaves more than this unread on its stdin fails with `overflow_error`.
    std::size_t max_queued_input = kMaxMessageBytes;
    std::string overflow_error;
  };
  /// One stdout line, without its LF.
  using Line = std::function<void(std::string_view line)>;
  /// The child ended, broke or overflowed while it was not being stopped: the error text. The
  /// stop sequence has begun; no line follows.
  using Failed = std::function<void(std::string error)>;

  PeerChild(session::Scheduler& scheduler, Spawner spawner, Options options);
  /// Kills the group and reaps, with no callback.
  ~PeerChild();
  PeerChild(const PeerChild&) = delete;
  PeerChild& operator=(const PeerChild&) = delete;

  /// Spawns a new process (what ran before is dropped: killed and reaped); false and `error`
  /// `Failed to start: <reason>` when it cannot. Callbacks of an earlier start never run again.
  bool start(const SpawnSpec& spec, Line line, Failed failed, std::string& error);
  /// Writes bytes (one message line with its LF) now, after what write_later() kept. Dropped
  /// when nothing runs, while stopping, or once the input limit was passed (then `failed` runs
  /// on a later turn).
  void write(std::string_view bytes);
  /// As write(), but kept until the end of this turn of the loop (or the next write()): a burst
  /// of messages (events) goes to the process as one piece, without one allocation each.
  void write_later(std::string_view bytes);
  /// Starts the stop sequence (no line nor failure is reported from now on); `gone` runs, on a
  /// later turn, once no process of it is left (at once when nothing runs).
  void stop(std::function<void()> gone = nullptr);
  bool running() const { return process_ != nullptr; }
  bool stopping() const { return stopping_; }

 private:
  bool accept(std::string_view bytes);
  void flush();
  void on_stdout(std::string_view bytes);
  void on_stderr(std::string_view bytes);
  void on_exit(int status);
  void settle_exit();
  void report(std::string error);
  void begin_stop();
  void kill_step(int step);
  void post_gone_check();
  void maybe_gone();

  session::Scheduler& scheduler_;
  Spawner spawner_;
  Options options_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  std::uint64_t epoch_ = 0;  // one per start: callbacks of an older process are dropped

  std::unique_ptr<PeerProcess> process_;
  Line line_;
  Failed failed_;
  protocol::LineReader lines_{kMaxMessageBytes};
  std::string stderr_partial_;
  std::string last_stderr_;
  bool stderr_ended_ = false;
  std::optional<int> exit_status_;
  bool stopping_ = false;  // the exit is expected; nothing more is reported
  bool overflow_ = false;
  std::string outbox_;  // written this turn, not yet handed to the process
  bool flush_posted_ = false;
  std::vector<std::function<void()>> gone_;
  std::unique_ptr<session::Timer> stop_timer_;
  std::unique_ptr<session::Timer> grace_timer_;
};

}  // namespace rebound::peer
