#include "tests/support/fake_connect_proxy.h"

#include "tests/support/loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace rebound::testing {

namespace {

void send_all(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = ::send(fd, s.data() + done, s.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

FakeConnectProxy::FakeConnectProxy(bool refuse) : refuse_(refuse) {
  listen_fd_ = listen_on_loopback(port_);
  acceptor_ = std::thread([this] { accept_loop(); });
}

FakeConnectProxy::~FakeConnectProxy() {
  stop_ = true;
  acceptor_.join();
  for (auto& w : workers_)
    w.join();
  ::close(listen_fd_);
}

std::vector<std::string> FakeConnectProxy::targets() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return targets_;
}

void FakeConnectProxy::accept_loop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) workers_.emplace_back([this, fd] { serve(fd); });
  }
}

void FakeConnectProxy::serve(int client) {
  std::string head;
  char buf[16384];
  while (head.find("\r\n\r\n") == std::string::npos) {
    pollfd p{client, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) break;
    const ssize_t n = ::recv(client, buf, sizeof buf, 0);
    if (n <= 0) break;
    head.append(buf, static_cast<std::size_t>(n));
  }
  const std::string line = head.substr(0, head.find("\r\n"));
  std::string target;
  if (line.rfind("CONNECT ", 0) == 0) target = line.substr(8, line.find(' ', 8) - 8);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    targets_.push_back(target);
  }
  const auto colon = target.rfind(':');
  const std::string host = target.substr(0, colon);
  if (refuse_ || colon == std::string::npos || (host != "127.0.0.1" && host != "localhost")) {
    send_all(client, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    ::close(client);
    return;
  }
  const int upstream = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(target.substr(colon + 1))));
  if (::connect(upstream, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    send_all(client, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
    ::close(upstream);
    ::close(client);
    return;
  }
  send_all(client, "HTTP/1.1 200 Connection established\r\n\r\n");
  pollfd fds[2] = {{client, POLLIN, 0}, {upstream, POLLIN, 0}};
  while (!stop_) {
    if (::poll(fds, 2, 50) <= 0) continue;
    bool closed = false;
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = ::recv(fds[i].fd, buf, sizeof buf, 0);
      if (n <= 0) {
        closed = true;
        break;
      }
      send_all(fds[1 - i].fd, std::string(buf, static_cast<std::size_t>(n)));
    }
    if (closed) break;
  }
  ::close(upstream);
  ::close(client);
}

}  // namespace rebound::testing
