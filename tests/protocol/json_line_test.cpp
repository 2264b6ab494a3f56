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

TEST_CASE("nesting: 512 levels parse, 513 are refused before parsing, strings do not count") {
  using rebound::protocol::find_excess_nesting;
  using rebound::protocol::kMaxJsonDepth;
  const auto deep = [](std::size_t n, char open, char close) {
    return std::string(n, open) + std::string(n, close);
  };
  CHECK(kMaxJsonDepth == 512);
  CHECK_FALSE(find_excess_nesting(deep(512, '[', ']')));
  CHECK(find_excess_nesting(deep(513, '[', ']')) == 512u);
  CHECK(parse_json_line(deep(512, '[', ']')).value);
  // Objects count the same; brackets inside strings (escaped quotes too) do not.
  std::string objects;
  for (int i = 0; i < 513; ++i)
    objects += "{\"a\":";
  objects += "1" + std::string(513, '}');
  CHECK(find_excess_nesting(objects) == 5u * 512);
  const std::string in_string =
      "[\"" + std::string(600, '[') + "\\\"" + std::string(600, '{') + "\"]";
  CHECK_FALSE(find_excess_nesting(in_string));
  CHECK(parse_json_line(in_string).value);
  const auto refused = parse_json_line(std::string(100000, '['));
  CHECK_FALSE(refused.value);
  CHECK(refused.error == "nesting deeper than 512 levels at byte 512");
  CHECK(refused.what == "nesting deeper than 512 levels");
  CHECK(refused.offset == 512u);
}

TEST_CASE("parse errors carry what and where without quoting the input") {
  using rebound::protocol::error_position;
  const std::string text = "{\n  \"x\": 1,\n  \"key\": \"sk-secret\u0001\"}";
  const auto bad = parse_json_line(text);
  REQUIRE_FALSE(bad.value);
  CHECK(bad.error.find("sk-secret") != std::string::npos);  // nlohmann quotes what it read…
  CHECK(bad.what == "invalid JSON");                        // …what does not
  CHECK(error_position(text, bad.offset) == "line 3, column 20");
  CHECK(error_position("abc", 0) == "line 1, column 1");
  CHECK(error_position("a\nb", 2) == "line 2, column 1");
  const auto utf8 = parse_json_line("{\"a\":\n\"\xFF\"}");
  CHECK(utf8.what == "invalid UTF-8");
  CHECK(error_position("{\"a\":\n\"\xFF\"}", utf8.offset) == "line 2, column 2");
}

TEST_CASE("provider JSON: invalid UTF-8 and lone surrogates become U+FFFD, the rest is strict") {
  using rebound::protocol::parse_provider_json;
  using rebound::protocol::replace_invalid_utf8;
  // One U+FFFD per maximal invalid subsequence: a truncated three-byte character is one.
  CHECK(replace_invalid_utf8("a\xE2\x82(b") == "a\xEF\xBF\xBD(b");
  CHECK(replace_invalid_utf8("\xFF\xFE") == "\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(replace_invalid_utf8("\xC3\xA9 ok") == "\xC3\xA9 ok");
  CHECK(replace_invalid_utf8("end\xF0\x9F\x98") == "end\xEF\xBF\xBD");
  CHECK(replace_invalid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  const auto fixed = parse_provider_json("{\"t\":\"caf\xC3(\",\"s\":\"\\ud800x\\uDC00\"}");
  REQUIRE(fixed.value);
  CHECK((*fixed.value)["t"] == "caf\xEF\xBF\xBD(");
  CHECK((*fixed.value)["s"] == "\xEF\xBF\xBDx\xEF\xBF\xBD");
  const auto pair = parse_provider_json(R"({"e":"\uD83D\uDE00"})");
  REQUIRE(pair.value);
  CHECK((*pair.value)["e"] == "\xF0\x9F\x98\x80");
  CHECK_FALSE(parse_provider_json("{\"a\":").value);
  CHECK(parse_provider_json(std::string(600, '[')).what == "nesting deeper than 512 levels");
}

TEST_CASE("a NUL byte makes a line invalid JSON wherever it is") {
  using namespace std::string_literals;
  for (const std::string& text :
       {"-8\0"s, "{\"type\":\"get_state\"}\0junk"s, "{\"a\":\"x\0y\"}"s, "\0"s}) {
    CAPTURE(text);
    const rebound::protocol::JsonLine line = parse_json_line(text);
    CHECK_FALSE(line.value);
    CHECK(line.what == rebound::protocol::kInvalidJson);
    CHECK_FALSE(rebound::protocol::parse_provider_json(text).value);
  }
}
