#pragma once
// JSON <-> line conversion for the wire (protocol.md sections 1 and 4): strict UTF-8 checking
// on input, compact raw-UTF-8 output with invalid bytes replaced by U+FFFD. Every JSON
// exception is caught here and turned into a reason string; none crosses this boundary.
// Pure functions, thread-safe.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/json.h"

namespace rebound::protocol {

/// Offset of the first byte that is not valid UTF-8 (overlongs, surrogates and code points
/// above U+10FFFF are invalid), or nullopt when the text is valid.
std::optional<std::size_t> find_invalid_utf8(std::string_view text);

/// The result of reading one line: a JSON value, or why it is not one.
struct JsonLine {
  std::optional<Json> value;
  std::string error;  // set when `value` is empty, e.g. "invalid UTF-8 at byte 3"
};

/// Parses a line as JSON (any JSON value; the caller checks for an object). A lone UTF-16
/// surrogate escape inside a string (`"\uD800"`) is kept as a private marker that to_line()
/// writes back as the same escape (protocol.md section 1).
JsonLine parse_json_line(std::string_view line);

/// Serializes compactly as one line ending in LF: raw UTF-8, invalid bytes replaced by U+FFFD,
/// lone surrogates read by parse_json_line() written back escaped.
std::string to_line(const Json& value);

/// The raw JSON text with every lone surrogate escape replaced by its marker (exposed for tests).
std::string mark_lone_surrogates(std::string_view json_text);
/// Marker bytes back to `\udxxx` escapes in serialized JSON (exposed for tests).
void unmark_lone_surrogates(std::string& json_text);

}  // namespace rebound::protocol
