#include "session/llm/sse_parser.h"

#include <doctest/doctest.h>
#include <string>
#include <vector>

using rebound::session::llm::SseEvent;
using rebound::session::llm::SseParser;

namespace {

// "event|data|id" per event.
std::vector<std::string> parse(const std::string& input, const std::vector<std::size_t>& cuts) {
  SseParser p;
  std::vector<std::string> out;
  auto sink = [&](SseEvent e) { out.push_back(e.event + "|" + e.data + "|" + e.id.value_or("-")); };
  std::size_t start = 0;
  for (auto c : cuts) {
    p.feed(std::string_view(input).substr(start, c - start), sink);
    start = c;
  }
  p.feed(std::string_view(input).substr(start), sink);
  p.finish(sink);
  return out;
}

std::vector<std::string> parse(const std::string& input) {
  return parse(input, {});
}

}  // namespace

TEST_CASE("data lines, event names, comments, ids") {
  CHECK(parse("data: {\"a\":1}\n\n") == std::vector<std::string>{"message|{\"a\":1}|-"});
  CHECK(parse(": ping\nevent: message_start\ndata: x\nid: 7\n\n") ==
        std::vector<std::string>{"message_start|x|7"});
  CHECK(parse("data: one\ndata: two\n\n") == std::vector<std::string>{"message|one\ntwo|-"});
  CHECK(parse("data:no-space\n\ndata:  two-spaces\n\n") ==
        std::vector<std::string>{"message|no-space|-", "message| two-spaces|-"});
  CHECK(parse("data\n\n") == std::vector<std::string>{"message||-"});
  CHECK(parse("event: ping\n\n").empty());  // no data: nothing dispatched
  CHECK(parse("retry: 100\nfoo: bar\ndata: d\n\n") == std::vector<std::string>{"message|d|-"});
}

TEST_CASE("CRLF, LF and CR line endings") {
  const std::vector<std::string> two{"message|a|-", "e|b|-"};
  CHECK(parse("data: a\r\n\r\nevent: e\r\ndata: b\r\n\r\n") == two);
  CHECK(parse("data: a\r\revent: e\rdata: b\r\r") == two);
  CHECK(parse("data: a\n\nevent: e\ndata: b\n\n") == two);
}

TEST_CASE("a missing final blank line or newline still yields the last event") {
  CHECK(parse("data: [DONE]") == std::vector<std::string>{"message|[DONE]|-"});
  CHECK(parse("data: a\n\ndata: b\n") == std::vector<std::string>{"message|a|-", "message|b|-"});
}

TEST_CASE("a leading byte order mark is dropped") {
  CHECK(parse("\xEF\xBB\xBF"
              "data: a\n\n") == std::vector<std::string>{"message|a|-"});
}

TEST_CASE("the same stream split at every byte boundary gives the same events") {
  const std::string input =
      "\xEF\xBB\xBF: comment\r\nevent: content_block_delta\r\ndata: {\"text\":\"caf\xC3\xA9 "
      "\xF0\x9F\x98\x80\"}\r\n\r\ndata: line1\rdata: line2\r\rid: 42\ndata: x\n\n"
      "data: [DONE]";
  const auto expected = parse(input);
  REQUIRE(expected.size() == 4);
  CHECK(expected[0] == "content_block_delta|{\"text\":\"caf\xC3\xA9 \xF0\x9F\x98\x80\"}|-");
  CHECK(expected[1] == "message|line1\nline2|-");
  for (std::size_t a = 0; a <= input.size(); ++a) {
    CAPTURE(a);
    CHECK(parse(input, {a}) == expected);
  }
  std::vector<std::size_t> every;
  for (std::size_t i = 1; i < input.size(); ++i)
    every.push_back(i);
  CHECK(parse(input, every) == expected);
}

TEST_CASE("a line or an event past its bound fails the stream and frees what it held") {
  std::vector<std::string> seen;
  auto sink = [&](SseEvent e) { seen.push_back(e.data); };
  {
    SseParser p(16, 64);
    p.feed("data: ok\n\ndata: 0123456789", sink);  // 16 bytes so far: fine
    CHECK(p.error().empty());
    p.feed("a", sink);
    CHECK(p.error() == "an SSE line longer than 16 bytes");
    p.feed("\n\ndata: later\n\n", sink);  // ignored from now on
    p.finish(sink);
    CHECK(seen == std::vector<std::string>{"ok"});
  }
  seen.clear();
  {
    SseParser p(1024, 20);
    p.feed("data: 0123456789\n", sink);  // 11 bytes of event data with the LF
    p.feed("data: 012345678\n", sink);   // 21: over
    CHECK(p.error() == "an SSE event larger than 20 bytes");
    p.finish(sink);
    CHECK(seen.empty());
  }
  {
    SseParser p;  // the defaults: 16 MiB each
    p.feed("data: " + std::string((16u << 20) + 1, 'x'), sink);
    CHECK(p.error() == "an SSE line longer than 16 MiB");
  }
}

TEST_CASE("stray lines: ignored by default, handed on as one event when asked, bounded") {
  const std::string stream = "data: a\n\n{\n  \"error\": {\"code\": 503}\n}\n\ndata: b\n\n";
  std::vector<std::string> seen;
  auto sink = [&](const SseEvent& e) { seen.push_back((e.stray ? "stray:" : "") + e.data); };
  {
    SseParser p;
    p.feed(stream, sink);
    p.finish(sink);
    CHECK(seen == std::vector<std::string>{"a", "b"});
  }
  seen.clear();
  {
    SseParser p;
    p.keep_stray_lines(true);
    p.feed(stream, sink);
    // `retry:` and comments are still no stray lines; an unended one comes out at the end.
    p.feed("retry: 5\n: note\n{\"error\":1}", sink);
    p.finish(sink);
    CHECK(seen == std::vector<std::string>{"a", "stray:{\n  \"error\": {\"code\": 503}\n}\n", "b",
                                           "stray:{\"error\":1}\n"});
  }
  seen.clear();
  {
    SseParser p(1024, 16);
    p.keep_stray_lines(true);
    p.feed("0123456789\n0123456789\n", sink);
    CHECK(p.error() == "an SSE event larger than 16 bytes");
    p.finish(sink);
    CHECK(seen.empty());
  }
}
