#include "server/io/asio_scheduler.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include <spdlog/spdlog.h>

namespace rebound::server {

namespace {

// A steady_timer whose callback runs only for the latest start(): a handler that was already
// queued when cancel() or a new start() came is recognised by its stale sequence number.
class AsioTimer : public session::Timer {
 public:
  explicit AsioTimer(const boost::asio::any_io_executor& executor)
      : timer_(executor), state_(std::make_shared<State>()) {}
  ~AsioTimer() override { cancel(); }

  void start(std::chrono::milliseconds delay, std::function<void()> callback) override {
    const std::uint64_t seq = ++state_->sequence;
    timer_.expires_after(session::saturated_delay(delay.count()));
    std::weak_ptr<State> weak = state_;
    timer_.async_wait([weak, seq, delay, deadline = timer_.expiry(),
                       cb = std::move(callback)](const boost::system::error_code& ec) {
      auto state = weak.lock();
      if (ec || !state || state->sequence != seq) return;
      // How late the loop ran the timer, as the server sees it (bench/retry_bench.cpp reads
      // it to tell the server's lateness from its client's).
      spdlog::debug(
          "timer of {} ms fired {:.3f} ms after its deadline", delay.count(),
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - deadline)
              .count());
      cb();
    });
  }

  void cancel() override {
    ++state_->sequence;
    timer_.cancel();
  }

 private:
  struct State {
    std::uint64_t sequence = 0;
  };
  boost::asio::steady_timer timer_;
  std::shared_ptr<State> state_;
};

}  // namespace

void AsioScheduler::post(std::function<void()> task) {
  boost::asio::post(executor_, std::move(task));
}

std::unique_ptr<session::Timer> AsioScheduler::make_timer() {
  return std::make_unique<AsioTimer>(executor_);
}

std::int64_t AsioScheduler::now_epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace rebound::server
