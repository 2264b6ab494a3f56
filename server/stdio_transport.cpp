#include "server/stdio_transport.h"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <boost/asio/error.hpp>
#include <boost/asio/write.hpp>
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
}

void StdoutWriter::write_line(std::string line) {
  if (broken_) return;
  if (pending_.empty()) {
    pending_ = std::move(line);
  } else {
    pending_.append(line);
  }
  if (!writing_) flush();
}

void StdoutWriter::flush() {
  if (pending_.empty()) {
    finish_drain();
    return;
  }
  writing_ = true;
  in_flight_.swap(pending_);
  pending_.clear();
  asio::async_write(stream_, asio::buffer(in_flight_),
                    [this](const boost::system::error_code& ec, std::size_t) {
                      writing_ = false;
                      in_flight_.clear();
                      if (ec) {
                        if (ec != asio::error::broken_pipe) {
                          spdlog::error("stdout write failed: {}", ec.message());
                        }
                        broken_ = true;
                        pending_.clear();
                        finish_drain();
                        if (on_broken_) std::exchange(on_broken_, nullptr)();
                        return;
                      }
                      flush();
                    });
}

void StdoutWriter::when_drained(std::function<void()> done) {
  drained_.push_back(std::move(done));
  if (!writing_) flush();
}

void StdoutWriter::finish_drain() {
  auto waiting = std::move(drained_);
  drained_.clear();
  for (auto& f : waiting)
    f();
}

}  // namespace rebound::server
