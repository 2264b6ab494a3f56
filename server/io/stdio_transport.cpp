#include "server/io/stdio_transport.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <array>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <utility>

namespace rebound::server {

namespace asio = boost::asio;

StdinReader::StdinReader(const asio::any_io_executor& executor, int fd)
    : stream_(executor, ::fcntl(fd, F_DUPFD_CLOEXEC, 0)), hangup_timer_(executor) {}

void StdinReader::start(DataHandler on_data, EofHandler on_eof) {
  on_data_ = std::move(on_data);
  on_eof_ = std::move(on_eof);
  read_some();
}

void StdinReader::stop() {
  stopped_ = true;
  boost::system::error_code ignored;
  stream_.cancel(ignored);
  hangup_timer_.cancel();
}

void StdinReader::read_some() {
  stream_.async_read_some(asio::buffer(buffer_),
                          [this](const boost::system::error_code& ec, std::size_t n) {
                            if (stopped_) return;
                            if (ec && ec != asio::error::eof)
                              spdlog::warn("stdin read failed: {}", ec.message());
                            held_begin_ = 0;
                            held_end_ = n;
                            eof_pending_ = static_cast<bool>(ec);
                            deliver();
                          });
}

void StdinReader::deliver() {
  while (held_begin_ < held_end_) {
    if (stopped_) return;
    if (gate_) {
      std::weak_ptr<bool> alive = alive_;
      if (!gate_([this, alive] {
            if (!alive.expired()) resume();
          })) {
        paused_ = true;
        hangup_ms_ = 0;
        watch_hangup();
        return;
      }
    }
    const char* begin = buffer_.data() + held_begin_;
    const std::size_t left = held_end_ - held_begin_;
    const void* nl = std::memchr(begin, '\n', left);
    const std::size_t take =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - begin) + 1 : left;
    held_begin_ += take;
    on_data_(std::string_view(begin, take));
  }
  if (stopped_) return;
  if (eof_pending_) {
    stopped_ = true;
    on_eof_();
    return;
  }
  read_some();
}

void StdinReader::resume() {
  if (!paused_ || stopped_) return;
  paused_ = false;
  hangup_timer_.cancel();
  deliver();
}

void StdinReader::watch_hangup() {
  constexpr int kEveryMs = 200;
  hangup_timer_.expires_after(std::chrono::milliseconds(kEveryMs));
  std::weak_ptr<bool> alive = alive_;
  hangup_timer_.async_wait([this, alive](const boost::system::error_code& ec) {
    if (ec || alive.expired() || !paused_ || stopped_) return;
    pollfd p{stream_.native_handle(), POLLIN, 0};
    const bool hung_up = ::poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
    hangup_ms_ = hung_up ? hangup_ms_ + kEveryMs : 0;
    if (hangup_ms_ >= kStalledHangupMs) {
      // The client closed its end and reads no answers: what it still sent is given up.
      spdlog::warn("stdin closed while stdout is not read; the rest of the input is dropped");
      paused_ = false;
      stopped_ = true;
      on_eof_();
      return;
    }
    watch_hangup();
  });
}

StdoutWriter::StdoutWriter(const asio::any_io_executor& executor, int fd)
    : executor_(executor), fd_(::fcntl(fd, F_DUPFD_CLOEXEC, 0)) {
  // A larger pipe buffer (when stdout is a pipe) halves the context switches of a long
  // stream: message_update lines grow with the message. Failure (not a pipe) is harmless.
  (void)::fcntl(fd_, F_SETPIPE_SZ, 1 << 20);
  // Non-blocking, so the destructor can end a wait for a reader that stopped reading; the
  // flags belong to the file description shared with the parent and are restored at the end.
  original_flags_ = ::fcntl(fd_, F_GETFL);
  if (original_flags_ >= 0) (void)::fcntl(fd_, F_SETFL, original_flags_ | O_NONBLOCK);
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
  thread_ = std::thread([this] { run(); });
}

StdoutWriter::~StdoutWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_one();
  if (wake_[1] >= 0) (void)!::write(wake_[1], "x", 1);
  thread_.join();
  if (original_flags_ >= 0) (void)::fcntl(fd_, F_SETFL, original_flags_);
  ::close(fd_);
  for (int end : wake_)
    if (end >= 0) ::close(end);
}

void StdoutWriter::write_text(std::string_view line) {
  if (broken_ || line.empty()) return;
  if (line.size() > kGatherBytes) return write_line(OutLine(std::string(line)));
  gathered_ += line;
  gathered();
}

void StdoutWriter::write_line(OutLine line) {
  if (broken_ || line.empty()) return;
  if (line.size() <= kGatherBytes) {
    if (const std::string* plain = line.plain()) {
      gathered_ += *plain;
    } else {
      for (const auto& part : line.parts())
        gathered_ += part.view();
    }
    gathered();
    return;
  }
  flush();  // what was gathered goes first
  hand_over(std::move(line));
}

