#include "process/stop_signals.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cerrno>
#include <csignal>

namespace rebound::process {

namespace asio = boost::asio;

namespace {

constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP};

std::atomic<int> g_write_fd{-1};
std::atomic<int> g_read_fd{-1};
std::atomic<int> g_early_signal{0};  // a signal that came before the pipe existed

void on_stop_signal(int signo) {
  const int saved_errno = errno;
  const int fd = g_write_fd.load();
  if (fd >= 0) {
    const char byte = static_cast<char>(signo);
    // A full pipe means the loop has plenty of signals to read already: dropping is fine.
    [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1);
  } else {
    g_early_signal.store(signo);
  }
  errno = saved_errno;
}

}  // namespace

void install_stop_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  for (const int s : kStopSignals)
    sigaddset(&sa.sa_mask, s);  // one handler at a time
  sa.sa_flags = SA_RESTART;
  for (const int s : kStopSignals)
    ::sigaction(s, &sa, nullptr);
}

void open_stop_signal_pipe() {
  if (g_read_fd.load() >= 0) return;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return;
  g_read_fd.store(fds[0]);
  // Start-up is single-threaded and the handler runs to completion between two instructions
  // of this thread: a signal lands either in g_early_signal before this store or in the pipe.
  g_write_fd.store(fds[1]);
  if (const int early = g_early_signal.exchange(0)) {
    const char byte = static_cast<char>(early);
    [[maybe_unused]] const ssize_t n = ::write(fds[1], &byte, 1);
  }
}

struct StopSignalWatch::State : std::enable_shared_from_this<State> {
  State(asio::any_io_executor ex, std::function<void(int)> cb)
      : pipe(ex), on_signal(std::move(cb)) {}
  void read() {
    pipe.async_read_some(
        asio::buffer(buf),
        [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
          if (ec || self->stopped) return;
          for (std::size_t i = 0; i < n && !self->stopped; ++i)
            self->on_signal(static_cast<unsigned char>(self->buf[i]));
          if (!self->stopped) self->read();
        });
  }
  asio::posix::stream_descriptor pipe;
  std::function<void(int)> on_signal;
  char buf[16];
  bool stopped = false;
};

StopSignalWatch::StopSignalWatch(asio::any_io_executor executor,
                                 std::function<void(int signo)> on_signal)
    : state_(std::make_shared<State>(std::move(executor), std::move(on_signal))) {
  open_stop_signal_pipe();
  // A duplicate for Asio, which closes what it holds: the pipe itself stays open until exit,
  // so a late signal's write never fails for want of a reader.
  const int read_fd = g_read_fd.load();
  const int fd = read_fd >= 0 ? ::fcntl(read_fd, F_DUPFD_CLOEXEC, 3) : -1;
  if (fd < 0) return;
  boost::system::error_code ec;
  state_->pipe.assign(fd, ec);
  if (ec) {
    ::close(fd);
    return;
  }
  state_->read();
}

StopSignalWatch::~StopSignalWatch() {
  state_->stopped = true;
  boost::system::error_code ignored;
  state_->pipe.cancel(ignored);
}

}  // namespace rebound::process
