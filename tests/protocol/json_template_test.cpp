// The stream's event templates (protocol/json_template.h): a text matches only when it is the
// template's bytes around valid values of the holes' kinds, and then the general parser reads
// it as the template's value with those values in place.

#include "protocol/json_template.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "protocol/json_line.h"

using namespace rebound::protocol;
using json_scan::Template;
using Kind = Template::Kind;
using scan_hole = Template::Hole;

namespace {

// The event the tests cut: a string hole and two integer holes, the last one nested.
const std::string kBefore = R"({"a":[{"t":)";
const std::string kBetween1 = R"(,"k":true},2],"n":)";
const std::string kBetween2 = R"(,"u":{"p":)";
const std::string kAfter = R"(,"q":[]},"z":"end"})";

std::string event(const std::string& t, const std::string& n, const std::string& u) {
  return kBefore + t + kBetween1 + n + kBetween2 + u + kAfter;
}

Template built() {
  static const std::string base = event(R"("x")", "1", "5");
  Template tpl;
  const std::size_t t = kBefore.size();
  const std::size_t n = t + 3 + kBetween1.size();
  const std::size_t u = n + 1 + kBetween2.size();
  const std::string_view text(base);
  REQUIRE(tpl.build(text, {{text.substr(t, 3), Kind::string},
                           {text.substr(n, 1), Kind::integer},
                           {text.substr(u, 1), Kind::integer}}));
  return tpl;
}

// The general parser's reading of a value.
Json parsed(std::string_view text) {
  auto result = parse_json_line(text);
  REQUIRE(result.value.has_value());
  return std::move(*result.value);
}

// The text read by the general parser, and what the template says it is.
void check_same(const std::string& text, const std::string_view (&values)[3]) {
  Json expected = parsed(event(R"("x")", "1", "5"));
  expected["a"][0]["t"] = parsed(values[0]);
  expected["n"] = parsed(values[1]);
  expected["u"]["p"] = parsed(values[2]);
  CHECK(parsed(text) == expected);
}

bool valid(const std::string& text) {
  return parse_json_line(text).value.has_value();
}

bool plain(const std::string& n) {
  return !n.empty() && n.find_first_not_of("0123456789") == std::string::npos &&
         (n == "0" || n.front() != '0');
}

// What each hole's kind takes, as the tests' pools spell values (no whitespace around).
bool hole_ok(const std::string& t, const std::string& n, const std::string& u) {
  return !t.empty() && t.front() == '"' && valid(t) && plain(n) && plain(u);
}

}  // namespace

TEST_CASE("Template: the same bytes around other valid values match, and read as those values") {
  const Template tpl = built();
  const std::vector<std::vector<std::string>> cases{
      {R"("x")", "1", "5"},
      {R"("")", "0", "0"},
      {R"("a\"b\\c\u00e9\ud83d\ude00 \u00ff")", std::string(308, '9'), "77"},
      {"\"\xC3\xA9\xE2\x82\xAC\"", "90", "3"}};
  for (const auto& c : cases) {
    const std::string text = event(c[0], c[1], c[2]);
    INFO(text);
    std::string_view values[3];
    REQUIRE(tpl.match(text, values));
    CHECK(values[0] == c[0]);
    CHECK(values[1] == c[1]);
    CHECK(values[2] == c[2]);
    check_same(text, values);
  }
}

TEST_CASE("Template: another byte outside the holes, or an invalid value in one, is no match") {
  const Template tpl = built();
  const std::string u = "5";
  const std::vector<std::string> texts{
      event(R"("x")", "1", u) + " ",               // a byte more
      event(R"("x")", "1", u).substr(1),           // a byte less
      event(R"("x")", "1", u).substr(0, 40),       // cut
      event(R"("x")", "1", u).replace(2, 1, "b"),  // a key changed
      event(R"("x")", "1 ", u),                    // whitespace is a constant byte
      event(R"("x)", "1", u),                      // strings
      event(R"("\x")", "1", u), event("\"\x01\"", "1", u), event("\"\xFF\"", "1", u),
      event("\"\xED\xA0\x80\"", "1", u), event(R"("\u12")", "1", u), event("x", "1", u),
      event("5", "1", u), event(R"("a","k":"b")", "1", u), event(R"("x")", "01", u),  // integers
      event(R"("x")", "-1", u), event(R"("x")", "1.5", u), event(R"("x")", "1e3", u),
      event(R"("x")", "", u), event(R"("x")", R"("1")", u), event(R"("x")", "null", u),
      event(R"("x")", "1", "5.0"), event(R"("x")", "1", "00"), event(R"("x")", "1", "{}"),
      event(R"("x")", "1", "5,\"p\":6"),
      // past what a double holds, which the parser refuses
      event(R"("x")", std::string(309, '9'), u)};
  for (const auto& text : texts) {
    INFO(text);
    std::string_view values[3];
    CHECK_FALSE(tpl.match(text, values));
  }
}

