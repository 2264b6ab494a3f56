#pragma once
// The fuzz targets' event loop (a Scheduler whose posted tasks run in order when asked and whose
// timers fire only when the fuzzer's input is used up, expire_all) and a fake peer process.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>

#include <cstdlib>
#include <string>

#include "peer/peer_process.h"
#include "session/scheduler.h"

namespace rebound::fuzz {

// Posted tasks in order; timers fire only when the fuzzer's input is used up.
class Loop : public session::Scheduler {
 public:
  void post(std::function<void()> task) override { tasks_.push_back(std::move(task)); }
  std::unique_ptr<session::Timer> make_timer() override { return std::make_unique<T>(*this); }
  std::int64_t now_epoch_ms() override { return 0; }
  void run() {
    while (!tasks_.empty()) {
      auto t = std::move(tasks_.front());
      tasks_.pop_front();
      t();
    }
  }
  // Fires every armed timer (and what they arm in turn), a bounded number of rounds.
  void expire_all() {
    for (int round = 0; round < 16 && !timers_.empty(); ++round) {
      auto armed = std::move(timers_);
      timers_.clear();
      for (auto& [id, cb] : armed)
        cb();
      run();
    }
  }

 private:
  struct T : session::Timer {
    explicit T(Loop& l) : loop(l) {}
    ~T() override { cancel(); }
    void start(std::chrono::milliseconds, std::function<void()> cb) override {
      cancel();
      id = ++loop.next_;
      loop.timers_[id] = std::move(cb);
    }
    void cancel() override {
      if (id) loop.timers_.erase(id);
      id = 0;
    }
    Loop& loop;
    std::uint64_t id = 0;
  };
  std::deque<std::function<void()>> tasks_;
  std::map<std::uint64_t, std::function<void()>> timers_;
  std::uint64_t next_ = 0;
};

// A peer process that takes every line (each must end in LF) and is alive until told.
struct Process : peer::PeerProcess {
  void write(std::string data) override {
    if (data.empty() || data.back() != '\n') std::abort();
  }
  void close_stdin() override {}
  void signal_group(int) override {}
  bool group_alive() const override { return alive; }
  std::size_t input_queued() const override { return 0; }
  bool alive = true;
};

}  // namespace rebound::fuzz
