#pragma once
// The stdio transport: reads stdin in chunks and writes whole lines to stdout, both
// asynchronously on the server's event loop. It knows bytes and lines, not commands. One
// StdoutWriter owns fd 1, so lines never interleave. Single-threaded: every call and every
// callback happens on the executor given at construction.

#include <array>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <functional>
#include <string>
#include <string_view>

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
  StdoutWriter(const boost::asio::any_io_executor& executor, int fd);

  /// Called once when the reader of stdout went away (EPIPE) or a write failed.
  void on_broken(std::function<void()> handler) { on_broken_ = std::move(handler); }

  /// Queues one complete line (it must end in LF). Lines are written in call order.
  void write_line(std::string line);

  /// Calls `done` once everything queued so far is written (or the pipe broke).
  void when_drained(std::function<void()> done);

 private:
  void flush();
  void finish_drain();

  boost::asio::posix::stream_descriptor stream_;
  std::string pending_;
  std::string in_flight_;
  bool writing_ = false;
  bool broken_ = false;
  std::function<void()> on_broken_;
  std::vector<std::function<void()>> drained_;
};

}  // namespace rebound::server
