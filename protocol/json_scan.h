#pragma once
// A strict JSON scanner for the hot path of the model's stream: it checks a text against the
// JSON grammar and walks objects and arrays as spans of the text, without building a tree or
// allocating. It answers "not sure" (false, nullopt) for anything it does not handle itself
// (nesting past kMaxJsonDepth, escaped keys, lone surrogates), and the caller then takes the
// general parser (json_line.h), so the two can never disagree on a value the scanner returned.
// Pure; text that is not valid UTF-8 is not valid JSON to it.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rebound::protocol::json_scan {

/// The text is one JSON value with optional whitespace around it, in valid UTF-8 (false also for
/// nesting deeper than kMaxJsonDepth).
bool is_valid(std::string_view text);

/// A path into a JSON text: object keys, and kFirst for an array's first element.
/// (A key never holds a raw NUL, so this cannot be confused with one.)
inline constexpr std::string_view kFirst{"\0[0]", 4};

/// Up to 32 paths of up to 8 segments, compiled once for many scans (a stream's every chunk).
class Paths {
 public:
  static constexpr std::size_t kMaxPaths = 32;
  static constexpr std::size_t kMaxLength = 8;

  /// Longer paths, and paths past the 32nd, never match.
  Paths(std::initializer_list<std::initializer_list<std::string_view>> paths);
  Paths(const Paths&) = delete;  // the entries point into the stored segments
  Paths& operator=(const Paths&) = delete;
  std::size_t size() const { return paths_.size(); }

 private:
  friend class Checker;
  // A distinct segment of one level and the paths that have it there.
  struct Entry {
    std::string_view segment;
    std::uint32_t mask = 0;
  };
  std::vector<std::vector<std::string>> paths_;
  std::uint32_t all_ = 0;                       // the paths that can match
  std::uint32_t ends_at_[kMaxLength + 1] = {};  // the paths of each length
  std::vector<Entry> entries_;
  std::size_t first_[kMaxLength + 1] = {};  // entries of level L: [first_[L], first_[L + 1])
};

/// is_valid() that also records, in the same pass, the span of the value at each path in
/// `values` (paths.size() of them; the last value when a key repeats, as the general parser
/// keeps it). False, and nothing to rely on, when the text is not valid or a key on the way to
/// a path holds an escape. A repeated key can leave a deeper value from its first occurrence:
/// a value counts only inside its parent's span (within()).
bool scan(std::string_view text, const Paths& paths, std::optional<std::string_view>* values);

/// `inner` lies inside `outer` (both spans of the same text).
inline bool within(std::string_view inner, std::string_view outer) {
  return inner.data() >= outer.data() && inner.data() + inner.size() <= outer.data() + outer.size();
}

/// `value` (a valid JSON value, whitespace trimmed) is of this kind.
inline bool is_object(std::string_view value) {
  return !value.empty() && value.front() == '{';
}
inline bool is_array(std::string_view value) {
  return !value.empty() && value.front() == '[';
}
inline bool is_string(std::string_view value) {
  return !value.empty() && value.front() == '"';
}
inline bool is_null(std::string_view value) {
  return value == "null";
}

/// The members of a valid object, in order: `visit(key, value)` with the key's raw text
/// (without quotes; false from the walk when a key holds an escape, which the caller cannot
/// compare) and the value's span. `visit` returns false to stop early.
template <typename Visit>
bool for_each_member(std::string_view object, Visit&& visit);

/// The length of the valid JSON string token at the start of `text` (quotes included; escapes
/// and UTF-8 checked), or nullopt.
std::optional<std::size_t> string_token_length(std::string_view text);

/// The first element of a valid array, or nullopt for an empty one.
std::optional<std::string_view> first_element(std::string_view array);

/// A valid string value's text with its escapes decoded; nullopt for a lone surrogate escape
/// (the general parser replaces it).
std::optional<std::string> decode_string(std::string_view value);

namespace detail {
/// The end of the valid value starting at `p` (no leading whitespace), for walking a valid text.
const char* value_end(const char* p, const char* end);
const char* skip_ws(const char* p, const char* end);
}  // namespace detail

template <typename Visit>
bool for_each_member(std::string_view object, Visit&& visit) {
  const char* end = object.data() + object.size();
  const char* p = detail::skip_ws(object.data() + 1, end);
  if (p < end && *p == '}') return true;
  while (p < end) {
    const char* key_end = detail::value_end(p, end);
    const std::string_view key(p + 1, static_cast<std::size_t>(key_end - p - 2));
    if (key.find('\\') != std::string_view::npos) return false;
    p = detail::skip_ws(key_end, end) + 1;  // past ':'
    p = detail::skip_ws(p, end);
    const char* value_end = detail::value_end(p, end);
    if (!visit(key, std::string_view(p, static_cast<std::size_t>(value_end - p)))) return true;
    p = detail::skip_ws(value_end, end);
    if (p >= end || *p == '}') return true;
    p = detail::skip_ws(p + 1, end);  // past ','
  }
  return true;
}

}  // namespace rebound::protocol::json_scan
