#pragma once
// Runs the command hooks of one occurrence (extensions.md section 3.1): each handler as
// `/bin/sh -c <command>` in the session cwd, in a session and process group of its own, the
// event's JSON object on stdin, all of them at once. A hook has ended when its process exited
// and both output streams ended, or 100 ms after the exit (a background child holding a pipe
// does not hold the hook; it lives until shutdown). Its timeout kills the group. At most 1 MiB
// of each stream is kept, read as UTF-8. Event loop only.

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "extensions/hook_config.h"
#include "extensions/hook_output.h"
#include "session/scheduler.h"
#include "session/wait_board.h"

namespace rebound::extensions {

inline constexpr std::size_t kMaxHookStream = 1024 * 1024;
inline constexpr std::chrono::milliseconds kHookAfterExit{100};

/// What every hook of a session runs with.
struct HookEnvironment {
  HookEnvironment(std::string cwd_, std::vector<std::string> env_, std::string session_id_)
      : cwd(std::move(cwd_)), env(std::move(env_)), session_id(std::move(session_id_)) {}
  std::string cwd;               // the session cwd
  std::vector<std::string> env;  // "NAME=value": the server's environment for commands
  std::string session_id;
};

class HookRunner {
 public:
  using Done = std::function<void(std::vector<HookRun>)>;

  HookRunner(boost::asio::any_io_executor executor, session::Scheduler& scheduler,
             HookEnvironment environment);
  /// Kills every hook still running; no `done` runs after.
  ~HookRunner();
  HookRunner(const HookRunner&) = delete;
  HookRunner& operator=(const HookRunner&) = delete;

  void set_session_id(std::string id) { environment_.session_id = std::move(id); }
  /// Where the runs of awaited events are marked while they last (one-shot's heartbeat).
  void set_wait_board(std::shared_ptr<session::WaitBoard> board) { board_ = std::move(board); }

  /// Starts `handlers` for `event` with `input` (one JSON object, written with one LF); `done`
  /// gets their runs in the handlers' order once all have ended, later on the loop (at once
  /// with none). Returns the id cancel() takes.
  std::uint64_t run(HookEvent event, const std::vector<const HookHandler*>& handlers,
                    const std::string& input, Done done);
  /// Kills the hooks of run `id` (SIGKILL to their groups): an abort. Its `done` never runs.
  void cancel(std::uint64_t id);
  /// The same for every run (shutdown).
  void cancel_all();
  /// Runs not yet ended.
  std::size_t running() const { return batches_.size(); }
  /// Runs `idle` once no run is left (posted; at once when none is). Dropped with the runner.
  void when_idle(std::function<void()> idle);

 private:
  struct One;
  struct Batch;
  void start(Batch& batch, std::size_t index, const HookHandler& handler, HookEvent event,
             const std::string& input);
  void ended(Batch& batch, One& one);

  boost::asio::any_io_executor executor_;
  session::Scheduler& scheduler_;
  HookEnvironment environment_;
  std::shared_ptr<session::WaitBoard> board_;
  std::uint64_t next_id_ = 0;
  void check_idle();

  std::map<std::uint64_t, std::unique_ptr<Batch>> batches_;
  std::vector<std::function<void()>> idle_waiters_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace rebound::extensions
