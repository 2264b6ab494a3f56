// StdoutWriter on a real pipe whose reader is the test: order and bytes when the pipe fills,
// the hold/resume backpressure, and a reader that went away. The io_context only runs what is
// ready (poll), so nothing here waits on a clock.

#include "server/stdio_transport.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <csignal>
#include <string>

using rebound::server::StdoutWriter;

namespace {

struct Pipe {
  int read_end = -1, write_end = -1;
  Pipe() {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    read_end = fds[0];
    write_end = fds[1];
    REQUIRE(::fcntl(read_end, F_SETFL, O_NONBLOCK) == 0);
  }
  ~Pipe() {
    if (read_end >= 0) ::close(read_end);
    if (write_end >= 0) ::close(write_end);
  }
  // Shrinks the pipe after the writer asked for 1 MiB, so a few lines fill it.
  void make_small() const { REQUIRE(::fcntl(read_end, F_SETPIPE_SZ, 4096) >= 4096); }
  // Reads what is there now (at most `limit` bytes).
  std::string take(std::size_t limit = 1 << 20) const {
    std::string out;
    char buf[8192];
    while (out.size() < limit) {
      const ssize_t n = ::read(read_end, buf, std::min(sizeof buf, limit - out.size()));
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }
};

std::string numbered_line(int i, std::size_t size) {
  std::string line = std::to_string(i) + ":";
  line.resize(size - 1, static_cast<char>('a' + i % 26));
  return line + '\n';
}

}  // namespace

TEST_CASE("StdoutWriter: lines leave whole and in order while the pipe is full") {
  boost::asio::io_context io;
  Pipe pipe;
  StdoutWriter writer(io.get_executor(), pipe.write_end);
  pipe.make_small();
  std::string expected;
  for (int i = 0; i < 300; ++i) {
    expected += numbered_line(i, 1000 + i);
    writer.write_line(numbered_line(i, 1000 + i));
  }
  CHECK(writer.queued_bytes() > expected.size() - 8192);  // the pipe took only its capacity
  bool drained = false;
  writer.when_drained([&] { drained = true; });
  std::string got;
  for (int round = 0; round < 10000 && got.size() < expected.size(); ++round) {
    got += pipe.take(3000);  // a slow reader: less than the pipe holds
    io.poll();
  }
  CHECK(got == expected);
  CHECK(writer.queued_bytes() == 0);
  CHECK(drained);
}

TEST_CASE("StdoutWriter: admit() holds a producer above 1 MiB and resumes it once drained") {
  boost::asio::io_context io;
  Pipe pipe;
  StdoutWriter writer(io.get_executor(), pipe.write_end);
  pipe.make_small();
  int resumed = 0;
  CHECK(writer.admit([&] { ++resumed; }));  // nothing queued: go on
  int i = 0;
  while (writer.queued_bytes() < StdoutWriter::kHoldBytes)
    writer.write_line(numbered_line(i++, 16 * 1024));
  CHECK_FALSE(writer.admit([&] { ++resumed; }));
  io.poll();
  CHECK(resumed == 0);  // nobody read yet
  // The reader takes bytes; the producer stays held until the queue is down to 256 KiB.
  bool released_early = false;
  while (writer.queued_bytes() > 0) {
    pipe.take(64 * 1024);
    io.poll();
    if (resumed > 0 && writer.queued_bytes() > StdoutWriter::kResumeBytes) released_early = true;
    if (resumed > 0) break;
  }
  CHECK_FALSE(released_early);
  CHECK(resumed == 1);
  CHECK(writer.queued_bytes() <= StdoutWriter::kResumeBytes);
  io.poll();
  CHECK(resumed == 1);  // exactly once
}

TEST_CASE("StdoutWriter: a reader that went away breaks the writer once and frees producers") {
  std::signal(SIGPIPE, SIG_IGN);
  boost::asio::io_context io;
  Pipe pipe;
  StdoutWriter writer(io.get_executor(), pipe.write_end);
  pipe.make_small();
  int broken = 0, resumed = 0, drained = 0;
  writer.on_broken([&] { ++broken; });
  while (writer.queued_bytes() < StdoutWriter::kHoldBytes)
    writer.write_line(numbered_line(1, 8192));
  CHECK_FALSE(writer.admit([&] { ++resumed; }));
  writer.when_drained([&] { ++drained; });
  CHECK(drained == 0);
  ::close(pipe.read_end);
  pipe.read_end = -1;
  io.poll();
  CHECK(broken == 1);
  CHECK(resumed == 1);
  CHECK(drained == 1);
  CHECK(writer.queued_bytes() == 0);
  writer.write_line("after\n");  // dropped, no second report
  io.poll();
  CHECK(broken == 1);
  CHECK(writer.queued_bytes() == 0);
}
