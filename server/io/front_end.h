#pragma once
// What the application asks of a front end (a dialect on stdio: the pi rpc mode, ACP): lines
// in, shutdown, and whether work that must end before the process exits still runs. The
// application owns the transport and the shutdown's deadline; the front end owns its sessions'
// protocol. Event loop only.

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include "session/event.h"
#include "session/event_sink.h"

namespace rebound::session {
class AgentSession;
}  // namespace rebound::session

namespace rebound::server {

/// Makes a front end's session in host slot `slot`, its events going to `events` (the
/// application builds it with the session's services; every front end takes one).
using MakeSession = std::function<std::unique_ptr<session::AgentSession>(
    session::SessionSlot slot, session::EventSink& events)>;

class FrontEnd {
 public:
  virtual ~FrontEnd() = default;

  /// The loop is about to run and stdin is being read: work that must wait for a command
  /// already waiting to be answered first is queued from here (rpc: MCP servers start).
  virtual void start() {}
  /// One complete, non-blank line from stdin.
  virtual void handle_line(std::string_view line) = 0;
  /// A line that exceeded the limit (its bytes were dropped).
  virtual void handle_too_long(std::size_t max_line_bytes) = 0;
  /// End of input, a signal or a closed stdout: every session stops its work and what is
  /// pending is answered. Called once.
  virtual void shutdown() = 0;
  /// Work that must end before the process exits still runs (a bash command, a tool call,
  /// an MCP server's process).
  virtual bool busy() const = 0;
  /// Runs `idle` once, on the loop, as soon as busy() is false (at once when it already is).
  /// The front end says when instead of being polled.
  virtual void when_idle(std::function<void()> idle) = 0;
  /// How much longer than the transport's drain the shutdown may take: the MCP servers' stop
  /// sequence when there are any.
  virtual bool stops_processes() const = 0;

  // A front end that takes stdin as data, not command lines (one-shot mode: the prompt's text).
  /// Whether stdin is data: then handle_input() gets its bytes, handle_input_end() its end (at
  /// once when stdin is a terminal, which is never read), and the end of input is no shutdown.
  virtual bool reads_data() const { return false; }
  virtual void handle_input(std::string_view /*data*/) {}
  virtual void handle_input_end() {}
  /// What the front end calls when it is done and the process should end (before start()).
  virtual void set_finish(std::function<void()> /*finish*/) {}
  /// Why the shutdown that follows comes: a signal's number, or SIGPIPE for a closed stdout.
  virtual void interrupted(int /*signo*/) {}
  /// The process's exit status once the loop has ended.
  virtual int exit_code() const { return 0; }
};

/// The one waiter of when_idle(): the front end calls check() wherever busy() may have turned
/// false (a line written, a server stopped).
class IdleWaiter {
 public:
  void wait(std::function<void()> idle, bool busy) {
    if (busy) {
      idle_ = std::move(idle);
    } else if (idle) {
      idle();
    }
  }
  void check(bool busy) {
    if (!idle_ || busy) return;
    auto idle = std::exchange(idle_, nullptr);
    idle();
  }
  bool waiting() const { return static_cast<bool>(idle_); }

 private:
  std::function<void()> idle_;
};

}  // namespace rebound::server
