#pragma once
// A Scheduler for unit tests: a virtual clock, posted tasks that run when the test says so, and
// timers that record the delay they were started with and fire when the clock passes their
// expiry. No test that uses it sleeps.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "session/scheduler.h"

namespace rebound::testing {

class ManualScheduler : public session::Scheduler {
 public:
  void post(std::function<void()> task) override { posted_.push_back(std::move(task)); }

  std::unique_ptr<session::Timer> make_timer() override {
    return std::make_unique<ManualTimer>(*this);
  }

  std::int64_t now_epoch_ms() override { return epoch_base_ + now_ms_; }

  /// Runs posted tasks and due timers until nothing is ready at the current time.
  void run_ready() {
    while (true) {
      if (!posted_.empty()) {
        auto task = std::move(posted_.front());
        posted_.pop_front();
        task();
        continue;
      }
      auto it = timers_.begin();
      if (it == timers_.end() || it->first.first > now_ms_) return;
      auto cb = std::move(it->second.callback);
      timers_.erase(it);
      cb();
    }
  }

  /// Moves the clock forward by `ms`, firing timers in expiry order on the way.
  void advance(std::int64_t ms) {
    const std::int64_t target = now_ms_ + ms;
    run_ready();
    while (!timers_.empty() && timers_.begin()->first.first <= target) {
      now_ms_ = timers_.begin()->first.first;
      run_ready();
    }
    now_ms_ = target;
    run_ready();
  }

  /// Runs until no task or timer is left, jumping the clock to each expiry.
  void run_all() {
    run_ready();
    while (!timers_.empty()) {
      now_ms_ = std::max(now_ms_, timers_.begin()->first.first);
      run_ready();
    }
  }

  std::int64_t now_ms() const { return now_ms_; }
  std::size_t pending_timers() const { return timers_.size(); }
  /// Every delay a timer was started with, in order.
  const std::vector<std::int64_t>& requested_delays() const { return delays_; }

 private:
  struct Entry {
    std::function<void()> callback;
  };
  using Key = std::pair<std::int64_t, std::uint64_t>;  // expiry, sequence (FIFO for ties)

  class ManualTimer : public session::Timer {
   public:
    explicit ManualTimer(ManualScheduler& s) : s_(s) {}
    ~ManualTimer() override { cancel(); }
    void start(std::chrono::milliseconds delay, std::function<void()> callback) override {
      cancel();
      s_.delays_.push_back(delay.count());
      key_ = Key{s_.now_ms_ + delay.count(), ++s_.sequence_};
      s_.timers_.emplace(*key_, Entry{std::move(callback)});
    }
    void cancel() override {
      if (key_) s_.timers_.erase(*key_);
      key_.reset();
    }

   private:
    ManualScheduler& s_;
    std::optional<Key> key_;
  };

  std::deque<std::function<void()>> posted_;
  std::map<Key, Entry> timers_;
  std::vector<std::int64_t> delays_;
  std::int64_t now_ms_ = 0;
  std::int64_t epoch_base_ = 1733234567890;
  std::uint64_t sequence_ = 0;
};

}  // namespace rebound::testing
