#include "server/stdio_transport.h"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <span>
#include <utility>

namespace rebound::server {

namespace asio = boost::asio;

StdinReader::StdinReader(const asio::any_io_executor& executor, int fd)
    : stream_(executor, ::fcntl(fd, F_DUPFD_CLOEXEC, 0)) {}

void StdinReader::start(DataHandler on_data, EofHandler on_eof) {
  on_data_ = std::move(on_data);
  on_eof_ = std::move(on_eof);
  read_some();
}

void StdinReader::stop() {
  stopped_ = true;
  boost::system::error_code ignored;
  stream_.cancel(ignored);
}

void StdinReader::read_some() {
  stream_.async_read_some(asio::buffer(buffer_),
                          [this](const boost::system::error_code& ec, std::size_t n) {
                            if (stopped_) return;
                            if (n > 0) on_data_(std::string_view(buffer_.data(), n));
                            if (stopped_) return;
                            if (ec) {
                              if (ec != asio::error::eof)
                                spdlog::warn("stdin read failed: {}", ec.message());
                              stopped_ = true;
                              on_eof_();
                              return;
                            }
                            read_some();
                          });
}

StdoutWriter::StdoutWriter(const asio::any_io_executor& executor, int fd)
    : stream_(executor, ::fcntl(fd, F_DUPFD_CLOEXEC, 0)) {
  // A larger pipe buffer (when stdout is a pipe) halves the context switches of a long
  // stream: message_update lines grow with the message. Failure (not a pipe) is harmless.
  (void)::fcntl(fd, F_SETPIPE_SZ, 1 << 20);
  // Writes are attempted at once and wait on the event loop only when the pipe is full. Asio
  // puts the descriptor back into blocking mode when it closes it.
  boost::system::error_code ignored;
  stream_.non_blocking(true, ignored);
}

void StdoutWriter::write_line(std::string line) {
  if (broken_ || line.empty()) return;
  queued_bytes_ += line.size();
  queue_.push_back(std::move(line));
  if (!waiting_) flush();
}

void StdoutWriter::flush() {
  // Up to 64 lines per call (asio's gather limit), the first from where the last call stopped.
  // A short count means the pipe is full: wait until it is writable, then go on.
  std::array<asio::const_buffer, 64> buffers;
  while (!queue_.empty()) {
    std::size_t count = 0;
    for (auto it = queue_.begin(); it != queue_.end() && count < buffers.size(); ++it, ++count) {
      const std::size_t skip = count == 0 ? front_offset_ : 0;
      buffers[count] = asio::buffer(it->data() + skip, it->size() - skip);
    }
    boost::system::error_code ec;
    std::size_t written =
        stream_.write_some(std::span<const asio::const_buffer>(buffers.data(), count), ec);
    queued_bytes_ -= written;
    while (written > 0) {
      const std::size_t left = queue_.front().size() - front_offset_;
      if (written < left) {
        front_offset_ += written;
        break;
      }
      written -= left;
      queue_.pop_front();
      front_offset_ = 0;
    }
    if (ec == asio::error::interrupted) continue;
    if (ec == asio::error::would_block || ec == asio::error::try_again) {
      waiting_ = true;
      stream_.async_wait(asio::posix::stream_descriptor::wait_write,
                         [this](const boost::system::error_code& wait_error) {
                           waiting_ = false;
                           if (wait_error == asio::error::operation_aborted) return;
                           if (wait_error) return fail(wait_error);
                           flush();
                         });
      release_held();
      return;
    }
    if (ec) return fail(ec);
  }
  release_held();
  finish_drain();
}

void StdoutWriter::fail(const boost::system::error_code& ec) {
  if (broken_) return;
  if (ec != asio::error::broken_pipe) spdlog::error("stdout write failed: {}", ec.message());
  broken_ = true;
  queue_.clear();
  front_offset_ = 0;
  queued_bytes_ = 0;
  release_held();
  finish_drain();
  if (on_broken_) std::exchange(on_broken_, nullptr)();
}

bool StdoutWriter::admit(std::function<void()> resume) {
  if (queued_bytes_ < kHoldBytes) return true;
  held_.push_back(std::move(resume));
  return false;
}

void StdoutWriter::release_held() {
  if (held_.empty() || queued_bytes_ > kResumeBytes) return;
  // Posted: a producer resumes from the event loop, never from inside the write_line() call
  // that happened to drain the queue.
  for (auto& resume : std::exchange(held_, {}))
    asio::post(stream_.get_executor(), std::move(resume));
}

void StdoutWriter::when_drained(std::function<void()> done) {
  drained_.push_back(std::move(done));
  if (!waiting_) flush();
}

void StdoutWriter::finish_drain() {
  auto waiting = std::move(drained_);
  drained_.clear();
  for (auto& f : waiting)
    f();
}

}  // namespace rebound::server
