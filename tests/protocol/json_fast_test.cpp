#include "protocol/json_fast.h"

#include <doctest/doctest.h>

#include <string>

#include "protocol/json_line.h"

using rebound::protocol::Json;
using rebound::protocol::kMaxJsonDepth;
using rebound::protocol::parse_json_fast;

namespace {

// The value nlohmann_json builds, with its exact dump (which tells 1 from 1.0).
std::string careful(const std::string& text) {
  return Json::parse(text).dump();
}

}  // namespace

TEST_CASE("the fast JSON parser builds nlohmann_json's value for well-formed text") {
  for (const char* text : {
           R"({"type":"message","id":"a1","parentId":null,"n":-3,"u":18446744073709551615})",
           R"( [1, 2.5, -0, 0.125e2, 1E-3, true, false, null, "", {}, []] )",
           R"({"s":"tab\there \"quoted\" back\\slash \/ \b\f\n\r \u00e9 \ud83d\ude00 \u0000"})",
           "{\"raw\":\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"}",
           R"({"a":1,"b":2,"a":3})",  // a repeated key: first place, last value
           R"({"deep":[[[[{"x":[1]}]]]]})",
       }) {
    CAPTURE(text);
    const auto fast = parse_json_fast(text, kMaxJsonDepth);
    REQUIRE(fast);
    CHECK(fast->dump() == careful(text));
  }
  const auto numbers = parse_json_fast(R"([7, -7, 7.0])", kMaxJsonDepth);
  REQUIRE(numbers);
  CHECK((*numbers)[0].is_number_unsigned());
  CHECK((*numbers)[1].is_number_integer());
  CHECK_FALSE((*numbers)[1].is_number_unsigned());
  CHECK((*numbers)[2].is_number_float());
  const auto repeated = parse_json_fast(R"({"a":1,"b":2,"a":3})", kMaxJsonDepth);
  REQUIRE(repeated);
  CHECK(repeated->dump() == R"({"a":3,"b":2})");
}

TEST_CASE("the fast JSON parser declines what it leaves to the careful path") {
  for (const std::string& text : {
           std::string(""),
           std::string("   "),
           std::string("{"),
           std::string("[1,]"),
           std::string("{\"a\":1,}"),
           std::string("01"),
           std::string("-"),
           std::string("1."),
           std::string("1e"),
           std::string("tru"),
           std::string("nul"),
           std::string("[1] x"),
           std::string("\"a\nb\""),
           std::string("\"\\x\""),
           std::string("\"\\u12G4\""),
           std::string("\"\\ud800\""),
           std::string("\"\\udc00\""),
           std::string("\"\\ud800\\u0041\""),
           std::string("\"\xFF\""),
           std::string("\"\xC0\xAF\""),
           std::string("\"\xED\xA0\x80\""),
           std::string("\xEF\xBB\xBF{}"),        // a byte-order mark: nlohmann_json's own rule
           std::string("18446744073709551616"),  // past 64 bits: nlohmann_json makes a double
           std::string("-9223372036854775809"),
           std::string("1e400"),
           std::string("{\"a\":1}\0", 8),
           std::string("'a'"),
           std::string("{a:1}"),
       }) {
    CAPTURE(text);
    CHECK_FALSE(parse_json_fast(text, kMaxJsonDepth));
  }
  CHECK(parse_json_fast("[[[1]]]", 3));
  CHECK_FALSE(parse_json_fast("[[[1]]]", 2));
  CHECK_FALSE(parse_json_fast("[{\"a\":[1]}]", 2));
}

TEST_CASE("parse_json_line gives the same answers with the fast path in front") {
  // Declined by the fast parser, answered by the careful path as before.
  const auto surrogate = rebound::protocol::parse_json_line(R"({"s":"\ud800"})");
  REQUIRE(surrogate.value);
  CHECK(rebound::protocol::to_line(*surrogate.value) == "{\"s\":\"\\ud800\"}\n");
  const auto big = rebound::protocol::parse_json_line("[18446744073709551616]");
  REQUIRE(big.value);
  CHECK((*big.value)[0].is_number_float());
  const auto bad = rebound::protocol::parse_json_line("{\"a\":\"\xFF\"}");
  CHECK_FALSE(bad.value);
  CHECK(bad.what == "invalid UTF-8");
  const std::string deep(kMaxJsonDepth + 1, '[');
  const auto nested =
      rebound::protocol::parse_json_line(deep + std::string(kMaxJsonDepth + 1, ']'));
  CHECK_FALSE(nested.value);
  CHECK(nested.what == "nesting deeper than 512 levels");
  const auto broken = rebound::protocol::parse_json_line("{\"a\":}");
  CHECK_FALSE(broken.value);
  CHECK(broken.what == rebound::protocol::kInvalidJson);
}
