#pragma once
// The stdio transport: reads stdin in chunks and writes whole lines to stdout, both
// asynchronously on the server's event loop. It knows bytes and lines, not commands. One
// StdoutWriter owns fd 1, so lines never interleave. Single-threaded: every call and every
// callback happens on the executor given at construction.

#include <array>
#include <cstddef>
#include <deque>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace rebound::server {

class StdinReader {
 public:
  using DataHandler = std::function<void(std::string_view)>;
  using EofHandler = std::function<void()>;

  /// Takes ownership of a duplicate of `fd`; regular files and /dev/null work too.
  StdinReader(const boost::asio::any_io_executor& executor, int fd);

  /// Starts reading; `on_data` gets each chunk, `on_eof` is called once at end of input or on a
  /// read error. Neither is called after stop().
  void start(DataHandler on_data, EofHandler on_eof);
  void stop();

 private:
  void read_some();

  boost::asio::posix::stream_descriptor stream_;
  std::array<char, 64 * 1024> buffer_{};
  DataHandler on_data_;
  EofHandler on_eof_;
  bool stopped_ = false;
};

class StdoutWriter {
 public:
  /// Producers are held back (admit() says false) from this many queued bytes on, and let go
  /// again once the queue is down to kResumeBytes.
  static constexpr std::size_t kHoldBytes = 1 << 20;
  static constexpr std::size_t kResumeBytes = 256 * 1024;

  StdoutWriter(const boost::asio::any_io_executor& executor, int fd);

  /// Called once when the reader of stdout went away (EPIPE) or a write failed.
  void on_broken(std::function<void()> handler) { on_broken_ = std::move(handler); }

  /// Queues one complete line (it must end in LF) and writes as much as the descriptor takes
  /// without blocking. Lines are written in call order and never copied: the queue holds the
  /// strings until the kernel took their bytes, in gathered writes when the pipe was full.
  void write_line(std::string line);

  /// Calls `done` once everything queued so far is written (or the pipe broke).
  void when_drained(std::function<void()> done);

  /// Backpressure for a producer that can wait (the HTTP body reader): true while fewer than
  /// kHoldBytes are queued; otherwise keeps `resume` and posts it once the reader of stdout
  /// has taken the queue down to kResumeBytes (or the pipe broke). Memory stays bounded however
  /// slowly the client reads.
  bool admit(std::function<void()> resume);

  /// Bytes queued and not yet taken by the kernel.
  [[nodiscard]] std::size_t queued_bytes() const { return queued_bytes_; }

 private:
  void flush();
  void fail(const boost::system::error_code& ec);
  void release_held();
  void finish_drain();

  boost::asio::posix::stream_descriptor stream_;
  std::deque<std::string> queue_;
  std::size_t front_offset_ = 0;  // bytes of queue_.front() already written
  std::size_t queued_bytes_ = 0;
  bool waiting_ = false;  // for the descriptor to become writable again
  bool broken_ = false;
  std::function<void()> on_broken_;
  std::vector<std::function<void()>> drained_;
  std::vector<std::function<void()>> held_;
};

}  // namespace rebound::server
