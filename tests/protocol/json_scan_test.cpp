// The stream's JSON scanner against the general parser: it accepts exactly the valid texts,
// and the values it hands out are the parser's.

#include "protocol/json_scan.h"

#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "protocol/json_line.h"

using namespace rebound::protocol;

TEST_CASE("json_scan::is_valid agrees with the general parser") {
  const std::vector<std::string> texts{
      "{}", "[]", " {\"a\" : [1, -2.5e+3, true, false, null, \"x\"]} ", "\"\\u00e9\\n\"", "0", "-0",
      "1.0e5", "{\"a\":{\"b\":{\"c\":[]}}}",
      // invalid
      "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "01", "1.", ".5", "-", "1e",
      "1e+", "tru", "nul", "\"abc", "\"a\\x\"", "\"\\u12\"", "\"\\u12g4\"", "[1 2]", "{\"a\":1}}",
      "\"tab\there\"", "{} {}", "[\"a\"]]", "+1", "NaN",
      // UTF-8 inside strings: valid, then overlong, surrogate, past U+10FFFF, cut, stray
      "\"\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"", "\"\xC0\xAF\"", "\"\xE0\x80\xAF\"",
      "\"\xED\xA0\x80\"", "\"\xF4\x90\x80\x80\"", "\"\xE2\x82\"", "\"\x80\"", "\"\xFF\"",
      "\xC3\xA9",
      // numbers a double cannot hold are refused by the parser ("number overflow")
      "55e500", "-1e309", "1.5E+400", "1e-400", "1e308", std::string(400, '9'), "0.0e0"};
  for (const auto& text : texts) {
    INFO(text);
    CHECK(json_scan::is_valid(text) == parse_json_line(text).value.has_value());
  }
  std::string deep(600, '[');
  deep += std::string(600, ']');
  CHECK_FALSE(json_scan::is_valid(deep));  // the general parser's depth limit too
  CHECK_FALSE(parse_json_line(deep).value.has_value());
}

TEST_CASE("json_scan walks members and decodes strings as the parser does") {
  const std::string text =
      R"({"id":"c1","choices":[{"index":0,"delta":{"content":"a\"b\\c\/\u00e9\ud83d\ude00\n"},"finish_reason":null}],"n":[{"x":"]}"}]})";
  REQUIRE(json_scan::is_valid(text));
  const Json parsed = Json::parse(text);
  std::map<std::string, std::string_view> members;
  CHECK(json_scan::for_each_member(text, [&](std::string_view k, std::string_view v) {
    members[std::string(k)] = v;
    return true;
  }));
  CHECK(members.size() == 3);
  CHECK(Json::parse(members["choices"]) == parsed["choices"]);
  CHECK(Json::parse(members["n"]) == parsed["n"]);
  const auto first = json_scan::first_element(members["choices"]);
  REQUIRE(first);
  CHECK(Json::parse(*first) == parsed["choices"][0]);
  std::string_view content;
  json_scan::for_each_member(*first, [&](std::string_view k, std::string_view v) {
    if (k == "delta") {
      json_scan::for_each_member(v, [&](std::string_view, std::string_view c) {
        content = c;
        return true;
      });
    }
    return true;
  });
  CHECK(json_scan::decode_string(content) == parsed["choices"][0]["delta"]["content"]);
  CHECK_FALSE(json_scan::first_element("[ ]"));
  // Lone surrogates and escaped keys are left to the general parser.
  CHECK_FALSE(json_scan::decode_string(R"("\ud800")"));
  CHECK_FALSE(json_scan::decode_string(R"("\udc00x")"));
  CHECK_FALSE(json_scan::decode_string(R"("\ud800\u0041")"));
  CHECK_FALSE(json_scan::for_each_member(R"({"c\u006fntent":1})",
                                         [](std::string_view, std::string_view) { return true; }));
}

TEST_CASE("json_scan::scan captures the values at paths in one pass") {
  using Span = std::optional<std::string_view>;
  const json_scan::Paths paths{
      {"a"}, {"b", json_scan::kFirst}, {"b", json_scan::kFirst, "c"}, {"d", "e", "f"}, {"z"}};
  Span v[5];
  const Span &a = v[0], &b0 = v[1], &c = v[2], &deep = v[3], &missing = v[4];
  const std::string text = R"({"a":1,"b":[{"c":"x"},{"c":"y"}],"a":[true],"d":{"e":{"f":null}}})";
  REQUIRE(json_scan::scan(text, paths, v));
  CHECK(a == "[true]");  // the last of a repeated key, as the general parser keeps it
  CHECK(b0 == R"({"c":"x"})");
  CHECK(c == R"("x")");
  CHECK(deep == "null");
  CHECK_FALSE(missing);
  // A repeated parent leaves the first value's child behind: within() tells.
  const json_scan::Paths pq{{"p"}, {"p", "q"}};
  Span w[2];
  const Span &parent = w[0], &child = w[1];
  const std::string twice = R"({"p":{"q":1},"p":{"r":2}})";
  REQUIRE(json_scan::scan(twice, pq, w));
  CHECK(parent == R"({"r":2})");
  REQUIRE(child);
  CHECK_FALSE(json_scan::within(*child, *parent));
  // Invalid text, or an escaped key where paths are looked for: no answer.
  const json_scan::Paths just_a{{"a"}};
  Span x[1];
  CHECK_FALSE(json_scan::scan(R"({"a":)", just_a, x));
  CHECK_FALSE(json_scan::scan(R"({"\u0061":1})", just_a, x));
  CHECK(json_scan::is_valid(R"({"\u0061":1})"));
}
