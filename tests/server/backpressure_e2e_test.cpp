// A client that reads stdout slowly: the server stops reading the model's stream while more
// than a megabyte of lines waits for the client, so its memory stays bounded however large the
// output grows (protocol.md section 5: each message_update carries the partial message twice).

#include <unistd.h>

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/fake_llm_server.h"
#include "tests/support/openai_rebound.h"
#include "tests/support/proc_status.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

using rebound::testing::FakeLlmServer;
using rebound::testing::FakeResponse;
using rebound::testing::Subprocess;

TEST_CASE("A slow reader of stdout holds the model's stream back, memory stays bounded") {
  // 400 deltas of 500 characters: about 80 MB of message_update lines, the model's whole
  // answer (200 KB of SSE) is on the socket almost at once.
  FakeResponse r;
  const std::string piece(500, 'x');
  for (int i = 0; i < 400; ++i)
    r.chunks.push_back(FakeLlmServer::sse(R"({"choices":[{"index":0,"delta":{"content":")" + piece +
                                          R"("},"finish_reason":null}]})"));
  r.chunks.push_back(
      FakeLlmServer::sse(R"({"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})"));
  r.chunks.push_back(FakeLlmServer::sse("[DONE]"));
  FakeLlmServer server({r});
  rebound::testing::TempDir dir;
  auto process = rebound::testing::start_openai_rebound(REBOUND_BINARY, server, dir);
  Subprocess& p = *process;
  p.write("{\"id\":1,\"type\":\"prompt\",\"message\":\"a long answer\"}\n");
  // 64 KiB a millisecond: about 64 MB/s, far slower than the server can write.
  std::vector<char> buf(64 * 1024);
  std::size_t bytes = 0, lines = 0;
  bool ended = false;
  std::string tail;  // the unfinished last line's first bytes
  while (!ended) {
    const ssize_t n = ::read(p.stdout_fd(), buf.data(), buf.size());
    REQUIRE(n > 0);
    bytes += static_cast<std::size_t>(n);
    for (ssize_t i = 0; i < n; ++i) {
      if (tail.size() < 32) tail += buf[static_cast<std::size_t>(i)];
      if (buf[static_cast<std::size_t>(i)] == '\n') {
        ++lines;
        if (tail.rfind("{\"type\":\"agent_end\"", 0) == 0) ended = true;
        tail.clear();
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const long peak_kib = rebound::testing::proc_status_kib(p.pid(), "VmHWM:");
  MESSAGE("read " << bytes << " bytes in " << lines << " lines; server peak RSS " << peak_kib
                  << " KiB");
  CHECK(bytes > 75'000'000);
  CHECK(peak_kib > 0);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // A sanitizer's allocator keeps freed memory (quarantine, shadow), so resident memory follows
  // what was allocated in all, not what was held at once: nothing to measure here.
#else
  // Unthrottled, the server would hold most of the 80 MB at once.
  CHECK(peak_kib < 40 * 1024);
#endif
  p.close_stdin();
  CHECK(p.wait(std::chrono::seconds(10)) == 0);
}
