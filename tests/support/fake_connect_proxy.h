#pragma once
// A fake HTTPS proxy for tests: answers HTTP CONNECT on 127.0.0.1 and tunnels bytes to the
// requested port on 127.0.0.1 only (any other host is refused with 403, so no test traffic
// leaves the machine). Records every CONNECT target. Runs its own threads.

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rebound::testing {

class FakeConnectProxy {
 public:
  /// `refuse`: answer every CONNECT with 403.
  explicit FakeConnectProxy(bool refuse = false);
  ~FakeConnectProxy();
  FakeConnectProxy(const FakeConnectProxy&) = delete;
  FakeConnectProxy& operator=(const FakeConnectProxy&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> targets() const;

 private:
  void accept_loop();
  void serve(int fd);

  bool refuse_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::vector<std::string> targets_;
  std::thread acceptor_;
  std::vector<std::thread> workers_;
};

}  // namespace rebound::testing
