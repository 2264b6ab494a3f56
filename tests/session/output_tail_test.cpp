#include "session/output_tail.h"

#include <doctest/doctest.h>

#include <string>

using rebound::session::OutputTail;

TEST_CASE("short output is kept whole") {
  OutputTail t(100, 10);
  t.append("a\nb\n");
  CHECK_FALSE(t.over_limit());
  CHECK(t.result().text == "a\nb\n");
  CHECK_FALSE(t.result().truncated);
}

TEST_CASE("the tail within the line limit") {
  OutputTail t(1000, 3);
  for (int i = 1; i <= 6; ++i)
    t.append(std::to_string(i) + "\n");
  CHECK(t.over_limit());
  CHECK(t.result().text == "4\n5\n6\n");
  CHECK(t.result().truncated);
}

TEST_CASE("the tail within the byte limit starts at a line, and never inside UTF-8") {
  OutputTail t(10, 100);
  t.append("0123456789\nabcdef\nxyz\n");
  CHECK(t.result().text == "xyz\n");
  OutputTail u(5, 100);
  u.append("é\xc3\xa9\xc3\xa9\xc3\xa9");  // one long line of 2-byte characters
  const auto r = u.result();
  CHECK(r.truncated);
  CHECK((static_cast<unsigned char>(r.text[0]) & 0xC0) != 0x80);
}

TEST_CASE("a huge stream keeps a bounded buffer, complete() says when the head was dropped") {
  OutputTail t(100, 1000000);
  const std::string chunk(64, 'x');
  for (int i = 0; i < 100; ++i) {
    t.append(chunk);
    if (t.total_bytes() <= 400) CHECK(t.complete());
  }
  CHECK_FALSE(t.complete());
  CHECK(t.buffered().size() <= 400);
  CHECK(t.total_bytes() == 6400);
  CHECK(t.result().text.size() == 100);
}
