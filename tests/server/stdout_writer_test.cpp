// StdoutWriter on a real pipe whose reader is the test: order and bytes when the pipe fills,
// the hold/resume backpressure, a reader that went away, and a reader that stopped reading.
// The writer's thread makes progress on its own; the test waits for conditions (bytes read,
// callbacks run), never for a time.

#include "server/io/stdio_transport.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>

using rebound::server::StdoutWriter;

namespace {

struct Pipe {
  int read_end = -1, write_end = -1;
  Pipe() {
    int fds[2];
    REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
    read_end = fds[0];
    write_end = fds[1];
  }
  ~Pipe() {
    if (read_end >= 0) ::close(read_end);
    if (write_end >= 0) ::close(write_end);
  }
  // Shrinks the pipe after the writer asked for 1 MiB, so a few lines fill it.
  void make_small() const { REQUIRE(::fcntl(read_end, F_SETPIPE_SZ, 4096) >= 4096); }
  // One blocking read of at most `limit` bytes.
  std::string take(std::size_t limit) const {
    std::string out(limit, '\0');
    const ssize_t n = ::read(read_end, out.data(), limit);
    REQUIRE(n > 0);
    out.resize(static_cast<std::size_t>(n));
    return out;
  }
};

std::string numbered_line(int i, std::size_t size) {
  std::string line = std::to_string(i) + ":";
  line.resize(size - 1, static_cast<char>('a' + i % 26));
  return line + '\n';
}

// Runs the loop until `done()` holds (a generous bound only against a hang).
template <typename Done>
bool run_until(boost::asio::io_context& io, Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done() && std::chrono::steady_clock::now() < give_up) {
    io.restart();
    io.run_one_for(std::chrono::milliseconds(50));
  }
  return done();
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
  CHECK(writer.queued_bytes() > 0);
  bool drained = false;
  writer.when_drained([&] { drained = true; });
  std::string got;
  while (got.size() < expected.size())
    got += pipe.take(3000);  // a slow reader: less than the pipe holds
  CHECK(got == expected);
  CHECK(run_until(io, [&] { return drained; }));
  CHECK(writer.queued_bytes() == 0);
}

TEST_CASE("StdoutWriter: admit() holds a producer above 1 MiB and resumes it once drained") {
  boost::asio::io_context io;
  Pipe pipe;
  StdoutWriter writer(io.get_executor(), pipe.write_end);
  pipe.make_small();
  int resumed = 0;
  std::size_t queued_at_resume = 0;
  CHECK(writer.admit([&] { ++resumed; }));  // nothing queued: go on
  std::size_t total = 0;
  for (int i = 0; writer.queued_bytes() < StdoutWriter::kHoldBytes; ++i) {
    writer.write_line(numbered_line(i, 16 * 1024));
    total += 16 * 1024;
  }
  CHECK_FALSE(writer.admit([&] {
    ++resumed;
    queued_at_resume = writer.queued_bytes();
  }));
  io.poll();
  CHECK(resumed == 0);  // nobody read yet
  std::size_t read = 0;
  while (read < total) {
    read += pipe.take(64 * 1024).size();
    io.poll();
  }
  CHECK(run_until(io, [&] { return resumed > 0; }));
  CHECK(resumed == 1);
  CHECK(queued_at_resume <= StdoutWriter::kResumeBytes);
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
  CHECK(run_until(io, [&] { return broken > 0 && resumed > 0; }));
  CHECK(broken == 1);
  CHECK(resumed == 1);
  CHECK(drained == 1);
  writer.write_line("after\n");  // dropped, no second report
  io.poll();
  CHECK(broken == 1);
  CHECK(writer.admit([] {}));  // a broken writer holds nobody back
}

TEST_CASE("StdoutWriter: a reader that stopped reading does not keep the writer alive") {
  boost::asio::io_context io;
  Pipe pipe;
  {
    StdoutWriter writer(io.get_executor(), pipe.write_end);
    pipe.make_small();
    for (int i = 0; i < 100; ++i)
      writer.write_line(numbered_line(i, 8192));
    // Wait until the writer thread has filled the pipe, so it is stuck waiting for room.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    int unread = 0;
    while ((::ioctl(pipe.read_end, FIONREAD, &unread) != 0 || unread < 4096) &&
           std::chrono::steady_clock::now() < give_up)
      std::this_thread::yield();
    REQUIRE(unread >= 4096);
    CHECK(writer.queued_bytes() > 0);
  }  // the destructor ends the thread's wait for the pipe; a hang here fails the test's timeout
  CHECK(pipe.take(4096) == numbered_line(0, 8192).substr(0, 4096));  // what it took stays
}