TEST_CASE("Template: build refuses holes that are not one whole value of their kind") {
  const std::string text = R"({"s":"ab","n":12,"o":{"x":1}})";  // o at 21, x's 1 at 26
  const std::string_view t(text);
  Template tpl;
  CHECK(tpl.build(t, {{t.substr(5, 4), Kind::string}}));
  CHECK(tpl.built());
  CHECK_FALSE(tpl.build(t, {{t.substr(5, 3), Kind::string}}));  // cut
  CHECK_FALSE(tpl.built());
  CHECK_FALSE(tpl.build(t, {{t.substr(14, 1), Kind::integer}}));  // part of 12
  CHECK_FALSE(tpl.build(t, {{t.substr(14, 2), Kind::string}}));   // another kind
  CHECK_FALSE(tpl.build(t, {{t.substr(21, 7), Kind::integer}}));  // an object
  CHECK_FALSE(tpl.build(t, {{t.substr(5, 4), Kind::string}, {t.substr(6, 2), Kind::string}}));
  const std::string other = text;
  CHECK_FALSE(tpl.build(t, {{std::string_view(other).substr(5, 4), Kind::string}}));  // outside
  const scan_hole none{t.substr(0, 0), Kind::integer};
  CHECK_FALSE(tpl.build(t, {{t.substr(14, 2), Kind::integer},
                            none,
                            none,
                            none,
                            none,
                            none,
                            none,
                            none,
                            none}));  // more than kMaxHoles
  // Given in any order, the values come back in the order given; an empty span is no hole.
  REQUIRE(tpl.build(t, {{t.substr(26, 1), Kind::integer},
                        {t.substr(0, 0), Kind::integer},
                        {t.substr(14, 2), Kind::integer}}));
  std::string_view values[3];
  const std::string next = R"({"s":"ab","n":7,"o":{"x":345}})";
  REQUIRE(tpl.match(next, values));
  CHECK(values[0] == "345");
  CHECK(values[1].empty());
  CHECK(values[2] == "7");
  tpl.clear();
  CHECK_FALSE(tpl.match(next, values));
}

TEST_CASE("Template: random values and byte changes never match what the parser reads otherwise") {
  const Template tpl = built();
  const std::vector<std::string> strings{R"("")",       R"("abc")",     R"("a\"b")", R"("\u00e9")",
                                         R"("\ud83d")", R"("\/\b\f")",  "\"a",       R"("\x")",
                                         "\"\x01\"",    "\"\xE2\x82\"", R"("a""b")", "abc",
                                         "\"}\"",       R"("\")",       R"("\\")",   "null"};
  const std::vector<std::string> integers{
      "0", "7", "10", "99999999999999999999", "01", "-1", "1.5", "1e3", "", "x", "00", "0x1"};
  const std::vector<std::string> nested{"0", "5", "31", "-0", "5.0", "05", "", "[]", "{}", "5e1"};
  std::uint64_t state = 0x9E3779B97F4A7C15ULL;
  const auto next = [&](std::size_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>((state >> 33) % n);
  };
  int matched = 0;
  for (int round = 0; round < 20000; ++round) {
    const std::string& t = strings[next(strings.size())];
    const std::string& n = integers[next(integers.size())];
    const std::string& u = nested[next(nested.size())];
    std::string text = event(t, n, u);
    const bool mutated = next(4) == 0;
    if (mutated) {
      const std::size_t at = next(text.size());
      text[at] = "{}[]\",:0a\\ "[next(12)];
    }
    std::string_view values[3];
    const bool match = tpl.match(text, values);
    if (!mutated) CHECK(match == hole_ok(t, n, u));
    if (match) {
      ++matched;
      check_same(text, values);
    }
  }
  CHECK(matched > 500);  // the property was exercised (775 with this seed)
}
