#pragma once
// Injected time and deferral for the session (STYLE: no unit test sleeps). Production wraps the
// server's io_context (AsioScheduler); tests use a manual scheduler whose timers fire on demand.
// Every callback runs on the session's single event loop.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

namespace rebound::session {

/// The longest delay a timer or deadline is armed with: about 100 years. Longer ones (a
/// configured timeout of 2^63-1 ms) mean "never" and are cut to this, because adding them to
/// the clock in nanoseconds would overflow into the past and fire at once.
inline constexpr std::int64_t kMaxDelayMs = 100LL * 365 * 24 * 3600 * 1000;

/// `ms` as a clock duration, saturated to [0, kMaxDelayMs].
inline std::chrono::steady_clock::duration saturated_delay(std::int64_t ms) {
  if (ms < 0) ms = 0;
  if (ms > kMaxDelayMs) ms = kMaxDelayMs;
  return std::chrono::milliseconds(ms);
}

/// A one-shot timer. start() replaces any pending expiry; after cancel() or destruction the
/// callback is guaranteed never to run.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start(std::chrono::milliseconds delay, std::function<void()> callback) = 0;
  virtual void cancel() = 0;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// Runs `task` later on the event loop, never inside the caller's stack.
  virtual void post(std::function<void()> task) = 0;
  virtual std::unique_ptr<Timer> make_timer() = 0;
  /// Wall-clock time for message timestamps, epoch milliseconds.
  virtual std::int64_t now_epoch_ms() = 0;
};

}  // namespace rebound::session
