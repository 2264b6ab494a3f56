#pragma once
// The stdio transport: reads stdin in chunks on the server's event loop and writes whole lines
// to stdout. It knows bytes and lines, not commands. One StdoutWriter owns fd 1, so lines never
// interleave. Every call and every callback happens on the executor given at construction; the
// writer's own thread only copies queued bytes into the descriptor, so the kernel's copy of a
// long stream runs beside the event loop instead of inside it.

#include <array>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "server/io/out_line.h"

namespace rebound::server {

class StdinReader {
 public:
  using DataHandler = std::function<void(std::string_view)>;
  using EofHandler = std::function<void()>;

  /// Backpressure on input: asked before each line is handed on; false keeps `resume` and
  /// pauses reading until it is called (StdoutWriter::admit: a client that does not read
  /// stdout stops being read, so its commands cannot pile up answers without limit).
  using Gate = std::function<bool(std::function<void()> resume)>;
  /// How long input stays paused after the client closed its end before that counts as end of
  /// input (nobody is reading the answers then).
  static constexpr int kStalledHangupMs = 2000;

  /// Takes ownership of a duplicate of `fd`; regular files and /dev/null work too.
  StdinReader(const boost::asio::any_io_executor& executor, int fd);

  void set_gate(Gate gate) { gate_ = std::move(gate); }
  /// Starts reading; `on_data` gets the input in pieces that end at a line end (or a chunk's
  /// end), `on_eof` is called once at end of input or on a read error. Neither is called after
  /// stop().
  void start(DataHandler on_data, EofHandler on_eof);
  void stop();

 private:
  void read_some();
  void deliver();       // hands on what was read, a line at a time while the gate lets it
  void resume();        // the gate opened again
  void watch_hangup();  // while paused: the client closing its end is noticed

  boost::asio::posix::stream_descriptor stream_;
  boost::asio::steady_timer hangup_timer_;
  std::array<char, 64 * 1024> buffer_{};
  std::size_t held_begin_ = 0, held_end_ = 0;  // read but not handed on yet
  DataHandler on_data_;
  EofHandler on_eof_;
  Gate gate_;
  bool stopped_ = false;
  bool paused_ = false;
  bool eof_pending_ = false;  // end of input came after data still held
  int hangup_ms_ = 0;         // paused this long since the client closed its end
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

class StdoutWriter : public LineWriter {
 public:
  /// Producers are held back (admit() says false) from this many queued bytes on, and let go
  /// again once the queue is down to kResumeBytes.
  static constexpr std::size_t kHoldBytes = 1 << 20;
  static constexpr std::size_t kResumeBytes = 256 * 1024;
  /// Lines up to this size are gathered on the event loop and written together once the loop
  /// turn that made them is over (one write(2) for a burst of small events instead of one
  /// each), or as soon as kFlushBytes are gathered. A batch up to kDirectBytes is written by
  /// the loop itself while the writer thread is idle; a larger one is the thread's, so the loop
  /// goes on with the model's stream while the kernel copies.
  static constexpr std::size_t kGatherBytes = 4 * 1024;
  static constexpr std::size_t kFlushBytes = 64 * 1024;
  static constexpr std::size_t kDirectBytes = 8 * 1024;

  StdoutWriter(const boost::asio::any_io_executor& executor, int fd);
  /// Stops the writer thread without waiting for a reader that stopped reading; what is still
  /// queued is dropped (server_app waits for when_drained() first, within its limit).
  ~StdoutWriter();
  StdoutWriter(const StdoutWriter&) = delete;
  StdoutWriter& operator=(const StdoutWriter&) = delete;

  /// Called once when the reader of stdout went away (EPIPE) or a write failed.
  void on_broken(std::function<void()> handler) { on_broken_ = std::move(handler); }

  /// Queues one complete line (it must end in LF). Lines are written in call order: short ones
  /// are gathered and leave together at the end of the loop turn (flush()); long ones are
  /// never copied: the writer thread takes the queued strings and writes them out.
  void write_line(std::string line) { write_line(OutLine(std::move(line))); }
  void write_line(OutLine line) override;
  void write_text(std::string_view line) override;
  /// Hands the gathered short lines on now (also done by a handler posted at the first one).
  void flush();

  /// Calls `done` once everything queued so far is written (or the pipe broke).
  void when_drained(std::function<void()> done);

  /// Backpressure for a producer that can wait (the HTTP body reader): true while fewer than
  /// kHoldBytes are queued; otherwise keeps `resume` and posts it once the reader of stdout
  /// has taken the queue down to kResumeBytes (or the pipe broke). Memory stays bounded however
  /// slowly the client reads.
  bool admit(std::function<void()> resume);

  /// Bytes queued and not yet taken by the kernel.
  [[nodiscard]] std::size_t queued_bytes() const;

 private:
  void run();                                        // the writer thread
  bool write_all(const std::deque<OutLine>& lines);  // false with errno set
  void on_progress();  // on the event loop, posted by the writer thread
  void hand_over(OutLine bytes);
  void gathered();  // more was gathered: flush now when it is a lot, else once this turn ends  //
                    // to the direct write or the writer thread, in order

  boost::asio::any_io_executor executor_;
  int fd_ = -1;
  int original_flags_ = 0;
  int wake_[2] = {-1, -1};  // written by the destructor to end a poll() for POLLOUT
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<OutLine> queue_;     // guarded by mutex_
  std::size_t queued_bytes_ = 0;  // guarded; includes the lines being written
  bool stopping_ = false;         // guarded
  int error_ = 0;                 // guarded: errno of the write that failed
  // Event loop only:
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  bool broken_ = false;
  std::function<void()> on_broken_;
  std::vector<std::function<void()>> drained_;
  std::vector<std::function<void()>> held_;
  std::string gathered_;       // short lines of this loop turn
  bool flush_posted_ = false;  // a flush() handler is queued
  std::thread thread_;         // last: starts once everything above exists
};

}  // namespace rebound::server
