// The stream's event templates (protocol/json_template.h) against the general parser. The input
// is a selector byte, a valid JSON text, and NUL-separated values: the selector's bits choose
// holes among the text's string and plain integer values (document order), and the values fill
// them. Whatever matches must read, by the
// general parser, as the template's value with the matched values in place; a text whose values
// are all valid ones of their kinds must match; and the values alone never match unless they
// are the template's text again.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/json_line.h"
#include "protocol/json_scan.h"
#include "protocol/json_template.h"
#include "tests/fuzz/split_input.h"

using rebound::protocol::Json;
namespace scan = rebound::protocol::json_scan;
using Kind = scan::Template::Kind;

namespace {

struct Candidate {
  std::string_view value;
  Kind kind;
  Json::json_pointer where;
};

bool plain_integer(std::string_view v) {
  if (v.empty() || v.size() > 308 || v.find_first_not_of("0123456789") != std::string_view::npos)
    return false;
  return v == "0" || v.front() != '0';
}

// Every string, plain integer and object of the valid value `v`, in document order.
void collect(std::string_view v, const Json::json_pointer& where, std::vector<Candidate>& out) {
  if (scan::is_string(v)) {
    out.push_back({v, Kind::string, where});
  } else if (plain_integer(v)) {
    out.push_back({v, Kind::integer, where});
  } else if (scan::is_object(v)) {
    // A key given again hides its earlier values from the parser: only the last one counts.
    std::vector<std::pair<std::string_view, std::string_view>> members;
    // An escaped key stops the walk, and could spell a later one: no holes in this object then.
    if (!scan::for_each_member(v, [&](std::string_view key, std::string_view member) {
          members.emplace_back(key, member);
          return true;
        }))
      return;
    for (std::size_t i = 0; i < members.size(); ++i) {
      bool hidden = false;
      for (std::size_t j = i + 1; j < members.size() && !hidden; ++j)
        hidden = members[j].first == members[i].first;
      if (!hidden) collect(members[i].second, where / std::string(members[i].first), out);
    }
  } else if (scan::is_array(v)) {
    std::size_t i = 0;
    const char* end = v.data() + v.size();
    const char* p = scan::detail::skip_ws(v.data() + 1, end);
    while (p < end && *p != ']') {
      const char* value_end = scan::detail::value_end(p, end);
      collect(std::string_view(p, static_cast<std::size_t>(value_end - p)), where / i++, out);
      p = scan::detail::skip_ws(value_end, end);
      if (p < end && *p == ',') p = scan::detail::skip_ws(p + 1, end);
    }
  }
}

bool of_kind(std::string_view v, Kind kind) {
  switch (kind) {
    case Kind::string:
      return scan::is_string(v) && scan::string_token_length(v) == v.size();
    case Kind::integer:
      return plain_integer(v);
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t selector = data[0];
  const auto parts = rebound::fuzz::split_at_nul(data + 1, size - 1, 1 + scan::Template::kMaxHoles);
  const std::string& base = parts[0];
  if (!scan::is_valid(base)) return 0;
  const auto base_value = rebound::protocol::parse_json_line(base).value;
  if (!base_value) std::abort();  // the scanner and the parser disagree on validity
  std::vector<Candidate> all;
  const char* begin = scan::detail::skip_ws(base.data(), base.data() + base.size());
  const char* end = base.data() + base.size();
  while (end > begin && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' || end[-1] == '\r'))
    --end;
  collect(std::string_view(begin, static_cast<std::size_t>(end - begin)), Json::json_pointer(),
          all);
  // The chosen holes: not overlapping, at most kMaxHoles, by the selector's bits.
  std::vector<Candidate> holes;
  const char* taken = base.data();
  for (std::size_t i = 0; i < all.size() && i < 8 && holes.size() < scan::Template::kMaxHoles;
       ++i) {
    if (!(selector & (1u << i)) || all[i].value.data() < taken) continue;
    holes.push_back(all[i]);
    taken = all[i].value.data() + all[i].value.size();
  }
  scan::Template tpl;
  std::vector<scan::Template::Hole> given;
  for (const auto& h : holes)
    given.push_back({h.value, h.kind});
  // The holes go in as an initializer list: the first ones of the eight, empty spans after.
  std::vector<scan::Template::Hole> eight(scan::Template::kMaxHoles,
                                          {std::string_view(), Kind::string});
  std::copy(given.begin(), given.end(), eight.begin());
  const bool built = tpl.build(
      base, {eight[0], eight[1], eight[2], eight[3], eight[4], eight[5], eight[6], eight[7]});
  if (!built) std::abort();  // every hole was one whole value of its kind
  // The text again, its holes filled with the input's values (the holes' own where missing).
  std::string text;
  const char* at = base.data();
  bool all_of_kind = true;
  for (std::size_t i = 0; i < holes.size(); ++i) {
    text.append(at, holes[i].value.data());
    const std::string_view v =
        i + 1 < parts.size() ? std::string_view(parts[i + 1]) : holes[i].value;
    all_of_kind = all_of_kind && of_kind(v, holes[i].kind);
    text += v;
    at = holes[i].value.data() + holes[i].value.size();
  }
  text.append(at, base.data() + base.size());
  // A text that matches reads as the template's value with the matched values in place.
  const auto check = [&](std::string_view candidate) {
    std::string_view values[scan::Template::kMaxHoles];
    if (!tpl.match(candidate, values)) return false;
    const auto read = rebound::protocol::parse_json_line(candidate).value;
    if (!read) std::abort();  // matched what the parser refuses
    Json expected = *base_value;
    for (std::size_t i = 0; i < holes.size(); ++i) {
      const auto value = rebound::protocol::parse_json_line(values[i]).value;
      if (!value) std::abort();
      expected[holes[i].where] = *value;
    }
    if (expected != *read) std::abort();
    return true;
  };
  const bool matched = check(text);
  if (all_of_kind && !matched && rebound::protocol::parse_json_line(text).value)
    std::abort();  // a valid filling missed
  // Each value alone, as a whole event.
  for (std::size_t i = 1; i < parts.size(); ++i)
    check(parts[i]);
  return 0;
}
