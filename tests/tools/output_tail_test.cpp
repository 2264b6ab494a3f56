#include "tools/output_tail.h"

#include <doctest/doctest.h>

#include <string>

using rebound::tools::OutputTail;

namespace {
// The `bash` command's limits at a small scale, the window at four and two times the bytes.
OutputTail tail(std::size_t max_bytes, std::size_t max_lines) {
  return OutputTail({max_bytes, max_lines, 4 * max_bytes, 2 * max_bytes});
}
}  // namespace

TEST_CASE("short output is kept whole") {
  OutputTail t = tail(100, 10);
  t.append("a\nb\n");
  CHECK_FALSE(t.over_limit());
  CHECK(t.shown().text == "a\nb\n");
  CHECK_FALSE(t.shown().truncated);
}

TEST_CASE("the tail within the line limit") {
  OutputTail t = tail(1000, 3);
  for (int i = 1; i <= 6; ++i)
    t.append(std::to_string(i) + "\n");
  CHECK(t.over_limit());
  CHECK(t.shown().text == "4\n5\n6\n");
  CHECK(t.shown().truncated);
}

TEST_CASE("the tail within the byte limit starts at a line, and never inside UTF-8") {
  OutputTail t = tail(10, 100);
  t.append("0123456789\nabcdef\nxyz\n");
  CHECK(t.shown().text == "xyz\n");
  OutputTail u = tail(5, 100);
  u.append("é\xc3\xa9\xc3\xa9\xc3\xa9");  // one long line of 2-byte characters
  const auto r = u.shown();
  CHECK(r.truncated);
  CHECK((static_cast<unsigned char>(r.text[0]) & 0xC0) != 0x80);
}

TEST_CASE("a huge stream keeps a bounded buffer, complete() says when the head was dropped") {
  OutputTail t = tail(100, 1000000);
  const std::string chunk(64, 'x');
  for (int i = 0; i < 100; ++i) {
    t.append(chunk);
    if (t.total_bytes() <= 400) CHECK(t.complete());
  }
  CHECK_FALSE(t.complete());
  CHECK(t.buffered().size() <= 400);
  CHECK(t.total_bytes() == 6400);
  CHECK(t.shown().text.size() == 100);
}