void StdoutWriter::gathered() {
  {
    if (gathered_.size() >= kFlushBytes) {
      flush();
    } else if (!flush_posted_) {
      // Runs after the handlers already queued: a burst of events made by one read of the
      // model's stream leaves in one write.
      flush_posted_ = true;
      asio::post(executor_, [this, alive = std::weak_ptr<bool>(alive_)] {
        if (alive.expired()) return;
        flush_posted_ = false;
        flush();
      });
    }
  }
}

void StdoutWriter::flush() {
  if (gathered_.empty()) return;
  std::string bytes;
  bytes.reserve(kFlushBytes);
  bytes.swap(gathered_);
  if (broken_) return;
  hand_over(OutLine(std::move(bytes)));
}

void StdoutWriter::hand_over(OutLine line) {
  bool was_idle = false;
  {
    std::lock_guard lock(mutex_);
    was_idle = queued_bytes_ == 0;
    std::string* bytes = line.plain();
    if (bytes && was_idle && error_ == 0 && bytes->size() <= kDirectBytes) {
      // The thread has nothing to write: short output goes out from here at once, without the
      // hand-over's wake-up (events and responses stay as prompt as a single-threaded write).
      const ssize_t n = ::write(fd_, bytes->data(), bytes->size());
      if (n == static_cast<ssize_t>(bytes->size())) return;
      if (n > 0) {
        bytes->erase(0, static_cast<std::size_t>(n));  // the thread writes the rest
        line = OutLine(std::move(*bytes));
      }
    }
    queued_bytes_ += line.size();
    queue_.push_back(std::move(line));
  }
  if (was_idle) ready_.notify_one();
}

std::size_t StdoutWriter::queued_bytes() const {
  std::lock_guard lock(mutex_);
  return queued_bytes_ + gathered_.size();
}

bool StdoutWriter::admit(std::function<void()> resume) {
  if (broken_ || queued_bytes() < kHoldBytes) return true;
  held_.push_back(std::move(resume));
  return false;
}

void StdoutWriter::when_drained(std::function<void()> done) {
  flush();
  if (broken_ || queued_bytes() == 0) return done();
  drained_.push_back(std::move(done));
}

void StdoutWriter::run() {
  ::pthread_setname_np(::pthread_self(), "rebound-stdout");  // for top, perf and gdb
  std::deque<OutLine> batch;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      batch.swap(queue_);
    }
    const bool written = write_all(batch);
    const int error = written ? 0 : errno;
    std::size_t done = 0;
    for (const auto& line : batch)
      done += line.size();
    batch.clear();
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      if (error != 0) {
        error_ = error;
        queue_.clear();
        queued_bytes_ = 0;
      } else {
        queued_bytes_ -= done;
      }
    }
    asio::post(executor_, [this, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.expired()) on_progress();
    });
    if (error != 0) return;
  }
}

bool StdoutWriter::write_all(const std::deque<OutLine>& lines) {
  // Gathered writes of up to 256 pieces (a line is one or several); a short count (the pipe is
  // full) resumes mid-piece.
  std::vector<std::string_view> pieces;
  for (const auto& line : lines)
    for (const auto& part : line.parts())
      if (part.length > 0 || !part.text.empty()) pieces.push_back(part.view());
  constexpr std::size_t kMaxIov = 256;
  std::array<iovec, kMaxIov> iov;
  std::size_t next = 0;
  std::size_t offset = 0;  // bytes of pieces[next] already written
  while (next < pieces.size()) {
    std::size_t count = 0;
    for (std::size_t i = next; i < pieces.size() && count < kMaxIov; ++i, ++count) {
      const std::size_t skip = count == 0 ? offset : 0;
      iov[count] = {const_cast<char*>(pieces[i].data()) + skip, pieces[i].size() - skip};
    }
    const ssize_t n = ::writev(fd_, iov.data(), static_cast<int>(count));
    if (n > 0) {
      auto left = static_cast<std::size_t>(n);
      while (left > 0) {
        const std::size_t rest = pieces[next].size() - offset;
        if (left < rest) {
          offset += left;
          break;
        }
        left -= rest;
        ++next;
        offset = 0;
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    // The pipe is full: wait until it takes more, or until the destructor wants the thread.
    pollfd fds[2] = {{fd_, POLLOUT, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, wake_[0] >= 0 ? 2 : 1, -1) < 0 && errno != EINTR) return false;
    if (fds[1].revents != 0) {
      errno = ECANCELED;
      return false;
    }
  }
  return true;
}

void StdoutWriter::on_progress() {
  std::size_t queued = 0;
  int error = 0;
  {
    std::lock_guard lock(mutex_);
    queued = queued_bytes_;
    error = error_;
  }
  if (error != 0 && !broken_) {
    if (error != EPIPE) spdlog::error("stdout write failed: {}", std::strerror(error));
    broken_ = true;
  }
  if (!held_.empty() && (broken_ || queued <= kResumeBytes)) {
    // Posted: a producer resumes from the event loop, after whatever runs now.
    for (auto& resume : std::exchange(held_, {}))
      asio::post(executor_, std::move(resume));
  }
  if (broken_ || queued == 0) {
    for (auto& done : std::exchange(drained_, {}))
      done();
  }
  if (broken_ && on_broken_) std::exchange(on_broken_, nullptr)();
}

}  // namespace rebound::server
