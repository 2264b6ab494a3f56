#include "protocol/line_reader.h"

#include <doctest/doctest.h>
#include <string>
#include <vector>

using rebound::protocol::LineItem;
using rebound::protocol::LineReader;

namespace {

// Items rendered as strings: "L:<text>" for a line, "TOO_LONG" for an over-limit line.
std::vector<std::string> feed_in_pieces(const std::string& input, std::size_t limit,
                                        const std::vector<std::size_t>& cuts) {
  LineReader reader(limit);
  std::vector<std::string> out;
  auto sink = [&](LineItem item) {
    out.push_back(item.kind == LineItem::Kind::line ? "L:" + item.text : "TOO_LONG");
  };
  std::size_t start = 0;
  for (auto cut : cuts) {
    reader.feed(std::string_view(input).substr(start, cut - start), sink);
    start = cut;
  }
  reader.feed(std::string_view(input).substr(start), sink);
  reader.finish(sink);
  return out;
}

std::vector<std::string> feed_whole(const std::string& input, std::size_t limit) {
  return feed_in_pieces(input, limit, {});
}

}  // namespace

TEST_CASE("lines split on LF only, CR before LF stripped, blank lines dropped") {
  const std::string input =
      "a\nb\r\n\n  \t\r\nc\rd\n\r\n"
      "e";
  CHECK(feed_whole(input, 100) == std::vector<std::string>{"L:a", "L:b", "L:c\rd", "L:e"});
}

TEST_CASE("U+2028 and U+2029 are ordinary characters inside a line") {
  const std::string input = "x\xE2\x80\xA8y\xE2\x80\xA9z\n";
  CHECK(feed_whole(input, 100) == std::vector<std::string>{"L:x\xE2\x80\xA8y\xE2\x80\xA9z"});
}

TEST_CASE("an unterminated last line is handed out at the end") {
  CHECK(feed_whole("first\nlast", 100) == std::vector<std::string>{"L:first", "L:last"});
  CHECK(feed_whole("only", 100) == std::vector<std::string>{"L:only"});
  CHECK(feed_whole("", 100).empty());
}

TEST_CASE("a line over the limit is reported once and the reader resynchronises at its LF") {
  const std::string input = "ok\n" + std::string(50, 'x') + "\nafter\n";
  CHECK(feed_whole(input, 10) == std::vector<std::string>{"L:ok", "TOO_LONG", "L:after"});
}

TEST_CASE("the limit counts the line without its CR and LF") {
  CHECK(feed_whole("12345\r\n", 5) == std::vector<std::string>{"L:12345"});
  CHECK(feed_whole("12345\n", 5) == std::vector<std::string>{"L:12345"});
  CHECK(feed_whole("123456\n", 5) == std::vector<std::string>{"TOO_LONG"});
  CHECK(feed_whole("123456\r\n", 5) == std::vector<std::string>{"TOO_LONG"});
  CHECK(feed_whole("123456", 5) == std::vector<std::string>{"TOO_LONG"});
}

TEST_CASE("an over-limit line without LF at end of input yields one error and nothing else") {
  CHECK(feed_whole("a\n" + std::string(100, 'y'), 10) ==
        std::vector<std::string>{"L:a", "TOO_LONG"});
}

TEST_CASE("the same input split at every byte boundary gives the same items") {
  const std::string input = "{\"type\":\"get_state\"}\r\n\n   \n{\"a\":\"\xE2\x80\xA8\"}\n" +
                            std::string(40, 'z') + "\r\nnext\r\n\r\nlast-no-lf";
  for (std::size_t limit : {std::size_t{8}, std::size_t{30}, std::size_t{1000}}) {
    const auto expected = feed_whole(input, limit);
    for (std::size_t cut = 0; cut <= input.size(); ++cut) {
      CAPTURE(limit);
      CAPTURE(cut);
      CHECK(feed_in_pieces(input, limit, {cut}) == expected);
    }
    // Two cuts at every pair of boundaries, and one byte at a time.
    for (std::size_t a = 0; a <= input.size(); a += 3) {
      for (std::size_t b = a; b <= input.size(); b += 5) {
        CHECK(feed_in_pieces(input, limit, {a, b}) == expected);
      }
    }
    std::vector<std::size_t> every;
    for (std::size_t i = 1; i < input.size(); ++i)
      every.push_back(i);
    CHECK(feed_in_pieces(input, limit, every) == expected);
  }
}
