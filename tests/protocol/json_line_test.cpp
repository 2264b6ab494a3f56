#include "protocol/json_line.h"

#include <doctest/doctest.h>

using rebound::protocol::find_invalid_utf8;
using rebound::protocol::Json;
using rebound::protocol::parse_json_line;
using rebound::protocol::to_line;

TEST_CASE("UTF-8 validation accepts valid text and finds the first bad byte") {
  CHECK_FALSE(find_invalid_utf8("plain ascii"));
  CHECK_FALSE(find_invalid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xE2\x80\xA8"));
  CHECK(find_invalid_utf8("ab\xFF") == 2u);            // never valid
  CHECK(find_invalid_utf8("\xC0\xAF") == 0u);          // overlong slash
  CHECK(find_invalid_utf8("\xE0\x80\xAF") == 0u);      // overlong
  CHECK(find_invalid_utf8("\xED\xA0\x80") == 0u);      // UTF-16 surrogate
  CHECK(find_invalid_utf8("\xF4\x90\x80\x80") == 0u);  // above U+10FFFF
  CHECK(find_invalid_utf8("x\xE2\x82") == 1u);         // truncated sequence
  CHECK(find_invalid_utf8("\xC3(") == 0u);             // bad continuation
  CHECK(find_invalid_utf8("\x80") == 0u);              // lone continuation
}

TEST_CASE("parse_json_line returns a value or a reason, never throws") {
  CHECK(parse_json_line("{\"a\":1}").value->at("a") == 1);
  CHECK(parse_json_line("null").value->is_null());
  const auto bad = parse_json_line("{\"a\":");
  CHECK_FALSE(bad.value);
  CHECK(bad.error.find("unexpected end of input") != std::string::npos);
  CHECK(bad.error.find("[json.exception") == std::string::npos);
  const auto not_utf8 = parse_json_line("{\"a\":\"\xFF\"}");
  CHECK_FALSE(not_utf8.value);
  CHECK(not_utf8.error == "invalid UTF-8 at byte 6");
}

TEST_CASE("to_line writes compact raw UTF-8 in insertion order with one LF") {
  Json j;
  j["z"] = 1;
  j["a"] = "\xE2\x80\xA8 caf\xC3\xA9";
  CHECK(to_line(j) == "{\"z\":1,\"a\":\"\xE2\x80\xA8 caf\xC3\xA9\"}\n");
}

TEST_CASE("to_line replaces invalid UTF-8 with U+FFFD instead of throwing") {
  Json j{{"text", std::string("ok\xFF")}};
  CHECK(to_line(j) == "{\"text\":\"ok\xEF\xBF\xBD\"}\n");
}

TEST_CASE("a lone surrogate escape is accepted and written back escaped") {
  const auto parsed = parse_json_line(R"({"type":"x","a":"hi \uD800 there","b":"\uDC00"})");
  REQUIRE(parsed.value);
  const std::string out = to_line(*parsed.value);
  CHECK(out == "{\"type\":\"x\",\"a\":\"hi \\ud800 there\",\"b\":\"\\udc00\"}\n");
}

TEST_CASE("proper surrogate pairs and other escapes are left to the JSON parser") {
  const auto pair = parse_json_line(R"({"e":"\uD83D\uDE00","q":"\"\\u","n":"\u00e9\n"})");
  REQUIRE(pair.value);
  CHECK((*pair.value)["e"] == "\xF0\x9F\x98\x80");
  CHECK((*pair.value)["q"] == "\"\\u");
  CHECK((*pair.value)["n"] == "\xC3\xA9\n");
  // A high surrogate followed by a non-low escape is lone; the escape after it is kept.
  const auto lone = parse_json_line(R"({"x":"\uD800\u0041"})");
  REQUIRE(lone.value);
  CHECK(to_line(*lone.value) == "{\"x\":\"\\ud800A\"}\n");
  // Outside strings nothing is touched: invalid JSON stays invalid.
  CHECK_FALSE(parse_json_line(R"(\uD800)").value);
}

TEST_CASE("a private-use character in the input is not mistaken for a marker") {
  const auto parsed = parse_json_line(
      "{\"p\":\"\xEE\x80\x80"
      "0123456789abcdefD800\"}");
  REQUIRE(parsed.value);
  CHECK(to_line(*parsed.value) ==
        "{\"p\":\"\xEE\x80\x80"
        "0123456789abcdefD800\"}\n");
}

TEST_CASE("input that contains the marker tag itself never makes invalid output (fuzz finding)") {
  // The tag is secret per process, but a fuzzer learned it from comparisons; take it the same way.
  const std::string marked = rebound::protocol::mark_lone_surrogates(R"("\uD800")");
  const std::string tag = marked.substr(1, marked.size() - 6);  // U+E000 and 16 hex digits
  REQUIRE(tag.size() == 3 + 16);
  // The tag followed by something that is not a surrogate stays as it is.
  const auto forged = parse_json_line("{\"type\":\"p" + tag + "rompt\"}");
  REQUIRE(forged.value);
  const std::string out = to_line(*forged.value);
  CHECK(out == "{\"type\":\"p" + tag + "rompt\"}\n");
  CHECK(parse_json_line(out.substr(0, out.size() - 1)).value);
  // The tag followed by a surrogate's digits becomes that escape, which reads back.
  const auto surrogate = parse_json_line("{\"x\":\"" + tag + "dc00\"}");
  REQUIRE(surrogate.value);
  const std::string escaped = to_line(*surrogate.value);
  CHECK(escaped == "{\"x\":\"\\udc00\"}\n");
  CHECK(parse_json_line(escaped.substr(0, escaped.size() - 1)).value);
}
