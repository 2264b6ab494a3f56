#pragma once
// The production Scheduler: posts and timers on the server's io_context (steady_timer), wall
// clock from the system clock. Single-threaded, like the loop it wraps.

#include <boost/asio/any_io_executor.hpp>

#include "session/scheduler.h"

namespace rebound::server {

class AsioScheduler : public session::Scheduler {
 public:
  explicit AsioScheduler(boost::asio::any_io_executor executor) : executor_(std::move(executor)) {}

  void post(std::function<void()> task) override;
  std::unique_ptr<session::Timer> make_timer() override;
  std::int64_t now_epoch_ms() override;

 private:
  boost::asio::any_io_executor executor_;
};

}  // namespace rebound::server
